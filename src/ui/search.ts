/**
 * Search for the Memories page: the index `git mem search` uses, asked the
 * way `git mem search` asks it. A store of some size is searched by the query
 * daemon (src/daemon/server.ts), started when none runs: loading an index of
 * thousands of memories takes seconds of one thread, which would hold every
 * other request of this server meanwhile; the daemon's process holds it
 * instead, and answers each keystroke from memory. A small store (or
 * GIT_MEM_DAEMON=off) is searched in this process, as the MCP server does.
 * The search itself is the one `git mem search` makes (src/search/search.ts):
 * same refusals, same ranking, same hits.
 * Keystrokes are never counted as uses of the memories they show.
 */
import { isGitMemError } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import type { SearchHit, SearchQuery } from '../search/index.js';
import type { UiEnv } from './env.js';

/** From this many memories the daemon holds the index (its snapshot is then ~0.5 MiB, AUTO_START_BYTES). */
export const DAEMON_FROM = 500;

async function viaDaemon(env: UiEnv, store: Store): Promise<boolean> {
  if (store !== env.store) return false; // the personal store is searched in process, as search --global does
  if (/^(0|off|no|false)$/i.test(String(env.env.GIT_MEM_DAEMON ?? ''))) return false;
  return (await store.catalog()).size >= DAEMON_FROM;
}

/** Without a setting of its own, a daemon is started when none runs (and waited for: the wait holds no thread). */
function daemonEnv(env: UiEnv): NodeJS.ProcessEnv {
  return env.env.GIT_MEM_DAEMON ? env.env : { ...env.env, GIT_MEM_DAEMON: 'on' };
}

/** How long a search waits for a daemon loading its index (a first build at 10k memories takes seconds). */
const DAEMON_WAIT_MS = 180_000;
const starting = new WeakMap<Store, Promise<unknown>>();

/** A running daemon for the store: the one there, else one started now and waited for (one start for all callers). */
async function daemonUp(env: UiEnv, store: Store): Promise<void> {
  const { pingDaemon, startDaemon } = await import('../daemon/client.js');
  if (await pingDaemon(store)) return;
  let p = starting.get(store);
  if (!p) {
    p = startDaemon(store, daemonEnv(env), DAEMON_WAIT_MS).finally(() => starting.delete(store));
    starting.set(store, p);
  }
  await p;
}

/** The search `git mem search` makes (src/search/search.ts), with the server's daemon policy. */
export async function uiSearch(env: UiEnv, store: Store, q: SearchQuery): Promise<SearchHit[]> {
  let daemon = await viaDaemon(env, store);
  if (daemon) {
    try {
      // never loaded here meanwhile: that would hold every other request of this server
      await daemonUp(env, store);
    } catch (e) {
      if (isGitMemError(e)) throw e;
      daemon = false;
    }
  }
  const { runSearch } = await import('../search/search.js');
  return runSearch(store, q, {
    label: store === env.store ? 'project' : 'global',
    daemonEnv: daemon ? daemonEnv(env) : undefined,
  });
}

/** Readies the index for the first keystroke: the daemon started in the background, or the index loaded here. */
export async function warmSearch(env: UiEnv): Promise<void> {
  const store = env.store;
  if (!(await store.tip())) return;
  if (await viaDaemon(env, store)) {
    await daemonUp(env, store);
    return;
  }
  const { openIndex, providerFor } = await import('../search/index.js');
  await openIndex(store, { provider: await providerFor(store), postings: true });
}
