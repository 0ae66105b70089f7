/**
 * The anchor index: for every record with anchors, where each anchor's text
 * was last known intact (path, blob, commit). Derived data cached under
 * .git/mem/cache/ and stamped with the memory commit it reflects; updated
 * from the tree diff like the catalog, so `check --all` does not parse every
 * record's YAML (about 0.5 ms each) just to learn that nothing changed.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memDir } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { idFromPath, type MemoryRecord, parseRecord, recordPath } from '../model/record.js';
import { baseOf, type FullAnchor, isComplete, STALE_VERDICTS } from './types.js';

const VERSION = 3;

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

export interface IndexedRecord {
  oid: string;
  status: string;
  anchors: IndexedAnchor[];
}

export interface AnchorIndex {
  tip: string | null;
  records: Map<string, IndexedRecord>;
}

function file(store: Store): string {
  return join(memDir(store.repo, 'cache'), `anchors-${store.ref.replace(/[^A-Za-z0-9]+/g, '_')}.json`);
}

export function indexRecord(r: MemoryRecord, oid: string): IndexedRecord {
  return {
    oid,
    status: r.status,
    anchors: r.anchors.map((a) => {
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
    }),
  };
}

function load(store: Store): AnchorIndex | undefined {
  try {
    const j = JSON.parse(readFileSync(file(store), 'utf8'));
    if (j.v !== VERSION) return undefined;
    return { tip: j.tip, records: new Map(Object.entries(j.records as Record<string, IndexedRecord>)) };
  } catch {
    return undefined;
  }
}

export function saveIndex(store: Store, idx: AnchorIndex): void {
  try {
    const f = file(store);
    const tmp = `${f}.${process.pid}.tmp`;
    writeFileSync(
      tmp,
      JSON.stringify({ v: VERSION, tip: idx.tip, records: Object.fromEntries(idx.records) }),
    );
    renameSync(tmp, f);
  } catch {
    // read-only .git: the index is only an optimisation
  }
}

/** The anchor index at the current tip, updated incrementally and saved. */
export async function anchorIndex(store: Store, tip: string | null): Promise<AnchorIndex> {
  if (!tip) return { tip: null, records: new Map() };
  const cached = load(store);
  if (cached && cached.tip === tip) return cached;
  let records: Map<string, IndexedRecord>;
  let changed: Array<{ path: string; oid: string | null }>;
  if (cached?.tip && (await store.hasCommit(cached.tip))) {
    records = cached.records;
    changed = await store.diffPaths(cached.tip, tip, 'memories');
  } else {
    records = new Map();
    const cat = await store.catalogAt(tip);
    changed = [...cat.entries.values()]
      .filter((e) => e.anchors.length)
      .map((e) => ({ path: recordPath(e.id), oid: e.oid }));
  }
  const toRead: Array<{ id: string; oid: string; path: string }> = [];
  for (const c of changed) {
    const id = idFromPath(c.path);
    if (!id) continue;
    if (c.oid === null) records.delete(id);
    else toRead.push({ id, oid: c.oid, path: c.path });
  }
  const blobs = await store.catFile.readMany(toRead.map((t) => t.oid));
  toRead.forEach((t, i) => {
    const b = blobs[i];
    if (!b) return;
    const text = b.content.toString('utf8');
    // cheap pre-filter: a record without an anchors key has nothing to index
    if (!text.includes('\nanchors:')) {
      records.delete(t.id);
      return;
    }
    try {
      const r = parseRecord(text, t.path);
      if (r.anchors.length) records.set(t.id, indexRecord(r, t.oid));
      else records.delete(t.id);
    } catch {
      records.delete(t.id);
    }
  });
  const idx = { tip, records };
  saveIndex(store, idx);
  return idx;
}
