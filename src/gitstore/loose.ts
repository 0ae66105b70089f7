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
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

const isTreeMode = (mode: string) => mode === '40000' || mode === '040000';

/** Git's order: by name bytes, a tree comparing as if its name ended in '/'. */
export function sortTreeItems(items: TreeItem[]): TreeItem[] {
  const key = (t: TreeItem) => Buffer.from(isTreeMode(t.mode) ? `${t.name}/` : t.name, 'utf8');
  return [...items].sort((a, b) => Buffer.compare(key(a), key(b)));
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

export function objectId(type: string, content: Buffer): string {
  return createHash('sha1').update(`${type} ${content.length}\0`).update(content).digest('hex');
}

/** Writes one loose object (if absent) into an objects directory; returns its id. */
export function writeLooseObject(objectsDir: string, type: string, content: Buffer): string {
  const oid = objectId(type, content);
  const dir = join(objectsDir, oid.slice(0, 2));
  const file = join(dir, oid.slice(2));
  if (existsSync(file)) return oid;
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `tmp_obj_${process.pid}_${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(
      tmp,
      deflateSync(Buffer.concat([Buffer.from(`${type} ${content.length}\0`), content]), { level: 1 }),
    );
    chmodSync(tmp, 0o444);
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
