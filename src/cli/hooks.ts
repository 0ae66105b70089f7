import { err } from '../errors.js';
import { openRepo } from '../gitstore/repo.js';
import { installGitHook, uninstallGitHook } from '../hooks/git-hooks.js';
import { defineCommand } from './command.js';
import { emit } from './context.js';

export default defineCommand({
  command: 'hooks <action>',
  describe: 'install or uninstall git hooks (post-commit by default) and agent hooks',
  builder: (y) =>
    y
      .positional('action', { choices: ['install', 'uninstall'] as const })
      .option('post-commit', { type: 'boolean', describe: 'staleness check after each commit (the default)' })
      .option('pre-push', { type: 'boolean', describe: 'push refs/memory along with your branches' })
      .option('claude', { type: 'boolean', describe: 'Claude Code hooks in .claude/settings.json' })
      .option('local', { type: 'boolean', describe: 'with --claude: .claude/settings.local.json' }),
  async run(a, ctx) {
    const repo = await openRepo(ctx.cwd, ctx.env);
    const install = a.action === 'install';
    const wantPost = a['post-commit'] || (!a['pre-push'] && !a.claude);
    const changes: Array<Record<string, unknown>> = [];
    if (wantPost)
      changes.push({
        ...(install
          ? await installGitHook(repo, 'post-commit')
          : await uninstallGitHook(repo, 'post-commit')),
      });
    if (a['pre-push'])
      changes.push({
        ...(install ? await installGitHook(repo, 'pre-push') : await uninstallGitHook(repo, 'pre-push')),
      });
    if (a.claude) {
      if (!repo.workTree) throw err('E_INVALID_ARG', 'agent hooks need a work tree', 'run inside a checkout');
      const mod = await import('../agents/claude-settings.js');
      const c = install
        ? await mod.installClaudeHooks(repo.workTree, { local: !!a.local })
        : await mod.uninstallClaudeHooks(repo.workTree, { local: !!a.local });
      changes.push(c as Record<string, unknown>);
    }
    emit(ctx, changes, () => changes.map((c) => `${c.hook}: ${c.action} (${c.path})`).join('\n'));
  },
});
