/**
 * `git mem hook pre-push REMOTE URL` (stdin: the refs being pushed): when the
 * user pushes a branch, the memory goes along with `sync` semantics. Quiet,
 * and it never blocks the user's push: every failure is logged to
 * .git/mem/logs/pre-push.log and the hook exits 0. GIT_MEM_NO_SYNC=1 skips.
 * The internal fetch and push run with hooks disabled (see remote.ts), so
 * this hook cannot recurse through itself.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { type RunContext, repositoryStore } from '../commands/context.js';
import { memDir, type Repo } from '../gitstore/repo.js';

function log(repo: Repo | undefined, line: string): void {
  if (!repo) return;
  try {
    appendFileSync(join(memDir(repo, 'logs'), 'pre-push.log'), `${new Date().toISOString()} ${line}\n`);
  } catch {}
}

/** True when the user's own push already carries the memory or its notes: leave it alone. */
export function pushesMemoryRefs(stdin: string): boolean {
  return stdin
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[2])
    .some(
      (remoteRef) => !!remoteRef && (remoteRef.startsWith('refs/mem/') || remoteRef === 'refs/notes/memory'),
    );
}

export async function runPrePushHook(ctx: RunContext, args: string[]): Promise<number> {
  const v = ctx.env.GIT_MEM_NO_SYNC;
  if (v !== undefined && v !== '' && v !== '0') return 0;
  let repo: Repo | undefined;
  try {
    // one store for the remote's config, the tips and the sync: the repository, its reader and
    // git's configuration by one process start, the configuration read once
    const store = await repositoryStore(ctx, 'config');
    repo = store.repo;
    const remoteName = args[0] ?? '';
    const stdin = ctx.io.stdinIsTTY ? '' : ((await ctx.io.readStdin()) ?? '');
    if (pushesMemoryRefs(stdin)) {
      log(repo, `skip: this push already carries the memory refs`);
      return 0;
    }
    const { listRemotes } = await import('../merge/remote.js');
    if (!(await listRemotes(store)).includes(remoteName)) {
      log(repo, `skip: "${remoteName}" is not a configured remote (pushing to a URL)`);
      return 0;
    }
    const { notesTip } = await import('../merge/notes.js');
    if (!(await store.tip()) && !(await notesTip(store))) {
      log(repo, 'skip: no memory in this repository');
      return 0;
    }
    const { sync } = await import('../merge/sync.js');
    const r = await sync(store, { remote: remoteName, retries: 3, interactive: false });
    log(
      repo,
      `ok: ${r.remote} ${r.action}${r.pushed ? ', pushed' : ''}${r.pushedNotes ? ', pushed notes' : ''} ${r.after?.slice(0, 12) ?? ''} (${r.attempts} attempt${r.attempts === 1 ? '' : 's'})`,
    );
  } catch (e) {
    const ge = e as { toLine?: () => string; message?: string };
    log(repo, `error: ${ge.toLine ? ge.toLine() : (ge.message ?? String(e))}`);
  }
  return 0;
}
