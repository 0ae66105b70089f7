/**
 * `git mem sync`: fetch the remote's memory into a tracking ref, merge it into
 * refs/memory (compare-and-swap), push without force (atomic with the notes),
 * and on a rejected push start again: fetch, merge, push, with bounded retries
 * and jittered backoff. `pull` is the first half, `push` the second.
 *
 * The merge itself is src/merge/merge-commits.ts (it never moves refs); this
 * module owns the refs and the wire. Nothing here ever moves refs/memory
 * except by compare-and-swap from the value the merge was built on, so a
 * local writer racing a sync is merged, never lost, and a failed sync leaves
 * the store exactly as it was (or at a complete merge of both sides).
 */

import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { type LostChange, lostChanges } from './conflicts.js';
import { mergeCommits } from './merge-commits.js';
import { mergeNotes, type NotesMergeResult, notesTip } from './notes.js';
import {
  type FetchResult,
  fetchMemory,
  NOTES_REF,
  type PushRef,
  pushRefs,
  REMOTE_MEMORY_REF,
  type RemoteInfo,
  readTracking,
  resolveRemote,
  setTrackingRefs,
  trackingRefsOf,
} from './remote.js';
import { assertIncoming, assertIncomingNotes, assertIncomingSigned } from './validate-tree.js';

export interface MergeOutcome {
  commit: string | null;
  fastForward: boolean;
  conflicts: string[];
  stats: object;
}
export type MergeFn = (
  store: Store,
  ours: string | null,
  theirs: string | null,
  opts?: { message?: string; now?: Date },
) => Promise<MergeOutcome>;

/** Seams for tests (a remote that moves during the merge) and for progress output. */
export interface SyncHooks {
  /** After the merge is built, before refs/memory moves. */
  beforeLocalUpdate?: (info: {
    attempt: number;
    ours: string | null;
    merged: string | null;
  }) => Promise<void> | void;
  /** After the local merge, before the push. */
  beforePush?: (info: {
    attempt: number;
    local: string | null;
    remote: string | null;
  }) => Promise<void> | void;
}

export interface SyncOptions {
  /** Remote name; default: the current branch's upstream remote, else origin. */
  remote?: string;
  /** Bounded retries of fetch-merge-push after a rejected push (default 8). */
  retries?: number;
  /** Let git prompt on the terminal for credentials. */
  interactive?: boolean;
  hooks?: SyncHooks;
  merge?: MergeFn;
  /** Backoff sleeper (tests pass a fast one). */
  sleep?: (ms: number) => Promise<void>;
  /** Give up a fetch after this long (the automatic fetch of a read that found no store). */
  fetchTimeoutMs?: number;
  /** A remote already resolved (a team store's URL, src/commands/stores.ts) instead of a git remote's name. */
  to?: RemoteInfo;
  /**
   * A read-only copy (a team store registered without --writable): the store's
   * ref follows the remote's tip once it passes the validator, rewound or
   * rewritten history included; no merge commit is ever made.
   */
  follow?: boolean;
}

export interface PullResult {
  remote: string;
  url: string;
  /** The remote's memory commit as fetched (null: the remote has none yet). */
  remoteTip: string | null;
  before: string | null;
  after: string | null;
  /** `reset`: a read-only copy (`follow`) took the remote's tip, which did not descend from its own */
  action: 'up-to-date' | 'ahead' | 'fast-forward' | 'merged' | 'created' | 'empty' | 'reset';
  conflicts: string[];
  /**
   * This clone's own changes that a merge brought in by this pull did not keep
   * (its version went to the attic, or its deletion lost to an edit), whoever
   * built that merge: the records flagged for review on its account.
   */
  flagged: LostChange[];
  stats: object;
  notes: NotesMergeResult['action'];
}

export interface SyncResult extends PullResult {
  /** Milliseconds spent fetching, merging (memory and notes) and pushing, over all attempts. */
  timings: { fetch: number; merge: number; push: number };
  pushed: boolean;
  pushedNotes: boolean;
  attempts: number;
}

export interface PushResultInfo {
  remote: string;
  url: string;
  local: string | null;
  pushed: boolean;
  pushedNotes: boolean;
}

const defaultSleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Jittered exponential backoff: 50 ms doubling to 2 s, each wait drawn from [½, 1½] of it. */
export function backoffMs(attempt: number, rand: () => number = Math.random): number {
  const base = Math.min(2000, 50 * 2 ** Math.max(0, attempt - 1));
  return Math.round(base / 2 + rand() * base);
}

/**
 * Checks what the remote brings before anything is merged (the one validator,
 * validate.ts): everything in `theirs` that differs from the local tip and the
 * merge bases. Throws one line naming the commit, the path and the problem.
 */
async function validateIncoming(store: Store, ours: string | null, theirs: string): Promise<void> {
  const against = await trustedBases(store, ours, theirs);
  await assertIncoming(store, theirs, against);
  if (await requireSigned(store)) await assertIncomingSigned(store, theirs, against);
}

/** The `sync.require-signed` setting (`git config mem.sync.requireSigned true`; the shared file may turn it on, never off). */
async function requireSigned(store: Store): Promise<boolean> {
  const { resolveConfig } = await import('../gitstore/config.js');
  return (await resolveConfig(store.repo.env, store)).values['sync.require-signed'] === true;
}

/** `ours` and its merge bases with `theirs`: what an incoming check compares against. */
async function trustedBases(
  store: Store,
  ours: string | null,
  theirs: string,
): Promise<Array<string | null>> {
  return ours ? [ours, ...(await store.mergeBases(ours, theirs))] : [ours];
}

/**
 * Checks the fetched notes before anything moves: a remote whose notes fail
 * the notes checks is refused whole, the memory included (its refs, the
 * local notes and the tracking refs stay as they were).
 */
async function validateIncomingNotes(store: Store, theirs: string | null): Promise<void> {
  if (!theirs) return;
  const ours = await notesTip(store);
  if (ours === theirs) return;
  await assertIncomingNotes(store, theirs, await trustedBases(store, ours, theirs));
}

async function defaultMerge(): Promise<MergeFn> {
  return mergeCommits;
}

/**
 * Merges the fetched remote tip into refs/memory. Retries the merge (not the
 * fetch) when a local writer moves refs/memory meanwhile.
 */
async function integrate(
  store: Store,
  remote: RemoteInfo,
  theirs: string | null,
  opts: SyncOptions,
  attempt: number,
): Promise<Omit<PullResult, 'notes' | 'remote' | 'url' | 'remoteTip' | 'flagged'>> {
  const merge = opts.merge ?? (await defaultMerge());
  let checked: string | null = null;
  for (let local = 0; local < 30; local++) {
    if (local > 0) {
      // the ref moved meanwhile: back off (a lock is the store's to wait for or name, in casRef)
      await defaultSleep(Math.min(400, 5 * 2 ** Math.min(local, 7)) * (0.5 + Math.random()));
    }
    const ours = await store.tip();
    if (!theirs) return { before: ours, after: ours, action: 'empty', conflicts: [], stats: {} };
    if (ours === theirs) return { before: ours, after: ours, action: 'up-to-date', conflicts: [], stats: {} };
    // one `git merge-base --all` answers both questions below (a side that contains the other is
    // their one merge base) and is the base the incoming check and the merge use
    if (opts.follow && ours && !(await store.isAncestor(ours, theirs))) {
      // the remote rewound or rewrote its history: a copy takes it as it is, checked like any fetch
      if (!(await store.isAncestor(theirs, ours))) await validateIncoming(store, ours, theirs);
      await opts.hooks?.beforeLocalUpdate?.({ attempt, ours, merged: theirs });
      if (await store.casRef(theirs, ours))
        return { before: ours, after: theirs, action: 'reset', conflicts: [], stats: {} };
      continue;
    }
    if (ours && (await store.isAncestor(theirs, ours))) {
      return { before: ours, after: ours, action: 'ahead', conflicts: [], stats: {} };
    }
    let next: string | null;
    let action: PullResult['action'];
    let conflicts: string[] = [];
    let stats: object = {};
    if (!ours || (await store.isAncestor(ours, theirs))) {
      // a fast-forward takes their commits whole: check them first
      if (checked !== theirs) await validateIncoming(store, ours, theirs);
      checked = theirs;
      // the catalog of theirs is built (incrementally) and cached: the next command finds it warm
      await store.catalogAt(theirs);
      next = theirs;
      action = ours ? 'fast-forward' : 'created';
    } else {
      if (checked !== theirs) await validateIncoming(store, ours, theirs);
      checked = theirs;
      const m = await merge(store, ours, theirs, {
        message: `mem: merge ${remote.name}/memory (${theirs.slice(0, 12)})`,
      });
      next = m.commit;
      action = m.fastForward ? 'fast-forward' : 'merged';
      conflicts = m.conflicts;
      stats = m.stats;
    }
    await opts.hooks?.beforeLocalUpdate?.({ attempt, ours, merged: next });
    if (!next || next === ours) return { before: ours, after: ours, action: 'up-to-date', conflicts, stats };
    if (await store.casRef(next, ours)) return { before: ours, after: next, action, conflicts, stats };
    // a local write landed meanwhile (or the ref is locked): merge again on top of it
  }
  throw err('E_CONFLICT_RETRY', `${store.ref} kept moving during the merge`, 'try git mem sync again');
}

function openRemote(store: Store, opts: SyncOptions): Promise<RemoteInfo> {
  return opts.to ? Promise.resolve(opts.to) : resolveRemote(store, opts.remote);
}

/** Fetch and merge, no push. */
export async function pull(store: Store, opts: SyncOptions = {}): Promise<PullResult> {
  const remote = await openRemote(store, opts);
  const prev = await readTracking(store, remote);
  const fetched = await fetchMemory(store, remote, opts.interactive, opts.fetchTimeoutMs);
  const res = await refusing(store, remote, prev, async () => {
    await validateIncomingNotes(store, fetched.notes);
    return integrate(store, remote, fetched.memory, opts, 1);
  });
  const notes = await mergeNotes(store, fetched.notes, await store.ident());
  const flagged = await lostChanges(store, res.before, res.after);
  return {
    remote: remote.name,
    url: remote.url,
    remoteTip: fetched.memory,
    ...res,
    flagged,
    notes: notes.action,
  };
}

function pushList(
  store: Store,
  remote: RemoteInfo,
  local: string | null,
  remoteTip: string | null,
  notes: string | null,
  remoteNotes: string | null,
): PushRef[] {
  const refs: PushRef[] = [];
  const tracking = trackingRefsOf(remote);
  if (local && local !== remoteTip)
    refs.push({ src: store.ref, oid: local, dst: REMOTE_MEMORY_REF, tracking: tracking.memory });
  // a team store has no notes: this repository's notes describe this repository's commits
  if (tracking.notes && notes && notes !== remoteNotes)
    refs.push({ src: NOTES_REF, oid: notes, dst: NOTES_REF, tracking: tracking.notes });
  return refs;
}

/** Push only: fails with a hint to sync when the remote has memory we do not. */
export async function push(store: Store, opts: SyncOptions = {}): Promise<PushResultInfo> {
  const remote = await openRemote(store, opts);
  const local = await store.tip();
  const notes = await notesTip(store);
  const known = await readTracking(store, remote);
  // what we last saw of the remote only decides what to skip; the server checks fast-forward
  const refs = pushList(store, remote, local, null, notes, null).filter(
    (r) => !(r.src === store.ref ? local === known.memory : notes === known.notes),
  );
  if (!refs.length) return { remote: remote.name, url: remote.url, local, pushed: false, pushedNotes: false };
  const r = await pushRefs(store.repo, remote, refs, opts.interactive);
  if (!r.ok) {
    throw err(
      'E_CONFLICT_RETRY',
      `${remote.name} has memory this repository does not (${r.rejected.map((x) => `${x.ref}: ${x.reason}`).join(', ')})`,
      `run git mem sync ${remote.name} to merge it and push`,
      { rejected: r.rejected },
    );
  }
  return {
    remote: remote.name,
    url: remote.url,
    local,
    pushed: refs.some((x) => x.src === store.ref),
    pushedNotes: refs.some((x) => x.src === NOTES_REF),
  };
}

/** Fetch, merge, push; on a rejected push, again, up to `retries` times. */
export async function sync(store: Store, opts: SyncOptions = {}): Promise<SyncResult> {
  const remote = await openRemote(store, opts);
  const retries = Math.max(0, opts.retries ?? 8);
  const sleep = opts.sleep ?? defaultSleep;
  let first: PullResult | undefined;
  const conflicts = new Set<string>();
  const timings = { fetch: 0, merge: 0, push: 0 };
  let lastReason = '';
  let lockedInARow = 0;
  for (let attempt = 1; attempt <= retries + 1; attempt++) {
    let t = performance.now();
    const prev = await readTracking(store, remote);
    const fetched = await fetchMemory(store, remote, opts.interactive);
    timings.fetch += performance.now() - t;
    t = performance.now();
    const res = await refusing(store, remote, prev, async () => {
      await validateIncomingNotes(store, fetched.notes);
      return integrate(store, remote, fetched.memory, opts, attempt);
    });
    for (const c of res.conflicts) conflicts.add(c);
    const notes = await mergeNotes(store, fetched.notes, await store.ident());
    timings.merge += performance.now() - t;
    const pr: PullResult = {
      remote: remote.name,
      url: remote.url,
      remoteTip: fetched.memory,
      ...res,
      flagged: [],
      notes: notes.action,
    };
    if (!first) first = pr;
    const local = res.after;
    await opts.hooks?.beforePush?.({ attempt, local, remote: fetched.memory });
    // what goes is the memory and its notes as they are now, by id: a local write since the merge
    // moved the ref from the merge on (every write is a compare-and-swap on the tip), so it goes too
    const [tipNow, notesNow] = await Promise.all([store.tip(), notesTip(store)]);
    const refs = pushList(
      store,
      remote,
      tipNow ?? local,
      fetched.memory,
      notesNow ?? notes.after,
      fetched.notes,
    );
    const summary = async (pushed: boolean, pushedNotes: boolean): Promise<SyncResult> => ({
      ...pr,
      before: first!.before,
      action: mergedAction(first!, pr),
      conflicts: [...conflicts],
      flagged: await lostChanges(store, first!.before, pr.after),
      pushed,
      pushedNotes,
      attempts: attempt,
      timings: {
        fetch: Math.round(timings.fetch),
        merge: Math.round(timings.merge),
        push: Math.round(timings.push),
      },
    });
    if (!refs.length) return summary(false, false);
    t = performance.now();
    const pushed = await pushRefs(store.repo, remote, refs, opts.interactive);
    timings.push += performance.now() - t;
    if (pushed.ok) {
      return summary(
        refs.some((x) => x.src === store.ref),
        refs.some((x) => x.src === NOTES_REF),
      );
    }
    lastReason = pushed.reason ?? lastReason;
    // the remote cannot lock its ref: a concurrent push clears in moments, a stale lock never does
    lockedInARow = pushed.locked ? lockedInARow + 1 : 0;
    if (lockedInARow >= LOCKED_PUSHES) {
      throw err(
        'E_REMOTE',
        `${remote.name} could not update its memory ref ${lockedInARow} time${lockedInARow === 1 ? '' : 's'}: ${lastReason}`,
        'a lock file on the remote may be left by a crashed git process (its admin can remove it); the local memory holds everything merged so far',
        { remote: remote.name, rejected: pushed.rejected },
      );
    }
    if (attempt <= retries) await sleep(backoffMs(attempt));
  }
  throw err(
    'E_CONFLICT_RETRY',
    `${remote.name} kept moving: the push was rejected ${retries + 1} time${retries ? 's' : ''}${lastReason ? ` (last: ${lastReason})` : ''}`,
    'the local memory holds everything merged so far; run git mem sync again',
  );
}

/** Pushes in a row the remote could not lock its ref for before sync stops and says so. */
const LOCKED_PUSHES = 3;

/**
 * Runs the merge of fetched data; when the validator refuses it, the tracking
 * refs go back to what they were before the fetch, so the refused commit is
 * nowhere in the local refs.
 */
async function refusing<T>(
  store: Store,
  remote: RemoteInfo,
  prev: FetchResult,
  run: () => Promise<T>,
): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if ((e as { code?: string }).code === 'E_MERGE') {
      // the tracking refs back to what they were before the fetch
      const tracking = trackingRefsOf(remote);
      const back: Array<[string, string | null]> = [[tracking.memory, prev.memory]];
      if (tracking.notes) back.push([tracking.notes, prev.notes]);
      await setTrackingRefs(store.repo, back);
    }
    throw e;
  }
}

/** The most telling action over several rounds (a merge in any round is a merge). */
function mergedAction(first: PullResult, last: PullResult): PullResult['action'] {
  const order: PullResult['action'][] = [
    'merged',
    'reset',
    'fast-forward',
    'created',
    'ahead',
    'up-to-date',
    'empty',
  ];
  return order.indexOf(first.action) <= order.indexOf(last.action) ? first.action : last.action;
}
