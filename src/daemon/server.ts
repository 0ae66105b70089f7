/**
 * The query daemon (server side): keeps one store's search index in memory
 * and answers search and context requests on a Unix socket in
 * .git/mem/search/<ref>/daemon.sock. Every request first brings the index to
 * the ref's current tip (openIndex reads the tip and applies the tree diff),
 * so an answer never reflects an older store. Requests run one at a time.
 * It answers queries only (search, context, the duplicate check of an add, the
 * agent's prompt injection, ping and stop): each with the same function a
 * process asking alone would call, so the answer is the one it would get
 * (test/daemon-agreement.test.ts). It runs no command and writes no memory.
 * This folder imports nothing from src/cli: `git mem daemon run` (src/cli/daemon.ts)
 * calls serve(); clients reach it through ./client.ts and ./wire.ts.
 * Connections are bounded (wire.ts): how many at once, how large a
 * request line, how long a client may take to send it.
 * Exits after an idle period (GIT_MEM_DAEMON_IDLE_MS, default 10 minutes),
 * saving the index snapshot if it moved.
 */
import { chmodSync, existsSync, type FSWatcher, rmSync, unlinkSync, watch as watchFs } from 'node:fs';
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
  E_DAEMON_TIMEOUT,
  E_DAEMON_TOO_LARGE,
  isRefusal,
  MAX_CONNECTIONS,
  MAX_REQUEST_BYTES,
  REQUEST_MS,
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
  } = {},
): Promise<DaemonHandle> {
  const path = socketPath(store);
  store.longLived = true; // it answers call after call: the catalog and parsed records stay in memory
  const idleMs = opts.idleMs ?? DEFAULT_IDLE_MS;
  const started = Date.now();
  const build = buildId();
  // load the index before accepting connections (the git helpers start first, see openIndex)
  const provider = await providerFor(store);
  // a long-lived process builds the postings once, then answers from them
  let st = await openIndex(store, { provider, postings: true });
  // one throwaway query of each kind before the first client: the first calls of a path run
  // unoptimised and allocate its caches, which the first adds and prompts would otherwise pay for
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
  // test hook: a daemon slow to load (the on-demand start must not wait for it)
  const delay = Number(store.repo.env.GIT_MEM_TEST_DAEMON_LOAD_MS ?? 0);
  if (delay > 0) await new Promise((r) => setTimeout(r, delay));
  let queue: Promise<unknown> = Promise.resolve();
  let idle: NodeJS.Timeout | undefined;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });

  // one request per connection, bounded: at most MAX_CONNECTIONS at once, a request line of at most
  // MAX_REQUEST_BYTES, complete within requestMs of connecting; anything else is answered with one
  // error line and closed, so no client can make the daemon hold more than cap × limit bytes
  const maxConnections = opts.maxConnections ?? MAX_CONNECTIONS;
  const maxRequestBytes = opts.maxRequestBytes ?? MAX_REQUEST_BYTES;
  const requestMs = opts.requestMs ?? envMs(store.repo.env.GIT_MEM_DAEMON_REQUEST_MS) ?? REQUEST_MS;
  let open = 0;
  /** The last line to a client: what it still sends is read and dropped (so it reads the line and a clean close), and it has a second to go. */
  const finish = (sock: Socket, reply: DaemonReply) => {
    if (sock.destroyed) return;
    sock.removeAllListeners('data');
    sock.on('data', () => {});
    sock.resume();
    sock.end(`${JSON.stringify(reply)}\n`);
    const t = setTimeout(() => sock.destroy(), 1000);
    t.unref?.();
    sock.once('close', () => clearTimeout(t));
  };
  const refuse = (sock: Socket, code: string, message: string) =>
    finish(sock, { ok: false, error: { code, message }, build });
  const server = createServer((sock) => {
    open++;
    sock.once('close', () => open--);
    sock.on('error', () => {});
    if (open > maxConnections) {
      refuse(sock, E_DAEMON_BUSY, `the daemon is serving ${maxConnections} connections; try again`);
      return;
    }
    let chunks: Buffer[] = [];
    let size = 0;
    const deadline = setTimeout(() => {
      chunks = [];
      refuse(sock, E_DAEMON_TIMEOUT, `no complete request within ${requestMs} ms; connection closed`);
    }, requestMs);
    deadline.unref?.();
    sock.once('close', () => {
      clearTimeout(deadline);
      chunks = [];
    });
    const onData = (d: Buffer) => {
      const nl = d.indexOf(10);
      const take = nl < 0 ? d.length : nl;
      if (size + take > maxRequestBytes) {
        clearTimeout(deadline);
        chunks = [];
        refuse(sock, E_DAEMON_TOO_LARGE, `request over ${maxRequestBytes} bytes refused; connection closed`);
        return;
      }
      chunks.push(nl < 0 ? d : d.subarray(0, nl));
      size += take;
      if (nl < 0) return;
      // a whole request: stop reading (anything after it is ignored) and answer in turn
      sock.off('data', onData);
      sock.pause();
      clearTimeout(deadline);
      const line = Buffer.concat(chunks, size).toString('utf8');
      chunks = [];
      queue = queue.then(async () => {
        if (sock.destroyed) return;
        const reply = await handle(line);
        // a request served keeps the daemon up; a refused one (busy, too large, too slow) does not
        if (reply.ok || !isRefusal(reply.error?.code)) armIdle();
        // then closed by us: a client that never closes its end does not keep a connection slot
        finish(sock, reply);
      });
    };
    sock.on('data', onData);
  });

  async function handle(line: string): Promise<DaemonReply> {
    let req: DaemonRequest;
    try {
      req = JSON.parse(line) as DaemonRequest;
    } catch {
      return { ok: false, error: { code: 'E_INVALID_ARG', message: 'bad request' }, build };
    }
    try {
      switch (req.op) {
        case 'ping':
          st = await openIndex(store, { provider, postings: true });
          return {
            ok: true,
            build,
            pid: process.pid,
            tip: st.tip,
            memories: st.index.size,
            uptimeMs: Date.now() - started,
            workTree: store.repo.workTree ?? null,
          };
        case 'stop':
          setImmediate(stop);
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
        case 'prompt': {
          // the agent's UserPromptSubmit hook (src/hooks/claude-code.ts): the whole injection, decided here
          // where the catalog and a git reader are warm, so the hook process loads nothing of the store;
          // the same function as the hook's own, so the answer is the one it would give alone
          const q = (req.q ?? {}) as {
            prompt?: unknown;
            exclude?: unknown;
            maxChars?: unknown;
            countUse?: unknown;
          };
          if (typeof q.prompt !== 'string')
            return {
              ok: false,
              error: { code: 'E_INVALID_ARG', message: 'prompt: a string is required' },
              build,
            };
          const { promptContext } = await import('../search/relevance.js');
          const inj = await promptContext(store, q.prompt, {
            exclude: new Set(Array.isArray(q.exclude) ? q.exclude.map(String) : []),
            maxChars: typeof q.maxChars === 'number' ? q.maxChars : undefined,
          });
          if (q.countUse === true && inj.ids.length) {
            const { recordUse } = await import('../search/usage.js');
            recordUse(store.repo, inj.ids);
          }
          return { ok: true, build, result: inj };
        }
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
      opts.log?.(`daemon: ${(e as Error).stack ?? e}`);
      return { ok: false, error: { code: 'E_INTERNAL', message: String((e as Error).message ?? e) }, build };
    }
  }

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
        st = await openIndex(store, { provider, persist: false });
        if (st.pending > 0 || st.savedTip !== st.tip) await saveSnapshot(store, st);
      } catch {}
      resolveDone();
    });
  }

  // a write to the ref (an add, a sync…) is applied to the index as soon as it lands, in the
  // queue like a request, so the next question (often the next add's duplicate check) finds
  // the index current instead of paying for the tree diff itself
  const refFile = join(store.repo.commonDir, store.ref);
  let refresh: NodeJS.Timeout | undefined;
  const onRefChange = () => {
    if (refresh || stopped) return;
    refresh = setTimeout(() => {
      refresh = undefined;
      queue = queue.then(async () => {
        try {
          st = await openIndex(store, { provider, postings: true });
        } catch (e) {
          opts.log?.(`daemon: refresh: ${(e as Error).message}`);
        }
      });
    }, 5);
    refresh.unref?.();
  };
  const watchers: FSWatcher[] = [];
  for (const [dir, name] of [
    [dirname(refFile), basename(refFile)],
    [store.repo.commonDir, 'packed-refs'],
  ]) {
    try {
      const w = watchFs(dir, { persistent: false }, (_ev, file) => {
        if (file === name) onRefChange();
      });
      w.on('error', () => {});
      watchers.push(w);
    } catch {
      // no inotify here: requests still bring the index to the tip themselves
    }
  }
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
