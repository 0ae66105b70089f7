/**
 * The daemon's side of op `run` (the client's is src/cli/via-daemon.ts): a one-shot
 * command run by main() on the daemon's warm store, with the client's arguments,
 * directory and environment, or a refusal before anything of it ran.
 */
import type { Store } from '../gitstore/store.js';
import { buildId } from '../search/daemon-client.js';
import { E_DAEMON_ELSEWHERE, E_DAEMON_STDIN } from '../search/daemon-wire.js';
import { main } from './main.js';
import { envKey, type RunRequest, type RunResult, runsInDaemon } from './via-daemon.js';

/** Checks a `run` request's shape (it came over a socket): the request, or undefined. */
function runRequest(q: unknown): RunRequest | undefined {
  if (!q || typeof q !== 'object') return undefined;
  const r = q as Record<string, unknown>;
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (!strings(r.argv) || typeof r.cwd !== 'string' || typeof r.gitDir !== 'string') return undefined;
  if (!(r.workTree === null || typeof r.workTree === 'string') || typeof r.build !== 'string')
    return undefined;
  if (typeof r.isTTY !== 'boolean' || typeof r.stdinIsTTY !== 'boolean') return undefined;
  if (!r.env || typeof r.env !== 'object' || !Object.values(r.env).every((v) => typeof v === 'string'))
    return undefined;
  return r as unknown as RunRequest;
}

/**
 * The daemon's side of op `run`: the command run by main() on the daemon's store, or a
 * refusal (nothing of the command ran) when its result could differ from the client's own.
 */
export async function runForClient(
  store: Store,
  q: unknown,
): Promise<{ ok: boolean; result?: RunResult; error?: { code: string; message: string } }> {
  const refuse = (code: string, message: string) => ({ ok: false, error: { code, message } });
  const r = runRequest(q);
  if (!r) return refuse('E_INVALID_ARG', 'run: a command line, its directory and environment are required');
  if (!runsInDaemon(r.argv)) return refuse(E_DAEMON_ELSEWHERE, 'run: not a command the daemon runs');
  if (r.build !== buildId()) return refuse(E_DAEMON_ELSEWHERE, 'run: the daemon is another build');
  if (r.gitDir !== store.repo.gitDir || r.workTree !== (store.repo.workTree ?? null))
    return refuse(E_DAEMON_ELSEWHERE, 'run: the daemon serves another worktree');
  if (envKey(r.env) !== envKey(store.repo.env))
    return refuse(E_DAEMON_ELSEWHERE, 'run: the daemon has another environment');
  let wantsStdin = false;
  const result: RunResult = { code: 0, output: [] };
  // in the order the command writes them, runs of one stream joined
  const write = (fd: 1 | 2, s: string) => {
    const last = result.output[result.output.length - 1];
    if (last?.[0] === fd) last[1] += s;
    else result.output.push([fd, s]);
  };
  const io = {
    out: (s: string) => write(1, s),
    err: (s: string) => write(2, s),
    isTTY: r.isTTY,
    stdinIsTTY: r.stdinIsTTY,
    readStdin: async () => {
      if (r.stdinIsTTY) return undefined;
      // read before anything is written (add's content): the client runs it with its stdin
      wantsStdin = true;
      throw new Error('stdin is the client’s');
    },
  };
  // the client's environment for the command, as its own process would have it: what git-mem reads
  // (identity, actor, settings) and the git processes the command starts. The command's own search
  // questions are answered here, in this process, not by asking us
  const env = { ...r.env, GIT_MEM_DAEMON: 'off' };
  const own = store.repo.env;
  store.repo.env = env;
  store.forgetSettings();
  try {
    result.code = await main(r.argv, io, { cwd: r.cwd, env, store });
  } finally {
    store.repo.env = own;
    store.forgetSettings();
  }
  if (wantsStdin) return refuse(E_DAEMON_STDIN, 'run: the command reads stdin');
  return { ok: true, result };
}
