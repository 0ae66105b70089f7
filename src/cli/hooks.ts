import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { err } from '../errors.js';
import { openRepo, type Repo } from '../gitstore/repo.js';
import { installGitHook, uninstallGitHook } from '../hooks/git-hooks.js';
import { defineCommand } from './command.js';
import { emit } from './context.js';

function onPath(name: string, env: NodeJS.ProcessEnv): boolean {
  return (env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .some((dir) => existsSync(join(dir, name)));
}

/** `git mem rules export --to cursor`, for the rules-file fallback of --cursor: one row per file written. */
async function cursorRules(repo: Repo): Promise<Array<Record<string, unknown>>> {
  const [{ Store }, { exportRules }] = await Promise.all([
    import('../gitstore/store.js'),
    import('../agents/rules-export.js'),
  ]);
  const store = new Store(repo);
  try {
    const r = await exportRules(store, { targets: ['cursor'], dir: repo.workTree! });
    return r.files
      .filter((f) => f.action !== 'unchanged')
      .map((f) => ({ hook: 'cursor-rules', action: f.action, path: join(repo.workTree!, f.path) }));
  } finally {
    store.close();
  }
}

export default defineCommand({
  command: 'hooks <action>',
  describe:
    'install or uninstall git hooks (post-commit, post-merge and post-rewrite by default) and agent hooks',
  builder: (y) =>
    y
      .positional('action', { choices: ['install', 'uninstall'] as const })
      .option('post-commit', {
        type: 'boolean',
        describe: 'staleness check after each commit and merge (the default)',
      })
      .option('pre-push', { type: 'boolean', describe: 'push refs/memory along with your branches' })
      .option('claude', { type: 'boolean', describe: 'Claude Code hooks in .claude/settings.json' })
      .option('codex', { type: 'boolean', describe: 'Codex CLI hooks in .codex/hooks.json' })
      .option('droid', { type: 'boolean', describe: 'Factory Droid hooks in .factory/settings.json' })
      .option('cursor', {
        type: 'boolean',
        describe: 'Cursor hooks in .cursor/hooks.json, and the rules in .cursor/rules (git mem rules export)',
      })
      .option('local', {
        type: 'boolean',
        describe: 'with --claude or --droid: settings.local.json (not committed)',
      }),
  async run(a, ctx) {
    const repo = await openRepo(ctx.cwd, ctx.env);
    const install = a.action === 'install';
    const agents = (['claude', 'codex', 'droid'] as const).filter((n) => a[n]);
    const wantPost = a['post-commit'] || (!a['pre-push'] && !agents.length && !a.cursor);
    const changes: Array<Record<string, unknown>> = [];
    // the staleness check: after each commit, after merges and pulls (a fast-forward runs no post-commit),
    // and after a rebase (git pull --rebase: the rebased commits reach the branch at once)
    if (wantPost)
      for (const hook of ['post-commit', 'post-merge', 'post-rewrite'] as const)
        changes.push({
          ...(install ? await installGitHook(repo, hook) : await uninstallGitHook(repo, hook)),
        });
    if (a['pre-push'])
      changes.push({
        ...(install ? await installGitHook(repo, 'pre-push') : await uninstallGitHook(repo, 'pre-push')),
      });
    if (agents.length || a.cursor) {
      if (!repo.workTree) throw err('E_INVALID_ARG', 'agent hooks need a work tree', 'run inside a checkout');
      for (const [flag, name] of [
        ['codex', 'Codex'],
        ['cursor', 'Cursor'],
      ] as const)
        if (a.local && a[flag])
          throw err(
            'E_INVALID_ARG',
            `${name} has no local hook file`,
            `drop --local, or install --${flag} on its own`,
          );
    }
    if (agents.length && repo.workTree) {
      const mod = await import('../hooks/claude-settings.js');
      for (const name of agents) {
        const target = mod.AGENT_TARGETS[name];
        const c = install
          ? await mod.installAgentHooks(repo.workTree, target, { local: !!a.local })
          : await mod.uninstallAgentHooks(repo.workTree, target, { local: !!a.local });
        changes.push(c as Record<string, unknown>);
      }
      if (install && a.codex && !ctx.json)
        ctx.io.err(
          'git-mem: note: Codex runs hooks only with `[features] codex_hooks = true` in ~/.codex/config.toml\n',
        );
    }
    if (a.cursor && repo.workTree) {
      const mod = await import('../hooks/cursor-settings.js');
      changes.push(
        install ? await mod.installCursorHooks(repo.workTree) : await mod.uninstallCursorHooks(repo.workTree),
      );
      // Cursor may drop sessionStart's context (it races the session's first request): the rules
      // reach it anyway through its rule files, written by the rules export (`git mem rules export`
      // keeps them current; uninstall leaves them, as they are that command's)
      if (install) changes.push(...(await cursorRules(repo)));
    }
    // the hooks find git-mem on PATH (they hold no path of this machine): say so when it is not there
    if (install && !ctx.env.GIT_MEM_CMD && !onPath('git-mem', ctx.env))
      ctx.io.err(
        'git-mem: note: git-mem is not on PATH, so the hooks will skip their work until it is (npm install -g git-mem, or npm link in a clone)\n',
      );
    emit(ctx, changes, () => changes.map((c) => `${c.hook}: ${c.action} (${c.path})`).join('\n'));
  },
});
