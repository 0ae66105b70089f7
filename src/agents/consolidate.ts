/**
 * Consolidation (issue #16, item 3): finds near-duplicates, contradictions and
 * memories superseded in fact but not in record, and proposes for each a
 * merge (one record with the combined text superseding the others), a
 * supersede or an archive — as `pending` review items. Nothing active changes
 * until someone approves the item in `git mem review` (or `--apply`).
 *
 * Deterministic by default and conservative (precision over recall): a pair
 * is only proposed when its evidence is plain — the add-time duplicate check
 * (src/search/dedup.ts) flags it, the newer one names the older and says it
 * replaces it, or it reverses the older one on the same subject in so many
 * words ("no longer", "instead of X", "switched from X to Y"…), or it states
 * the same fact with a newer value. The configured LLM may write a merge's
 * text (`llm`); on any failure the deterministic text is used.
 *
 * A review item is an ordinary pending record: for a merge it is the merged
 * memory itself; for a supersede or an archive it is a note naming the
 * memories, removed once decided. Its `proposal:` frontmatter carries the
 * method (`consolidate:<kind>`), the key (the ids it concerns) and the
 * evidence, so a re-run finds it and never proposes it twice, and a rejected
 * one (its key in .git/mem/review-rejected.txt) is never proposed again here.
 */

import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureFormat } from '../gitstore/format.js';
import { memDir } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { newId } from '../model/id.js';
import { type MemoryRecord, type MemoryType, newRecord } from '../model/record.js';
import { withoutControls } from '../model/schema.js';
import { redactRecord } from '../safety/secrets.js';
import type { Duplicate } from '../search/dedup.js';
import type { EmbeddingProvider } from '../search/embeddings.js';
import { applyConsolidation } from './consolidate-apply.js';
import {
  type ConsolidationEvidence,
  type ConsolidationKind,
  consolidationOf,
  FAMILY,
  judgePair,
  keyOf,
  METHOD_PREFIX,
  type PairVerdict,
  subjectPairs,
} from './consolidate-pairs.js';
import { clip, llmMerge, type MergedText, type MergeLlm, mergeText } from './consolidate-text.js';
import { readRejectedKeys } from './proposal.js';

export { type ApplyEdit, applyConsolidation } from './consolidate-apply.js';
export {
  type ConsolidationEvidence,
  type ConsolidationKind,
  consolidationOf,
  judgePair,
  keyOf,
  METHOD_PREFIX,
  type PairVerdict,
} from './consolidate-pairs.js';

import { identLine } from '../gitstore/store-config.js';

export { type MergedText, mergePrompt, mergeText, parseMerge } from './consolidate-text.js';
export interface ConsolidationProposal {
  kind: ConsolidationKind;
  /** merge: the memories merged, oldest first; supersede: [old, new]; archive: [archived, kept]. */
  ids: string[];
  /** The ids it concerns, sorted: one proposal per set, ever (pending or rejected). */
  key: string;
  reason: string;
  evidence: ConsolidationEvidence;
  /** For a merge: the record that replaces the members. */
  merged?: MergedText;
  /** The pending record holding it for review (written now or by an earlier run). */
  reviewId?: string;
  /** new: written now; pending: already waiting from an earlier run; proposed: --dry-run, nothing written; applied: approved by --apply. */
  state: 'new' | 'pending' | 'proposed' | 'applied';
}

export interface ConsolidateOptions {
  /** Print only: nothing is written. */
  dryRun?: boolean;
  /** Approve every proposal found (scripts): the operations run as if approved in review. */
  apply?: boolean;
  /** Let the configured model write merged text (trusted llm.* settings only); falls back on failure. */
  llm?: MergeLlm;
  /** The embedding provider of the duplicate check; the store's configured one unless given. */
  provider?: EmbeddingProvider | null;
}

export interface ConsolidateResult {
  /** Active memories considered. */
  scanned: number;
  proposals: ConsolidationProposal[];
  /** Candidates left out: rejected in review before, or touching a memory another pending proposal names. */
  skipped: { rejected: number; overlapping: number };
  /** The commit that wrote the new review items (null when none were written). */
  commit: string | null;
}

// ------------------------------------------------------------------ the operation

async function readRecords(store: Store, ids: string[]): Promise<MemoryRecord[]> {
  const cat = await store.catalog();
  return store.readRecords(ids.map((id) => cat.entries.get(id)!).filter(Boolean));
}

/** Finds what to consolidate and writes each proposal as a pending review item (one commit). */
export async function consolidate(store: Store, opts: ConsolidateOptions = {}): Promise<ConsolidateResult> {
  const result: ConsolidateResult = {
    scanned: 0,
    proposals: [],
    skipped: { rejected: 0, overlapping: 0 },
    commit: null,
  };
  if (!(await store.tip())) return result;
  const cat = await store.catalog();
  const all = [...cat.entries.values()];
  const active = all.filter((e) => e.status === 'active' && FAMILY[e.type as MemoryType]);
  // what is pending already: the same set again is reported, not written twice; a set touching a
  // memory another pending consolidation names waits until that one is decided
  const pendingItems = await readRecords(
    store,
    all.filter((e) => e.status === 'pending').map((e) => e.id),
  );
  const pendingByKey = new Map<string, MemoryRecord>();
  const pendingIds = new Set<string>();
  for (const r of pendingItems) {
    const c = consolidationOf(r);
    if (!c) continue;
    pendingByKey.set(c.key, r);
    for (const id of c.ids) pendingIds.add(id);
  }
  const rejected = new Set(readRejectedKeys(store));
  const records = await readRecords(
    store,
    active.map((e) => e.id),
  );
  const byId = new Map(records.map((r) => [r.id, r]));
  result.scanned = records.length;

  // candidate pairs: the add-time duplicate check, asked for every memory, and memories whose
  // titles, tags or anchors meet (a contradiction rarely shares enough words to be a duplicate)
  const dups = await duplicatePairs(store, records, opts.provider);
  const pairs = new Map<string, [string, string]>();
  const pairKey = (x: string, y: string) => (x < y ? `${x} ${y}` : `${y} ${x}`);
  for (const k of dups.keys()) pairs.set(k, k.split(' ') as [string, string]);
  for (const [x, y] of subjectPairs(records)) pairs.set(pairKey(x, y), [x, y]);

  const verdicts: PairVerdict[] = [];
  for (const [k, [x, y]] of pairs) {
    const v = judgePair(byId.get(x)!, byId.get(y)!, dups.get(k));
    if (v) verdicts.push(v);
  }
  verdicts.sort((p, q) => q.strength - p.strength || (p.ids.join() < q.ids.join() ? -1 : 1));

  // each memory in one proposal at most; merges grow to every memory that merges with all members
  const used = new Set<string>();
  const mergeEdges = new Set(
    verdicts.filter((v) => v.kind === 'merge').map((v) => pairKey(v.ids[0], v.ids[1])),
  );
  const chosen: PairVerdict[] = [];
  for (const v of verdicts) {
    if (v.ids.some((id) => used.has(id))) continue;
    let ids = v.ids;
    if (v.kind === 'merge') {
      for (const c of records) {
        if (ids.includes(c.id) || used.has(c.id) || pendingIds.has(c.id)) continue;
        if (ids.every((m) => mergeEdges.has(pairKey(m, c.id)))) ids = [...ids, c.id];
      }
      ids = ids.sort((p, q) => (byId.get(p)!.created < byId.get(q)!.created ? -1 : 1));
    }
    const key = keyOf(ids);
    if (rejected.has(key)) {
      result.skipped.rejected++;
      continue;
    }
    if (!pendingByKey.has(key) && ids.some((id) => pendingIds.has(id))) {
      result.skipped.overlapping++;
      continue;
    }
    for (const id of ids) used.add(id);
    chosen.push({ ...v, ids });
  }

  const toWrite: MemoryRecord[] = [];
  const ident = await store.ident();
  const now = new Date();
  for (const v of chosen) {
    const key = keyOf(v.ids);
    const p: ConsolidationProposal = {
      kind: v.kind,
      ids: v.ids,
      key,
      reason: v.reason,
      evidence: v.evidence,
      state: opts.dryRun ? 'proposed' : 'new',
    };
    const waiting = pendingByKey.get(key);
    if (waiting) {
      p.state = 'pending';
      p.reviewId = waiting.id;
      if (v.kind === 'merge')
        p.merged = {
          ...mergeText(v.ids.map((id) => byId.get(id)!)),
          title: waiting.title,
          body: waiting.body,
        };
      result.proposals.push(p);
      continue;
    }
    const members = v.ids.map((id) => byId.get(id)!);
    if (v.kind === 'merge') {
      p.merged = mergeText(members);
      if (opts.llm) p.merged = await llmMerge(members, p.merged, opts.llm);
    }
    if (!opts.dryRun) {
      const item = reviewItem(p, members, identLine(ident), store, now);
      p.reviewId = item.id;
      toWrite.push(item);
    }
    result.proposals.push(p);
  }
  if (toWrite.length) {
    const res = await store.write(async (tx) => {
      await ensureFormat(tx);
      for (const r of toWrite) tx.putRecord(redactRecord(r));
      return {
        message: `mem: propose ${toWrite.length} consolidation${toWrite.length === 1 ? '' : 's'} for review`,
        value: null,
      };
    });
    result.commit = res.commit ?? null;
  }
  if (opts.apply && !opts.dryRun) {
    for (const p of result.proposals) {
      if (!p.reviewId) continue;
      await applyConsolidation(store, p.reviewId);
      p.state = 'applied';
    }
  }
  return result;
}

/** One line of evidence for people (the review queue shows it). */
export function evidenceLine(e: ConsolidationEvidence): string {
  const parts: string[] = [];
  if (e.duplicate) parts.push(`${e.duplicate.reason} ${e.duplicate.similarity}`);
  parts.push(`title overlap ${e.subject}`, `coverage ${e.coverage}`);
  if (e.sharedTags.length) parts.push(`tags: ${e.sharedTags.join(', ')}`);
  if (e.sharedAnchors.length) parts.push(`anchors: ${e.sharedAnchors.join(', ')}`);
  if (e.values) parts.push(`values: ${e.values.old.join(', ')} → ${e.values.new.join(', ')}`);
  for (const ph of e.phrases) parts.push(`"${clip(ph, 120)}"`);
  return parts.join('; ');
}

function reviewItem(
  p: ConsolidationProposal,
  members: MemoryRecord[],
  author: string,
  store: Store,
  now: Date,
): MemoryRecord {
  const proposal = {
    method: `${METHOD_PREFIX}${p.kind}`,
    key: p.key,
    ids: p.ids,
    reason: p.reason,
    evidence: evidenceLine(p.evidence),
    ...(p.merged ? { writer: p.merged.writer } : {}),
    ...(p.merged?.llmFailure ? { llm_failure: p.merged.llmFailure } : {}),
  };
  const base = {
    id: newId(now.getTime()),
    now: now.toISOString(),
    author,
    by: store.writerActor(),
    status: 'pending' as const,
    source: 'git-mem consolidate',
    extra: { proposal },
  };
  if (p.kind === 'merge' && p.merged) {
    const m = p.merged;
    return newRecord({
      ...base,
      type: m.type,
      // the model's text: escape sequences and control characters dropped, not refused
      title: withoutControls(m.title, false),
      body: withoutControls(m.body),
      tags: m.tags?.map((t) => withoutControls(t, false)),
      anchors: m.anchors,
      scope: m.scope,
      confidence: m.confidence,
    });
  }
  const [target, other] = [members[0], members[1]];
  const line = (r: MemoryRecord) =>
    `- ${r.id.slice(0, 12)} ${r.type} "${r.title}" (${r.created.slice(0, 10)})`;
  const title =
    p.kind === 'supersede'
      ? `Supersede "${clip(target.title, 60)}" by "${clip(other.title, 60)}"`
      : `Archive "${clip(target.title, 100)}"`;
  const body = [
    p.kind === 'supersede'
      ? `Proposed: mark ${target.id.slice(0, 12)} superseded by ${other.id.slice(0, 12)}.`
      : `Proposed: archive ${target.id.slice(0, 12)}; ${other.id.slice(0, 12)} stays.`,
    '',
    `Why: ${p.reason}.`,
    `Evidence: ${evidenceLine(p.evidence)}`,
    '',
    line(target),
    line(other),
    '',
    'Approving applies it and removes this note; rejecting removes it and it is not proposed again.',
    '',
  ].join('\n');
  return newRecord({
    ...base,
    type: target.type,
    title: withoutControls(title, false),
    body: withoutControls(body),
    tags: ['consolidate'],
    scope: target.scope,
    confidence: 0.5,
  });
}

/** The add-time duplicate check, asked for every memory: pair key → its verdict. */
async function duplicatePairs(
  store: Store,
  records: MemoryRecord[],
  provider: EmbeddingProvider | null | undefined,
): Promise<Map<string, Duplicate>> {
  const out = new Map<string, Duplicate>();
  const ids = new Set(records.map((r) => r.id));
  try {
    const { findDuplicates } = await import('../search/dedup.js');
    const { providerFor } = await import('../search/index.js');
    const { openIndex } = await import('../search/store-index.js');
    const prov = provider === undefined ? await providerFor(store) : provider;
    const st = await openIndex(store, { provider: prov });
    const vectors = st.lineage && st.index.vectors?.lineageKey === st.lineage ? st.index.vectors : undefined;
    for (const r of records) {
      const found = await findDuplicates(
        store,
        { title: r.title, body: r.body, tags: r.tags, vector: vectors?.byId.get(r.id) },
        prov,
      );
      for (const d of found) {
        if (d.id === r.id || !ids.has(d.id)) continue;
        const k = r.id < d.id ? `${r.id} ${d.id}` : `${d.id} ${r.id}`;
        const prev = out.get(k);
        if (!prev || prev.similarity < d.similarity) out.set(k, d);
      }
    }
  } catch {
    // search unavailable: the subject pairs still go through the same judgement
  }
  return out;
}

// ------------------------------------------------------------------ once a day, at session end

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * The session-end path's consolidation: at most once a day (a timestamp in
 * .git/mem/consolidate.last), deterministic, proposals only. Off with the
 * `consolidate-daily` setting false or GIT_MEM_CONSOLIDATE=off. Never throws.
 */
export async function consolidateDaily(
  store: Store,
  settings: Record<string, unknown>,
  now = Date.now(),
): Promise<ConsolidateResult | null> {
  try {
    const off = ['0', 'off', 'no', 'false'];
    if (off.includes(String(store.repo.env.GIT_MEM_CONSOLIDATE ?? '').toLowerCase())) return null;
    if (off.includes(String(settings['consolidate-daily'] ?? '').toLowerCase())) return null;
    const dir = memDir(store.repo);
    const stamp = join(dir, 'consolidate.last');
    if (existsSync(stamp)) {
      const last = Date.parse(readFileSync(stamp, 'utf8').trim());
      if (Number.isFinite(last) && now - last < DAY_MS && last <= now) return null;
    }
    // stamped first: a run that dies is not retried at every session end of the day
    mkdirSync(dir, { recursive: true });
    writeFileSync(stamp, `${new Date(now).toISOString()}\n`);
    return await consolidate(store, {});
  } catch {
    return null;
  }
}
