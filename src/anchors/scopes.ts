/**
 * Scopes that name one file follow it, as anchors do. A rule's scope entry
 * that is a literal path (no glob character, src/model/glob.ts) and that the
 * commits judged renamed (git's rename detection, the one the anchors use:
 * `renameDiff`) is rewritten to the new path in the check's recorded write
 * on the default branch; a literal entry that matches no file of the target
 * tree is reported (`check`, its --json, `doctor`).
 *
 * Only committed trees are read, and only repository paths are looked up: an
 * entry that leaves the tree (`../x`, an absolute path) is never handed to git.
 */
import type { Store, Tx } from '../gitstore/store.js';
import { isLiteralScope } from '../model/glob.js';
import { isRepoPath } from '../model/paths.js';
import type { MemoryRecord } from '../model/record.js';
import { renameDiff, treeBlobs } from './gitio.js';

export interface ScopeMove {
  id: string;
  from: string;
  to: string;
}

export interface LostScope {
  id: string;
  title: string;
  path: string;
}

export interface ScopeReport {
  moved: ScopeMove[];
  lost: LostScope[];
}

/** Whether `path` names a file of `files`, or a folder holding one. */
function present(files: ReadonlySet<string>, dirs: ReadonlySet<string>, path: string): boolean {
  return files.has(path) || dirs.has(path);
}

/**
 * The literal scopes of the records at memory commit `tip`, judged against
 * code commit `target`: those `from..target` renamed (moved), and those that
 * match no file of `target` and were not renamed (lost). `from` null: no
 * renames are looked for.
 */
export async function judgeScopes(
  store: Store,
  tip: string,
  target: string,
  from: string | null,
): Promise<ScopeReport> {
  const wanted: Array<{ id: string; title: string; path: string }> = [];
  for (const e of await store.scopedAt(tip))
    for (const s of e.scope)
      if (isLiteralScope(s) && isRepoPath(s)) wanted.push({ id: e.id, title: e.title, path: s });
  if (!wanted.length) return { moved: [], lost: [] };
  const paths = [...new Set(wanted.map((w) => w.path))];
  const blobs = await treeBlobs(store.repo, target, paths);
  const files = new Set(blobs.keys());
  const dirs = new Set<string>();
  // a literal folder matches the files under it (ls-tree -r lists them)
  for (const f of files)
    for (let i = f.indexOf('/'); i > 0; i = f.indexOf('/', i + 1)) dirs.add(f.slice(0, i));
  const missing = wanted.filter((w) => !present(files, dirs, w.path));
  if (!missing.length) return { moved: [], lost: [] };
  const renames = new Map<string, string>();
  if (from && from !== target)
    for (const c of await renameDiff(store.repo, from, target))
      if (c.status === 'R' && isRepoPath(c.newPath)) renames.set(c.oldPath, c.newPath);
  const moved: ScopeMove[] = [];
  const lost: LostScope[] = [];
  for (const m of missing) {
    const to = renames.get(m.path);
    if (to) moved.push({ id: m.id, from: m.path, to });
    else lost.push(m);
  }
  return { moved, lost };
}

/** A record with its scope entries moved (order kept, no entry twice); null when nothing changes. */
export function moveScopes(rec: MemoryRecord, moves: readonly ScopeMove[]): MemoryRecord | null {
  const by = new Map(moves.filter((m) => m.id === rec.id).map((m) => [m.from, m.to]));
  if (!by.size) return null;
  const scope: string[] = [];
  for (const s of rec.scope) {
    const n = by.get(s) ?? s;
    if (!scope.includes(n)) scope.push(n);
  }
  if (scope.length === rec.scope.length && scope.every((s, i) => s === rec.scope[i])) return null;
  return { ...rec, scope };
}

/** In a write: the records of `moves` with their scopes moved (`updated` first, else as the store has them). */
export async function putScopeMoves(
  tx: Tx,
  moves: readonly ScopeMove[],
  updated: Map<string, MemoryRecord>,
): Promise<number> {
  let n = 0;
  for (const id of new Set(moves.map((m) => m.id))) {
    if (updated.has(id)) continue; // written with its anchors (moved there)
    let rec: MemoryRecord;
    try {
      rec = await tx.get(id);
    } catch {
      continue; // removed meanwhile
    }
    const next = moveScopes(rec, moves);
    if (!next) continue;
    const { recordPath, serializeRecord } = await import('../model/record.js');
    tx.put(recordPath(id), serializeRecord(next));
    n++;
  }
  return n;
}
