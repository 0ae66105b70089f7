/**
 * The anchor index: for every anchor of every record, where its text was last
 * known intact (path, blob, commit). Derived data cached under .git/mem/cache/
 * and stamped with the memory commit it reflects; updated from the tree diff
 * like the catalog, so `check --all` does not parse every record's YAML
 * (about 0.5 ms each) just to learn that nothing changed.
 *
 * The file is one line per anchor, path first:
 *
 *   git-mem anchor index 4 <memory commit>
 *   <path>\t<id>\t<position>\t<record blob>\t<status>\t<base blob>\t<base commit>\t<flags>[\t<sb>\t<v>\t<r>]
 *
 * so the post-commit hook, which needs the anchors of ten paths, reads the
 * file and picks those lines without building 10k objects (a JSON file of the
 * same data cost ~25 ms to parse and as much to write at 10k anchors), and a
 * write replaces only the lines of the records it changed.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memDir } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { idFromPath, type MemoryRecord, parseRecord, recordPath } from '../model/record.js';
import { baseOf, type FullAnchor, isComplete, STALE_VERDICTS } from './types.js';

const HEADER = 'git-mem anchor index 4 ';

export interface IndexedAnchor {
  /** base path / blob / commit (null: unknown) */
  p: string;
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
  /** The index file's lines at `tip` (kept to rewrite the file after a write without parsing the rest). */
  lines: string[];
}

function file(store: Store): string {
  return join(memDir(store.repo, 'cache'), `anchors-${store.ref.replace(/[^A-Za-z0-9]+/g, '_')}.tsv`);
}
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
export function indexAnchors(r: MemoryRecord): IndexedAnchor[] {
  return r.anchors.map((a) => {
    const b = isComplete(a) ? baseOf(a as FullAnchor) : null;
    if (!b) return { p: a.path, b: null, c: null, i: 1 } as IndexedAnchor;
    const x: IndexedAnchor = { p: b.path, b: b.blob, c: b.commit };
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
  if (a.sb !== undefined) l += `\t${enc(a.sb)}\t${enc(a.v ?? '')}\t${enc(a.r ?? '')}`;
  return l;
}

/** The index lines of one record version (none when it has no anchors). */
export function indexLines(id: string, r: MemoryRecord, oid: string): string[] {
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
  if (f.length >= 11) {
    e.sb = dec(f[8]);
    e.v = dec(f[9]);
    e.r = dec(f[10]);
  }
  return e;
}

const idOfLine = (l: string): string => {
  const a = l.indexOf('\t');
  return l.slice(a + 1, l.indexOf('\t', a + 1));
};

/** The index file: its tip and its anchor lines; undefined when absent or unreadable. */
function load(store: Store): { tip: string; lines: string[] } | undefined {
  let text: string;
  try {
    text = readFileSync(file(store), 'utf8');
  } catch {
    return loadOld(store);
  }
  if (!text.startsWith(HEADER) || !text.endsWith('\n')) return undefined;
  const lines = text.split('\n');
  const tip = lines[0].slice(HEADER.length);
  lines.pop(); // after the last newline
  lines.shift();
  return /^[0-9a-f]{40,64}$/.test(tip) ? { tip, lines } : undefined;
}

/** Migrates the JSON index (version 3) once, so an upgrade does not re-parse every record. */
function loadOld(store: Store): { tip: string; lines: string[] } | undefined {
  try {
    const j = JSON.parse(readFileSync(oldFile(store), 'utf8'));
    if (j.v !== 3 || typeof j.tip !== 'string') return undefined;
    const lines: string[] = [];
    for (const [id, r] of Object.entries(
      j.records as Record<string, { oid: string; status: string; anchors: IndexedAnchor[] }>,
    )) {
      r.anchors.forEach((a, n) => {
        lines.push(lineOf(id, n, r.oid, r.status, a));
      });
    }
    return { tip: j.tip, lines };
  } catch {
    return undefined;
  }
}

function save(store: Store, tip: string, lines: readonly string[]): void {
  try {
    const f = file(store);
    const tmp = `${f}.${process.pid}.tmp`;
    writeFileSync(tmp, `${HEADER}${tip}\n${lines.length ? `${lines.join('\n')}\n` : ''}`);
    renameSync(tmp, f);
    rmSync(oldFile(store), { force: true });
  } catch {
    // read-only .git: the index is only an optimisation
  }
}

/** The lines of `base` with the lines of the changed records replaced (undefined lines: record gone or without anchors). */
function replaceRecords(base: readonly string[], changed: Map<string, string[] | undefined>): string[] {
  if (!changed.size) return [...base];
  const out: string[] = [];
  for (const l of base) if (!changed.has(idOfLine(l))) out.push(l);
  for (const ls of changed.values()) if (ls) out.push(...ls);
  return out;
}

/** Saves the index at a new tip: `base` with the lines of the records a write changed replaced. */
export function saveIndex(
  store: Store,
  tip: string,
  base: AnchorIndex,
  changed: Map<string, { record: MemoryRecord; oid: string }>,
): void {
  const m = new Map<string, string[] | undefined>();
  for (const [id, c] of changed) m.set(id, indexLines(id, c.record, c.oid));
  save(store, tip, replaceRecords(base.lines, m));
}

function select(tip: string, lines: string[], paths?: ReadonlySet<string>): AnchorIndex {
  const entries: IndexEntry[] = [];
  if (paths) {
    const want = new Set([...paths].map(enc));
    for (const l of lines) if (want.has(l.slice(0, l.indexOf('\t')))) entries.push(parseLine(l));
  } else for (const l of lines) entries.push(parseLine(l));
  return { tip, entries, lines };
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
  if (!tip) return { tip: null, entries: [], lines: [] };
  const cached = load(store);
  if (cached && cached.tip === tip) return select(tip, cached.lines, paths);
  let lines: string[];
  let changed: Array<{ path: string; oid: string | null }>;
  if (cached?.tip && (await store.hasCommit(cached.tip))) {
    lines = cached.lines;
    changed = await store.diffPaths(cached.tip, tip, 'memories');
  } else {
    lines = [];
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
    if (c.oid !== null) toRead.push({ id, oid: c.oid, path: c.path });
  }
  const blobs = await store.catFile.readMany(toRead.map((t) => t.oid));
  toRead.forEach((t, i) => {
    const b = blobs[i];
    if (!b) return;
    const text = b.content.toString('utf8');
    // cheap pre-filter: a record without an anchors key has nothing to index
    if (!text.includes('\nanchors:')) return;
    try {
      const r = parseRecord(text, t.path);
      if (r.anchors.length) next.set(t.id, indexLines(t.id, r, t.oid));
    } catch {}
  });
  lines = replaceRecords(lines, next);
  save(store, tip, lines);
  return select(tip, lines, paths);
}
