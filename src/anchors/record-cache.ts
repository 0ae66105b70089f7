/**
 * Parsed records as JSON, keyed by the record's blob id, under .git/mem/cache/records/.
 * Content-addressed, so always valid; derived data, safe to delete. A check
 * needs the full anchors of only the records whose files changed, and parsing
 * their YAML in a one-shot process costs ~1 ms each (the parser is cold); the
 * JSON of the same record version costs a few microseconds.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memDir } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { type MemoryRecord, recordPath } from '../model/record.js';

const bases = new WeakMap<Store, string>();
/** Records as JSON by blob id from the anchor index's journal (index-cache.ts), per store. */
const fromJournal = new WeakMap<Store, ReadonlyMap<string, Buffer>>();

/** Records of the anchor index's journal (JSON bytes by blob id): read before the cache files. */
export function rememberRecordsJson(store: Store, records: ReadonlyMap<string, Buffer>): void {
  if (records.size) fromJournal.set(store, records);
}

function file(store: Store, oid: string): string {
  let base = bases.get(store);
  if (!base) {
    base = memDir(store.repo, 'cache', 'records');
    bases.set(store, base);
  }
  return join(base, oid.slice(0, 2), `${oid}.json`);
}

export function cacheRecord(store: Store, oid: string, r: MemoryRecord | string): void {
  try {
    const f = file(store, oid);
    const text = typeof r === 'string' ? r : JSON.stringify(r);
    // content-addressed: a concurrent writer writes the same bytes; a torn file fails JSON.parse and is re-parsed
    try {
      writeFileSync(f, text);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      mkdirSync(join(f, '..'), { recursive: true }); // a new fan-out directory
      writeFileSync(f, text);
    }
  } catch {
    // read-only .git: only an optimisation
  }
}

/**
 * Reads records by id and blob id: from the JSON cache when there, else parsed. What was parsed
 * goes into the cache, or, with `later`, into that list as JSON for the caller to cache once it
 * knows which record versions are worth keeping (a check that rewrites a record does not need
 * its old version cached).
 */
export async function loadRecords(
  store: Store,
  wanted: ReadonlyArray<{ id: string; oid: string }>,
  later?: Array<{ id: string; oid: string; json: string }>,
): Promise<Map<string, MemoryRecord>> {
  const out = new Map<string, MemoryRecord>();
  const missing: Array<{ id: string; oid: string }> = [];
  const journal = fromJournal.get(store);
  for (const w of wanted) {
    try {
      const r = JSON.parse(
        journal?.get(w.oid)?.toString('utf8') ?? readFileSync(file(store, w.oid), 'utf8'),
      ) as MemoryRecord;
      if (r && r.id === w.id && Array.isArray(r.anchors)) {
        out.set(w.id, r);
        continue;
      }
    } catch {}
    missing.push(w);
  }
  const blobs = await store.catFile.readMany(missing.map((m) => m.oid));
  missing.forEach((m, i) => {
    const b = blobs[i];
    if (!b) return;
    const r = store.parseBlob(m.oid, b.content, recordPath(m.id));
    out.set(m.id, r);
    if (later) later.push({ id: m.id, oid: m.oid, json: JSON.stringify(r) });
    else cacheRecord(store, m.oid, r);
  });
  return out;
}
