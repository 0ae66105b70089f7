/**
 * The memory-aware three-way merge, pure: parsed records and tombstones of a
 * base and two sides in, the merged records, tombstones, attic entries and
 * conflicts out. No git, no file system: src/merge/merge-commits.ts feeds it
 * from commits, src/cli/merge-driver.ts from three files.
 *
 * Determinism: every decision is symmetric in the two sides (the "winner" of
 * a both-sided change is the side with the higher Lamport clock, ties broken
 * by comparing the serialised records; diff3 always runs as
 * (winner, base, loser)), so merging A into B and B into A give the same
 * records byte for byte.
 */

import { createHash } from 'node:crypto';
import { diff3Merge } from 'node-diff3';
import { LATER_AT_FIELDS, SCALAR_FIELDS } from '../model/fields.js';
import { fanout } from '../model/id.js';
import { type Anchor, type Links, type MemoryRecord, serializeRecord } from '../model/record.js';
import { nextClock } from '../model/schema.js';
import { stringify } from '../model/yaml.js';

export const ATTIC_DIR = 'attic';

/** A tombstone file (tombstones/<xx>/<id>.yaml): fields are open, `clock` and `deleted` are read. */
export interface Tombstone {
  id: string;
  clock?: number;
  deleted?: string;
  [k: string]: unknown;
}

/** What one side holds for one id: a record, a tombstone, both (rare), or nothing. */
export interface EntryState {
  rec?: MemoryRecord;
  tomb?: Tombstone;
}

/** The frontmatter key that flags a record for review after a merge. */
export const CONFLICT_KEY = 'conflict';
/** The frontmatter key that records a deletion that lost against a modification. */
export const DELETION_KEY = 'deletion_attempted';

export type ConflictReason = 'body' | 'delete' | 'alias';

export interface ConflictFlag {
  reasons: ConflictReason[];
  /** Attic entries (tree paths) holding the versions not kept. */
  attic: string[];
  /** For an alias conflict: the alias this record lost. */
  alias?: string;
}

/** An attic entry: a whole record version that a merge did not keep, at attic/<xx>/<id>/<hash>.md. */
export interface AtticEntry {
  id: string;
  path: string;
  text: string;
  /** Which side's version this is (the merged record holds the other side's text where they clashed). */
  side: 'ours' | 'theirs';
}

export interface EntryResult {
  state: EntryState;
  attic: AtticEntry[];
  /** Set when the record was flagged for review by this merge. */
  conflict?: ConflictReason[];
  /** merged = field by field; ours/theirs = one side taken as is; kept = modification beat a deletion; deleted. */
  outcome: 'same' | 'ours' | 'theirs' | 'merged' | 'kept' | 'deleted';
}

export interface SideLabels {
  ours?: string;
  theirs?: string;
}

// ---------------------------------------------------------------- helpers

/** The greater of two strings (ISO dates, blob ids). */
export function maxString(a: string, b: string): string {
  return [a, b].sort()[1];
}

const json = (v: unknown): string | undefined => JSON.stringify(v);
const same = (a: unknown, b: unknown): boolean => json(a) === json(b);

const texts = new WeakMap<object, string>();

/**
 * Remembers the file text a record or tombstone was parsed from, so the
 * engine compares and orders versions by their stored bytes instead of
 * serialising them again (the costliest step of a large merge).
 */
export function rememberText(v: MemoryRecord | Tombstone, text: string): void {
  texts.set(v, text);
}

export function recordText(r: MemoryRecord): string {
  let t = texts.get(r);
  if (t === undefined) {
    t = serializeRecord(r);
    texts.set(r, t);
  }
  return t;
}

export function tombstoneText(t: Tombstone): string {
  let s = texts.get(t);
  if (s === undefined) {
    s = stringify(t);
    texts.set(t, s);
  }
  return s;
}

export function stateText(s: EntryState | undefined): string {
  if (!s) return '';
  return `${s.rec ? recordText(s.rec) : ''}\u0000${s.tomb ? tombstoneText(s.tomb) : ''}`;
}

function isEmpty(s: EntryState | undefined): boolean {
  return !s || (!s.rec && !s.tomb);
}

export function atticPath(id: string, text: string): string {
  const h = createHash('sha256').update(text).digest('hex').slice(0, 16);
  return `${ATTIC_DIR}/${fanout(id)}/${id}/${h}.md`;
}

/** Orders two versions: the later clock wins, a tie goes to the greater serialised text. */
function laterFirst<T extends { clock?: number }>(a: T, b: T, aText: string, bText: string): [T, T] {
  const ca = a.clock ?? 0;
  const cb = b.clock ?? 0;
  if (ca !== cb) return ca > cb ? [a, b] : [b, a];
  return aText >= bText ? [a, b] : [b, a];
}

/** Three-way merge of a scalar: one-sided change wins; both-sided goes to the winner. */
function scalar<T>(b: T, w: T, l: T): { value: T; clash: boolean } {
  if (same(w, l)) return { value: w, clash: false };
  if (same(w, b)) return { value: l, clash: false };
  if (same(l, b)) return { value: w, clash: false };
  return { value: w, clash: true };
}

/** Three-way set merge: additions of either side unite; removals of either side are respected. */
export function mergeSet<T>(
  b: readonly T[],
  w: readonly T[],
  l: readonly T[],
  key: (x: T) => string = (x) => json(x) ?? '',
): T[] {
  const kb = new Set(b.map(key));
  const kw = new Set(w.map(key));
  const kl = new Set(l.map(key));
  const out: T[] = [];
  const seen = new Set<string>();
  for (const x of [...w, ...l]) {
    const k = key(x);
    if (seen.has(k)) continue;
    const keep = (kw.has(k) && kl.has(k)) || (kw.has(k) && !kb.has(k)) || (kl.has(k) && !kb.has(k));
    if (keep) {
      seen.add(k);
      out.push(x);
    }
  }
  return out;
}

/** An anchor's identity: the path plus the symbol, or the path plus the line range. */
function anchorKey(a: Anchor): string {
  if (a.symbol) return `${a.path}#${a.symbol}`;
  return `${a.path}:${a.lines ? `${a.lines[0]}-${a.lines[1]}` : ''}`;
}

function mergeAnchors(b: Anchor[], w: Anchor[], l: Anchor[]): { value: Anchor[]; clash: boolean } {
  const byKey = (xs: Anchor[]) => {
    const m = new Map<string, Anchor>();
    for (const a of xs) if (!m.has(anchorKey(a))) m.set(anchorKey(a), a);
    return m;
  };
  const mb = byKey(b);
  const mw = byKey(w);
  const ml = byKey(l);
  let clash = false;
  const keys = mergeSet([...mb.keys()], [...mw.keys()], [...ml.keys()], (k) => k);
  const value = keys.map((k) => {
    const vw = mw.get(k);
    const vl = ml.get(k);
    if (vw && vl) {
      const s = scalar(mb.get(k), vw, vl);
      clash ||= s.clash;
      return s.value as Anchor;
    }
    return (vw ?? vl)!;
  });
  return { value, clash };
}

function splitLines(s: string): string[] {
  return s === '' ? [] : s.split('\n');
}

/** Line-based diff3 of bodies; conflicting regions take the winner's lines. */
export function mergeBody(b: string, w: string, l: string): { value: string; clash: boolean } {
  if (w === l) return { value: w, clash: false };
  if (w === b) return { value: l, clash: false };
  if (l === b) return { value: w, clash: false };
  const regions = diff3Merge(splitLines(w), splitLines(b), splitLines(l), { excludeFalseConflicts: true });
  const out: string[] = [];
  let clash = false;
  for (const r of regions) {
    if (r.ok) out.push(...r.ok);
    else if (r.conflict) {
      clash = true;
      out.push(...r.conflict.a);
    }
  }
  return { value: out.join('\n'), clash };
}

function readFlag(v: unknown): ConflictFlag | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const arr = (x: unknown) => (Array.isArray(x) ? x.map(String) : []);
  const flag: ConflictFlag = { reasons: arr(o.reasons) as ConflictReason[], attic: arr(o.attic) };
  if (typeof o.alias === 'string') flag.alias = o.alias;
  return flag;
}

/** The review flag a merge put on a record, if any. */
export function conflictOf(r: MemoryRecord): ConflictFlag | undefined {
  return readFlag(r.extra[CONFLICT_KEY]);
}

/** Adds reasons and attic paths to a record's review flag (sorted, de-duplicated: deterministic). */
function flagRecord(r: MemoryRecord, reasons: ConflictReason[], attic: string[], alias?: string): void {
  const old = conflictOf(r) ?? { reasons: [], attic: [] };
  const flag: Record<string, unknown> = {
    reasons: [...new Set([...old.reasons, ...reasons])].sort(),
    attic: [...new Set([...old.attic, ...attic])].sort(),
  };
  const a = alias ?? old.alias;
  if (a) flag.alias = a;
  r.extra = { ...r.extra, [CONFLICT_KEY]: flag };
}

function atticEntry(
  loser: MemoryRecord,
  side: AtticEntry['side'],
  reason: string,
  fields: string[],
  from: string | undefined,
): AtticEntry {
  const extra: Record<string, unknown> = { ...loser.extra };
  delete extra[CONFLICT_KEY];
  const info: Record<string, unknown> = { reason, fields };
  if (from) info.from = from;
  extra.attic = info;
  const text = serializeRecord({ ...loser, extra });
  return { id: loser.id, path: atticPath(loser.id, text), text, side };
}

/** The fields merged as scalars, and those merged by their later `at`: from the field table. */
const SCALARS = SCALAR_FIELDS as readonly (keyof MemoryRecord)[];
const LATER_AT = LATER_AT_FIELDS as readonly (keyof MemoryRecord)[];

/** Of two attestations ({by, at}), the later; the same `at`: the one that sorts later, so both sides agree. */
function laterAt(w: unknown, l: unknown): unknown {
  const at = (x: unknown) => ((x as { at?: unknown } | undefined)?.at as string | undefined) ?? '';
  if (w === undefined || l === undefined) return w ?? l;
  if (at(w) !== at(l)) return at(w) > at(l) ? w : l;
  return (json(w) ?? '') >= (json(l) ?? '') ? w : l;
}

/**
 * Field-by-field merge of a record changed on both sides. `base` may be
 * undefined (both sides added the same id): every differing field is then a
 * both-sided change.
 */
function mergeRecords(
  base: MemoryRecord | undefined,
  ours: MemoryRecord,
  theirs: MemoryRecord,
  labels: SideLabels = {},
): { record: MemoryRecord; attic: AtticEntry[]; conflict?: ConflictReason[] } {
  const oText = recordText(ours);
  const tText = recordText(theirs);
  const [w, l] = laterFirst(ours, theirs, oText, tText);
  const lLabel = l === ours ? labels.ours : labels.theirs;
  const clashes: string[] = [];
  const out: MemoryRecord = { ...w, links: { ...w.links }, extra: { ...w.extra } };
  for (const k of SCALARS) {
    const s = scalar(base?.[k], w[k], l[k]);
    (out as unknown as Record<string, unknown>)[k] = s.value;
    if (s.clash) clashes.push(k);
  }
  for (const k of LATER_AT) {
    const s = scalar(base?.[k], w[k], l[k]);
    (out as unknown as Record<string, unknown>)[k] = s.clash ? laterAt(w[k], l[k]) : s.value;
  }
  out.tags = mergeSet(base?.tags ?? [], w.tags, l.tags);
  out.scope = mergeSet(base?.scope ?? [], w.scope, l.scope);
  // links: arrays are sets, anything else a scalar
  const links: Record<string, unknown> = {};
  const bl = (base?.links ?? {}) as Links;
  for (const k of [...new Set([...Object.keys(w.links), ...Object.keys(l.links)])]) {
    const [vb, vw, vl] = [bl[k], w.links[k], l.links[k]];
    if (Array.isArray(vw) || Array.isArray(vl)) {
      links[k] = mergeSet(
        Array.isArray(vb) ? vb : [],
        Array.isArray(vw) ? vw : [],
        Array.isArray(vl) ? vl : [],
      );
    } else {
      const s = scalar(vb, vw, vl);
      if (s.value !== undefined) links[k] = s.value;
      if (s.clash) clashes.push(`links.${k}`);
    }
  }
  out.links = links as Links;
  const an = mergeAnchors(base?.anchors ?? [], w.anchors, l.anchors);
  out.anchors = an.value;
  if (an.clash) clashes.push('anchors');
  // unknown frontmatter keys: scalars each
  const extra: Record<string, unknown> = {};
  const be = base?.extra ?? {};
  for (const k of [...new Set([...Object.keys(w.extra), ...Object.keys(l.extra)])]) {
    const s = scalar(be[k], w.extra[k], l.extra[k]);
    if (s.value !== undefined) extra[k] = s.value;
    if (s.clash && k !== CONFLICT_KEY) clashes.push(k);
    if (s.clash && k === CONFLICT_KEY) {
      // both sides flagged it: keep every reason and attic entry
      const fw = readFlag(w.extra[k]);
      const fl = readFlag(l.extra[k]);
      extra[k] = {
        reasons: [...new Set([...(fw?.reasons ?? []), ...(fl?.reasons ?? [])])].sort(),
        attic: [...new Set([...(fw?.attic ?? []), ...(fl?.attic ?? [])])].sort(),
        ...((fw?.alias ?? fl?.alias) ? { alias: fw?.alias ?? fl?.alias } : {}),
      };
    }
  }
  out.extra = extra;
  const body = mergeBody(base?.body ?? '', w.body, l.body);
  out.body = body.value;
  if (body.clash) clashes.push('body');
  out.updated = maxString(w.updated, l.updated);
  out.clock = nextClock(Math.max(ours.clock, theirs.clock));
  const attic: AtticEntry[] = [];
  let conflict: ConflictReason[] | undefined;
  if (clashes.length) {
    const entry = atticEntry(
      l,
      l === ours ? 'ours' : 'theirs',
      body.clash ? 'body-conflict' : 'field-conflict',
      clashes.sort(),
      lLabel,
    );
    attic.push(entry);
    if (body.clash) {
      conflict = ['body'];
      flagRecord(out, conflict, [entry.path]);
    }
  }
  return { record: out, attic, conflict };
}

function mergeTombs(o: Tombstone, t: Tombstone): Tombstone {
  const [w] = laterFirst(o, t, tombstoneText(o), tombstoneText(t));
  return w;
}

/**
 * Merges what two sides hold for one id against the base. One-sided changes
 * are taken as they are; a record changed on both sides merges field by
 * field; a modification beats a deletion (which is recorded in the record).
 */
export function mergeEntry(
  base: EntryState | undefined,
  ours: EntryState | undefined,
  theirs: EntryState | undefined,
  labels: SideLabels = {},
): EntryResult {
  const [bt, ot, tt] = [stateText(base), stateText(ours), stateText(theirs)];
  const o = ours ?? {};
  const t = theirs ?? {};
  if (ot === tt) return { state: o, attic: [], outcome: 'same' };
  if (ot === bt) return { state: t, attic: [], outcome: 'theirs' };
  if (tt === bt) return { state: o, attic: [], outcome: 'ours' };
  if (o.rec && t.rec) {
    const m = mergeRecords(base?.rec, o.rec, t.rec, labels);
    return { state: { rec: m.record }, attic: m.attic, conflict: m.conflict, outcome: 'merged' };
  }
  if (o.rec || t.rec) {
    const live = (o.rec ? o : t) as Required<Pick<EntryState, 'rec'>> & EntryState;
    const gone = o.rec ? t : o;
    const rec = live.rec;
    const modified = base?.rec ? recordText(base.rec) !== recordText(rec) : undefined;
    const tomb = gone.tomb;
    let keep: boolean;
    if (modified !== undefined) keep = modified;
    else keep = !!tomb && tomb.clock !== undefined && rec.clock >= tomb.clock;
    if (!tomb && modified === undefined) keep = true; // nothing says it was deleted
    if (!keep) return { state: { tomb: tomb ?? live.tomb }, attic: [], outcome: 'deleted' };
    const out: MemoryRecord = { ...rec, extra: { ...rec.extra } };
    const attempt: Record<string, unknown> = tomb ? { ...tomb } : { reason: 'removed without a tombstone' };
    delete attempt.id;
    out.extra[DELETION_KEY] = attempt;
    out.clock = nextClock(Math.max(rec.clock, tomb?.clock ?? 0));
    flagRecord(out, ['delete'], []);
    return { state: { rec: out }, attic: [], conflict: ['delete'], outcome: 'kept' };
  }
  // neither side holds a record: both deleted (or one side collected its tombstone)
  if (o.tomb && t.tomb) return { state: { tomb: mergeTombs(o.tomb, t.tomb) }, attic: [], outcome: 'deleted' };
  const tomb = o.tomb ?? t.tomb;
  return { state: isEmpty({ tomb }) ? {} : { tomb }, attic: [], outcome: 'deleted' };
}

// ---------------------------------------------------------------- whole stores

export interface StoreMaps {
  records: Map<string, MemoryRecord>;
  tombstones: Map<string, Tombstone>;
}

export interface StoreMergeResult extends StoreMaps {
  attic: AtticEntry[];
  /** Ids flagged for review by this merge, sorted. */
  conflicts: string[];
  outcomes: Map<string, EntryResult['outcome']>;
}

function stateOf(m: StoreMaps, id: string): EntryState {
  const s: EntryState = {};
  const r = m.records.get(id);
  const t = m.tombstones.get(id);
  if (r) s.rec = r;
  if (t) s.tomb = t;
  return s;
}

/**
 * Merges two stores against a base (empty maps when the histories share no
 * commit). `ids` limits the work to the ids changed on either side; by
 * default every id in any of the three.
 */
export function mergeStores(
  base: StoreMaps,
  ours: StoreMaps,
  theirs: StoreMaps,
  opts: { labels?: SideLabels; ids?: Iterable<string> } = {},
): StoreMergeResult {
  const ids =
    opts.ids ??
    new Set([
      ...base.records.keys(),
      ...base.tombstones.keys(),
      ...ours.records.keys(),
      ...ours.tombstones.keys(),
      ...theirs.records.keys(),
      ...theirs.tombstones.keys(),
    ]);
  const records = new Map<string, MemoryRecord>();
  const tombstones = new Map<string, Tombstone>();
  const attic: AtticEntry[] = [];
  const conflicts: string[] = [];
  const outcomes = new Map<string, EntryResult['outcome']>();
  for (const id of [...ids].sort()) {
    const r = mergeEntry(stateOf(base, id), stateOf(ours, id), stateOf(theirs, id), opts.labels);
    if (r.state.rec) records.set(id, r.state.rec);
    if (r.state.tomb) tombstones.set(id, r.state.tomb);
    attic.push(...r.attic);
    if (r.conflict) conflicts.push(id);
    outcomes.set(id, r.outcome);
  }
  const fixed = resolveAliasClashes(records, outcomes);
  for (const id of fixed) if (!conflicts.includes(id)) conflicts.push(id);
  conflicts.sort();
  return { records, tombstones, attic, conflicts, outcomes };
}

/**
 * Two records may claim one alias after a merge (each side gave it to a
 * different record). The oldest record (smallest id) keeps it; the others
 * lose it and are flagged for review. Returns the ids changed.
 */
export function resolveAliasClashes(
  records: Map<string, MemoryRecord>,
  outcomes?: Map<string, EntryResult['outcome']>,
): string[] {
  const byAlias = new Map<string, string[]>();
  for (const r of records.values()) {
    if (!r.alias) continue;
    const list = byAlias.get(r.alias) ?? [];
    list.push(r.id);
    byAlias.set(r.alias, list);
  }
  const changed: string[] = [];
  for (const [alias, ids] of byAlias) {
    if (ids.length < 2) continue;
    ids.sort();
    for (const id of ids.slice(1)) {
      const r = records.get(id)!;
      const out: MemoryRecord = { ...r, alias: undefined, extra: { ...r.extra }, clock: nextClock(r.clock) };
      flagRecord(out, ['alias'], [], alias);
      records.set(id, out);
      outcomes?.set(id, 'merged');
      changed.push(id);
    }
  }
  return changed.sort();
}

/** Tombstones older than the TTL (by their `deleted` date) are dropped; `now` in ms. */
export function expiredTombstone(t: Tombstone, now: number, ttlDays: number): boolean {
  if (!(ttlDays > 0) || !t.deleted) return false;
  const d = Date.parse(String(t.deleted));
  return Number.isFinite(d) && now - d > ttlDays * 864e5;
}
