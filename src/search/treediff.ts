/**
 * The changed paths under a folder between two commits, read through the
 * store's long-lived `git cat-file --batch` (no process spawn): a daemon
 * holding a large index would pay tens of milliseconds per spawned git
 * process. Walks only subtrees whose ids differ, so one new record costs a
 * handful of object reads. Falls back to `git diff-tree` on anything odd.
 */
import type { Store } from '../gitstore/store.js';

export interface PathChange {
  path: string;
  /** new blob id, or null when deleted */
  oid: string | null;
}

interface Entry {
  mode: string;
  oid: string;
}

/** Parses a binary tree object: `<mode> <name>\0<20-byte id>` repeated. */
export function parseTree(buf: Buffer): Map<string, Entry> {
  const out = new Map<string, Entry>();
  let i = 0;
  while (i < buf.length) {
    const sp = buf.indexOf(32, i);
    const nul = buf.indexOf(0, sp);
    if (sp < 0 || nul < 0 || nul + 21 > buf.length) throw new Error('malformed tree');
    const mode = buf.toString('latin1', i, sp);
    const name = buf.toString('utf8', sp + 1, nul);
    out.set(name, { mode, oid: buf.toString('hex', nul + 1, nul + 21) });
    i = nul + 21;
  }
  return out;
}

async function readTree(store: Store, spec: string): Promise<Map<string, Entry> | null> {
  const o = await store.catFile.read(spec);
  if (!o) return null;
  if (o.type !== 'tree') throw new Error(`${spec} is not a tree`);
  return parseTree(o.content);
}

const isTree = (e: Entry) => e.mode === '40000' || e.mode === '040000';

async function walk(
  store: Store,
  prefix: string,
  a: Map<string, Entry> | null,
  b: Map<string, Entry> | null,
  out: PathChange[],
): Promise<void> {
  const names = new Set<string>([...(a?.keys() ?? []), ...(b?.keys() ?? [])]);
  for (const name of names) {
    const x = a?.get(name);
    const y = b?.get(name);
    if (x && y && x.oid === y.oid && x.mode === y.mode) continue;
    const path = `${prefix}/${name}`;
    const xt = x && isTree(x);
    const yt = y && isTree(y);
    if (xt || yt) {
      await walk(
        store,
        path,
        xt ? await readTree(store, x!.oid) : null,
        yt ? await readTree(store, y!.oid) : null,
        out,
      );
    }
    if (x && !xt && (!y || yt)) out.push({ path, oid: null });
    if (y && !yt) out.push({ path, oid: y.oid });
  }
}

/** Changes under `folder` (a top-level folder of the store) from commit `from` to commit `to`. */
export async function changedPaths(
  store: Store,
  from: string,
  to: string,
  folder: string,
): Promise<PathChange[]> {
  try {
    const a = await readTree(store, `${from}:${folder}`).catch(() => null);
    const b = await readTree(store, `${to}:${folder}`).catch(() => null);
    const out: PathChange[] = [];
    await walk(store, folder, a, b, out);
    return out;
  } catch {
    return (await store.diffPaths(from, to, folder)).map((c) => ({ path: c.path, oid: c.oid }));
  }
}

/** Whether a commit exists, asked of the cat-file helper (no spawn). */
export async function commitExists(store: Store, oid: string): Promise<boolean> {
  try {
    const o = await store.catFile.read(oid);
    return !!o && o.type === 'commit';
  } catch {
    return store.hasCommit(oid);
  }
}
