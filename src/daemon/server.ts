/**
 * The query daemon (server side): keeps one store's search index in memory
 * and answers search and context requests on a Unix socket in
 * .git/mem/search/<ref>/daemon.sock. Every request first brings the index to
 * the ref's current tip (openIndex reads the tip and applies the tree diff),
 * so an answer never reflects an older store. Requests run one at a time.
 * It answers queries (search, context, the duplicate check of an add, the
 * agent's prompt injection, ping and stop), each with the same function a
 * process asking alone would call, so the answer is the one it would get
 * (test/daemon-agreement.test.ts). It runs no command. The one write it does is
 * the post-commit hook's, with the function it is handed (`serve`'s
 * `postCommit`, the one the hook runs alone), for a hook of its own work tree,
 * settings and build only (answerPostCommit): a commit's hook then skips node's
 * cold start of the CLI and its git processes (bench/RESULTS-daemon-paths.md).
 * This folder imports nothing from src/cli: `git mem daemon run` (src/cli/daemon.ts)
 * calls serve(); clients reach it through ./client.ts and ./wire.ts.
 * Connections are bounded (wire.ts): how many at once, how large a
 * request line, how long a client may take to send it.
 * Exits after an idle period (GIT_MEM_DAEMON_IDLE_MS, default 10 minutes),
 * saving the index snapshot if it moved.
 */
import {
  chmodSync,
  existsSync,
  type FSWatcher,
  realpathSync,
  rmSync,
  unlinkSync,
  watch as watchFs,
} from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { basename, dirname, join } from 'node:path';
import { isGitMemError } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import type { DupInput } from '../search/dedup.js';
import {
  buildContextPack,
  type ContextOptions,
  providerFor,
  type SearchQuery,
  searchMemories,
} from '../search/index.js';
import { openIndex, saveSnapshot } from '../search/store-index.js';
import { ask, buildId, type DaemonReply, type DaemonRequest, socketPath } from './client.js';
import {
  E_DAEMON_BUSY,
  E_DAEMON_ELSEWHERE,
  E_DAEMON_TIMEOUT,
  E_DAEMON_TOO_LARGE,
  hookEnv,
  isRefusal,
  MAX_CONNECTIONS,
  MAX_REQUEST_BYTES,
  REQUEST_MS,
  sameHookEnv,
} from './wire.js';

const DEFAULT_IDLE_MS = 10 * 60 * 1000;
const WATCH_MS = 2000;

function envMs(v: string | undefined): number | undefined {
  const n = Number(v);
  return v && Number.isFinite(n) && n > 0 ? n : undefined;
}

export interface DaemonHandle {
  server: Server;
  path: string;
  done: Promise<void>;
  stop: () => void;
}

type IndexState = Awaited<ReturnType<typeof openIndex>>;
type Provider = Awaited<ReturnType<typeof providerFor>>;

/** The post-commit hook's work (src/hooks/post-commit.ts postCommitHook): the lines it says. */
export type PostCommitRunner = (
  store: Store,
  opts: { env: NodeJS.ProcessEnv; start: number },
) => Promise<string[]>;

/** What one daemon answers from: its store, the embedding provider, the index as last brought to the tip. */
interface Served {
  store: Store;
  postCommit?: PostCommitRunner;
  provider: Provider;
  build: string;
  started: number;
  st: IndexState;
  stop: () => void;
  log?: (s: string) => void;
}

/**
 * One throwaway query of each kind before the first client: the first calls of a path run
 * unoptimised and allocate its caches, which the first adds and prompts would otherwise pay for.
 */
async function warmUp(store: Store, provider: Provider): Promise<void> {
  try {
    const { findDuplicates } = await import('../search/dedup.js');
    await findDuplicates(
      store,
      { title: 'git-mem daemon warm-up', body: 'warm up the query paths' },
      provider,
    );
    await searchMemories(
      store,
      { query: 'git-mem daemon warm-up', limit: 5 },
      { provider, recordUsage: false },
    );
    const { relevantMemories } = await import('../search/relevance.js');
    await relevantMemories(store, 'git-mem daemon warm-up: the prompt relevance pass');
  } catch {}
}

/** The agent's prompt (UserPromptSubmit, src/hooks/claude-code.ts): the same promptContext the hook would run alone. */
async function answerPrompt(d: Served, raw: unknown): Promise<DaemonReply> {
  const q = (raw ?? {}) as { prompt?: unknown; exclude?: unknown; maxChars?: unknown; countUse?: unknown };
  if (typeof q.prompt !== 'string')
    return {
      ok: false,
      error: { code: 'E_INVALID_ARG', message: 'prompt: a string is required' },
      build: d.build,
    };
  const { promptContext } = await import('../search/relevance.js');
  const inj = await promptContext(d.store, q.prompt, {
    exclude: new Set(Array.isArray(q.exclude) ? q.exclude.map(String) : []),
    maxChars: typeof q.maxChars === 'number' ? q.maxChars : undefined,
  });
  if (q.countUse === true && inj.ids.length) {
    const { recordUse } = await import('../search/usage.js');
    recordUse(d.store.repo, inj.ids);
  }
  return { ok: true, build: d.build, result: inj };
}

/** The line a post-commit request gets when its turn comes, before its answer (wire.ts askStarted). */
const STARTED: DaemonReply = { ok: true, started: true };

/** The real path of a directory, or the path itself where it cannot be resolved. */
function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * The post-commit hook of a commit made in this daemon's work tree: the function the hook would run
 * alone, on this warm store. Refused (E_DAEMON_ELSEWHERE: the hook then runs in its own process)
 * unless the hook is of this build, runs in this work tree, and its settings (hookEnv: git's and
 * git-mem's variables, where the configuration is) are this daemon's; of the hook's environment
 * only who the verdicts are by (HOOK_WHO: the author git names, the agent) is taken, for this commit.
 */
async function answerPostCommit(d: Served, raw: unknown, started: () => void): Promise<DaemonReply> {
  const start = performance.now();
  const q = (raw ?? {}) as { cwd?: unknown; build?: unknown; env?: unknown };
  const env = q.env && typeof q.env === 'object' ? (q.env as Record<string, unknown>) : undefined;
  const strings = env && Object.values(env).every((v) => typeof v === 'string');
  const refuse = (message: string): DaemonReply => ({
    ok: false,
    error: { code: E_DAEMON_ELSEWHERE, message },
    build: d.build,
  });
  if (!d.postCommit) return refuse('this daemon does not run hooks');
  if (q.build !== d.build) return refuse('a hook of another build');
  if (typeof q.cwd !== 'string' || !d.store.repo.workTree || real(q.cwd) !== real(d.store.repo.workTree))
    return refuse('a hook of another work tree');
  if (!strings || !sameHookEnv(hookEnv(d.store.repo.env), env as Record<string, string>))
    return refuse('a hook with other settings');
  // the hook waits a little for its turn, then runs alone; from here on it waits for this answer
  started();
  // the runner leaves the store as it found it (who the verdicts were by is this commit's only)
  const lines = await d.postCommit(d.store, { env: env as Record<string, string>, start });
  return { ok: true, build: d.build, result: { lines } };
}

/** The answer to one request line: each op with the function a process asking alone would call. */
async function answer(d: Served, line: string, started: () => void = () => {}): Promise<DaemonReply> {
  const { store, provider, build } = d;
  let req: DaemonRequest;
  try {
    req = JSON.parse(line) as DaemonRequest;
  } catch {
    return { ok: false, error: { code: 'E_INVALID_ARG', message: 'bad request' }, build };
  }
  try {
    switch (req.op) {
      case 'ping':
        d.st = await openIndex(store, { provider, postings: true });
        return {
          ok: true,
          build,
          pid: process.pid,
          tip: d.st.tip,
          memories: d.st.index.size,
          uptimeMs: Date.now() - d.started,
          workTree: store.repo.workTree ?? null,
        };
      case 'stop':
        setImmediate(d.stop);
        return { ok: true, build, pid: process.pid };
      case 'search':
        return {
          ok: true,
          build,
          result: await searchMemories(store, req.q as SearchQuery, {
            provider,
            recordUsage: req.count === true,
          }),
        };
      case 'dedup': {
        const { findDuplicates } = await import('../search/dedup.js');
        return { ok: true, build, result: await findDuplicates(store, req.q as DupInput, provider) };
      }
      case 'prompt':
        return await answerPrompt(d, req.q);
      case 'post-commit':
        return await answerPostCommit(d, req.q, started);
      case 'context':
        return {
          ok: true,
          build,
          result: await buildContextPack(store, req.q as ContextOptions, { provider }),
        };
      default:
        return {
          ok: false,
          error: { code: 'E_INVALID_ARG', message: `unknown op ${String((req as { op?: unknown }).op)}` },
          build,
        };
    }
  } catch (e) {
    if (isGitMemError(e))
      return { ok: false, error: { code: e.code, message: e.message, hint: e.hint, data: e.data }, build };
    d.log?.(`daemon: ${(e as Error).stack ?? e}`);
    return { ok: false, error: { code: 'E_INTERNAL', message: String((e as Error).message ?? e) }, build };
  }
}

/** The last line to a client: what it still sends is read and dropped (so it reads the line and a clean close), and it has a second to go. */
function finish(sock: Socket, reply: DaemonReply): void {
  if (sock.destroyed) return;
  sock.removeAllListeners('data');
  sock.on('data', () => {});
  sock.resume();
  sock.end(`${JSON.stringify(reply)}\n`);
  const t = setTimeout(() => sock.destroy(), 1000);
  t.unref?.();
  sock.once('close', () => clearTimeout(t));
}

/**
 * The connection handler: one request per connection, bounded: at most `maxConnections` at once,
 * a request line of at most `maxRequestBytes`, complete within `requestMs` of connecting; anything
 * else is answered with one error line and closed, so no client can make the daemon hold more than
 * cap × limit bytes. A whole request line goes to `onLine`, whose reply ends the connection.
 */
function connections(
  limits: { maxConnections: number; maxRequestBytes: number; requestMs: number; build: string },
  onLine: (line: string, sock: Socket) => void,
): (sock: Socket) => void {
  let open = 0;
  const refuse = (sock: Socket, code: string, message: string) =>
    finish(sock, { ok: false, error: { code, message }, build: limits.build });
  return (sock) => {
    open++;
    sock.once('close', () => open--);
    sock.on('error', () => {});
    if (open > limits.maxConnections) {
      refuse(sock, E_DAEMON_BUSY, `the daemon is serving ${limits.maxConnections} connections; try again`);
      return;
    }
    let chunks: Buffer[] = [];
    let size = 0;
    const deadline = setTimeout(() => {
      chunks = [];
      refuse(sock, E_DAEMON_TIMEOUT, `no complete request within ${limits.requestMs} ms; connection closed`);
    }, limits.requestMs);
    deadline.unref?.();
    sock.once('close', () => {
      clearTimeout(deadline);
      chunks = [];
    });
    const onData = (d: Buffer) => {
      const nl = d.indexOf(10);
      const take = nl < 0 ? d.length : nl;
      if (size + take > limits.maxRequestBytes) {
        clearTimeout(deadline);
        chunks = [];
        refuse(
          sock,
          E_DAEMON_TOO_LARGE,
          `request over ${limits.maxRequestBytes} bytes refused; connection closed`,
        );
        return;
      }
      chunks.push(nl < 0 ? d : d.subarray(0, nl));
      size += take;
      if (nl < 0) return;
      // a whole request: stop reading (anything after it is ignored) and answer in turn; a client
      // that goes away meanwhile is still seen to (its request is then dropped, not run)
      sock.off('data', onData);
      sock.pause();
      clearTimeout(deadline);
      const line = Buffer.concat(chunks, size).toString('utf8');
      chunks = [];
      onLine(line, sock);
    };
    sock.on('data', onData);
  };
}

/** Calls `onChange` when the store's ref moves (its loose ref file or packed-refs), where the platform can watch. */
function watchRef(store: Store, onChange: () => void): FSWatcher[] {
  const refFile = join(store.repo.commonDir, store.ref);
  const watchers: FSWatcher[] = [];
  for (const [dir, name] of [
    [dirname(refFile), basename(refFile)],
    [store.repo.commonDir, 'packed-refs'],
  ]) {
    try {
      const w = watchFs(dir, { persistent: false }, (_ev, file) => {
        if (file === name) onChange();
      });
      w.on('error', () => {});
      watchers.push(w);
    } catch {
      // no inotify here: requests still bring the index to the tip themselves
    }
  }
  return watchers;
}

/** Starts serving; resolves once listening. Rejects with E_DAEMON_RUNNING semantics (code 'EADDRINUSE') if another daemon answers. */
export async function serve(
  store: Store,
  opts: {
    idleMs?: number;
    log?: (s: string) => void;
    /** connections served at once (default MAX_CONNECTIONS) */
    maxConnections?: number;
    /** bytes of one request line (default MAX_REQUEST_BYTES) */
    maxRequestBytes?: number;
    /** time for a connection to send its whole request (default REQUEST_MS, env GIT_MEM_DAEMON_REQUEST_MS) */
    requestMs?: number;
    /** the post-commit hook's work, for hooks of this work tree (op `post-commit`); none: refused */
    postCommit?: PostCommitRunner;
  } = {},
): Promise<DaemonHandle> {
  const path = socketPath(store);
  store.longLived = true; // it answers call after call: the catalog and parsed records stay in memory
  const idleMs = opts.idleMs ?? DEFAULT_IDLE_MS;
  // load the index before accepting connections (the git helpers start first, see openIndex)
  const provider = await providerFor(store);
  // a long-lived process builds the postings once, then answers from them
  const d: Served = {
    store,
    postCommit: opts.postCommit,
    provider,
    build: buildId(),
    started: Date.now(),
    st: await openIndex(store, { provider, postings: true }),
    stop: () => stop(),
    log: opts.log,
  };
  await warmUp(store, provider);
  // test hook: a daemon slow to load (the on-demand start must not wait for it)
  const delay = Number(store.repo.env.GIT_MEM_TEST_DAEMON_LOAD_MS ?? 0);
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  let queue: Promise<unknown> = Promise.resolve();
  let idle: NodeJS.Timeout | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });

  const limits = {
    maxConnections: opts.maxConnections ?? MAX_CONNECTIONS,
    maxRequestBytes: opts.maxRequestBytes ?? MAX_REQUEST_BYTES,
    requestMs: opts.requestMs ?? envMs(store.repo.env.GIT_MEM_DAEMON_REQUEST_MS) ?? REQUEST_MS,
    build: d.build,
  };
  const server = createServer(
    connections(limits, (line, sock) => {
      queue = queue.then(async () => {
        // a client that stopped waiting (a post-commit hook that ran alone meanwhile) is not answered
        if (sock.destroyed) return;
        const reply = await answer(d, line, () => sock.write(`${JSON.stringify(STARTED)}\n`));
        // a request served keeps the daemon up; a refused one (busy, too large, too slow) does not
        if (reply.ok || !isRefusal(reply.error?.code)) armIdle();
        // then closed by us: a client that never closes its end does not keep a connection slot
        finish(sock, reply);
      });
    }),
  );

  function armIdle(): void {
    if (idle) clearTimeout(idle);
    idle = setTimeout(stop, idleMs);
    idle.unref?.();
  }

  let stopped = false;
  function stop(): void {
    if (stopped) return;
    stopped = true;
    if (idle) clearTimeout(idle);
    server.close();
    try {
      unlinkSync(path);
    } catch {}
    queue.finally(async () => {
      try {
        d.st = await openIndex(store, { provider, persist: false });
        if (d.st.pending > 0 || d.st.savedTip !== d.st.tip) await saveSnapshot(store, d.st);
      } catch {}
      resolveDone();
    });
  }

  // a write to the ref (an add, a sync…) is applied to the index as soon as it lands, in the
  // queue like a request, so the next question (often the next add's duplicate check) finds
  // the index current instead of paying for the tree diff itself
  let refresh: NodeJS.Timeout | undefined;
  const watchers = watchRef(store, () => {
    if (refresh || stopped) return;
    refresh = setTimeout(() => {
      refresh = undefined;
      queue = queue.then(async () => {
        try {
          d.st = await openIndex(store, { provider, postings: true });
        } catch (e) {
          opts.log?.(`daemon: refresh: ${(e as Error).message}`);
        }
      });
    }, 5);
    refresh.unref?.();
  });
  try {
    await listen(server, path);
  } finally {
    // started on demand: listening (or not starting after all), so callers may ask or start
    // another now (client.ts launchDaemon)
    rmSync(join(dirname(path), 'starting'), { force: true });
  }
  try {
    chmodSync(path, 0o600);
  } catch {}
  armIdle();
  // the socket removed (or the repository deleted, as with temporary test repos): nobody can reach us
  const watch = setInterval(() => {
    if (!existsSync(path)) stop();
  }, WATCH_MS);
  watch.unref?.();
  done.finally(() => {
    clearInterval(watch);
    if (refresh) clearTimeout(refresh);
    for (const w of watchers) w.close();
  });
  return { server, path, done, stop };
}

function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const tryListen = (retry: boolean) => {
      server.once('error', async (e: NodeJS.ErrnoException) => {
        if (e.code !== 'EADDRINUSE' || !retry) return reject(e);
        // a socket file is there: another daemon, or a dead one's leftover
        try {
          await ask(path, { op: 'ping' }, 2000);
          reject(e); // alive: leave it serving
        } catch {
          try {
            if (existsSync(path)) unlinkSync(path);
          } catch {}
          tryListen(false);
        }
      });
      server.listen(path, () => resolve());
    };
    tryListen(true);
  });
}
