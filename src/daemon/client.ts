/**
 * Client side of the query daemon (./server.ts): a long-lived `git mem daemon run`
 * process that keeps the search index of one store in memory and answers queries
 * on a Unix socket in .git/mem/search/<ref>/. One-shot CLI calls (search, context,
 * add's duplicate check; the agent hook asks through ./wire.ts) use it when it runs,
 * start it on demand for a store big enough to be worth it, and fall back to
 * searching in-process on any problem. A daemon started on demand is not
 * waited for (loading the index takes it seconds at 10k memories, where the
 * same question in process takes ~0.6 s): the call that starts it answers
 * in process, and the next ones use it once it listens. The daemon brings its
 * index to the ref's tip before every answer, so it never serves a stale
 * result.
 *
 * Deliberately light: no index code is imported here.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { memDir } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { mark } from '../trace.js';
import {
  ask,
  buildId,
  COMMAND_ONLY,
  type DaemonReply,
  type DaemonRequest,
  daemonMode,
  isRefusal,
} from './wire.js';

export type { DaemonReply, DaemonRequest } from './wire.js';
export { ask, buildId, COMMAND_ONLY, daemonMode };

/**
 * Snapshots bigger than this (bytes) make a one-shot search or add start the daemon (about 500
 * memories): above it a one-shot process spends ~100 ms loading the index (at 1k memories a search
 * took 275 ms in process and 76 ms through the daemon; an add wrote its commit at ~165 ms into the
 * process in process and at ~62 ms with the daemon, GIT_MEM_TRACE).
 */
export const AUTO_START_BYTES = 512 * 1024;
/** Unix socket paths are limited to ~107 bytes; longer ones mean no daemon (search runs in-process). */
const MAX_SOCKET_PATH = 100;

/** What the daemon's files and its start need of a store: its repository and ref (no git process). */
export type StoreAt = Pick<Store, 'repo' | 'ref'>;

export function daemonDir(store: StoreAt): string {
  return memDir(store.repo, 'search', store.ref.replace(/[^A-Za-z0-9]+/g, '_'));
}

export function socketPath(store: StoreAt): string {
  return join(daemonDir(store), 'daemon.sock');
}

/** The launcher script (bin/git-mem.js) of this installation. */
export function binPath(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    const p = join(dir, 'bin', 'git-mem.js');
    if (existsSync(p)) return p;
    dir = dirname(dir);
  }
  return undefined;
}

/** Whether a one-shot search should start a daemon for this store. */
function worthStarting(store: StoreAt, env: NodeJS.ProcessEnv): boolean {
  const m = daemonMode(env);
  if (m === 'on') return true;
  if (m === 'off') return false;
  try {
    return statSync(join(daemonDir(store), 'index.json')).size >= AUTO_START_BYTES;
  } catch {
    return false;
  }
}

/** Pings the daemon; undefined when none answers (a dead socket file is removed). */
export async function pingDaemon(store: Store): Promise<DaemonReply | undefined> {
  const path = socketPath(store);
  if (!existsSync(path)) return undefined;
  try {
    const r = await ask(path, { op: 'ping' }, 2000);
    return r.ok ? r : undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ECONNREFUSED' || code === 'ENOENT') {
      try {
        unlinkSync(path);
      } catch {}
    }
    return undefined;
  }
}

/** Marks a daemon being started (until it listens), so that callers meanwhile do not start another. */
export function startingFile(store: StoreAt): string {
  return join(daemonDir(store), 'starting');
}
/** How long a start may take before its marker counts as left behind (a daemon that died loading). */
const START_GRACE_MS = 60_000;

/**
 * Starts a daemon in the background, unless one is being started already
 * (a recent marker); returns whether this call started it.
 */
export function launchDaemon(store: StoreAt, env: NodeJS.ProcessEnv): boolean {
  const bin = binPath();
  if (!bin || socketPath(store).length > MAX_SOCKET_PATH) return false;
  const marker = startingFile(store);
  try {
    if (Date.now() - statSync(marker).mtimeMs < START_GRACE_MS) return false;
    rmSync(marker, { force: true });
  } catch {}
  try {
    mkdirSync(daemonDir(store), { recursive: true });
    writeFileSync(marker, `${process.pid}\n`, { flag: 'wx' });
  } catch {
    return false; // another caller is starting one right now
  }
  // what git gives a hook's process for the one command at hand is not the daemon's, nor is
  // `git -c k=v` of that command
  const own = Object.fromEntries(
    Object.entries(env).filter(
      ([k]) => !COMMAND_ONLY.includes(k) && !/^GIT_CONFIG_(PARAMETERS|COUNT|KEY_\d+|VALUE_\d+)$/.test(k),
    ),
  );
  const child = spawn(
    process.execPath,
    [bin, 'daemon', 'run', ...(store.ref === 'refs/memory' ? [] : ['--ref', store.ref])],
    {
      cwd: store.repo.cwd,
      env: { ...own, GIT_MEM_DAEMON: 'off' },
      detached: true,
      stdio: 'ignore',
    },
  );
  child.on('error', () => rmSync(marker, { force: true }));
  child.unref();
  return true;
}

/** Starts a daemon in the background (or finds one starting) and waits until it answers (or gives up after `waitMs`). */
export async function startDaemon(
  store: Store,
  env: NodeJS.ProcessEnv,
  waitMs = 15_000,
): Promise<DaemonReply | undefined> {
  if (socketPath(store).length > MAX_SOCKET_PATH || !binPath()) return undefined;
  launchDaemon(store, env);
  const until = Date.now() + waitMs;
  let delay = 20;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(200, delay * 2);
    const r = await pingDaemon(store);
    if (r) return r;
  }
  return undefined;
}

/**
 * Runs a request through the daemon: the running one, or one started now when
 * the store is big enough. Undefined means "do it in-process". Errors the daemon
 * reports for the request itself (bad input) are rethrown as they are.
 */
/** Whether queryViaDaemon would ask a daemon: one runs (its socket is there) or one is worth starting. */
export function daemonLikely(store: StoreAt, env: NodeJS.ProcessEnv): boolean {
  if (daemonMode(env) === 'off') return false;
  const path = socketPath(store);
  return path.length <= MAX_SOCKET_PATH && (existsSync(path) || worthStarting(store, env));
}

export async function queryViaDaemon(
  store: Store,
  req: DaemonRequest,
  env: NodeJS.ProcessEnv,
): Promise<unknown | undefined> {
  if (daemonMode(env) === 'off') return undefined;
  const path = socketPath(store);
  if (path.length > MAX_SOCKET_PATH) return undefined;
  let alive = existsSync(path);
  if (!alive && !worthStarting(store, env)) return undefined;
  let reply: DaemonReply | undefined;
  try {
    reply = await ask(path, req);
  } catch {
    alive = false;
  }
  if (reply?.ok && reply.build !== buildId()) {
    // a daemon of another git-mem build: replace it when a daemon is wanted here, else leave it be
    if (!worthStarting(store, env)) return undefined;
    await stopDaemon(store);
    reply = undefined;
    alive = false;
  }
  if (!reply) {
    if (alive || !worthStarting(store, env)) return undefined;
    try {
      if (existsSync(path)) unlinkSync(path);
    } catch {}
    // asked for explicitly (GIT_MEM_DAEMON=on): wait for it; on demand: answer in process meanwhile
    if (daemonMode(env) !== 'on') {
      launchDaemon(store, env);
      return undefined;
    }
    if (!(await startDaemon(store, env))) return undefined;
    try {
      reply = await ask(path, req);
    } catch {
      return undefined;
    }
  }
  if (reply.ok) {
    mark(`daemon answered ${req.op}`);
    return reply.result;
  }
  // the daemon refused the connection (busy, request too large): answer in process
  if (isRefusal(reply.error?.code)) return undefined;
  if (reply.error?.code && reply.error.code !== 'E_INTERNAL') {
    const { GitMemError } = await import('../errors.js');
    throw new GitMemError(reply.error.code as never, reply.error.message, reply.error.hint, reply.error.data);
  }
  return undefined;
}

/** How long `daemon stop` waits for the daemon to finish (its last snapshot save) and exit. */
const STOP_WAIT_MS = 10_000;

/**
 * Asks a running daemon to exit and waits until it has: its socket goes at once, then it saves
 * its index snapshot and ends. Whoever stopped it (a person, a script removing the repository, a
 * newer build replacing it) finds nothing still writing under .git/mem.
 */
export async function stopDaemon(store: StoreAt): Promise<boolean> {
  const path = socketPath(store);
  if (!existsSync(path)) return false;
  let pid: number | undefined;
  try {
    pid = (await ask(path, { op: 'stop' }, 5000)).pid;
  } catch {
    try {
      unlinkSync(path);
    } catch {}
    return false;
  }
  const running = () => (!pid || pid === process.pid ? existsSync(path) : processRuns(pid));
  for (const until = Date.now() + STOP_WAIT_MS; running() && Date.now() < until; )
    await new Promise((r) => setTimeout(r, 20));
  return true;
}

/**
 * Whether process `pid` still runs. An exited daemon whose parent never reaps it (a container
 * whose first process is not an init) stays a zombie, which signal 0 still finds: on Linux its
 * state in /proc says so.
 */
function processRuns(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' && existsSync('/proc/self/stat')) return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
