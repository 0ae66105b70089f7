/**
 * Writing a small change without a git process: the few objects a memory
 * write creates (a blob or two, the trees on its path, the commit) are written
 * as loose objects, as git writes them ("<type> <size>\0<content>" in a zlib
 * stream, named by SHA-1, created read-only by atomic rename; the stream's
 * blocks are stored, not compressed: see zlibStored). For one record that replaces `git fast-import` and the
 * `unpack-objects` it runs for small imports. Large changes still go through
 * fast-import, which writes a pack.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { err } from '../errors.js';

export interface TreeItem {
  mode: string;
  name: string;
  oid: string;
}

/** Parses a binary tree object: `<mode> <name>\0<20-byte id>` repeated. */
export function parseTree(buf: Buffer): TreeItem[] {
  const out: TreeItem[] = [];
  let i = 0;
  while (i < buf.length) {
    const sp = buf.indexOf(32, i);
    const nul = buf.indexOf(0, sp);
    if (sp < 0 || nul < 0 || nul + 21 > buf.length) throw err('E_GIT', 'malformed tree object');
    out.push({
      mode: buf.toString('latin1', i, sp),
      name: buf.toString('utf8', sp + 1, nul),
      oid: buf.toString('hex', nul + 1, nul + 21),
    });
    i = nul + 21;
  }
  return out;
}

export const isTreeMode = (mode: string) => mode === '40000' || mode === '040000';

/** Git's order: by name bytes, a tree comparing as if its name ended in '/'. */
export function sortTreeItems(items: TreeItem[]): TreeItem[] {
  const keyed = items.map((t) => ({ t, k: isTreeMode(t.mode) ? `${t.name}/` : t.name }));
  // ASCII names (nearly always): string order is byte order, and needs no Buffer per name
  if (keyed.every((x) => /^[\x00-\x7f]*$/.test(x.k))) {
    return keyed.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0)).map((x) => x.t);
  }
  const bytes = keyed.map((x) => ({ t: x.t, b: Buffer.from(x.k, 'utf8') }));
  return bytes.sort((a, b) => Buffer.compare(a.b, b.b)).map((x) => x.t);
}

export function serializeTree(items: TreeItem[]): Buffer {
  const parts: Buffer[] = [];
  for (const t of sortTreeItems(items)) {
    parts.push(
      Buffer.from(`${isTreeMode(t.mode) ? '40000' : t.mode} ${t.name}\0`, 'utf8'),
      Buffer.from(t.oid, 'hex'),
    );
  }
  return Buffer.concat(parts);
}

/**
 * Git's tree order: compares the entry name buf[from, to) (a tree's name as
 * if it ended in "/") with `key` (already "/"-suffixed for a tree), by bytes.
 */
function compareEntry(buf: Buffer, from: number, to: number, tree: boolean, key: Buffer): number {
  const n = to - from;
  const len = Math.min(n, key.length);
  for (let i = 0; i < len; i++) {
    const d = buf[from + i] - key[i];
    if (d) return d;
  }
  if (n === key.length) return tree ? 1 : 0; // the name equals the key; a tree's "/" comes after it
  if (n > key.length) return 1;
  // the name is a prefix of the key: its next byte is "/" for a tree, else the name ends first
  return tree ? 0x2f - key[n] || (key.length === n + 1 ? 0 : -1) : -1;
}

/** One entry of a binary tree object by name, without decoding the others. */
export function findTreeEntry(buf: Buffer, name: string): TreeItem | undefined {
  const f = findTreeEntries(buf, [name]).get(name);
  return f && { mode: f.mode, name: f.name, oid: f.oid };
}

/** A tree entry found in a tree object's bytes: [start, end) is the whole entry. */
export interface FoundEntry extends TreeItem {
  start: number;
  end: number;
}

/**
 * Entries of a binary tree object by name, in one pass over it (a write that
 * touches ten of a 1,024-entry tree's subtrees looks them up together; one
 * scan each cost ~5 ms in a one-shot process, which runs this unoptimised).
 * Only entries whose name has a wanted length and first byte are decoded.
 */
export function findTreeEntries(buf: Buffer, names: Iterable<string>): Map<string, FoundEntry> {
  const out = new Map<string, FoundEntry>();
  const want = new Map<number, Buffer[]>(); // length * 256 + first byte → names
  let left = 0;
  for (const name of names) {
    const b = Buffer.from(name, 'utf8');
    if (!b.length) continue;
    const k = b.length * 256 + b[0];
    const list = want.get(k);
    if (list) list.push(b);
    else want.set(k, [b]);
    left++;
  }
  let i = 0;
  const end = buf.length;
  while (i < end && left > 0) {
    // "40000 " or "100644 " and the like; the name's end by a plain loop (names are short,
    // and a call into Buffer#indexOf per entry costs more than the bytes it would skip)
    const sp = buf[i + 5] === 32 ? i + 5 : buf[i + 6] === 32 ? i + 6 : buf.indexOf(32, i);
    let nul = sp < 0 ? end : sp + 1;
    while (nul < end && buf[nul] !== 0) nul++;
    if (sp < 0 || nul + 21 > end) throw err('E_GIT', 'malformed tree object');
    const list = want.get((nul - sp - 1) * 256 + buf[sp + 1]);
    if (list) {
      for (const b of list) {
        if (buf.compare(b, 0, b.length, sp + 1, nul) !== 0) continue;
        const name = b.toString('utf8');
        if (!out.has(name)) {
          const mode = buf.toString('latin1', i, sp);
          out.set(name, { mode, name, oid: buf.toString('hex', nul + 1, nul + 21), start: i, end: nul + 21 });
          left--;
        }
        break;
      }
    }
    i = nul + 21;
  }
  return out;
}

/** The bytes of one tree entry. */
function entryBytes(t: TreeItem): Buffer {
  return Buffer.concat([
    Buffer.from(`${isTreeMode(t.mode) ? '40000' : t.mode} ${t.name}\0`, 'utf8'),
    Buffer.from(t.oid, 'hex'),
  ]);
}

/**
 * A tree object with some entries replaced, added or removed (null), built by
 * splicing the binary object: unchanged entries are copied as bytes and only
 * compared, never decoded or re-sorted, so editing one entry of a
 * 1,000-entry tree costs a scan. The result is byte-identical to
 * serializeTree of the edited list.
 */
export function editTree(
  buf: Buffer,
  edits: Map<string, TreeItem | null>,
  /** the edited names' entries as findTreeEntries found them in `buf`, when the caller has them */
  found?: ReadonlyMap<string, FoundEntry>,
): Buffer {
  if (found) {
    // every edit replaces or removes an entry already there, a tree by a tree and a file by a
    // file (so its place in the order stays): splice at the known places, no scan
    const ops: Array<{ start: number; end: number; bytes?: Buffer }> = [];
    for (const [name, item] of edits) {
      const f = found.get(name);
      if (!f || (item && isTreeMode(item.mode) !== isTreeMode(f.mode))) {
        ops.length = 0;
        break;
      }
      ops.push({ start: f.start, end: f.end, bytes: item ? entryBytes(item) : undefined });
    }
    if (ops.length === edits.size && ops.length) {
      ops.sort((x, y) => x.start - y.start);
      const parts: Buffer[] = [];
      let at = 0;
      for (const o of ops) {
        parts.push(buf.subarray(at, o.start));
        if (o.bytes) parts.push(o.bytes);
        at = o.end;
      }
      parts.push(buf.subarray(at));
      return Buffer.concat(parts);
    }
  }
  const drop = [...edits.keys()].map((n) => Buffer.from(n, 'utf8'));
  const adds = [...edits.values()]
    .filter((t): t is TreeItem => t !== null)
    .map((t) => {
      const tree = isTreeMode(t.mode);
      return { key: Buffer.from(tree ? `${t.name}/` : t.name, 'utf8'), bytes: entryBytes(t) };
    })
    .sort((a, b) => Buffer.compare(a.key, b.key));
  // one plain loop, no callbacks: a one-shot process runs this mostly unoptimised
  const parts: Buffer[] = [];
  let run = 0; // start of the bytes not yet copied
  let k = 0;
  let i = 0;
  const end = buf.length;
  while (i < end) {
    const sp = buf[i + 5] === 32 ? i + 5 : buf.indexOf(32, i);
    const nul = sp < 0 ? -1 : buf.indexOf(0, sp);
    if (sp < 0 || nul < 0 || nul + 21 > end) throw err('E_GIT', 'malformed tree object');
    if (k < adds.length) {
      const tree = sp - i === 5 && buf[i] === 0x34;
      while (k < adds.length && compareEntry(buf, sp + 1, nul, tree, adds[k].key) > 0) {
        parts.push(buf.subarray(run, i), adds[k++].bytes);
        run = i;
      }
    }
    const len = nul - sp - 1;
    for (const d of drop) {
      if (d.length === len && d[0] === buf[sp + 1] && buf.compare(d, 0, len, sp + 1, nul) === 0) {
        parts.push(buf.subarray(run, i));
        run = nul + 21;
        break;
      }
    }
    i = nul + 21;
  }
  parts.push(buf.subarray(run));
  while (k < adds.length) parts.push(adds[k++].bytes);
  return Buffer.concat(parts);
}

export function objectId(type: string, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/** Adler-32 of some bytes (zlib's checksum), unrolled: a one-shot process runs it unoptimised. */
export function adler32(b: Uint8Array, start = 1): number {
  let a = start & 0xffff;
  let s = start >>> 16;
  const n = b.length;
  let i = 0;
  while (i < n) {
    // 5552: the most bytes before s can overflow 2^32 (zlib's NMAX)
    const e = Math.min(n, i + 5552);
    const e8 = e - ((e - i) & 7);
    while (i < e8) {
      a += b[i];
      s += a;
      a += b[i + 1];
      s += a;
      a += b[i + 2];
      s += a;
      a += b[i + 3];
      s += a;
      a += b[i + 4];
      s += a;
      a += b[i + 5];
      s += a;
      a += b[i + 6];
      s += a;
      a += b[i + 7];
      s += a;
      i += 8;
    }
    for (; i < e; i++) {
      a += b[i];
      s += a;
    }
    a %= 65521;
    s %= 65521;
  }
  return ((s << 16) | a) >>> 0;
}

/**
 * A zlib stream of stored (uncompressed) blocks holding `data`: what git itself
 * writes with core.looseCompression=0, and inflates like any other. A loose
 * object of ours is a few KiB that gc packs (and compresses) later; making a
 * zlib deflater for each cost more than anything else in writing one (34
 * objects of the post-commit hook: 5 to 17 ms, against ~1 ms for this).
 */
export function zlibStored(parts: readonly Buffer[]): Buffer {
  const data = parts.length === 1 ? parts[0] : Buffer.concat(parts);
  const n = data.length;
  const blocks = Math.max(1, Math.ceil(n / 65535));
  const out = Buffer.allocUnsafe(2 + n + 5 * blocks + 4);
  out[0] = 0x78; // deflate, 32 KiB window
  out[1] = 0x01; // no dictionary, "fastest"; 0x7801 is a multiple of 31, as the format requires
  let o = 2;
  for (let k = 0; k < blocks; k++) {
    const from = k * 65535;
    const len = Math.min(65535, n - from);
    out[o] = k === blocks - 1 ? 1 : 0; // BFINAL, BTYPE 00 (stored)
    out.writeUInt16LE(len, o + 1);
    out.writeUInt16LE(~len & 0xffff, o + 3);
    data.copy(out, o + 5, from, from + len);
    o += 5 + len;
  }
  out.writeUInt32BE(adler32(data), o);
  return out;
}

/**
 * Writes one loose object into an objects directory; returns its id. As git
 * does: into a temporary file in the fan-out directory, then renamed into
 * place (readers see the whole object or none). An object already there is
 * written again rather than looked for first: nearly every object of ours is
 * new (the stat cost more than the rare rewrite), and the fresh file is what
 * git's own "freshen" gives an existing object, so a concurrent gc does not
 * prune an old unreferenced copy we have just referenced.
 */
let tmpSeq = 0;

export function writeLooseObject(objectsDir: string, type: string, content: Buffer): string {
  const oid = objectId(type, content);
  // plain concatenation: path.join's normalising showed in the hook's profile (objectsDir is absolute)
  const dir = `${objectsDir}/${oid.slice(0, 2)}`;
  const file = `${dir}/${oid.slice(2)}`;
  // unique among live writers (pid) and within this one (sequence); the time tells a crashed
  // writer's leftover (git gc removes tmp_obj_* files) from a later process given the same pid
  const tmp = `${dir}/tmp_obj_${process.pid}_${Date.now().toString(36)}_${++tmpSeq}`;
  try {
    const data = zlibStored([Buffer.from(`${type} ${content.length}\0`), content]);
    // created read-only (as git does) through the descriptor it is written with: no chmod afterwards
    try {
      writeFileSync(tmp, data, { mode: 0o444 });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      mkdirSync(dir, { recursive: true }); // a new fan-out directory (or one git gc removed)
      writeFileSync(tmp, data, { mode: 0o444 });
    }
    renameSync(tmp, file);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw err(
      'E_IO',
      `cannot write object ${oid}: ${(e as Error).message}`,
      'check permissions of .git/objects',
    );
  }
  return oid;
}
