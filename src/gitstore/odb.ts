/**
 * Reading git objects without a git process: straight from the repository's
 * objects directory, loose objects and version-2 pack indexes with their
 * packs (deltas included). A short-lived process (a hook reading ~50 small
 * objects) saves the start of `git cat-file --batch` (3–7 ms). The cost here
 * is one zlib inflate per loose object or pack entry: 15–50 µs each in a
 * one-shot process (the process's first ~0.7 ms), plus a SHA-1 of the result.
 * So loose objects and shallow pack entries are cheap; a deep delta chain costs
 * one inflate per link (resolved bases are cached for their siblings).
 *
 * Packs are never read whole (they can be hundreds of MB, their indexes tens):
 * each index's fan-out table is read once, then an id is found by positioned
 * reads of its SHA table, and an entry by a positioned read of a window of
 * the pack that is certainly long enough for its zlib stream.
 *
 * The answer is the object or "ask git" (undefined), never an error and never
 * wrong content: every object is checked against its id (SHA-1 of its header
 * and content) before it is returned, so a bug or a damaged file can only cost
 * a git process. Whatever this reader does not handle is "ask git": a pack
 * index of another version, a malformed file, a delta whose base it cannot
 * find. Some repositories are refused whole (odbUsable): where git would read
 * other object stores (alternates, GIT_OBJECT_DIRECTORY), other content (replace
 * refs), another hash (SHA-256) or fetch missing objects (a partial clone).
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fstatSync, openSync, readdirSync, readFileSync, readSync } from 'node:fs';
import { inflateSync } from 'node:zlib';

export interface OdbObject {
  type: 'commit' | 'tree' | 'blob' | 'tag';
  content: Buffer;
}

type ObjType = OdbObject['type'];

/** Pack entry types 1–4; 6 and 7 are deltas (OFS_DELTA, REF_DELTA). */
const PACK_TYPES: ReadonlyArray<ObjType | undefined> = [undefined, 'commit', 'tree', 'blob', 'tag'];
const OID_RE = /^[0-9a-f]{40}$/;
/** Larger objects are left to git (and a damaged size field cannot make us allocate more). */
const MAX_OBJECT = 1 << 30;
/** Longest delta chain followed (git's own limit on pack.depth is 4095). */
const MAX_CHAIN = 10_000;
/** Deepest nesting of REF_DELTA bases, each found by id (a cycle in damaged packs ends here). */
const MAX_REF_DEPTH = 1_000;
/** Bytes read at an entry's start: its header and, for most objects, its whole zlib stream. */
const HEAD_READ = 4096;
/** Buckets of the SHA table up to this many ids are read in one go; larger ones are bisected first. */
const BUCKET_READ = 1024;
/** The cache of resolved pack entries (delta bases shared by siblings in a chain). */
const CACHE_ENTRIES = 128;
const CACHE_BYTES = 8 << 20;
const CACHE_MAX_OBJECT = 1 << 20;

/** Index v2: magic, version, fan-out (256 × 4), then ids (N × 20), CRCs (N × 4), offsets (N × 4), large offsets. */
const IDX_HEADER = 8 + 256 * 4;

interface Pack {
  idxPath: string;
  packPath: string;
  /** 0 not opened yet, 1 usable, 2 skipped (another version, malformed, unreadable) */
  state: number;
  idxFd: number;
  packFd: number;
  fanout: Uint32Array | undefined;
  count: number;
  idxSize: number;
  /** where the pack's entries end (its length less the 20-byte trailer) */
  packEnd: number;
}

/** A pack entry's header and inflated data (an object's content, or a delta). */
interface Entry {
  type: number;
  data: Buffer;
  /** OFS_DELTA: the base's offset in the same pack */
  baseOffset: number;
  /** REF_DELTA: the base's id */
  baseOid: string;
}

/** Exactly `len` bytes at `pos` (into `buf` when given, else a new buffer), or undefined when the file is shorter. */
function pread(fd: number, len: number, pos: number, into?: Buffer): Buffer | undefined {
  const buf = into ? into.subarray(0, len) : Buffer.allocUnsafe(len);
  let got = 0;
  while (got < len) {
    const n = readSync(fd, buf, got, len - got, pos + got);
    if (n <= 0) return undefined;
    got += n;
  }
  return buf;
}

/** An id against the 20 bytes at `at` of `buf`, byte by byte (a call into Buffer#compare costs more). */
function compareId(want: Buffer, buf: Buffer, at: number): number {
  for (let i = 0; i < 20; i++) {
    const d = want[i] - buf[at + i];
    if (d !== 0) return d;
  }
  return 0;
}

function closeQuietly(fd: number): void {
  if (fd < 0) return;
  try {
    closeSync(fd);
  } catch {
    // already closed or never valid: nothing to release
  }
}

/**
 * Git's delta format applied to `base`: the base's size and the result's size
 * (little-endian base-128 varints), then instructions: copy (MSB set; offset
 * and size bytes present by bitmask, a size of 0 meaning 0x10000) and insert
 * (1–127 literal bytes). undefined when anything does not add up.
 */
function applyDelta(base: Buffer, delta: Buffer): Buffer | undefined {
  const n = delta.length;
  let p = 0;
  // the base's and the result's sizes: little-endian base-128 numbers
  const sizeAt = (): number | undefined => {
    let v = 0;
    let mul = 1;
    let c: number;
    do {
      if (p >= n || mul > 2 ** 49) return undefined;
      c = delta[p++];
      v += (c & 0x7f) * mul;
      mul *= 128;
    } while (c & 0x80);
    return v;
  };
  if (sizeAt() !== base.length) return undefined;
  const size = sizeAt();
  if (size === undefined || size > MAX_OBJECT) return undefined;
  const out = Buffer.allocUnsafe(size);
  let o = 0;
  while (p < n) {
    const c = delta[p++];
    if (c & 0x80) {
      let off = 0;
      let len = 0;
      if (c & 0x01) off = delta[p++];
      if (c & 0x02) off += delta[p++] * 0x100;
      if (c & 0x04) off += delta[p++] * 0x10000;
      if (c & 0x08) off += delta[p++] * 0x1000000;
      if (c & 0x10) len = delta[p++];
      if (c & 0x20) len += delta[p++] * 0x100;
      if (c & 0x40) len += delta[p++] * 0x10000;
      if (p > n) return undefined; // the instruction ran past the delta (those bytes read as undefined → NaN)
      if (len === 0) len = 0x10000;
      if (off + len > base.length || o + len > size) return undefined;
      base.copy(out, o, off, off + len);
      o += len;
    } else if (c !== 0) {
      if (p + c > n || o + c > size) return undefined;
      delta.copy(out, o, p, p + c);
      p += c;
      o += c;
    } else {
      return undefined; // 0 is reserved
    }
  }
  return o === size ? out : undefined;
}

/**
 * The bytes of a zlib stream made only of stored (uncompressed) blocks, as
 * git-mem writes its loose objects (loose.ts zlibStored): copied out without
 * a zlib instance, whose making is most of an inflate's cost in a one-shot
 * process. undefined for any other stream (zlib inflates it). The Adler-32 is
 * not checked: read() checks the object against its id.
 */
function storedBlocks(z: Buffer): Buffer | undefined {
  // CMF/FLG: deflate, no preset dictionary, the header check
  if (z.length < 7 || (z[0] & 0x0f) !== 8 || z[1] & 0x20 || ((z[0] << 8) | z[1]) % 31) return undefined;
  const parts: Buffer[] = [];
  let at = 2;
  for (;;) {
    if (at + 5 > z.length) return undefined;
    const head = z[at];
    // a stored block starting on a byte: BFINAL, BTYPE 00, the rest of the byte padding
    if ((head & 0xfe) !== 0) return undefined;
    const len = z[at + 1] | (z[at + 2] << 8);
    const nlen = z[at + 3] | (z[at + 4] << 8);
    if ((len ^ 0xffff) !== nlen || at + 5 + len > z.length) return undefined;
    parts.push(z.subarray(at + 5, at + 5 + len));
    at += 5 + len;
    if (head & 1) break;
  }
  if (at + 4 !== z.length) return undefined; // the Adler-32, and nothing after it
  return parts.length === 1 ? parts[0] : Buffer.concat(parts);
}

export class ObjectReader {
  private readonly objectsDir: string;
  private packs: Pack[] | undefined;
  /** the pack of the last hit, looked in first */
  private lastPack = 0;
  private readonly cache = new Map<string, OdbObject>();
  private cacheBytes = 0;
  /** where entry headers are read, reused (a fresh 4 KiB buffer per entry showed in profiles) */
  private headBuf: Buffer | undefined;

  /** reads packs too (else loose objects only: a packed object is "ask git") */
  private readonly withPacks: boolean;
  /** whether the read under way may look into packs */
  private packsNow = true;

  /**
   * objectsDir: absolute path of the repository's objects directory (<common git dir>/objects).
   * `packs: false`: loose objects only. Inflating a pack entry (a link of a delta chain each)
   * costs more in a one-shot process than asking a running `git cat-file --batch`, so a caller
   * that has one, or will start one anyway, reads only loose objects here.
   */
  constructor(objectsDir: string, opts: { packs?: boolean } = {}) {
    this.objectsDir = objectsDir;
    this.withPacks = opts.packs !== false;
  }

  /**
   * The object with this id (40 lowercase hex), or undefined when this reader cannot tell:
   * not a loose object, not in a pack it can read, or anything unexpected (a malformed file,
   * an unsupported index version, a read error, a delta whose base it cannot find). The caller
   * then asks git. It never returns wrong content (the result is checked against the id) and
   * never throws. The content may be shared with the reader's cache: do not modify it.
   * `packs` overrides the reader's setting for this read.
   */
  read(oid: string, opts: { packs?: boolean } = {}): OdbObject | undefined {
    try {
      if (typeof oid !== 'string' || !OID_RE.test(oid)) return undefined;
      this.packsNow = opts.packs ?? this.withPacks;
      const obj = this.find(oid, 0);
      if (!obj) return undefined;
      const hash = createHash('sha1')
        .update(`${obj.type} ${obj.content.length}\0`)
        .update(obj.content)
        .digest('hex');
      return hash === oid ? obj : undefined;
    } catch {
      return undefined;
    }
  }

  /** Releases open file descriptors (pack files kept open between reads). Safe to call twice. */
  close(): void {
    const packs = this.packs;
    this.packs = undefined;
    this.lastPack = 0;
    this.cache.clear();
    this.cacheBytes = 0;
    if (!packs) return;
    for (let i = 0; i < packs.length; i++) {
      closeQuietly(packs[i].idxFd);
      closeQuietly(packs[i].packFd);
      packs[i].idxFd = -1;
      packs[i].packFd = -1;
    }
  }

  /** The object by id, loose or packed, not yet checked against its id. */
  private find(oid: string, depth: number): OdbObject | undefined {
    const loose = this.readLoose(oid);
    if (loose !== null) return loose;
    if (!this.packsNow) return undefined;
    const packs = this.listPacks();
    const want = Buffer.from(oid, 'hex');
    const n = packs.length;
    for (let k = 0; k < n; k++) {
      const i = (this.lastPack + k) % n;
      const pack = packs[i];
      if (pack.state === 0) this.openPack(pack);
      if (pack.state !== 1) continue;
      const offset = this.findOffset(pack, want);
      if (offset === undefined) return undefined; // a damaged index: ask git
      if (offset < 0) continue;
      this.lastPack = i;
      return this.fromPack(i, offset, depth);
    }
    return undefined;
  }

  /** A loose object; null when there is none (look in the packs), undefined when it cannot be read. */
  private readLoose(oid: string): OdbObject | undefined | null {
    const path = `${this.objectsDir}/${oid.slice(0, 2)}/${oid.slice(2)}`;
    // a miss by existsSync, which throws nothing: a failed open's exception cost 6–15 µs, the check ~2
    if (!existsSync(path)) return null;
    let file: Buffer;
    try {
      file = readFileSync(path);
    } catch (e) {
      // gone since (pruned after a repack): look in the packs
      return (e as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
    }
    let raw: Buffer | undefined = storedBlocks(file);
    if (!raw) {
      try {
        raw = inflateSync(file, { maxOutputLength: MAX_OBJECT + 64 });
      } catch {
        return undefined;
      }
    }
    // "<type> <size>\0"
    const limit = Math.min(raw.length, 32);
    let sp = -1;
    let nul = -1;
    for (let i = 0; i < limit; i++) {
      const b = raw[i];
      if (b === 32 && sp < 0) sp = i;
      else if (b === 0) {
        nul = i;
        break;
      }
    }
    if (sp < 0 || nul < sp + 2) return undefined;
    const type = raw.toString('latin1', 0, sp);
    if (type !== 'blob' && type !== 'tree' && type !== 'commit' && type !== 'tag') return undefined;
    let size = 0;
    for (let i = sp + 1; i < nul; i++) {
      const d = raw[i] - 48;
      if (d < 0 || d > 9) return undefined;
      size = size * 10 + d;
    }
    if (size !== raw.length - nul - 1) return undefined;
    return { type, content: raw.subarray(nul + 1) };
  }

  /** The packs' indexes, listed on the first look into the packs. */
  private listPacks(): Pack[] {
    if (this.packs) return this.packs;
    const packs: Pack[] = [];
    let names: string[] = [];
    try {
      names = readdirSync(`${this.objectsDir}/pack`);
    } catch {
      // no pack directory: no packs
    }
    names.sort(); // deterministic order; the last hit is looked in first anyway
    for (let i = 0; i < names.length; i++) {
      const name = names[i];
      if (!name.endsWith('.idx')) continue;
      const base = `${this.objectsDir}/pack/${name.slice(0, -4)}`;
      packs.push({
        idxPath: `${base}.idx`,
        packPath: `${base}.pack`,
        state: 0,
        idxFd: -1,
        packFd: -1,
        fanout: undefined,
        count: 0,
        idxSize: 0,
        packEnd: 0,
      });
    }
    this.packs = packs;
    return packs;
  }

  /**
   * Opens a pack on its first use: its index must be version 2 with a sound
   * fan-out table and a length that fits its count, and the pack must hold as
   * many objects and end with the checksum the index names. Else it is skipped.
   */
  private openPack(pack: Pack): void {
    pack.state = 2;
    try {
      pack.idxFd = openSync(pack.idxPath, 'r');
      const idxSize = fstatSync(pack.idxFd).size;
      if (idxSize < IDX_HEADER + 40) return;
      const head = pread(pack.idxFd, IDX_HEADER, 0);
      if (!head) return;
      if (head.readUInt32BE(0) !== 0xff744f63 || head.readUInt32BE(4) !== 2) return;
      const fanout = new Uint32Array(256);
      let prev = 0;
      for (let i = 0; i < 256; i++) {
        const v = head.readUInt32BE(8 + i * 4);
        if (v < prev) return;
        fanout[i] = v;
        prev = v;
      }
      const count = fanout[255];
      const min = IDX_HEADER + count * 28 + 40;
      if (idxSize < min || (idxSize - min) % 8 !== 0 || idxSize - min > count * 8) return;
      pack.packFd = openSync(pack.packPath, 'r');
      const packSize = fstatSync(pack.packFd).size;
      if (packSize < 32) return;
      const ph = pread(pack.packFd, 12, 0);
      if (ph?.readUInt32BE(0) !== 0x5041434b) return; // "PACK"
      const version = ph.readUInt32BE(4);
      if ((version !== 2 && version !== 3) || ph.readUInt32BE(8) !== count) return;
      const trailer = pread(pack.packFd, 20, packSize - 20);
      const named = pread(pack.idxFd, 20, idxSize - 40);
      if (!trailer || !named || !trailer.equals(named)) return;
      pack.fanout = fanout;
      pack.count = count;
      pack.idxSize = idxSize;
      pack.packEnd = packSize - 20;
      pack.state = 1;
    } catch {
      // unreadable: skipped
    } finally {
      if (pack.state !== 1) {
        closeQuietly(pack.idxFd);
        closeQuietly(pack.packFd);
        pack.idxFd = -1;
        pack.packFd = -1;
      }
    }
  }

  /**
   * The offset of an id in a pack: -1 when the pack does not hold it, undefined
   * when the index does not read right. A binary search over the id's fan-out
   * bucket of the SHA table, by positioned reads.
   */
  private findOffset(pack: Pack, want: Buffer): number | undefined {
    const fanout = pack.fanout!;
    const first = want[0];
    let lo = first === 0 ? 0 : fanout[first - 1];
    let hi = fanout[first];
    const fd = pack.idxFd;
    let found = -1;
    // a large bucket (a repository of millions of objects): bisect with 20-byte reads first
    while (hi - lo > BUCKET_READ) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const id = pread(fd, 20, IDX_HEADER + mid * 20);
      if (!id) return undefined;
      const cmp = compareId(want, id, 0);
      if (cmp === 0) {
        found = mid;
        break;
      }
      if (cmp < 0) hi = mid;
      else lo = mid + 1;
    }
    if (found < 0 && hi > lo) {
      const ids = pread(fd, (hi - lo) * 20, IDX_HEADER + lo * 20);
      if (!ids) return undefined;
      let a = 0;
      let b = hi - lo;
      while (a < b) {
        const mid = (a + b) >>> 1;
        const cmp = compareId(want, ids, mid * 20);
        if (cmp === 0) {
          found = lo + mid;
          break;
        }
        if (cmp < 0) b = mid;
        else a = mid + 1;
      }
    }
    if (found < 0) return -1;
    const n = pack.count;
    const o = pread(fd, 4, IDX_HEADER + n * 24 + found * 4);
    if (!o) return undefined;
    let offset = o.readUInt32BE(0);
    if (offset & 0x80000000) {
      const at = IDX_HEADER + n * 28 + (offset & 0x7fffffff) * 8;
      if (at + 8 > pack.idxSize - 40) return undefined;
      const big = pread(fd, 8, at);
      if (!big) return undefined;
      const v = big.readBigUInt64BE(0);
      if (v > BigInt(Number.MAX_SAFE_INTEGER)) return undefined;
      offset = Number(v);
    }
    return offset >= 12 && offset < pack.packEnd ? offset : undefined;
  }

  /** Reads one pack entry: its header, and its zlib stream inflated. */
  private readEntry(pack: Pack, offset: number): Entry | undefined {
    const fd = pack.packFd;
    const end = pack.packEnd;
    if (offset < 12 || offset >= end) return undefined;
    if (!this.headBuf) this.headBuf = Buffer.allocUnsafeSlow(HEAD_READ);
    // (the window below may be a view of it: inflateSync copies nothing out of its input)
    const head = pread(fd, Math.min(HEAD_READ, end - offset), offset, this.headBuf);
    if (!head) return undefined;
    const hn = head.length;
    // type and size: 3 bits of type and 4 of size, then 7 bits of size per byte while the MSB is set
    let p = 0;
    let c = head[p++];
    const type = (c >> 4) & 7;
    let size = c & 15;
    let mul = 16;
    while (c & 0x80) {
      if (p >= hn || mul > 2 ** 49) return undefined;
      c = head[p++];
      size += (c & 0x7f) * mul;
      mul *= 128;
    }
    if (size > MAX_OBJECT) return undefined;
    let baseOffset = -1;
    let baseOid = '';
    if (type === 6) {
      // the base's distance back: big-endian base-128, adding 1 before each continuation byte
      if (p >= hn) return undefined;
      c = head[p++];
      let dist = c & 0x7f;
      while (c & 0x80) {
        if (p >= hn || dist > 2 ** 45) return undefined;
        c = head[p++];
        dist = (dist + 1) * 128 + (c & 0x7f);
      }
      baseOffset = offset - dist;
      if (dist <= 0 || baseOffset < 12) return undefined;
    } else if (type === 7) {
      if (p + 20 > hn) return undefined;
      baseOid = head.toString('hex', p, p + 20);
      p += 20;
    } else if (type < 1 || type > 4) {
      return undefined;
    }
    const start = offset + p;
    const room = end - start;
    if (room <= 0) return undefined;
    // the stream's length is not stored: a window certainly long enough for zlib's output
    // (deflate adds 5 bytes per 16 KiB stored block at worst), longer on a retry
    let want = Math.min(size + Math.floor(size / 16) + 1024, room);
    const giveUp = size * 4 + 65536;
    for (;;) {
      const window = p + want <= hn ? head.subarray(p, p + want) : pread(fd, want, start);
      if (!window) return undefined;
      let data: Buffer | undefined;
      try {
        // bytes after the end of the stream are ignored; the output is allocated at its known size
        // (up to 1 MiB: a damaged size field must not make us allocate more before failing)
        data = inflateSync(window, {
          maxOutputLength: Math.max(size, 1),
          chunkSize: Math.min(Math.max(size, 64), 1 << 20),
        });
      } catch (e) {
        // the stream ran past the window: a longer one, within reason
        if ((e as NodeJS.ErrnoException).code !== 'Z_BUF_ERROR' || want >= room || want >= giveUp) {
          return undefined;
        }
        want = Math.min(want * 2, room);
        continue;
      }
      if (data.length !== size) return undefined;
      return { type, data, baseOffset, baseOid };
    }
  }

  /** The object at an offset of a pack, its deltas applied. */
  private fromPack(packIndex: number, offset: number, depth: number): OdbObject | undefined {
    const pack = this.packs![packIndex];
    const deltas: Buffer[] = [];
    const keys: string[] = [];
    let base: OdbObject | undefined;
    let at = offset;
    for (;;) {
      const key = `${packIndex}:${at}`;
      const hit = this.cache.get(key);
      if (hit) {
        // most recently used last
        this.cache.delete(key);
        this.cache.set(key, hit);
        base = hit;
        break;
      }
      if (deltas.length >= MAX_CHAIN) return undefined;
      const e = this.readEntry(pack, at);
      if (!e) return undefined;
      if (e.type <= 4) {
        base = { type: PACK_TYPES[e.type]!, content: e.data };
        this.cachePut(key, base);
        break;
      }
      deltas.push(e.data);
      keys.push(key);
      if (e.type === 6) {
        if (e.baseOffset >= at) return undefined;
        at = e.baseOffset;
        continue;
      }
      // REF_DELTA: the base by id, in any pack or loose
      if (depth >= MAX_REF_DEPTH) return undefined;
      base = this.find(e.baseOid, depth + 1);
      if (!base) return undefined;
      break;
    }
    for (let i = deltas.length - 1; i >= 0; i--) {
      const content = applyDelta(base.content, deltas[i]);
      if (!content) return undefined;
      base = { type: base.type, content };
      this.cachePut(keys[i], base);
    }
    return base;
  }

  private cachePut(key: string, obj: OdbObject): void {
    const size = obj.content.length;
    if (size > CACHE_MAX_OBJECT) return;
    const old = this.cache.get(key);
    if (old) {
      this.cache.delete(key);
      this.cacheBytes -= old.content.length;
    }
    this.cache.set(key, obj);
    this.cacheBytes += size;
    while (this.cache.size > CACHE_ENTRIES || this.cacheBytes > CACHE_BYTES) {
      const first = this.cache.keys().next().value as string;
      this.cacheBytes -= this.cache.get(first)!.content.length;
      this.cache.delete(first);
    }
  }
}

/** Whether a directory exists and holds anything. */
function nonEmptyDir(path: string): boolean {
  try {
    return readdirSync(path).length > 0;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw e;
  }
}

/**
 * Whether a repository's object store is one ObjectReader may serve alone, git
 * reading nothing else and nothing differently: no other object directories
 * (GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES, objects/info/alternates),
 * SHA-1 ids (no extensions.objectformat), no replace refs in effect (git
 * cat-file would show the replacement; refs under refs/replace, loose or packed,
 * or a reftable store we cannot look into, unless GIT_NO_REPLACE_OBJECTS is set),
 * and not a partial clone (git would fetch a missing object). Anything unreadable
 * or unexpected: false.
 */
export function odbUsable(commonDir: string, env: NodeJS.ProcessEnv): boolean {
  try {
    if (env.GIT_OBJECT_DIRECTORY !== undefined || env.GIT_ALTERNATE_OBJECT_DIRECTORIES !== undefined) {
      return false;
    }
    const objects = `${commonDir}/objects`;
    if (existsSync(`${objects}/info/alternates`)) return false;
    // a text check: "objectformat" also covers compatobjectformat; refstorage = the reftable backend
    const config = readFileSync(`${commonDir}/config`, 'utf8').toLowerCase();
    if (config.includes('objectformat') || config.includes('partialclone') || config.includes('refstorage')) {
      return false;
    }
    if (env.GIT_NO_REPLACE_OBJECTS === undefined) {
      if (env.GIT_REPLACE_REF_BASE !== undefined) return false;
      if (existsSync(`${commonDir}/reftable`)) return false;
      if (nonEmptyDir(`${commonDir}/refs/replace`)) return false;
      let packed = '';
      try {
        packed = readFileSync(`${commonDir}/packed-refs`, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return false;
      }
      if (packed.includes(' refs/replace/')) return false;
    }
    let names: string[] = [];
    try {
      names = readdirSync(`${objects}/pack`);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return false;
    }
    for (let i = 0; i < names.length; i++) if (names[i].endsWith('.promisor')) return false;
    return true;
  } catch {
    return false;
  }
}
