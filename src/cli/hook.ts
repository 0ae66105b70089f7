/**
 * `git mem hook <name>`: what the installed hooks run. Each handler lives with
 * its capability and is imported only when its hook fires. A hook must never
 * break the user's git command or agent session: handlers catch their own
 * errors, log them under .git/mem/logs/ and exit 0.
 */
import { defineCommand } from './command.js';

export default defineCommand({
  command: 'hook <name> [args..]',
  describe: 'run a hook handler (called by installed git and agent hooks)',
  builder: (y) =>
    y
      .positional('name', {
        choices: ['post-commit', 'post-merge', 'post-rewrite', 'pre-push', 'claude-code', 'cursor'] as const,
      })
      .positional('args', { type: 'string', array: true })
      .strictOptions(false),
  async run(a, ctx) {
    const args = (a.args ?? []).map(String);
    switch (a.name) {
      case 'post-commit':
        return (await import('../hooks/post-commit.js')).runPostCommitHook(ctx, args);
      case 'post-merge':
        return (await import('../hooks/post-commit.js')).runPostMergeHook(ctx, args);
      case 'post-rewrite':
        return (await import('../hooks/post-commit.js')).runPostRewriteHook(ctx, args);
      case 'pre-push':
        return (await import('../hooks/pre-push.js')).runPrePushHook(ctx, args);
      case 'claude-code':
        return (await import('../hooks/claude-code.js')).runClaudeHook(ctx, args);
      case 'cursor':
        // Cursor's payloads, read as Claude's; its answers in Cursor's shape
        return (await import('../hooks/claude-code.js')).runClaudeHook(ctx, args, 'cursor');
    }
    return 0;
  },
});
