/**
 * The one tree parser and the one tree differ: raw tree objects (parseTree)
 * and `git ls-tree -z` listings (parseLsTree) are read here and nowhere else.
 * Trees are read through the
 * store's running `git cat-file --batch` (no process per diff: a daemon
 * holding a large index would pay tens of milliseconds per spawned git), and
 * only where their ids differ, so a change to ten files reads a handful of
 * trees; entries are compared as raw bytes side by side and decoded only
 * where they differ.
 */
import { createHash } from 'node:crypto';
import type { CatFile } from './git.js';

export interface TreeItem {
  mode: string;
  name: string;
  oid: string;
  tree: boolean;
}

/** End of the raw tree entry that starts at byte `i` (`<mode> <name>\0<20-byte id>`). */
function entryEnd(buf: Buffer, i: number): number {
  const nul = buf.indexOf(0, i);
  if (nul < 0 || nul + 21 > buf.length) throw new Error('malformed tree object');
  return nul + 21;
}

function entryAt(buf: Buffer, i: number, end: number): TreeItem {
  const sp = buf.indexOf(32, i);
  if (sp < 0 || sp >= end) throw new Error('malformed tree object');
  const mode = buf.toString('latin1', i, sp);
  return {
    mode,
    name: buf.toString('utf8', sp + 1, end - 21),
    oid: buf.toString('hex', end - 20, end),
    tree: mode === '40000' || mode === '040000',
  };
}

/** The entries of a raw tree object, in git's order. */
export function parseTree(buf: Buffer): TreeItem[] {
  const out: TreeItem[] = [];
  for (let i = 0; i < buf.length; ) {
    const end = entryEnd(buf, i);
    out.push(entryAt(buf, i, end));
    i = end;
  }
  return out;
}

/** One line of `git ls-tree -z`: with `-r`, `path` runs from the listed tree's root. */
export interface TreeEntry {
  mode: string;
  /** `blob`, `tree` or `commit` (a submodule) */
  type: string;
  oid: string;
  path: string;
}

/**
 * The entries of `git ls-tree -z` output, in its order: `<mode> <type> <oid>\t<path>\0` each
 * (`-z`: a path is as git holds it, a tab or newline in it included).
 */
export function parseLsTree(out: Buffer | string): TreeEntry[] {
  const entries: TreeEntry[] = [];
  eachLsTreeEntry(out, (mode, type, oid, path) => {
    entries.push({ mode, type, oid, path });
  });
  return entries;
}

/**
 * Each entry of a `git ls-tree -z` listing (`<mode> SP <type> SP <oid> TAB <path> NUL`), handed
 * over as its parts without a list or an object made for it: a check reads the blobs of a whole
 * tree (20,000 entries) this way.
 */
export function eachLsTreeEntry(
  out: Buffer | string,
  fn: (mode: string, type: string, oid: string, path: string) => void,
): void {
  const text = typeof out === 'string' ? out : out.toString('utf8');
  let at = 0;
  while (at < text.length) {
    let end = text.indexOf('\0', at);
    if (end < 0) end = text.length;
    if (end > at) {
      const s1 = text.indexOf(' ', at);
      const s2 = text.indexOf(' ', s1 + 1);
      const tab = text.indexOf('\t', s2 + 1);
      fn(text.slice(at, s1), text.slice(s1 + 1, s2), text.slice(s2 + 1, tab), text.slice(tab + 1, end));
    }
    at = end + 1;
  }
}

/** Git's tree order: name bytes, a tree's name as if it ended in "/". */
function compareEntries(a: TreeItem, b: TreeItem): number {
  return Buffer.compare(
    Buffer.from(a.tree ? `${a.name}/` : a.name),
    Buffer.from(b.tree ? `${b.name}/` : b.name),
  );
}

/**
 * The id git gives an object of `type` whose content is `body` (SHA-1:
 * SHA-256 repositories are refused when the store opens). The writer names
 * objects with it before git has answered, so a change's objects go to git
 * side by side, and it checks every id git answers against it.
 */
export function objectId(type: 'blob' | 'tree', body: Buffer): string {
  return createHash('sha1').update(`${type} ${body.length}\0`).update(body).digest('hex');
}

/**
 * The raw tree object git (`git mktree`) writes for these entries: git's
 * order, each `<mode in octal, no leading zero> <name>\0<20-byte id>`.
 */
export function treeObject(entries: ReadonlyArray<{ mode: string; oid: string; name: string }>): Buffer {
  const items = entries.map((e) => {
    const tree = e.mode === '040000' || e.mode === '40000';
    const head = `${Number.parseInt(e.mode, 8).toString(8)} ${e.name}\0`;
    const key = tree ? `${e.name}/` : e.name;
    // git orders names by their UTF-8 bytes: compare those, one byte per code unit, where not ASCII
    return { head, oid: e.oid, key: /^[\x00-\x7f]*$/.test(key) ? key : Buffer.from(key).toString('latin1') };
  });
  items.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const out = Buffer.allocUnsafe(items.reduce((n, i) => n + Buffer.byteLength(i.head) + 20, 0));
  let at = 0;
  for (const i of items) {
    at += out.write(i.head, at, 'utf8');
    at += out.write(i.oid, at, 'hex');
  }
  return out;
}

export interface TreeChange {
  path: string;
  /** the blob id in `to`; null: not a file there (deleted, or now a folder or submodule) */
  oid: string | null;
  /** the blob id in `from`; null: not a file there */
  old: string | null;
}

/**
 * The files two trees differ at, recursively, without rename detection: what
 * `git diff-tree -r --no-renames` names. `from`/`to` are anything cat-file
 * names a tree by (an id, `<commit>^{tree}`, `<commit>:<folder>`); null or a
 * name that does not exist is the empty tree. Paths get `prefix` in front.
 */
export async function diffTrees(
  cat: CatFile,
  from: string | null,
  to: string | null,
  prefix = '',
): Promise<TreeChange[]> {
  const out: TreeChange[] = [];
  const raw = async (spec: string | null): Promise<Buffer> => {
    if (!spec) return Buffer.alloc(0);
    const o = await cat.read(spec);
    if (!o) return Buffer.alloc(0);
    if (o.type !== 'tree') throw new Error(`${spec} is a ${o.type}, not a tree`);
    return o.content;
  };
  const walk = async (a: string | null, b: string | null, dir: string): Promise<void> => {
    const [xs, ys] = await Promise.all([raw(a), raw(b)]);
    const sub: Array<Promise<void>> = [];
    const differ = (o: TreeItem | undefined, n: TreeItem | undefined) => {
      const path = dir + (o ?? n)!.name;
      if (o?.tree || n?.tree) sub.push(walk(o?.tree ? o.oid : null, n?.tree ? n.oid : null, `${path}/`));
      const file = (e: TreeItem | undefined) => !!e && !e.tree && e.mode !== '160000';
      if (file(o) || file(n)) out.push({ path, oid: file(n) ? n!.oid : null, old: file(o) ? o!.oid : null });
    };
    let i = 0;
    let j = 0;
    while (i < xs.length || j < ys.length) {
      if (i >= xs.length) {
        const e = entryEnd(ys, j);
        differ(undefined, entryAt(ys, j, e));
        j = e;
        continue;
      }
      if (j >= ys.length) {
        const e = entryEnd(xs, i);
        differ(entryAt(xs, i, e), undefined);
        i = e;
        continue;
      }
      const ei = entryEnd(xs, i);
      const ej = entryEnd(ys, j);
      // the same bytes: the same mode, name and id (nearly every entry)
      if (ei - i === ej - j && xs.compare(ys, j, ej, i, ei) === 0) {
        i = ei;
        j = ej;
        continue;
      }
      const o = entryAt(xs, i, ei);
      const n = entryAt(ys, j, ej);
      const c = o.name === n.name ? 0 : compareEntries(o, n);
      if (c === 0 || (o.name === n.name && o.tree !== n.tree)) {
        differ(o, n);
        i = ei;
        j = ej;
      } else if (c < 0) {
        differ(o, undefined);
        i = ei;
      } else {
        differ(undefined, n);
        j = ej;
      }
    }
    await Promise.all(sub);
  };
  await walk(from, to, prefix);
  return out;
}
