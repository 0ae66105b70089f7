/**
 * Recording a check's verdicts: each judged record's anchors updated (completed, moved, given a
 * verdict when it is news) and its status (stale while any anchor is stale, active again once all
 * are fine), then one memory commit of the records that changed, the code blobs their anchors now
 * point at and the renamed literal scopes — with the post-commit hook's note beside it in the same
 * transaction — and the anchor index kept warm. Only the default branch's tip is recorded.
 */

import type { NoteAdd, Store } from '../gitstore/store.js';
import { applyPatch } from '../model/patch.js';
import { type Anchor, type MemoryRecord, recordPath, serializeRecord } from '../model/record.js';
import { mark } from '../trace.js';
import { sharedTarget } from './branch.js';
import type { Work } from './check-select.js';
import type { AnchorResult, CheckOptions, CheckReport, StatusChange } from './check-types.js';
import { type AnchorIndex, saveIndex } from './index-cache.js';
import { type Outcome, verdictOf } from './judge.js';
import { anchorBlobPath, checkedBlobPath } from './prepare.js';
import { moveScopes, putScopeMoves, type ScopeMove } from './scopes.js';
import { blobId } from './text.js';
import {
  baseOf,
  type FullAnchor,
  isComplete,
  STALE_REASONS_KEY,
  STALE_VERDICTS,
  staleReasonsField,
  staleReasonsOfAnchors,
  staleReasonText,
} from './types.js';

/** A check's verdicts applied to its records: what it reports, and what it would write. */
export interface Applied {
  results: AnchorResult[];
  /** Records whose anchors or status changed (what gets written). */
  updated: Map<string, MemoryRecord>;
  changes: StatusChange[];
  /** Code blobs the anchors now point at (kept reachable in the ref). */
  newBlobs: Set<string>;
  /**
   * Where the moved anchors' code was kept in the ref: text already there is no new exposure to
   * the secret scan of the write (Store.assertNoNewSecrets).
   */
  fromPaths: Set<string>;
}

/**
 * Applies the outcomes to copies of their records and collects the results. `newer`: anchors
 * (`id:index`) confirmed at a commit the target does not contain: judged and reported, never
 * written (it would move the record back).
 */
export function applyVerdicts(
  records: ReadonlyMap<string, MemoryRecord>,
  outcomes: ReadonlyMap<string, Map<number, Outcome>>,
  newer: ReadonlySet<string>,
  targetName: string,
  now: string,
  worktree: boolean,
  results: AnchorResult[],
): Applied {
  const updated = new Map<string, MemoryRecord>();
  const changes: StatusChange[] = [];
  const newBlobs = new Set<string>();
  const fromPaths = new Set<string>();
  for (const [id, byIndex] of outcomes) {
    const rec = records.get(id)!;
    const next = applyOutcomes(rec, byIndex, targetName, now, !worktree);
    const kept = newer.size ? new Map([...byIndex].filter(([i]) => !newer.has(`${id}:${i}`))) : byIndex;
    const written = kept === byIndex ? next : applyOutcomes(rec, kept, targetName, now, !worktree);
    next.record.anchors.forEach((a, i) => {
      const o = byIndex.get(i);
      if (!o) return;
      const fa = a as FullAnchor;
      results.push({
        id,
        title: rec.title,
        index: i,
        anchor: fa,
        verdict: verdictOf(o, rec.anchors[i] as FullAnchor, targetName, now),
        stale: STALE_VERDICTS.has(o.status),
        news: next.newVerdicts.has(i),
        ...(newer.has(`${id}:${i}`) ? { newer: true } : {}),
      });
      if (o.completed?.blob) newBlobs.add(o.completed.blob);
      if (o.current?.blob && !worktree) newBlobs.add(o.current.blob);
      const was = rec.anchors[i] as FullAnchor;
      if (was.blob) {
        fromPaths.add(anchorBlobPath(was.blob));
        if (was.commit) fromPaths.add(checkedBlobPath(was.commit, was.blob));
      }
      // where an earlier check moved it: kept under the commit that check judged
      if (was.current?.blob) {
        fromPaths.add(anchorBlobPath(was.current.blob));
        fromPaths.add(checkedBlobPath(was.current.commit, was.current.blob));
      }
    });
    if (written.changed) {
      updated.set(id, written.record);
      if (written.record.status !== rec.status) {
        changes.push({
          id,
          title: rec.title,
          from: rec.status,
          to: written.record.status,
          reasons: staleReasonsOfAnchors(written.record.anchors).map(staleReasonText),
        });
      }
    }
  }
  results.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : x.index - y.index));
  return { results, updated, changes, newBlobs, fromPaths };
}

/** What `recordVerdicts` needs besides the store and the options. */
export interface ToRecord {
  tip: string | null;
  target: string | null;
  targetName: string;
  applied: Applied;
  scopeMoves: readonly ScopeMove[];
  /** The records judged as read, their blob ids, and the anchor index they came from. */
  records: ReadonlyMap<string, MemoryRecord>;
  oids: ReadonlyMap<string, string>;
  idx: AnchorIndex;
}

/**
 * Writes the verdicts as one memory commit (compare-and-swap: a lost race re-applies them onto
 * the records as they are then), the renamed scopes of the same records and any other, and the
 * note `opts.note` builds in the same transaction; keeps the anchor index warm. Returns the
 * memory commit the ref is at and whether this check moved it.
 */
export async function recordVerdicts(
  store: Store,
  opts: CheckOptions,
  w: ToRecord,
): Promise<{ memoryCommit: string | null; recorded: boolean }> {
  const { tip, target, targetName, scopeMoves, records, oids, idx } = w;
  const { results, updated, changes, newBlobs, fromPaths } = w.applied;
  // a record written for its anchors carries its renamed scopes in the same write
  for (const [id, rec] of updated) {
    const moved = moveScopes(rec, scopeMoves);
    if (moved) updated.set(id, moved);
  }
  // records changed for their scopes alone: the index cache is not told about them
  let scopeOnly = 0;
  const label = opts.label ?? 'mem: check';
  // records, counted as the post-commit hook and `check` count them: those that went stale with
  // this check (not every anchor found stale, nor memories stale already), and those whose
  // anchors moved
  const staleN = changes.filter((c) => c.to === 'stale').length;
  const movedN = new Set(
    results
      .filter((r) => updated.has(r.id) && (r.verdict.status === 'moved' || r.verdict.status === 'renamed'))
      .map((r) => r.id),
  ).size;
  // each record is serialised once: for the write and for the index entry of its new blob
  const texts = new Map<string, string>();
  const res = await store.write(
    async (tx) => {
      let n = 0;
      for (const [id, rec] of updated) {
        let merged: MemoryRecord | null = rec;
        if (tx.base !== tip) {
          // lost a race: re-apply onto the record as it is now (skip it if it was removed meanwhile)
          let cur: MemoryRecord;
          try {
            cur = await tx.get(id);
          } catch {
            continue;
          }
          merged = rebase(cur, rec);
        }
        if (!merged) continue;
        let text = merged === rec ? texts.get(id) : undefined;
        if (text === undefined) {
          text = serializeRecord(merged);
          if (merged === rec) texts.set(id, text);
        }
        tx.put(recordPath(id), text);
        n++;
      }
      scopeOnly = await putScopeMoves(tx, scopeMoves, updated);
      n += scopeOnly;
      for (const b of newBlobs) tx.putOid(target ? checkedBlobPath(target, b) : anchorBlobPath(b), b);
      for (const p of fromPaths) tx.seen.add(p);
      if (!n) return null;
      return {
        message: `${label} ${targetName.slice(0, 12)}: ${n} record${n === 1 ? '' : 's'} updated (${staleN} went stale, ${movedN} moved)`,
        value: n,
      };
    },
    { allowSecret: opts.allowSecret, ...(opts.note ? { note: () => opts.note!(results) } : {}) },
  );
  mark('check: recorded');
  const memoryCommit = res.commit;
  const recorded = res.commit !== tip;
  if (recorded && res.attempts === 1 && res.commit && !scopeOnly) {
    // keep the anchor index warm: we know exactly what changed
    const changed = new Map<
      string,
      { before: MemoryRecord; beforeOid: string; after: MemoryRecord; afterOid: string }
    >();
    for (const [id, rec] of updated) {
      const oid = blobId(texts.get(id) ?? serializeRecord(rec));
      changed.set(id, { before: records.get(id)!, beforeOid: oids.get(id)!, after: rec, afterOid: oid });
    }
    saveIndex(store, res.commit, idx, changed);
    mark('check: index saved');
  }
  return { memoryCommit, recorded };
}

/**
 * A check that selected no anchor: renamed scopes are still recorded, on the default branch.
 */
export async function recordScopeMoves(
  store: Store,
  opts: CheckOptions,
  tip: string | null,
  target: string | null,
  targetName: string,
  scopeMoves: readonly ScopeMove[],
): Promise<{ memoryCommit: string | null; written: number; branch?: CheckReport['branch'] }> {
  let memoryCommit = tip;
  let written = 0;
  let branch: CheckReport['branch'];
  if (scopeMoves.length && target && !opts.dryRun) {
    const st = await sharedTarget(store, target);
    branch = { name: st.branch.name, shared: st.shared };
    if (st.shared) {
      const res = await store.write(
        async (tx) => {
          const n = await putScopeMoves(tx, scopeMoves, new Map());
          if (!n) return null;
          return {
            message: `${opts.label ?? 'mem: check'} ${targetName.slice(0, 12)}: ${n} record${n === 1 ? '' : 's'} updated (0 went stale, ${n} scope${n === 1 ? '' : 's'} followed a rename)`,
            value: n,
          };
        },
        { allowSecret: opts.allowSecret },
      );
      memoryCommit = res.commit;
      written = res.value ?? 0;
    }
  }
  return { memoryCommit, written, ...(branch ? { branch } : {}) };
}

/** The verdicts go into the note alone (a check of a commit that is not the default branch's tip). */
export async function noteOnly(
  store: Store,
  note: (results: readonly AnchorResult[]) => Promise<NoteAdd | null>,
  results: readonly AnchorResult[],
): Promise<void> {
  const n = await note(results);
  if (n) await store.addNote(n);
}

/**
 * The anchors (`id:index`) of `work` whose base — where the record last
 * confirmed them — is a commit `target` does not contain: one ancestry
 * question per distinct commit (anchors share a few). An anchor without a
 * commit (made on uncommitted code) is taken as contained.
 */
export async function confirmedElsewhere(
  store: Store,
  target: string,
  work: readonly Work[],
  records: ReadonlyMap<string, MemoryRecord>,
): Promise<Set<string>> {
  const byCommit = new Map<string, string[]>();
  for (const w of work) {
    const a = records.get(w.id)?.anchors[w.index];
    const c = a && isComplete(a) ? baseOf(a as FullAnchor)?.commit : null;
    if (!c || c === target) continue;
    const keys = byCommit.get(c) ?? [];
    keys.push(`${w.id}:${w.index}`);
    byCommit.set(c, keys);
  }
  const out = new Set<string>();
  const answers = await Promise.all([...byCommit.keys()].map((c) => store.isAncestor(c, target)));
  [...byCommit.values()].forEach((keys, i) => {
    if (!answers[i]) for (const k of keys) out.add(k);
  });
  return out;
}

/** Re-applies our anchor updates onto a record that changed meanwhile (lost race); null when they no longer fit. */
function rebase(cur: MemoryRecord, ours: MemoryRecord): MemoryRecord | null {
  if (cur.anchors.length !== ours.anchors.length) return null;
  for (let i = 0; i < cur.anchors.length; i++) {
    const a = cur.anchors[i];
    const b = ours.anchors[i];
    if (a.path !== b.path || (a.hash && a.hash !== b.hash) || (a.blob && a.blob !== b.blob)) return null;
  }
  const out = structuredClone(cur);
  applyPatch(
    out,
    {
      anchors: ours.anchors,
      status: ours.status,
      extra: { [STALE_REASONS_KEY]: ours.extra[STALE_REASONS_KEY] },
    },
    new Date().toISOString(),
  );
  return out;
}

/**
 * Writes outcomes into a copy of the record: completed anchors, new current
 * locations, verdicts (only when they change what a reader should know), and
 * the status: stale while any anchor is stale, active again once all are fine.
 */
function applyOutcomes(
  rec: MemoryRecord,
  byIndex: Map<number, Outcome>,
  commit: string,
  now: string,
  persistLocation: boolean,
): { record: MemoryRecord; changed: boolean; newVerdicts: Set<number> } {
  const anchors: Anchor[] = rec.anchors.map((a) => ({ ...a }));
  const newVerdicts = new Set<number>();
  let touched = false;
  for (const [i, o] of byIndex) {
    const before = rec.anchors[i] as FullAnchor;
    let a = anchors[i] as FullAnchor;
    if (o.completed) {
      a = { ...o.completed };
      anchors[i] = a;
      touched = true;
    }
    if (o.current && persistLocation) {
      const prev = before.current;
      if (
        !prev ||
        prev.path !== o.current.path ||
        JSON.stringify(prev.lines) !== JSON.stringify(o.current.lines) ||
        prev.blob !== o.current.blob
      ) {
        a.current = o.current;
        touched = true;
      }
    }
    const prevV = before.verdict;
    const nowStale = STALE_VERDICTS.has(o.status);
    const prevStale = !!prevV && STALE_VERDICTS.has(prevV.status);
    const locChanged = !!o.current && a.current === o.current;
    const needVerdict =
      locChanged ||
      !!o.completed ||
      (nowStale &&
        (!prevV ||
          prevV.status !== o.status ||
          prevV.reason !== o.reason ||
          JSON.stringify(prevV.to) !== JSON.stringify(o.to))) ||
      (!nowStale && prevStale) ||
      (o.status === 'ambiguous' &&
        (prevV?.status !== 'ambiguous' || JSON.stringify(prevV.candidates) !== JSON.stringify(o.candidates)));
    if (needVerdict) {
      newVerdicts.add(i);
      a.verdict = verdictOf(o, before, commit, now);
      touched = true;
    }
  }
  if (!touched) return { record: rec, changed: false, newVerdicts };
  const next = structuredClone(rec);
  const reasons = staleReasonsOfAnchors(anchors);
  let status = rec.status;
  let extra: Record<string, unknown> = {};
  if (reasons.length) {
    if (rec.status === 'active') status = 'stale';
    if (status === 'stale') extra = staleReasonsField(reasons);
  } else if (rec.status === 'stale' && rec.extra[STALE_REASONS_KEY] !== undefined) {
    status = 'active';
    extra = staleReasonsField(undefined);
  }
  applyPatch(next, { anchors, status, extra }, now);
  return { record: next, changed: true, newVerdicts };
}
