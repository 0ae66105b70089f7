/**
 * A teammate's fresh clone: the remote has memory (refs/mem/memory), this
 * clone has no store of its own yet, and `git clone` never fetches refs/mem/*.
 * A read that finds no local store takes the remote's memory in (a pull into
 * an empty store is a fast-forward), and `init` adopts it instead of starting
 * a second root that every later sync would have to merge.
 *
 * Without the network (`auto-fetch` off) only what git already fetched is
 * known: the tracking ref `refs/mem-remotes/<remote>/memory` a plain
 * `git fetch` fills after `git mem remote setup`.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memDir } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { listRemotes, readTracking, resolveRemote, trackingRef } from './remote.js';

/** An automatic fetch gives up after this long: an offline read waits no longer. */
export const AUTO_FETCH_TIMEOUT_MS = 8000;
/** After a fetch that found nothing or failed, reads do not ask the remote again for this long. */
const QUIET_MS = 10 * 60 * 1000;
const STAMP = 'auto-fetch.json';

export interface Adoption {
  /**
   * pulled: the remote's memory is now the local store; fetched: git fetch
   * brought it but nothing was merged (auto-fetch off); none: no remote has
   * memory (or there is no remote); failed: the fetch failed or timed out;
   * quiet: a recent fetch found nothing or failed, not asked again yet;
   * present: the store exists already.
   */
  action: 'pulled' | 'fetched' | 'none' | 'failed' | 'quiet' | 'present';
  remote?: string;
  /** the memory commit: the new local tip (pulled) or the tracking ref (fetched) */
  tip?: string | null;
  ref?: string;
  reason?: string;
}

/** The memory git already fetched from any remote (default remote first), from local refs only. */
export async function fetchedRemoteMemory(store: Store): Promise<{ remote: string; tip: string } | null> {
  const remotes = await listRemotes(store).catch(() => [] as string[]);
  if (!remotes.length) return null;
  const first = await resolveRemote(store).then(
    (r) => r.name,
    () => remotes[0],
  );
  for (const name of [first, ...remotes.filter((r) => r !== first)]) {
    const t = await readTracking(store, name);
    if (t.memory) return { remote: name, tip: t.memory };
  }
  return null;
}

interface Stamp {
  remote: string;
  url: string;
  at: number;
}

function readStamp(store: Store): Stamp | null {
  const f = join(store.repo.commonDir, 'mem', STAMP);
  if (!existsSync(f)) return null;
  try {
    return JSON.parse(readFileSync(f, 'utf8')) as Stamp;
  } catch {
    return null;
  }
}

/**
 * For a store with no tip: takes the remote's memory in (autoFetch), or
 * reports what git already fetched. Never throws for the network: a failed
 * fetch is an outcome the caller words.
 */
export async function adoptRemoteMemory(
  store: Store,
  opts: { autoFetch: boolean; timeoutMs?: number; force?: boolean },
): Promise<Adoption> {
  if (await store.tip()) return { action: 'present' };
  const remotes = await listRemotes(store).catch(() => [] as string[]);
  if (!remotes.length) return { action: 'none' };
  const known = await fetchedRemoteMemory(store);
  // our own hooks and fetches set GIT_MEM_NO_SYNC: they never reach the network from here
  if (!opts.autoFetch || store.repo.env.GIT_MEM_NO_SYNC === '1') {
    return known
      ? { action: 'fetched', remote: known.remote, tip: known.tip, ref: trackingRef(known.remote) }
      : { action: 'none' };
  }
  const remote = known
    ? await resolveRemote(store, known.remote)
    : await resolveRemote(store).catch(() => resolveRemote(store, remotes[0]));
  const stamp = readStamp(store);
  if (
    !opts.force &&
    !known &&
    stamp &&
    stamp.remote === remote.name &&
    stamp.url === remote.url &&
    Date.now() - stamp.at < QUIET_MS
  )
    return { action: 'quiet', remote: remote.name };
  const remember = () => {
    try {
      writeFileSync(
        join(memDir(store.repo), STAMP),
        JSON.stringify({ remote: remote.name, url: remote.url, at: Date.now() }),
      );
    } catch {}
  };
  try {
    const { pull } = await import('./sync.js');
    const r = await pull(store, {
      remote: remote.name,
      fetchTimeoutMs: opts.timeoutMs ?? AUTO_FETCH_TIMEOUT_MS,
    });
    if (!r.remoteTip || !r.after) {
      remember();
      return { action: 'none', remote: remote.name };
    }
    return { action: 'pulled', remote: remote.name, tip: r.after };
  } catch (e) {
    remember();
    return { action: 'failed', remote: remote.name, reason: (e as Error).message };
  }
}
