/**
 * Writing a small change without a git process: the few objects a memory
 * write creates (a blob or two, the trees on its path, the commit) are written
 * as loose objects, exactly as git writes them (zlib-deflated
 * "<type> <size>\0<content>", named by SHA-1, created read-only by atomic
 * rename). For one record that replaces `git fast-import` and the
 * `unpack-objects` it runs for small imports. Large changes still go through
 * fast-import, which writes a pack.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
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
  const want = Buffer.from(name, 'utf8');
  let i = 0;
  while (i < buf.length) {
    const sp = buf[i + 5] === 32 ? i + 5 : buf.indexOf(32, i);
    const nul = sp < 0 ? -1 : buf.indexOf(0, sp);
    if (sp < 0 || nul < 0 || nul + 21 > buf.length) throw err('E_GIT', 'malformed tree object');
    if (
      nul - sp - 1 === want.length &&
      buf[sp + 1] === want[0] &&
      buf.compare(want, 0, want.length, sp + 1, nul) === 0
    )
      return { mode: buf.toString('latin1', i, sp), name, oid: buf.toString('hex', nul + 1, nul + 21) };
    i = nul + 21;
  }
  return undefined;
}

/**
 * A tree object with some entries replaced, added or removed (null), built by
 * splicing the binary object: unchanged entries are copied as bytes and only
 * compared, never decoded or re-sorted, so editing one entry of a
 * 1,000-entry tree costs a scan. The result is byte-identical to
 * serializeTree of the edited list.
 */
export function editTree(buf: Buffer, edits: Map<string, TreeItem | null>): Buffer {
  const drop = [...edits.keys()].map((n) => Buffer.from(n, 'utf8'));
  const adds = [...edits.values()]
    .filter((t): t is TreeItem => t !== null)
    .map((t) => {
      const tree = isTreeMode(t.mode);
      return {
        key: Buffer.from(tree ? `${t.name}/` : t.name, 'utf8'),
        bytes: Buffer.concat([
          Buffer.from(`${tree ? '40000' : t.mode} ${t.name}\0`, 'utf8'),
          Buffer.from(t.oid, 'hex'),
        ]),
      };
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

/** Writes one loose object (if absent) into an objects directory; returns its id. */
export function writeLooseObject(objectsDir: string, type: string, content: Buffer): string {
  const oid = objectId(type, content);
  const dir = join(objectsDir, oid.slice(0, 2));
  const file = join(dir, oid.slice(2));
  if (existsSync(file)) return oid;
  const tmp = join(dir, `tmp_obj_${process.pid}_${randomBytes(4).toString('hex')}`);
  try {
    const data = deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]), {
      level: 1,
    });
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
