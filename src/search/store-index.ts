/**
 * The index as derived data of the store: cached under .git/mem/search/,
 * stamped with the memory commit it reflects, the index format and the
 * embedding lineage. Opening it brings it to the tip: a matching stamp is
 * used as is; an older stamp is updated from the tree diff (only the records
 * that changed are read); a wrong format or lineage, or a stamp git no
 * longer knows, means a rebuild. It can always be deleted (`git mem reindex`).
 *
 * A long-lived process (MCP server, query daemon) keeps the index in memory
 * and applies the diff to the new tip before every query.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { memDir, type Repo } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { idFromPath, type MemoryRecord, parseRecord, RecordParseError, recordPath } from '../model/record.js';
import type { SearchDoc } from './docs.js';
import { embedText } from './docs.js';
import { unit } from './embed/vector-math.js';
import { type EmbeddingProvider, lineageKey } from './embeddings.js';
import { type IndexData, SearchIndex } from './engine.js';

export const INDEX_FORMAT = 9; // 6: a moved anchor's paths are where it is now; 7: words read as NFKC; 8: marks stay in their words, unspaced scripts cut into words; 9: Arabic and Hebrew without their vowel marks
/** Changes applied since the saved snapshot before it is rewritten. */
export const RESAVE_AFTER = 64;
/**
 * A long-lived process rewrites a snapshot that is RESAVE_AFTER behind once no open has come for
 * this long (the write takes 0.2-0.3 s at 10k memories and holds the next open), or at once when
 * it is this many changes behind (a process never idle still saves).
 */
export const IDLE_SAVE_MS = 1000;
export const RESAVE_ANYWAY_AFTER = 16 * RESAVE_AFTER;

export interface IndexState {
  index: SearchIndex;
  /** memory commit the in-memory index reflects */
  tip: string | null;
  /** commit of the snapshot on disk (null = none) */
  savedTip: string | null;
  /** changes applied since the snapshot */
  pending: number;
  lineage: string | null;
  provider: EmbeddingProvider | null;
  /** repository of the store (local usage counters) */
  repo?: Repo;
  /** what the last open/refresh did, for reports and tests */
  last: { mode: 'memory' | 'snapshot' | 'incremental' | 'rebuild' | 'empty'; changed: number; ms: number };
}

export function indexDir(store: Store): string {
  return memDir(store.repo, 'search', store.ref.replace(/[^A-Za-z0-9]+/g, '_'));
}

interface Snapshot {
  format: number;
  tip: string;
  lineage: string | null;
  /** our documents and statistics */
  data: IndexData;
  /** vector table: ids in the order of vectors.f32 */
  vecIds?: string[];
  vecHashes?: string[];
  dim?: number;
}

/**
 * The ref's tip, asked of the long-lived `git cat-file --batch` helper (a ref
 * name resolves fresh on every request): no process spawn per query, which
 * matters in a daemon holding a big index (spawning slows down as RSS grows).
 * Starting the helper here also puts it up before a big index is loaded.
 */
async function currentTip(store: Store): Promise<string | null> {
  try {
    const o = await store.catFile.read(store.ref);
    if (o && o.type === 'commit') return o.oid;
    if (!o) return null;
  } catch {}
  return store.tip();
}

/** In-process memo: the MCP server and the daemon keep one index per store. */
const live = new Map<string, Promise<IndexState>>();
/** Saves put off until the process is idle (saveWhenIdle), by the same key. */
const idleSaves = new Map<string, ReturnType<typeof setTimeout>>();

function memoKey(store: Store): string {
  return `${store.repo.commonDir}\0${store.ref}`;
}

/** Whether this process holds the store's index (opened, or being opened, by a query). */
export function indexIsOpen(store: Store): boolean {
  return live.has(memoKey(store));
}

export function forgetIndex(store: Store): void {
  const key = memoKey(store);
  live.delete(key);
  clearTimeout(idleSaves.get(key));
  idleSaves.delete(key);
}

export interface OpenOptions {
  provider?: EmbeddingProvider | null;
  /** persist the snapshot when it is behind (default true) */
  persist?: boolean;
  /** ignore any snapshot and the in-memory copy */
  rebuild?: boolean;
  /** build the inverted index (long-lived processes); one-shot calls scan the documents' term counts */
  postings?: boolean;
}

/** The index at the store's tip, from memory, disk or git (in that order of preference). */
export async function openIndex(store: Store, opts: OpenOptions = {}): Promise<IndexState> {
  const key = memoKey(store);
  const prev = opts.rebuild ? undefined : live.get(key);
  const p = (async () => {
    const t0 = performance.now();
    // start the git helpers before a big index is in memory (spawning gets slower as RSS grows)
    const tip = await currentTip(store);
    const provider = opts.provider === undefined ? null : opts.provider;
    const lineage = provider ? lineageKey(provider.lineage) : null;
    let st: IndexState | undefined;
    if (prev) {
      try {
        st = await prev;
      } catch {
        st = undefined;
      }
      if (st && st.lineage !== lineage) st = undefined;
    }
    if (!st) st = await loadSnapshot(store, lineage, provider, opts.rebuild);
    const res = await bringToTip(store, st, tip);
    st.repo = store.repo;
    if (opts.postings) st.index.ensurePostings();
    if (provider && provider !== st.provider) st.provider = provider;
    if (st.provider) await embedMissing(store, st);
    st.last.ms = performance.now() - t0;
    const first = st.savedTip === null || res === 'rebuild';
    const due = opts.persist !== false && !!st.tip && (first || st.pending >= RESAVE_AFTER);
    // a one-shot process saves before it answers. A long-lived one (MCP server, daemon, UI)
    // answers first; it saves a first snapshot (or one far behind) right after, in the chain the
    // next open waits for (the save needs the index as it is), and a later one when idle.
    if (due && !store.longLived) await saveSnapshot(store, st);
    const now = due && store.longLived && (first || st.pending >= RESAVE_ANYWAY_AFTER);
    if (due && store.longLived && !now) saveWhenIdle(store, key);
    return { st, later: now };
  })();
  const answer = p.then((r) => r.st);
  const chain = p.then(async (r) => {
    if (r.later) {
      await new Promise((done) => setImmediate(done)); // after the answer has gone out
      await saveSnapshot(store, r.st);
    }
    return r.st;
  });
  live.set(key, chain);
  chain.catch(() => live.delete(key));
  return answer;
}

/**
 * Saves the store's index once IDLE_SAVE_MS pass with no open (each open puts it off again), in
 * the chain the next open waits for. The timer keeps no process alive; an index forgotten
 * meanwhile, or already saved at its tip, is left alone.
 */
function saveWhenIdle(store: Store, key: string): void {
  clearTimeout(idleSaves.get(key));
  const timer = setTimeout(() => {
    idleSaves.delete(key);
    const cur = live.get(key);
    if (!cur) return;
    const next = cur.then(async (st) => {
      if (st.tip && st.savedTip !== st.tip && existsSync(store.repo.commonDir)) await saveSnapshot(store, st);
      return st;
    });
    live.set(key, next);
    next.catch(() => live.delete(key));
  }, IDLE_SAVE_MS);
  timer.unref?.();
  idleSaves.set(key, timer);
}

async function loadSnapshot(
  store: Store,
  lineage: string | null,
  provider: EmbeddingProvider | null,
  rebuild?: boolean,
): Promise<IndexState> {
  const dir = indexDir(store);
  const file = join(dir, 'index.json');
  if (!rebuild && existsSync(file)) {
    try {
      const snap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
      if (
        snap.format === INDEX_FORMAT &&
        snap.lineage === lineage &&
        typeof snap.tip === 'string' &&
        snap.data &&
        (await store.hasCommit(snap.tip))
      ) {
        const index = SearchIndex.fromData(snap.data);
        if (lineage && snap.vecIds && snap.dim) loadVectors(index, dir, snap, lineage);
        return {
          index,
          tip: snap.tip,
          savedTip: snap.tip,
          pending: 0,
          lineage,
          provider,
          last: { mode: 'snapshot', changed: 0, ms: 0 },
        };
      }
    } catch {
      // unreadable or partial: rebuilt below
    }
  }
  return {
    index: SearchIndex.create(),
    tip: null,
    savedTip: null,
    pending: 0,
    lineage,
    provider,
    last: { mode: 'rebuild', changed: 0, ms: 0 },
  };
}

function loadVectors(index: SearchIndex, dir: string, snap: Snapshot, lineage: string): void {
  const buf = readFileSync(join(dir, 'vectors.f32'));
  const dim = snap.dim!;
  const all = new Float32Array(buf.buffer, buf.byteOffset, Math.floor(buf.byteLength / 4));
  if (all.length !== dim * snap.vecIds!.length) return;
  const table = {
    lineageKey: lineage,
    dim,
    byId: new Map<string, Float32Array>(),
    byHash: new Map<string, Float32Array>(),
  };
  snap.vecIds!.forEach((id, i) => {
    const v = all.slice(i * dim, (i + 1) * dim);
    table.byId.set(id, v);
    if (snap.vecHashes?.[i]) table.byHash.set(snap.vecHashes[i], v);
  });
  index.vectors = table;
}

/** Applies the tree diff from the index's commit to `tip` (or builds from scratch). */
async function bringToTip(
  store: Store,
  st: IndexState,
  tip: string | null,
): Promise<'same' | 'incremental' | 'rebuild'> {
  if (st.tip === tip) {
    st.last = {
      mode:
        st.last.mode === 'rebuild'
          ? 'empty'
          : st.tip
            ? st.last.mode === 'snapshot'
              ? 'snapshot'
              : 'memory'
            : 'empty',
      changed: 0,
      ms: 0,
    };
    return 'same';
  }
  if (!tip) {
    st.index = SearchIndex.create();
    st.tip = null;
    st.last = { mode: 'empty', changed: 0, ms: 0 };
    return 'rebuild';
  }
  if (st.tip && (await store.hasCommit(st.tip))) {
    const changes = await store.diffPaths(st.tip, tip, 'memories');
    const ids = changes.map((c) => ({ ...c, id: idFromPath(c.path) })).filter((c) => c.id);
    for (const c of ids) st.index.remove(c.id!);
    const adds = ids.filter((c) => c.oid);
    await addRecords(
      store,
      st.index,
      adds.map((c) => ({ id: c.id!, oid: c.oid!, path: c.path })),
    );
    st.tip = tip;
    st.pending += ids.length;
    st.last = { mode: 'incremental', changed: ids.length, ms: 0 };
    return 'incremental';
  }
  // no usable base: build from the whole tree
  const index = SearchIndex.create();
  const entries = (await store.lsTree(tip, 'memories')).filter((e) => idFromPath(e.path));
  await addRecords(
    store,
    index,
    entries.map((e) => ({ id: idFromPath(e.path)!, oid: e.oid, path: e.path })),
  );
  if (st.index.vectors) index.vectors = { ...st.index.vectors, byId: new Map() };
  st.index = index;
  st.tip = tip;
  st.savedTip = null;
  st.pending = 0;
  st.last = { mode: 'rebuild', changed: entries.length, ms: 0 };
  return 'rebuild';
}

async function addRecords(
  store: Store,
  index: SearchIndex,
  items: Array<{ id: string; oid: string; path: string }>,
): Promise<void> {
  const CHUNK = 2000;
  const read = (i: number) => store.catFile.readMany(items.slice(i, i + CHUNK).map((p) => p.oid));
  // one chunk ahead: git reads the next blobs while this process parses the current ones
  let next = read(0);
  for (let i = 0; i < items.length; i += CHUNK) {
    const part = items.slice(i, i + CHUNK);
    const blobs = await next;
    if (i + CHUNK < items.length) next = read(i + CHUNK);
    part.forEach((p, j) => {
      const b = blobs[j];
      if (!b) return;
      let r: MemoryRecord;
      try {
        r = parseRecord(b.content.toString('utf8'), p.path);
      } catch (e) {
        if (e instanceof RecordParseError) return; // malformed records are reported by doctor, never crash search
        throw e;
      }
      if (r.id !== p.id) return;
      index.put(r, p.oid);
    });
  }
}

/** Time one open may spend embedding records that have no vector yet (the rest wait for the next open). */
const EMBED_BUDGET_MS = 5000;
const RETRY_PROVIDER_MS = 60_000;
const providerFailedAt = new WeakMap<EmbeddingProvider, number>();

/**
 * Gives every record a vector of the provider's lineage: from the index's own
 * table, else from the shared vector cache (.git/mem/vectors, keyed by
 * content hash and lineage), else by embedding it now within a time budget.
 * Failures leave records text-only and back the provider off for a while.
 */
async function embedMissing(store: Store, st: IndexState): Promise<void> {
  const p = st.provider;
  if (!p || !st.lineage) return;
  const failed = providerFailedAt.get(p);
  if (failed && Date.now() - failed < RETRY_PROVIDER_MS) return;
  const idx = st.index;
  if (!idx.vectors || idx.vectors.lineageKey !== st.lineage) {
    idx.vectors = { lineageKey: st.lineage, dim: p.lineage.dimension, byId: new Map(), byHash: new Map() };
  }
  const table = idx.vectors;
  let missing: SearchDoc[] = [];
  for (const d of idx.docs.values()) {
    if (table.byId.has(d.id)) continue;
    const v = table.byHash.get(d.hash);
    if (v) table.byId.set(d.id, v);
    else missing.push(d);
  }
  if (!missing.length) return;
  const mod = await import('./embed/index.js');
  const cache = mod.openVectorCache(store.repo, p);
  const fromCache = cache.many(missing.map((d) => d.hash));
  for (const d of missing) {
    const v = fromCache.get(d.hash);
    if (v && v.length === table.dim) {
      const u = unit(v);
      table.byId.set(d.id, u);
      table.byHash.set(d.hash, u);
    }
  }
  missing = missing.filter((d) => !table.byId.has(d.id));
  st.pending += 1;
  if (!missing.length) return;
  // texts: the index keeps no bodies; they are read from git
  const bodies = new Map<string, string>();
  const blobs = await store.catFile.readMany(missing.map((d) => d.oid ?? '0'.repeat(40)));
  missing.forEach((d, i) => {
    const b = blobs[i];
    if (!b) return;
    try {
      bodies.set(d.id, parseRecord(b.content.toString('utf8')).body);
    } catch {}
  });
  const items = missing
    .filter((d) => bodies.has(d.id))
    .map((d) => ({
      key: d.hash,
      text: embedText({ title: d.title, tags: d.tags, body: bodies.get(d.id)! }),
    }));
  const res = await mod.embedMissing(p, cache, items, { timeoutMs: EMBED_BUDGET_MS });
  for (const d of missing) {
    const v = res.vectors.get(d.hash);
    if (!v || v.length !== table.dim) continue;
    const u = unit(v);
    table.byId.set(d.id, u);
    table.byHash.set(d.hash, u);
  }
  if (!res.complete) providerFailedAt.set(p, Date.now());
}

/**
 * Writes the snapshot atomically: vectors, then index.json by rename. Files
 * of older formats (Orama's data, orama-*.json) are removed afterwards.
 */
export async function saveSnapshot(store: Store, st: IndexState): Promise<void> {
  if (!st.tip) return;
  try {
    const dir = indexDir(store);
    mkdirSync(dir, { recursive: true });
    const tmpSuffix = `.${process.pid}.${Date.now()}.tmp`;
    const head: Omit<Snapshot, 'data'> = { format: INDEX_FORMAT, tip: st.tip, lineage: st.lineage };
    const v = st.index.vectors;
    if (st.lineage && v && v.lineageKey === st.lineage && v.byId.size) {
      const ids = [...v.byId.keys()].filter((id) => st.index.docs.has(id));
      const arr = new Float32Array(ids.length * v.dim);
      for (let i = 0; i < ids.length; i++) arr.set(v.byId.get(ids[i])!.subarray(0, v.dim), i * v.dim);
      head.vecIds = ids;
      head.vecHashes = ids.map((id) => st.index.docs.get(id)!.hash);
      head.dim = v.dim;
      writeFileSync(
        join(dir, `vectors.f32${tmpSuffix}`),
        Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength),
      );
      renameSync(join(dir, `vectors.f32${tmpSuffix}`), join(dir, 'vectors.f32'));
    }
    // streamed: the documents are written a thousand at a time, never as one string
    const fd = openSync(join(dir, `index.json${tmpSuffix}`), 'w');
    try {
      let pending = '';
      const write = (s: string) => {
        pending += s;
        if (pending.length >= 1 << 20) {
          writeSync(fd, pending);
          pending = '';
        }
      };
      write(`${JSON.stringify(head).slice(0, -1)},"data":`);
      st.index.writeData(write);
      write('}');
      writeSync(fd, pending);
    } finally {
      closeSync(fd);
    }
    renameSync(join(dir, `index.json${tmpSuffix}`), join(dir, 'index.json'));
    st.savedTip = st.tip;
    st.pending = 0;
    for (const f of readdirSync(dir)) {
      if (/^orama-.*\.json$/.test(f)) {
        try {
          unlinkSync(join(dir, f));
        } catch {}
      }
    }
  } catch {
    // a read-only .git only costs speed: the index is derived data
  }
}

/** Records of indexed docs in one pipelined read (by blob id, else by path at `tip`); unparsable ones are skipped. */
export async function readRecords(
  store: Store,
  docs: SearchDoc[],
  tip?: string,
): Promise<Map<string, MemoryRecord>> {
  const out = new Map<string, MemoryRecord>();
  const records = await store.recordsOfBlobs(
    docs.map((d) => ({ oid: d.oid ?? (tip ? `${tip}:${recordPath(d.id)}` : '0'.repeat(40)) })),
  );
  docs.forEach((d, i) => {
    const r = records[i];
    if (r) out.set(d.id, r);
  });
  return out;
}

/** Deletes the cache (memory and disk). */
export function dropIndex(store: Store): void {
  forgetIndex(store);
  rmSync(indexDir(store), { recursive: true, force: true });
}

/** The stamp on disk, for `reindex --status` and tests. */
export function readStamp(
  store: Store,
): { tip: string; format: number; lineage: string | null; docs: number } | null {
  try {
    const snap = JSON.parse(readFileSync(join(indexDir(store), 'index.json'), 'utf8')) as Snapshot;
    return { tip: snap.tip, format: snap.format, lineage: snap.lineage, docs: snap.data?.docs.length ?? 0 };
  } catch {
    return null;
  }
}
