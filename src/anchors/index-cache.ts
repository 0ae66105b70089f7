/**
 * The anchor index: for every anchor of every record, where its text was last
 * known intact (path, blob, commit). Derived data cached under .git/mem/cache/
 * and stamped with the memory commit it reflects; updated from the tree diff
 * like the catalog, so `check --all` does not parse every record's YAML
 * (about 0.5 ms each) just to learn that nothing changed.
 *
 * The file is one line per anchor, path first, lines sorted by their bytes:
 *
 *   git-mem anchor index 6 <memory commit>
 *   <path>\t<id>\t<position>\t<record blob>\t<status>\t<base blob>\t<base commit>\t<flags>[\t<sb>\t<v>\t<r>]
 *
 * so the post-commit hook, which needs the anchors of ten paths, finds their
 * lines by binary search in the file's bytes without parsing the rest (a JSON
 * file of the same data cost ~25 ms to parse and as much to write at 10k
 * anchors), and a write splices in the new lines of the records it changed
 * (their old lines are known exactly: the index was made from the same
 * record versions). Lines are handled as "byte strings" (latin1: one char per
 * byte), so string order is the file's byte order.
 *
 * A write that changed a few records (the post-commit hook's) does not rewrite
 * the file: it appends its lines to a journal beside it (`….tsv.log`), one
 * entry per memory commit, applied when the index is loaded:
 *
 *   = <from commit> <to commit> <lines dropped> <lines added> <records>
 *   -<line>           (each dropped line)
 *   +<line>           (each added line)
 *   R<record blob>\t<record as JSON>   (the new versions, for the record cache)
 *   .
 *
 * Entries apply in a chain from the file's commit; one that does not follow
 * on, or is cut short, ends the journal there. The file is rewritten (and
 * the journal removed) when the journal outgrows JOURNAL_LIMIT, or by any
 * other update.
 */
import { appendFileSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memDir } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { idFromPath, type MemoryRecord, recordPath } from '../model/record.js';
import { cacheRecord, rememberRecordsJson } from './record-cache.js';
import { baseOf, type FullAnchor, isComplete, STALE_VERDICTS } from './types.js';

// 6: an anchor's base is taken only from ids and repository paths (types.ts baseOf, isComplete)
const HEADER = 'git-mem anchor index 6 ';

export interface IndexedAnchor {
  /** base path / blob / commit (null: unknown) */
  p: string;
  /** base lines as "start-end", and the symbol (what a fresh verdict on the fast path reports) */
  l?: string;
  y?: string;
  b: string | null;
  c: string | null;
  /** base blob is not the commit's file (uncommitted anchor) */
  d?: 1;
  /** anchor still needs completing (imported as given) */
  i?: 1;
  /** the last verdict made the memory stale */
  s?: 1;
  /** stale verdict given at this target blob of the base path ("" = absent), with its status and reason */
  sb?: string;
  v?: string;
  r?: string;
}

/** One anchor of the index with its record: id, position in the record's anchors, the record's blob id and status. */
export interface IndexEntry extends IndexedAnchor {
  id: string;
  n: number;
  oid: string;
  status: string;
}

export interface AnchorIndex {
  tip: string | null;
  /** The anchors (all of them, or only those at the paths asked for). */
  entries: IndexEntry[];
  /** The index lines at `tip`, each ending in a newline (kept to rewrite the file after a write without parsing the rest). */
  body: Buffer;
  /** The journal's changes on top of `body` (+1 a line added, -1 dropped), when there is a journal. */
  delta?: ReadonlyMap<string, number>;
  /** The journal on disk when it ends at `tip` and a write may append to it: its size in bytes. */
  journal?: number;
}

/** The journal's size at which the next write rewrites the index file instead (about 16 hook commits of 10 records). */
export const JOURNAL_LIMIT = 512 * 1024;

function file(store: Store): string {
  return join(memDir(store.repo, 'cache'), `anchors-${store.ref.replace(/[^A-Za-z0-9]+/g, '_')}.tsv`);
}
const journalFile = (store: Store) => `${file(store)}.log`;
/** The JSON index of earlier versions (migrated on first use). */
function oldFile(store: Store): string {
  return join(memDir(store.repo, 'cache'), `anchors-${store.ref.replace(/[^A-Za-z0-9]+/g, '_')}.json`);
}

/** A field: as it is, or JSON-quoted when it holds a tab, a newline, a quote or a backslash. */
function enc(s: string): string {
  return /[\u0000-\u001f"\\]/.test(s) ? JSON.stringify(s) : s;
}
function dec(s: string): string {
  return s.startsWith('"') ? (JSON.parse(s) as string) : s;
}

/** The index entries of one record version. */
function indexAnchors(r: MemoryRecord): IndexedAnchor[] {
  return r.anchors.map((a) => {
    const b = isComplete(a) ? baseOf(a as FullAnchor) : null;
    if (!b) return { p: a.path, b: null, c: null, i: 1 } as IndexedAnchor;
    const x: IndexedAnchor = { p: b.path, b: b.blob, c: b.commit };
    if (b.lines) x.l = `${b.lines[0]}-${b.lines[1]}`;
    if (a.symbol) x.y = a.symbol;
    if (b.detached) x.d = 1;
    const vd = (a as FullAnchor).verdict;
    if (vd && STALE_VERDICTS.has(vd.status)) {
      x.s = 1;
      if (typeof vd.blob === 'string' && (!vd.to || vd.to.path === b.path)) {
        x.sb = vd.blob;
        x.v = vd.status;
        x.r = vd.reason;
      }
    }
    return x;
  });
}

function lineOf(id: string, n: number, oid: string, status: string, a: IndexedAnchor): string {
  const flags = `${a.d ? 'd' : ''}${a.i ? 'i' : ''}${a.s ? 's' : ''}`;
  let l = `${enc(a.p)}\t${id}\t${n}\t${oid}\t${status}\t${a.b ?? ''}\t${a.c ?? ''}\t${flags}`;
  l += `\t${a.l ?? ''}\t${enc(a.y ?? '')}`;
  if (a.sb !== undefined) l += `\t${enc(a.sb)}\t${enc(a.v ?? '')}\t${enc(a.r ?? '')}`;
  return l;
}

/** The index lines of one record version (none when it has no anchors). */
function indexLines(id: string, r: MemoryRecord, oid: string): string[] {
  return indexAnchors(r).map((a, n) => lineOf(id, n, oid, r.status, a));
}

function parseLine(l: string): IndexEntry {
  const f = l.split('\t');
  const e: IndexEntry = {
    p: dec(f[0]),
    id: f[1],
    n: Number(f[2]),
    oid: f[3],
    status: f[4],
    b: f[5] || null,
    c: f[6] || null,
  };
  const flags = f[7] ?? '';
  if (flags.includes('d')) e.d = 1;
  if (flags.includes('i')) e.i = 1;
  if (flags.includes('s')) e.s = 1;
  if (f[8]) e.l = f[8];
  if (f[9]) e.y = dec(f[9]);
  if (f.length >= 13) {
    e.sb = dec(f[10]);
    e.v = dec(f[11]);
    e.r = dec(f[12]);
  }
  return e;
}

const idOfLine = (l: string): string => {
  const a = l.indexOf('\t');
  return l.slice(a + 1, l.indexOf('\t', a + 1));
};

const NL = 10;
/** A line as a byte string (latin1 of its UTF-8). */
const bytesOf = (l: string): string =>
  /^[\x00-\x7f]*$/.test(l) ? l : Buffer.from(l, 'utf8').toString('latin1');
const utf8Of = (b: string): string =>
  /^[\x00-\x7f]*$/.test(b) ? b : Buffer.from(b, 'latin1').toString('utf8');
const joinLines = (lines: readonly string[]) =>
  Buffer.from(lines.length ? `${lines.join('\n')}\n` : '', 'latin1');
const splitLines = (body: Buffer) => {
  const lines = body.toString('latin1').split('\n');
  lines.pop(); // after the last newline
  return lines;
};
const sortLines = (lines: string[]) => lines.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The index file: its tip and its lines, and the journal's changes on top
 * (applied by select: a hook reads ten paths' lines, and splicing the whole
 * file cost more than that); undefined when absent or unreadable.
 */
function load(
  store: Store,
):
  | { tip: string; body: Buffer; delta?: Map<string, number>; migrated?: boolean; journal?: number }
  | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(file(store));
  } catch {
    return loadOld(store);
  }
  const nl = buf.indexOf(NL);
  if (nl < 0 || buf.toString('latin1', 0, HEADER.length) !== HEADER || buf[buf.length - 1] !== NL)
    return undefined;
  const tip = buf.toString('latin1', HEADER.length, nl);
  if (!/^[0-9a-f]{40,64}$/.test(tip)) return undefined;
  const body = buf.subarray(nl + 1);
  let log: Buffer;
  try {
    log = readFileSync(journalFile(store));
  } catch {
    return { tip, body, journal: 0 };
  }
  const j = readJournal(log, tip);
  rememberRecordsJson(store, j.records);
  return {
    tip: j.tip,
    body,
    delta: j.lines.size ? j.lines : undefined,
    journal: j.complete ? log.length : undefined,
  };
}

/**
 * The entries of a journal that follow on from `tip`: the commit they lead to,
 * the net change of lines (+1 added, -1 dropped), the records' JSON by blob
 * id, and whether every byte of the journal was such an entry.
 */
export function readJournal(
  log: Buffer,
  tip: string,
): { tip: string; lines: Map<string, number>; records: Map<string, Buffer>; complete: boolean } {
  const lines = new Map<string, number>();
  const records = new Map<string, Buffer>();
  let at = 0;
  let cur = tip;
  const next = (): string | undefined => {
    const e = log.indexOf(NL, at);
    if (e < 0) return undefined;
    const l = log.toString('latin1', at, e);
    at = e + 1;
    return l;
  };
  while (at < log.length) {
    const start = at;
    const head = /^= ([0-9a-f]{40,64}) ([0-9a-f]{40,64}) (\d+) (\d+) (\d+)$/.exec(next() ?? '');
    if (!head || head[1] !== cur) {
      at = start;
      break;
    }
    const entry: Array<[string, number]> = [];
    const recs: Array<[string, Buffer]> = [];
    let ok = true;
    for (const [mark, count] of [
      ['-', Number(head[3])],
      ['+', Number(head[4])],
    ] as const) {
      for (let i = 0; i < count && ok; i++) {
        const l = next();
        if (l === undefined || l[0] !== mark) ok = false;
        else entry.push([l.slice(1), mark === '+' ? 1 : -1]);
      }
    }
    // records: "R<oid>\t<json>", kept as bytes (decoded when a check asks for one)
    for (let i = 0, n = Number(head[5]); i < n && ok; i++) {
      const e = log.indexOf(NL, at);
      const tab = log.indexOf(9, at);
      if (e < 0 || log[at] !== 0x52 || tab < 0 || tab > e || (tab - at - 1 !== 40 && tab - at - 1 !== 64))
        ok = false;
      else {
        recs.push([log.toString('latin1', at + 1, tab), log.subarray(tab + 1, e)]);
        at = e + 1;
      }
    }
    if (!ok || next() !== '.') {
      at = start;
      break;
    }
    for (const [l, d] of entry) lines.set(l, (lines.get(l) ?? 0) + d);
    for (const [oid, json] of recs) records.set(oid, json);
    cur = head[2];
  }
  for (const [l, d] of lines) if (d === 0) lines.delete(l);
  return { tip: cur, lines, records, complete: at === log.length };
}

/** Migrates the JSON index (version 3) once, so an upgrade does not re-parse every record. */
function loadOld(store: Store): { tip: string; body: Buffer; migrated: true } | undefined {
  try {
    const j = JSON.parse(readFileSync(oldFile(store), 'utf8'));
    if (j.v !== 3 || typeof j.tip !== 'string') return undefined;
    const lines: string[] = [];
    for (const [id, r] of Object.entries(
      j.records as Record<string, { oid: string; status: string; anchors: IndexedAnchor[] }>,
    )) {
      r.anchors.forEach((a, n) => {
        lines.push(bytesOf(lineOf(id, n, r.oid, r.status, a)));
      });
    }
    return { tip: j.tip, body: joinLines(sortLines(lines)), migrated: true };
  } catch {
    return undefined;
  }
}

/** Removes the index and its journal (derived data, built again when next needed). */
function drop(store: Store): void {
  try {
    rmSync(journalFile(store), { force: true });
    rmSync(file(store), { force: true });
  } catch {}
}

function save(store: Store, tip: string, body: readonly Buffer[]): void {
  try {
    const f = file(store);
    const tmp = `${f}.${process.pid}.tmp`;
    writeFileSync(tmp, Buffer.concat([Buffer.from(`${HEADER}${tip}\n`, 'latin1'), ...body]));
    // the journal first: entries after the old tip must not be applied to the new file
    rmSync(journalFile(store), { force: true });
    renameSync(tmp, f);
    rmSync(oldFile(store), { force: true });
  } catch {
    // read-only .git: the index is only an optimisation
  }
}

/** Offset of the first line of `body` not below `key` (a byte string); body.length when none. */
function lowerBound(body: Buffer, key: string): number {
  let lo = 0;
  let hi = body.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const s = mid === 0 ? 0 : body.lastIndexOf(NL, mid - 1) + 1;
    const e = body.indexOf(NL, s);
    if (body.toString('latin1', s, e) < key) lo = e + 1;
    else hi = s;
  }
  return lo;
}

/** Every line rewritten: the lines of the changed records replaced (undefined: gone or without anchors). */
function rebuild(body: Buffer, changed: Map<string, string[] | undefined>): Buffer {
  const lines = changed.size ? splitLines(body).filter((l) => !changed.has(idOfLine(l))) : splitLines(body);
  for (const ls of changed.values()) if (ls) for (const l of ls) lines.push(bytesOf(l));
  return joinLines(sortLines(lines));
}

/**
 * `body` with lines dropped (-1) and added (+1), by binary search for where
 * each goes; undefined when a line to drop is not there or one to add
 * already is (then the caller rebuilds).
 */
function splice(body: Buffer, lines: ReadonlyMap<string, number>): Buffer | undefined {
  const drop: Array<[number, number]> = [];
  const add: string[] = [];
  for (const [l, d] of lines) {
    const at = lowerBound(body, l);
    const there = body.toString('latin1', at, at + l.length + 1) === `${l}\n`;
    if (d === -1 && there) drop.push([at, at + l.length + 1]);
    else if (d === 1 && !there) add.push(l);
    else return undefined;
  }
  const ins = sortLines(add).map((l) => ({ at: lowerBound(body, l), l }));
  drop.sort((x, y) => x[0] - y[0]);
  const parts: Buffer[] = [];
  let pos = 0;
  let d = 0;
  let i = 0;
  while (d < drop.length || i < ins.length) {
    const nextDrop = d < drop.length ? drop[d][0] : Number.POSITIVE_INFINITY;
    const nextIns = i < ins.length ? ins[i].at : Number.POSITIVE_INFINITY;
    if (nextIns <= nextDrop) {
      if (nextIns > pos) parts.push(body.subarray(pos, nextIns));
      pos = Math.max(pos, nextIns);
      parts.push(Buffer.from(`${ins[i].l}\n`, 'latin1'));
      i++;
    } else {
      if (nextDrop > pos) parts.push(body.subarray(pos, nextDrop));
      pos = Math.max(pos, drop[d][1]);
      d++;
    }
  }
  if (pos < body.length) parts.push(body.subarray(pos));
  return Buffer.concat(parts);
}

/**
 * Saves the index at a new tip: `base` (the index at the commit the write was
 * built on) with the lines of the records the write changed replaced, and
 * caches the new record versions. A small write is appended to the journal;
 * otherwise the file is rewritten (spliced: the old lines are known exactly,
 * as the index holds what the old versions give; rebuilt from all lines when
 * one is missing).
 */
export function saveIndex(
  store: Store,
  tip: string,
  base: AnchorIndex,
  changed: Map<string, { before: MemoryRecord; beforeOid: string; after: MemoryRecord; afterOid: string }>,
): void {
  const lines = new Map<string, number>();
  for (const [id, c] of changed) {
    const old = new Set(indexLines(id, c.before, c.beforeOid).map(bytesOf));
    const next = new Set(indexLines(id, c.after, c.afterOid).map(bytesOf));
    for (const l of old) if (!next.has(l)) lines.set(l, -1);
    for (const l of next) if (!old.has(l)) lines.set(l, 1);
  }
  if (base.tip && base.journal !== undefined) {
    const entry = [`= ${base.tip} ${tip} `];
    const drops: string[] = [];
    const adds: string[] = [];
    for (const [l, d] of lines) (d < 0 ? drops : adds).push(l);
    entry[0] += `${drops.length} ${adds.length} ${changed.size}\n`;
    for (const l of drops) entry.push(`-${l}\n`);
    for (const l of adds) entry.push(`+${l}\n`);
    const text = Buffer.concat([
      Buffer.from(entry.join(''), 'latin1'),
      ...[...changed.values()].map((c) =>
        Buffer.from(`R${c.afterOid}\t${JSON.stringify(c.after)}\n`, 'utf8'),
      ),
      Buffer.from('.\n', 'latin1'),
    ]);
    if (base.journal + text.length <= JOURNAL_LIMIT) {
      try {
        // one write: concurrent writers' entries do not interleave, and a cut one ends the journal
        appendFileSync(journalFile(store), text);
        return;
      } catch {
        // fall through: rewrite the file
      }
    }
  }
  for (const c of changed.values()) cacheRecord(store, c.afterOid, c.after);
  const all = new Map(base.delta);
  for (const [l, d] of lines) {
    const n = (all.get(l) ?? 0) + d;
    if (n) all.set(l, n);
    else all.delete(l);
  }
  const next = splice(base.body, all);
  if (next) {
    save(store, tip, [next]);
    return;
  }
  if (base.delta) {
    // the journal's changes do not fit the file: the next check builds the index again
    drop(store);
    return;
  }
  const m = new Map<string, string[] | undefined>();
  for (const [i, x] of changed) m.set(i, indexLines(i, x.after, x.afterOid));
  save(store, tip, [rebuild(base.body, m)]);
}

/**
 * The entries of all lines, or of the lines of some paths (by binary search),
 * the journal's changes applied; undefined when they do not fit the file (a
 * line to drop is not there, or one to add already is).
 */
function select(
  tip: string,
  body: Buffer,
  paths?: ReadonlySet<string>,
  delta?: ReadonlyMap<string, number>,
): AnchorIndex | undefined {
  const entries: IndexEntry[] = [];
  if (paths) {
    for (const p of paths) {
      const key = bytesOf(`${enc(p)}\t`);
      let lines: string[] = [];
      for (let at = lowerBound(body, key); at < body.length; ) {
        const e = body.indexOf(NL, at);
        if (body.toString('latin1', at, at + key.length) !== key) break;
        lines.push(body.toString('latin1', at, e));
        at = e + 1;
      }
      if (delta) {
        const set = new Set(lines);
        for (const [l, d] of delta) {
          if (!l.startsWith(key)) continue;
          if (d === -1 ? !set.delete(l) : set.has(l)) return undefined;
          if (d === 1) set.add(l);
        }
        lines = sortLines([...set]);
      }
      for (const l of lines) entries.push(parseLine(utf8Of(l)));
    }
  } else {
    const all = delta ? splice(body, delta) : body;
    if (!all) return undefined;
    for (const l of splitLines(all)) entries.push(parseLine(utf8Of(l)));
  }
  return { tip, entries, body, delta };
}

/**
 * The anchor index at the current tip, updated incrementally and saved.
 * With `paths`, only the anchors at those paths are parsed.
 */
export async function anchorIndex(
  store: Store,
  tip: string | null,
  paths?: ReadonlySet<string>,
): Promise<AnchorIndex> {
  if (!tip) return { tip: null, entries: [], body: Buffer.alloc(0) };
  let cached = load(store);
  if (cached && cached.tip === tip) {
    if (cached.migrated) {
      save(store, tip, [cached.body]);
      return { ...select(tip, cached.body, paths)!, journal: 0 };
    }
    const s = select(tip, cached.body, paths, cached.delta);
    if (s) return { ...s, journal: cached.journal };
    cached = undefined; // a journal that does not fit its file: built again from the records
  }
  let body: Buffer | undefined;
  let changed: Array<{ path: string; oid: string | null }> = [];
  if (cached?.tip && (await store.hasCommit(cached.tip))) {
    body = cached.delta ? splice(cached.body, cached.delta) : cached.body;
    if (body) changed = await store.diffPaths(cached.tip, tip, 'memories');
  }
  if (!body) {
    body = Buffer.alloc(0);
    const cat = await store.catalogAt(tip);
    changed = [...cat.entries.values()]
      .filter((e) => e.anchors.length)
      .map((e) => ({ path: recordPath(e.id), oid: e.oid }));
  }
  const next = new Map<string, string[] | undefined>();
  const toRead: Array<{ id: string; oid: string; path: string }> = [];
  for (const c of changed) {
    const id = idFromPath(c.path);
    if (!id) continue;
    next.set(id, undefined);
    if (c.oid === null) continue;
    // a record the catalog just parsed (building the index from scratch) is not read from git again
    const parsed = store.parsedRecord(c.oid);
    if (parsed) {
      if (parsed.anchors.length) next.set(id, indexLines(id, parsed, c.oid));
    } else toRead.push({ id, oid: c.oid, path: c.path });
  }
  const blobs = await store.catFile.readMany(toRead.map((t) => t.oid));
  toRead.forEach((t, i) => {
    const b = blobs[i];
    if (!b) return;
    const text = b.content.toString('utf8');
    // cheap pre-filter: a record without an anchors key has nothing to index
    if (!text.includes('\nanchors:')) return;
    try {
      const r = store.recordOf(t.oid, b.content, t.path);
      if (r.anchors.length) next.set(t.id, indexLines(t.id, r, t.oid));
    } catch {}
  });
  body = rebuild(body, next);
  save(store, tip, [body]);
  return { ...select(tip, body, paths)!, journal: 0 };
}

/**
 * The entries at one path of an index anchorIndex returned (whatever paths it was asked for): its
 * lines found by binary search, the journal's changes applied; undefined when they do not fit.
 */
export function entriesAt(idx: AnchorIndex, path: string): IndexEntry[] | undefined {
  if (!idx.tip) return [];
  return select(idx.tip, idx.body, new Set([path]), idx.delta)?.entries;
}

/**
 * The entries whose line `keep` accepts by its path and base blob (null: unknown), looked at before
 * the line is parsed: a reader of a few anchors among 10k (blame's "has the file changed since it
 * was placed?") parses only those. Undefined when the journal's changes do not fit the file.
 */
export function scanIndex(
  idx: AnchorIndex,
  keep: (path: string, blob: string | null) => boolean,
): IndexEntry[] | undefined {
  const all = idx.delta ? splice(idx.body, idx.delta) : idx.body;
  if (!all) return undefined;
  const text = all.toString('latin1');
  const out: IndexEntry[] = [];
  let raw = '';
  let path = '';
  for (let at = 0; at < text.length; ) {
    const end = text.indexOf('\n', at);
    const t0 = text.indexOf('\t', at);
    // lines are sorted by path: a path is decoded once for all its lines
    if (t0 - at !== raw.length || !text.startsWith(raw, at)) {
      raw = text.slice(at, t0);
      path = dec(utf8Of(raw));
    }
    let t = t0;
    for (let k = 0; k < 4; k++) t = text.indexOf('\t', t + 1); // the tab before the base blob (field 5)
    const blob = text.slice(t + 1, text.indexOf('\t', t + 1));
    if (keep(path, blob || null)) out.push(parseLine(utf8Of(text.slice(at, end))));
    at = end + 1;
  }
  return out;
}
