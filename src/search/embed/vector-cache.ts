/**
 * A local cache of embedding vectors under `.git/mem/vectors/`: one file per
 * lineage, keyed by content hash, Float32 data stored raw (not JSON).
 *
 * File `<sha256(lineageKey)[0..16]>.vec`:
 *   "GMVEC1\n\0"  (8 bytes)
 *   u32le n, n bytes of JSON {key, lineage}, zero padding to a multiple of 4
 *   fixed-size records: key (ASCII, ≤ 64 bytes, NUL-padded to 64), dimension × f32le
 * Fixed-size records keep vectors 4-aligned (loaded as zero-copy views) and
 * make a torn tail (a crash mid-write) detectable by arithmetic. Writers
 * append under a lock file (one write per flush) and cut a torn tail first;
 * readers ignore one. A later record for a
 * key wins. Vectors of a
 * different lineage live in other files and are never returned.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { endianness } from 'node:os';
import { join } from 'node:path';
import { err } from '../../errors.js';
import type { EmbeddingLineage } from './types.js';

const MAGIC = Buffer.from('GMVEC1\n\0', 'latin1');
const EXT = '.vec';

/** A stable string naming a vector space. */
export function lineageKey(l: EmbeddingLineage): string {
  return [l.provider, l.model, String(l.dimension), l.normalize ? 'l2' : 'raw', l.version]
    .map((s) => s.replace(/\|/g, '%7C'))
    .join('|');
}

/** The content hash used as a cache key: sha-256 of the text, hex, 32 characters. */
export function contentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);
}

function lineageFileName(key: string): string {
  return `${createHash('sha256').update(key).digest('hex').slice(0, 16)}${EXT}`;
}

const pad4 = (n: number) => (4 - (n % 4)) % 4;

/** The first bytes of a file (enough for any header). */
function readHead(fd: number): Buffer {
  const b = Buffer.alloc(64 * 1024);
  const n = readSync(fd, b, 0, b.length, 0);
  return b.subarray(0, n);
}

function header(key: string, lineage: EmbeddingLineage): Buffer {
  const json = Buffer.from(JSON.stringify({ key, lineage }), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(json.length);
  return Buffer.concat([MAGIC, len, json, Buffer.alloc(pad4(json.length))]);
}

export const KEY_BYTES = 64;

const LITTLE_ENDIAN = endianness() === 'LE';

function encodeRecord(hash: string, v: Float32Array): Buffer {
  const b = Buffer.alloc(KEY_BYTES + v.length * 4);
  b.write(hash, 0, 'latin1');
  if (LITTLE_ENDIAN) Buffer.from(v.buffer, v.byteOffset, v.byteLength).copy(b, KEY_BYTES);
  else for (let i = 0, o = KEY_BYTES; i < v.length; i++, o += 4) b.writeFloatLE(v[i], o);
  return b;
}

function readKey(buf: Buffer, o: number): string {
  let e = o;
  while (e < o + KEY_BYTES && buf[e] !== 0) e++;
  return buf.toString('latin1', o, e);
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Runs fn holding `<file>.lock` (created exclusively; a lock older than 30 s is taken as stale). */
function withLock<T>(file: string, fn: () => T): T {
  const lock = `${file}.lock`;
  const deadline = Date.now() + 5000;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      try {
        if (Date.now() - statSync(lock).mtimeMs > 30_000) unlinkSync(lock);
      } catch {
        // gone meanwhile
      }
      if (Date.now() > deadline)
        throw err(
          'E_LOCKED',
          `the vector cache ${file} is locked by ${lock}`,
          'wait for the other git-mem process; if none runs, remove the lock',
          {
            lock,
          },
        );
      Atomics.wait(sleeper, 0, 0, 10);
    }
  }
  try {
    return fn();
  } finally {
    try {
      unlinkSync(lock);
    } catch {
      // already removed
    }
  }
}

interface ParsedHeader {
  key: string;
  lineage: EmbeddingLineage;
  /** offset of the first record */
  start: number;
}

function parseHeader(buf: Buffer): ParsedHeader | undefined {
  if (buf.length < MAGIC.length + 4 || !buf.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const n = buf.readUInt32LE(MAGIC.length);
  const end = MAGIC.length + 4 + n;
  if (end > buf.length) return undefined;
  try {
    const h = JSON.parse(buf.subarray(MAGIC.length + 4, end).toString('utf8'));
    if (typeof h?.key !== 'string' || typeof h?.lineage !== 'object') return undefined;
    return { key: h.key, lineage: h.lineage, start: end + pad4(n) };
  } catch {
    return undefined;
  }
}

export interface CachedLineage {
  key: string;
  lineage: EmbeddingLineage;
  file: string;
  bytes: number;
  /** number of distinct keys */
  count: number;
}

export class VectorCache {
  readonly key: string;
  readonly file: string;
  readonly dimension: number;
  private readonly map = new Map<string, Float32Array>();
  private pending: Buffer[] = [];
  /** records in the file (including superseded duplicates) */
  private records = 0;

  /**
   * Opens (or creates on first flush) the cache of one lineage in `dir`
   * (normally `memDir(repo, 'vectors')`). Reads the whole file once.
   */
  constructor(
    readonly dir: string,
    readonly lineage: EmbeddingLineage,
  ) {
    if (!Number.isInteger(lineage.dimension) || lineage.dimension <= 0) {
      throw err(
        'E_INVALID_ARG',
        `a vector cache needs a positive whole dimension, not ${lineage.dimension}`,
        undefined,
        {
          dimension: lineage.dimension,
        },
      );
    }
    this.key = lineageKey(lineage);
    this.dimension = lineage.dimension;
    this.file = join(dir, lineageFileName(this.key));
    this.load();
  }

  private load(): void {
    if (!existsSync(this.file)) return;
    const buf = readFileSync(this.file);
    const h = parseHeader(buf);
    // unreadable, or another lineage under a colliding name: the next flush starts afresh
    if (!h || h.key !== this.key) return;
    const rec = KEY_BYTES + this.dimension * 4;
    for (let o = h.start; o + rec <= buf.length; o += rec) {
      const k = readKey(buf, o);
      const abs = buf.byteOffset + o + KEY_BYTES;
      const n = this.dimension;
      let v: Float32Array;
      if (!LITTLE_ENDIAN) {
        v = new Float32Array(n);
        for (let i = 0; i < n; i++) v[i] = buf.readFloatLE(o + KEY_BYTES + i * 4);
      } else if (abs % 4 === 0) {
        v = new Float32Array(buf.buffer, abs, n); // zero-copy view (aligned unless Buffer pooling shifted the base)
      } else {
        v = new Float32Array(buf.buffer.slice(abs, abs + n * 4));
      }
      this.map.set(k, v);
      this.records++;
    }
  }

  get size(): number {
    return this.map.size;
  }

  has(hash: string): boolean {
    return this.map.has(hash);
  }

  get(hash: string): Float32Array | undefined {
    return this.map.get(hash);
  }

  /** The cached vectors of many keys (misses are left out). */
  many(hashes: Iterable<string>): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    for (const h of hashes) {
      const v = this.map.get(h);
      if (v) out.set(h, v);
    }
    return out;
  }

  /** Keys not in the cache, in order, without repeats. */
  missing(hashes: Iterable<string>): string[] {
    const seen = new Set<string>();
    const out: string[] = [];
    for (const h of hashes) {
      if (!this.map.has(h) && !seen.has(h)) {
        seen.add(h);
        out.push(h);
      }
    }
    return out;
  }

  /** Adds a vector (kept in memory until flush()). Throws on a wrong dimension or a bad key. */
  put(hash: string, v: ArrayLike<number>): void {
    if (!/^[\x21-\x7e]{1,64}$/.test(hash))
      throw err(
        'E_INVALID_ARG',
        `a vector cache key must be 1-64 printable characters, not ${JSON.stringify(hash)}`,
        undefined,
        {
          key: hash,
        },
      );
    if (v.length !== this.dimension) {
      throw err(
        'E_INVALID_ARG',
        `a vector of ${v.length} dimensions, where lineage ${this.key} has ${this.dimension}`,
        undefined,
        {
          dimension: v.length,
          expected: this.dimension,
        },
      );
    }
    const f = Float32Array.from(v);
    for (let i = 0; i < f.length; i++)
      if (!Number.isFinite(f[i]))
        throw err('E_INVALID_ARG', `a vector holds a non-finite number at ${i}`, undefined, { index: i });
    const prev = this.map.get(hash);
    if (prev && prev.length === f.length && prev.every((x, i) => x === f[i])) return;
    this.map.set(hash, f);
    this.pending.push(encodeRecord(hash, f));
  }

  putMany(entries: Iterable<[string, ArrayLike<number>]>): void {
    for (const [h, v] of entries) this.put(h, v);
  }

  /** Appends pending vectors to the file in one write (under the lock; cuts a torn tail first). */
  flush(): void {
    if (this.pending.length === 0) return;
    mkdirSync(this.dir, { recursive: true });
    withLock(this.file, () => {
      const fd = openSync(this.file, 'a+');
      try {
        let size = fstatSync(fd).size;
        if (size > 0) {
          const h = parseHeader(readHead(fd));
          if (!h || h.key !== this.key) {
            ftruncateSync(fd, 0);
            size = 0;
          } else {
            const rec = KEY_BYTES + this.dimension * 4;
            const good = h.start + Math.floor((size - h.start) / rec) * rec;
            if (good !== size) ftruncateSync(fd, good);
          }
        }
        const parts = size === 0 ? [header(this.key, this.lineage), ...this.pending] : this.pending;
        writeSync(fd, Buffer.concat(parts));
      } finally {
        closeSync(fd);
      }
    });
    this.records += this.pending.length;
    this.pending = [];
  }

  /**
   * Rewrites the file with only the vectors of `keep` (all when omitted),
   * dropping duplicates and vectors of deleted memories. Returns how many were dropped.
   */
  compact(keep?: Set<string>): number {
    const before = this.map.size;
    if (keep) for (const k of [...this.map.keys()]) if (!keep.has(k)) this.map.delete(k);
    const parts = [header(this.key, this.lineage)];
    for (const [k, v] of this.map) parts.push(encodeRecord(k, v));
    mkdirSync(this.dir, { recursive: true });
    const tmp = `${this.file}.tmp-${process.pid}`;
    writeFileSync(tmp, Buffer.concat(parts));
    withLock(this.file, () => renameSync(tmp, this.file));
    this.pending = [];
    this.records = this.map.size;
    return before - this.map.size;
  }

  /** Records in the file that a compaction would remove (superseded duplicates). */
  get garbage(): number {
    return this.records - this.map.size + this.pending.length;
  }

  /** Deletes the cache files of every other lineage in the directory; returns their lineage keys. */
  dropOtherLineages(): string[] {
    const dropped: string[] = [];
    for (const l of VectorCache.list(this.dir)) {
      if (l.file === this.file) continue;
      unlinkSync(l.file);
      dropped.push(l.key);
    }
    // unreadable leftovers too
    if (existsSync(this.dir)) {
      for (const f of readdirSync(this.dir)) {
        const p = join(this.dir, f);
        if (f.endsWith(EXT) && p !== this.file && existsSync(p)) unlinkSync(p);
      }
    }
    return dropped;
  }

  /** The lineages cached in a directory, with sizes (reads each file). */
  static list(dir: string): CachedLineage[] {
    if (!existsSync(dir)) return [];
    const out: CachedLineage[] = [];
    for (const f of readdirSync(dir).sort()) {
      if (!f.endsWith(EXT)) continue;
      const file = join(dir, f);
      const buf = readFileSync(file);
      const h = parseHeader(buf);
      if (!h) continue;
      const keys = new Set<string>();
      const rec = KEY_BYTES + h.lineage.dimension * 4;
      for (let o = h.start; o + rec <= buf.length; o += rec) keys.add(readKey(buf, o));
      out.push({ key: h.key, lineage: h.lineage, file, bytes: buf.length, count: keys.size });
    }
    return out;
  }
}
