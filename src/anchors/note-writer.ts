/**
 * Writing a git note from this process: the note blob, the notes trees on its
 * path and the notes commit as loose objects (src/gitstore/loose.ts), then one
 * compare-and-swap of the notes ref (the post-commit hook's moves in the same
 * transaction as its memory commit, Store.write) — instead of `git notes add`, which costs
 * a process that reads the whole notes tree. The layout is git's: a note is a
 * blob named by the annotated object's id, at the root or under two-hex-digit
 * fan-out directories (git reads any mix of those); an existing note anywhere
 * on that path is extended, never duplicated. A flat level fans out when it
 * reaches 256 notes, as git and fast-import do, so trees stay small.
 */
import { join } from 'node:path';
import { git, ZERO_OID } from '../gitstore/git.js';
import { parseTree, serializeTree, type TreeItem, writeLooseObject } from '../gitstore/loose.js';
import { type Ident, type RefUpdate, readRefFast, type Store } from '../gitstore/store.js';

const isTree = (t: TreeItem) => t.mode === '40000' || t.mode === '040000';
const HEX2 = /^[0-9a-f]{2}$/;
/** Notes a flat level may hold before it fans out. */
export const FANOUT_AT = 256;

/**
 * The objects of `ref` with lines added to the note of `object` (keeping the
 * lines already there, no duplicates), written; the ref itself is not moved:
 * returns the compare-and-swap that publishes them, 'unchanged' when the note
 * already says all of it, or undefined when it cannot (a ref backend or an
 * object store it does not write: the caller then uses `git notes`).
 */
export async function buildNote(
  store: Store,
  ref: string,
  object: string,
  lines: readonly string[],
  ident: Ident,
  opts: { fanoutAt?: number } = {},
): Promise<RefUpdate | 'unchanged' | undefined> {
  const repo = store.repo;
  if (repo.env.GIT_OBJECT_DIRECTORY || repo.env.GIT_ALTERNATE_OBJECT_DIRECTORIES) return undefined;
  if (!/^[0-9a-f]{40}$/.test(object)) return undefined;
  const objects = join(repo.commonDir, 'objects');
  const fanoutAt = opts.fanoutAt ?? FANOUT_AT;
  const old = readRefFast(repo.commonDir, ref);
  if (old === undefined) return undefined;
  let root: string | null = null;
  if (old) {
    const c = await store.catFile.read(old);
    const m = c?.type === 'commit' ? /^tree ([0-9a-f]{40})/.exec(c.content.toString('latin1')) : null;
    if (!m) return undefined;
    root = m[1];
  }
  const readTree = async (oid: string): Promise<TreeItem[]> => {
    const t = await store.catFile.read(oid);
    if (t?.type !== 'tree') throw new Error(`cannot read notes tree ${oid}`);
    return parseTree(t.content);
  };
  const noteBlob = async (have: string | null): Promise<string | null> => {
    let prev: string[] = [];
    if (have) {
      const b = await store.catFile.read(have);
      prev = b ? b.content.toString('utf8').split('\n').filter(Boolean) : [];
    }
    const all = [...new Set([...prev, ...lines])];
    if (have && all.length === prev.length) return null; // nothing new
    return writeLooseObject(objects, 'blob', Buffer.from(`${all.join('\n')}\n`, 'utf8'));
  };
  /** The new tree of one level (rest: the object id's hex digits below this level), or null when unchanged. */
  const level = async (items: TreeItem[], rest: string): Promise<string | null> => {
    const here = items.find((t) => t.name === rest && !isTree(t));
    if (here) {
      const blob = await noteBlob(here.oid);
      if (!blob) return null;
      here.oid = blob;
      return writeLooseObject(objects, 'tree', serializeTree(items));
    }
    const sub = items.find((t) => t.name === rest.slice(0, 2) && isTree(t));
    if (sub) {
      const t = await level(await readTree(sub.oid), rest.slice(2));
      if (!t) return null;
      sub.oid = t;
      return writeLooseObject(objects, 'tree', serializeTree(items));
    }
    const blob = (await noteBlob(null))!;
    const fanned = items.some((t) => isTree(t) && HEX2.test(t.name));
    const notesHere = items.filter((t) => !isTree(t) && t.name.length === rest.length).length;
    if ((!fanned && notesHere + 1 < fanoutAt) || rest.length <= 2) {
      items.push({ mode: '100644', name: rest, oid: blob });
      return writeLooseObject(objects, 'tree', serializeTree(items));
    }
    // a fanned-out level (or one that just became too big): notes go one level down
    const groups = new Map<string, TreeItem[]>([
      [rest.slice(0, 2), [{ mode: '100644', name: rest.slice(2), oid: blob }]],
    ]);
    const keep: TreeItem[] = [];
    for (const t of items) {
      if (!fanned && !isTree(t) && t.name.length === rest.length && /^[0-9a-f]+$/.test(t.name)) {
        const g = groups.get(t.name.slice(0, 2)) ?? [];
        g.push({ ...t, name: t.name.slice(2) });
        groups.set(t.name.slice(0, 2), g);
      } else keep.push(t);
    }
    for (const [name, g] of groups) {
      keep.push({ mode: '40000', name, oid: writeLooseObject(objects, 'tree', serializeTree(g)) });
    }
    return writeLooseObject(objects, 'tree', serializeTree(keep));
  };
  const tree = await level(root ? await readTree(root) : [], object);
  if (!tree) return 'unchanged';
  const when = `${Math.floor(Date.now() / 1000)} +0000`;
  const who = `${ident.name.replace(/[<>\n]/g, '')} <${ident.email.replace(/[<>\n]/g, '')}>`;
  const head = [`tree ${tree}`];
  if (old) head.push(`parent ${old}`);
  head.push(
    `author ${who} ${when}`,
    `committer ${who} ${when}`,
    '',
    "Notes added by 'git mem hook post-commit'",
    '',
  );
  const commit = writeLooseObject(objects, 'commit', Buffer.from(head.join('\n'), 'utf8'));
  return { ref, next: commit, expected: old };
}

/**
 * Adds lines to the note of `object` under `ref` and moves the ref (compare
 * and swap, rebuilt on the new tip when another writer moved it). Returns
 * false when it cannot (see buildNote): the caller then uses `git notes`.
 */
export async function writeNote(
  store: Store,
  ref: string,
  object: string,
  lines: readonly string[],
  ident: Ident,
  opts: { fanoutAt?: number } = {},
): Promise<boolean> {
  const repo = store.repo;
  for (let attempt = 0; attempt < 8; attempt++) {
    const u = await buildNote(store, ref, object, lines, ident, opts);
    if (u === undefined) return false;
    if (u === 'unchanged') return true;
    const r = await git(
      ['update-ref', '-m', 'notes: git mem hook post-commit', ref, u.next, u.expected ?? ZERO_OID],
      {
        cwd: repo.cwd,
        env: repo.env,
        allowFail: true,
      },
    );
    if (r.code === 0) return true;
    // someone else moved the notes ref meanwhile: build on theirs
    await new Promise((res) => setTimeout(res, 5 + Math.random() * 20));
  }
  return false;
}
