/**
 * The post-commit hook's way to a running query daemon: bin/git-mem.js loads this module alone for
 * `git mem hook post-commit` (the line every installed hook runs at every commit). Where a daemon
 * listens in this repository, it asks it to run the hook's work on its warm store
 * (src/daemon/server.ts answerPostCommit: the same postCommitHook the CLI runs, for a hook of the
 * daemon's own work tree, settings and build). Anything else (no daemon, a refusal, no answer)
 * gives undefined, and the launcher runs the hook in this process through the CLI.
 * Node built-ins and the daemon's wire only; it never starts a daemon.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { askStarted, buildId, DEFAULT_SOCKET, daemonMode, hookEnv } from '../daemon/wire.js';
import { mark } from '../trace.js';

/**
 * How long a commit waits for its turn at the daemon (which answers one request at a time: a
 * search, an index brought up to date after a sync), then for the work itself, bounded by
 * post-commit-budget-ms (1 s by default). A turn that does not come runs the hook here.
 */
const TURN_MS = 500;
const HOOK_WAIT_MS = 30_000;

/**
 * The lines the post-commit hook says, as a running daemon ran it; undefined: run it here.
 * git runs a hook at the top of the work tree, so `cwd` is the work tree the daemon must serve.
 */
export async function postCommitViaDaemon(
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<string[] | undefined> {
  if (daemonMode(env) === 'off') return undefined;
  // a daemon listens in the common git dir; where that is not ./.git (a linked worktree, GIT_DIR),
  // no socket is found here and the hook runs in its own process
  const sock = join(cwd, '.git', ...DEFAULT_SOCKET);
  if (!existsSync(sock)) return undefined;
  const reply = await askStarted(
    sock,
    { op: 'post-commit', q: { cwd, build: buildId(), env: hookEnv(env) } },
    TURN_MS,
    HOOK_WAIT_MS,
  );
  const lines = (reply?.result as { lines?: unknown } | undefined)?.lines;
  if (!reply?.ok || !Array.isArray(lines) || !lines.every((l) => typeof l === 'string')) return undefined;
  mark('daemon answered post-commit');
  return lines;
}
