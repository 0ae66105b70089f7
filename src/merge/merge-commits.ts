/**
 * The merge of two memory commits (git I/O around the pure engine).
 *
 * Reads only what changed: `diff-tree` of the merge base against each side
 * lists the touched paths, one `cat-file --batch` reads their blobs, the
 * engine merges the ids touched on both sides, and the store's git writer
 * writes the two-parent merge commit on top of `ours`. No ref is moved: the
 * caller compare-and-swaps refs/memory onto the returned commit.
 *
 * The merged TREE depends only on the two inputs (and their merge base), not
 * on which side merges: tomorrow's merge of B into A has the same tree as
 * today's merge of A into B.
 */

import { err } from '../errors.js';
import { loadCatalogCache } from '../gitstore/catalog-cache.js';
import { parseCommitHeader } from '../gitstore/commit-object.js';
import { type Change, SHARED_CONFIG_PATH, type Store } from '../gitstore/store.js';
import {
  idFromPath,
  type MemoryRecord,
  parseRecord,
  RecordParseError,
  recordPath,
  serializeRecord,
  tombstonePath,
} from '../model/record.js';
import { parse as parseYaml, stringify } from '../model/yaml.js';
import {
  type EntryState,
  maxString,
  mergeEntry,
  rememberText,
  resolveAliasClashes,
  type StoreMergeResult,
} from './engine.js';
import type { ProblemKind } from './problems.js';
import { collectTombstones, parseTombstone, TOMB_RE } from './tombstones.js';

export interface MergeStats {
  added: number;
  updated: number;
  removed: number;
  merged: number;
  conflicted: number;
}

export interface MergeCommitsResult {
  commit: string | null;
  fastForward: boolean;
  /** Ids of records flagged for review by this merge (and paths of other files both sides changed). */
  conflicts: string[];
  stats: MergeStats;
}

export interface MergeCommitsOptions {
  message?: string;
  now?: Date;
}

const zeroStats = (): MergeStats => ({ added: 0, updated: 0, removed: 0, merged: 0, conflicted: 0 });

type Diff = Map<string, { oid: string | null; status: string }>;
/** What the merge commit changes on ours, per path. */
type Changes = Map<string, { oid: string } | { text: string } | { remove: true }>;

function malformed(path: string, commit: string, e: unknown): Error {
  return err(
    'E_MERGE',
    `cannot merge: ${path} at ${commit.slice(0, 12)} does not parse (${(e as Error).message})`,
    'fix or remove that record on the side that holds it, then merge again; nothing was written',
    { path, commit, problem: 'record' satisfies ProblemKind },
  );
}

async function changedPaths(store: Store, base: string | null, commit: string): Promise<Diff> {
  const out: Diff = new Map();
  if (base) {
    for (const d of await store.diffPaths(base, commit)) out.set(d.path, { oid: d.oid, status: d.status });
  } else {
    for (const e of await store.lsTree(commit))
      if (e.type === 'blob') out.set(e.path, { oid: e.oid, status: 'A' });
  }
  return out;
}

/**
 * Merges `theirs` into `ours`. Returns the commit to move refs/memory to:
 * an existing one (fastForward: true) when one side is empty or contains the
 * other, else a new merge commit (first parent ours, second theirs).
 * Throws E_MERGE, writing nothing, when a record or tombstone either side
 * changed does not parse.
 */
export async function mergeCommits(
  store: Store,
  ours: string | null,
  theirs: string | null,
  opts: MergeCommitsOptions = {},
): Promise<MergeCommitsResult> {
  const ff = (commit: string | null): MergeCommitsResult => ({
    commit,
    fastForward: true,
    conflicts: [],
    stats: zeroStats(),
  });
  if (!theirs || ours === theirs) return ff(ours);
  if (!ours) return ff(theirs);
  const bases = await store.mergeBases(ours, theirs);
  if (bases.includes(theirs)) return ff(ours);
  if (bases.includes(ours)) return ff(theirs);
  // several bases (criss-cross merges, common when many clones sync): merge
  // them into a virtual base first, as git's recursive strategy does, so
  // changes both sides already share are not seen as both-sided edits
  const base = bases.length > 1 ? await virtualBase(store, bases) : (bases[0] ?? null);
  // started now, used at the end: the tombstones of ours and the two commit dates (for their collection)
  const tombList = store.lsTree(ours, 'tombstones');
  const dates = commitTimes(store, [ours, theirs]);
  tombList.catch(() => {});
  dates.catch(() => {});
  const [dO, dT] = await Promise.all([changedPaths(store, base, ours), changedPaths(store, base, theirs)]);

  // group record and tombstone paths by id; everything else merges per path
  const { ids, generic } = groupPaths(dO, dT);

  // records ours alone changed were parsed already if the catalog of ours is cached (the usual
  // case for the tip of refs/memory): trust it instead of parsing them again
  const cached = loadCatalogCache(store.repo, store.ref);
  const oursCat = cached?.tip === ours ? cached : undefined;
  const badOurs = new Map((oursCat?.bad ?? []).map((b) => [b.path, b]));
  const knownGood = (id: string): boolean => {
    const c = dO.get(recordPath(id));
    return !!c?.oid && oursCat?.rows.get(id)?.oid === c.oid;
  };

  // read every blob we need in one batch
  const versions = await Sides.read(store, ours, theirs, base, dO, dT, ids, knownGood);
  const load = versions.load.bind(versions);

  const changes: Changes = new Map();
  const stats = zeroStats();
  const conflicts: string[] = [];
  const finalRecords = new Map<string, MemoryRecord>();
  const aliasOf = new Map<string, string | undefined>();
  const recordOnOurs = new Map<string, boolean>();
  const labels = { ours, theirs };

  for (const id of [...ids.keys()].sort()) {
    const sides = ids.get(id)!;
    const rp = recordPath(id);
    const tp = tombstonePath(id);
    if (!sides.t) {
      // ours alone changed it: keep ours, but refuse to spread a malformed record
      if (knownGood(id)) {
        aliasOf.set(id, oursCat!.rows.get(id)!.alias);
        recordOnOurs.set(id, true);
        if (dO.has(tp)) load(id, 'o', false, true);
        continue;
      }
      const bad = badOurs.get(rp);
      if (bad && bad.oid === dO.get(rp)?.oid) throw malformed(rp, ours, new Error(bad.error));
      const o = load(id, 'o', false);
      if (o.state.rec) finalRecords.set(id, o.state.rec);
      recordOnOurs.set(id, !!o.state.rec);
      continue;
    }
    if (!sides.o) {
      const t = load(id, 't', false);
      for (const path of [rp, tp]) {
        const c = dT.get(path);
        if (!c) continue;
        changes.set(path, c.oid ? { oid: c.oid } : { remove: true });
        if (path === rp) {
          if (c.status === 'A') stats.added++;
          else if (c.oid === null) stats.removed++;
          else stats.updated++;
        }
      }
      if (t.state.rec) finalRecords.set(id, t.state.rec);
      recordOnOurs.set(id, dT.get(rp) ? dT.get(rp)!.status !== 'A' : !!t.state.rec);
      continue;
    }
    const b = base ? load(id, 'b') : { state: {} as EntryState };
    const o = load(id, 'o');
    const t = load(id, 't');
    recordOnOurs.set(id, !!o.state.rec);
    const r = mergeEntry(b.state, o.state, t.state, labels);
    if (r.outcome === 'merged' || r.outcome === 'kept') stats.merged++;
    if (r.conflict) conflicts.push(id);
    for (const a of r.attic) changes.set(a.path, { text: a.text });
    // records
    const rec = r.state.rec;
    if (rec) {
      finalRecords.set(id, rec);
      const pick = r.outcome === 'same' || r.outcome === 'ours' ? 'o' : r.outcome === 'theirs' ? 't' : 'new';
      if (pick === 't' && t.recOid) changes.set(rp, { oid: t.recOid });
      else if (pick === 'new') changes.set(rp, { text: serializeRecord(rec) });
      if (!o.state.rec) stats.added++;
      else if (pick !== 'o') stats.updated++;
    } else if (o.state.rec) {
      changes.set(rp, { remove: true });
      stats.removed++;
    }
    // tombstones
    const tomb = r.state.tomb;
    if (tomb) {
      if (tomb === o.state.tomb) {
        /* as on ours */
      } else if (tomb === t.state.tomb && t.tombOid) changes.set(tp, { oid: t.tombOid });
      else changes.set(tp, { text: stringify(tomb) });
    } else if (o.state.tomb) changes.set(tp, { remove: true });
  }

  // two records may now claim one alias
  await settleAliases(store, ours, finalRecords, aliasOf, recordOnOurs, changes, conflicts, stats);

  // other files (FORMAT, config.yaml, attic entries, anchored blobs…): per path
  const config = await mergeOtherFiles(store, base, generic, dO, dT, changes, conflicts);

  // collect old tombstones (by the later of the two commit dates, so both sides agree)
  await collectTombstones(store, ours, await tombList, Math.max(...(await dates)), changes, config);

  stats.conflicted = conflicts.length;
  conflicts.sort();
  const message =
    opts.message ??
    `mem: merge ${theirs.slice(0, 12)} into ${ours.slice(0, 12)}\n\n` +
      `added ${stats.added}, updated ${stats.updated}, removed ${stats.removed}, merged ${stats.merged}, conflicted ${stats.conflicted}\n`;
  const commit = await writeMergeCommit(store, ours, theirs, changes, message, opts.now ?? new Date());
  return { commit, fastForward: false, conflicts, stats };
}

/** The changed paths of both sides: record and tombstone paths grouped by id (which side touched it), the rest per path. */
function groupPaths(
  dO: Diff,
  dT: Diff,
): { ids: Map<string, { o: boolean; t: boolean }>; generic: Set<string> } {
  const ids = new Map<string, { o: boolean; t: boolean }>();
  const generic = new Set<string>();
  const note = (path: string, side: 'o' | 't') => {
    const id = idFromPath(path) ?? TOMB_RE.exec(path)?.[1];
    if (!id) {
      generic.add(path);
      return;
    }
    const e = ids.get(id) ?? { o: false, t: false };
    e[side] = true;
    ids.set(id, e);
  };
  for (const p of dO.keys()) note(p, 'o');
  for (const p of dT.keys()) note(p, 't');
  return { ids, generic };
}

/** What a side (or the base) holds for an id: version texts, blob ids and parsed values. */
interface SideState {
  state: EntryState;
  recText?: string;
  recOid?: string;
  tombText?: string;
  tombOid?: string;
}

/** The versions of the changed records and tombstones of both sides and their base, read in one batch. */
class Sides {
  private constructor(
    readonly ours: string,
    readonly theirs: string,
    readonly base: string | null,
    readonly dO: Diff,
    readonly dT: Diff,
    private readonly want: Map<string, number>,
    private readonly blobs: Awaited<ReturnType<Store['catFile']['readMany']>>,
  ) {}

  /** Reads what merging the ids needs: each side's changed versions, and the base's where both changed one. */
  static async read(
    store: Store,
    ours: string,
    theirs: string,
    base: string | null,
    dO: Diff,
    dT: Diff,
    ids: ReadonlyMap<string, { o: boolean; t: boolean }>,
    knownGood: (id: string) => boolean,
  ): Promise<Sides> {
    const reads: string[] = [];
    const want = new Map<string, number>();
    const need = (spec: string) => {
      if (!want.has(spec)) {
        want.set(spec, reads.length);
        reads.push(spec);
      }
    };
    for (const [id, sides] of ids) {
      for (const path of [recordPath(id), tombstonePath(id)]) {
        const o = dO.get(path);
        const t = dT.get(path);
        if (o?.oid && !(sides.t === false && path === recordPath(id) && knownGood(id))) need(o.oid);
        if (t?.oid) need(t.oid);
        if (sides.o && sides.t && base) need(`${base}:${path}`);
      }
    }
    const blobs = await store.catFile.readMany(reads);
    return new Sides(ours, theirs, base, dO, dT, want, blobs);
  }

  private text(spec: string): { text: string; oid: string } | null {
    const i = this.want.get(spec);
    const b = i === undefined ? null : this.blobs[i];
    return b && b.type === 'blob' ? { text: b.content.toString('utf8'), oid: b.oid } : null;
  }

  /** `full`: also the paths this side left as in the base (read only for ids both sides changed). */
  load(id: string, side: 'b' | 'o' | 't', full = true, skipRec = false): SideState {
    const s: SideState = { state: {} };
    const { ours, theirs, base } = this;
    const commit = side === 'o' ? ours : side === 't' ? theirs : base!;
    const d = side === 'o' ? this.dO : side === 't' ? this.dT : undefined;
    for (const kind of ['rec', 'tomb'] as const) {
      if (kind === 'rec' && skipRec) continue;
      const path = kind === 'rec' ? recordPath(id) : tombstonePath(id);
      let v: { text: string; oid: string } | null;
      const c = d?.get(path);
      if (c) v = c.oid ? this.text(c.oid) : null;
      else if (!full) continue;
      else v = base ? this.text(`${base}:${path}`) : null;
      if (!v) continue;
      try {
        if (kind === 'rec') {
          const r = parseRecord(v.text, path);
          if (r.id !== id) throw new RecordParseError(`id ${r.id} does not match its path`);
          rememberText(r, v.text);
          s.state.rec = r;
          s.recText = v.text;
          s.recOid = v.oid;
        } else {
          s.state.tomb = parseTombstone(v.text, id);
          rememberText(s.state.tomb, v.text);
          s.tombText = v.text;
          s.tombOid = v.oid;
        }
      } catch (e) {
        throw malformed(path, commit, e);
      }
    }
    return s;
  }
}

/** Two records may claim one alias after a merge: the clashes are resolved, the records rewritten and flagged. */
async function settleAliases(
  store: Store,
  ours: string,
  finalRecords: ReadonlyMap<string, MemoryRecord>,
  aliasOf: Map<string, string | undefined>,
  recordOnOurs: ReadonlyMap<string, boolean>,
  changes: Changes,
  conflicts: string[],
  stats: MergeStats,
): Promise<void> {
  for (const [id, r] of finalRecords) aliasOf.set(id, r.alias);
  const byAlias = new Map<string, string[]>();
  for (const [id, a] of aliasOf) if (a) byAlias.set(a, [...(byAlias.get(a) ?? []), id]);
  const involved = [...byAlias.values()].filter((xs) => xs.length > 1).flat();
  if (involved.length) {
    const subset = new Map<string, MemoryRecord>();
    for (const id of involved) {
      let rec = finalRecords.get(id);
      if (!rec) {
        const buf = await store.readPath(ours, recordPath(id));
        rec = store.parse(buf!.toString('utf8'), recordPath(id), ours);
      }
      subset.set(id, rec);
    }
    for (const id of resolveAliasClashes(subset)) {
      changes.set(recordPath(id), { text: serializeRecord(subset.get(id)!) });
      if (!conflicts.includes(id)) conflicts.push(id);
      if (recordOnOurs.get(id)) stats.updated++;
    }
  }
}

/** The other files both sides changed, per path; returns the merged shared config when both changed it. */
async function mergeOtherFiles(
  store: Store,
  base: string | null,
  generic: ReadonlySet<string>,
  dO: Diff,
  dT: Diff,
  changes: Changes,
  conflicts: string[],
): Promise<Record<string, unknown> | undefined> {
  let config: Record<string, unknown> | undefined;
  for (const path of [...generic].sort()) {
    const o = dO.get(path);
    const t = dT.get(path);
    if (!t) continue; // ours alone changed it
    if (!o) {
      changes.set(path, t.oid ? { oid: t.oid } : { remove: true });
      continue;
    }
    if (o.oid === t.oid) continue;
    if (path === SHARED_CONFIG_PATH && o.oid && t.oid) {
      const merged = await mergeConfig(store, base, o.oid, t.oid);
      config = merged.value;
      changes.set(path, { text: merged.text });
      continue;
    }
    // both changed one file differently: a modification beats a deletion, else the greater blob id
    const winner = !o.oid ? t.oid : !t.oid ? o.oid : maxString(o.oid, t.oid);
    if (winner && winner !== o.oid) changes.set(path, { oid: winner });
    conflicts.push(path);
  }
  return config;
}

/** Folds several merge bases (in sorted order, so both sides build the same tree) into one commit. */
async function virtualBase(store: Store, bases: string[]): Promise<string> {
  let v = bases[0];
  for (const b of bases.slice(1)) {
    const r = await mergeCommits(store, v, b, { message: 'mem: virtual merge base', now: new Date(0) });
    v = r.commit!;
  }
  return v;
}

/** Key-by-key three-way merge of config.yaml; a key both sides set differently goes to the greater value. */
async function mergeConfig(store: Store, base: string | null, oOid: string, tOid: string) {
  const read = async (spec: string | null): Promise<Record<string, unknown>> => {
    if (!spec) return {};
    const b = await store.readBlob(spec).catch(() => null);
    if (!b) return {};
    try {
      const v = parseYaml(b.toString('utf8'), { maxAliasCount: 16 });
      return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
    } catch {
      return {};
    }
  };
  const [b, o, t] = await Promise.all([
    read(base ? `${base}:${SHARED_CONFIG_PATH}` : null),
    read(oOid),
    read(tOid),
  ]);
  const out: Record<string, unknown> = {};
  const j = (v: unknown) => JSON.stringify(v) ?? '';
  for (const k of [...new Set([...Object.keys(o), ...Object.keys(t)])].sort()) {
    const [vb, vo, vt] = [j(b[k]), j(o[k]), j(t[k])];
    const pick = vo === vt ? o[k] : vo === vb ? t[k] : vt === vb ? o[k] : vo > vt ? o[k] : t[k];
    if (pick !== undefined) out[k] = pick;
  }
  return { value: out, text: stringify(out) };
}

/** The committer times of `commits` (ms), read through the store's cat-file. */
async function commitTimes(store: Store, commits: string[]): Promise<number[]> {
  const objs = await store.catFile.readMany(commits);
  return objs.map((o, i) => {
    const t = o?.type === 'commit' ? parseCommitHeader(o.content).committedAt : Number.NaN;
    if (Number.isNaN(t)) throw err('E_GIT', `cannot read the commit time of ${commits[i]}`);
    return t;
  });
}

/** Writes the merge commit of `ours` and `theirs` (no ref moves: the caller publishes it). */
async function writeMergeCommit(
  store: Store,
  ours: string,
  theirs: string,
  changes: Map<string, { oid: string } | { text: string } | { remove: true }>,
  message: string,
  now: Date,
): Promise<string> {
  const list: Change[] = [...changes].map(([path, c]) =>
    'text' in c ? { path, content: Buffer.from(c.text, 'utf8') } : { path, ...c },
  );
  const [oid] = await store.commitChanges(ours, list, message, await store.ident(), [theirs], null, now);
  return oid;
}

export { collectExpiredTombstones, parseTombstone, tombstoneExpired } from './tombstones.js';
export type { StoreMergeResult };
