/**
 * The git reads and writes anchors need, all plumbing: rev-parse, ls-tree,
 * ls-files/diff-files for the working tree, diff-tree -M for renames,
 * hash-object -w for uncommitted content. Blob contents go through the
 * store's long-lived `git cat-file --batch`.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { git } from '../gitstore/git.js';
import type { Repo } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { eachLsTreeEntry } from '../gitstore/tree.js';
import { blobId } from './text.js';
import { isOid } from './types.js';

export async function revParse(repo: Repo, rev: string): Promise<string | null> {
  const r = await git(['rev-parse', '-q', '--verify', `${rev}^{commit}`], {
    cwd: repo.cwd,
    env: repo.env,
    allowFail: true,
  });
  return r.code === 0 ? r.stdout.toString().trim() : null;
}

/** Resolves a revision through the store's running `cat-file --batch` (no process spawned). */
export async function revParseVia(store: Store, rev: string): Promise<string | null> {
  if (/\s/.test(rev) || rev.startsWith('-')) return revParse(store.repo, rev);
  // a commit's id (the hook's): its object, read without git when it is loose
  if (/^[0-9a-f]{40}$/.test(rev)) {
    const c = await store.catFile.read(rev);
    if (c?.type === 'commit') return rev;
  }
  return store.commitOf(rev);
}

/** The blobs of a `git ls-tree -z` listing, path → id. */
function blobsOf(out: Buffer, into: Map<string, string>): void {
  eachLsTreeEntry(out, (_mode, type, oid, path) => {
    if (type === 'blob') into.set(path, oid);
  });
}

/** path → blob id at a commit: the whole tree, or only the given paths. */
export async function treeBlobs(
  repo: Repo,
  commit: string,
  paths?: readonly string[],
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (paths && !paths.length) return out;
  if (!paths || paths.length > 2000) {
    const r = await git(['ls-tree', '-r', '-z', '--full-tree', commit], { cwd: repo.cwd, env: repo.env });
    blobsOf(r.stdout, out);
    if (paths) {
      const want = new Set(paths);
      for (const k of [...out.keys()]) if (!want.has(k)) out.delete(k);
    }
    return out;
  }
  for (let i = 0; i < paths.length; i += 500) {
    const r = await git(
      [
        'ls-tree',
        '-r',
        '-z',
        '--full-tree',
        commit,
        '--',
        ...paths.slice(i, i + 500).map((p) => `:(literal)${p}`),
      ],
      {
        cwd: repo.cwd,
        env: repo.env,
      },
    );
    blobsOf(r.stdout, out);
  }
  return out;
}

/** path → blob id of the working tree (index ids, re-hashed where the file differs from the index). */
export async function worktreeBlobs(repo: Repo, paths?: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const root = repo.workTree!;
  const spec = paths ? paths.map((p) => `:(literal)${p}`) : [];
  const ls = await git(['ls-files', '-s', '-z', '--', ...spec], { cwd: root, env: repo.env });
  for (const line of ls.stdout.toString('utf8').split('\0')) {
    if (!line) continue;
    const tab = line.indexOf('\t');
    const [, oid] = line.slice(0, tab).split(' ');
    out.set(line.slice(tab + 1), oid);
  }
  const dirty = await git(['diff-files', '--name-only', '-z', '--', ...spec], { cwd: root, env: repo.env });
  for (const p of dirty.stdout.toString('utf8').split('\0')) {
    if (!p) continue;
    try {
      out.set(p, blobId(readFileSync(join(root, p))));
    } catch {
      out.delete(p);
    }
  }
  // untracked files named explicitly, unless git ignores them: a path a record names (`.env`) is
  // never read from the working tree when it is no file of the code
  const untracked = paths?.filter((p) => !out.has(p)) ?? [];
  if (untracked.length) {
    const o = await git(
      ['ls-files', '-z', '-o', '--exclude-standard', '--', ...untracked.map((p) => `:(literal)${p}`)],
      {
        cwd: root,
        env: repo.env,
      },
    );
    for (const p of o.stdout.toString('utf8').split('\0')) {
      if (!p) continue;
      try {
        if (statSync(join(root, p)).isFile()) out.set(p, blobId(readFileSync(join(root, p))));
      } catch {}
    }
  }
  return out;
}

export interface TreeChange {
  status: string;
  oldPath: string;
  newPath: string;
  oldOid: string;
  newOid: string;
  score?: number;
}

/** One whole-tree diff with rename detection (to = null: the working tree). */
export async function renameDiff(repo: Repo, from: string, to: string | null): Promise<TreeChange[]> {
  const args = to
    ? ['diff-tree', '-r', '-z', '-M', '--no-commit-id', from, to]
    : ['diff-index', '-r', '-z', '-M', from];
  const r = await git(args, { cwd: repo.workTree ?? repo.cwd, env: repo.env });
  const parts = r.stdout.toString('utf8').split('\0');
  const out: TreeChange[] = [];
  for (let i = 0; i < parts.length; i++) {
    const meta = parts[i];
    if (!meta.startsWith(':')) continue;
    const [, , oldOid, newOid, st] = meta.slice(1).split(' ');
    const status = st[0];
    if (status === 'R' || status === 'C') {
      out.push({
        status,
        oldPath: parts[i + 1],
        newPath: parts[i + 2],
        oldOid,
        newOid,
        score: Number(st.slice(1)),
      });
      i += 2;
    } else {
      out.push({ status, oldPath: parts[i + 1], newPath: parts[i + 1], oldOid, newOid });
      i += 1;
    }
  }
  return out;
}

/** Paths a commit range touched (`from` null: everything in `to`, as for a root commit). */
export async function touchedPaths(repo: Repo, from: string | null, to: string): Promise<string[]> {
  const args = from
    ? ['diff-tree', '-r', '-z', '--name-only', '--no-renames', from, to]
    : ['ls-tree', '-r', '-z', '--name-only', to];
  const r = await git(args, { cwd: repo.cwd, env: repo.env });
  return r.stdout.toString('utf8').split('\0').filter(Boolean);
}

export async function writeBlob(repo: Repo, content: Buffer): Promise<string> {
  const r = await git(['hash-object', '-w', '--stdin'], { cwd: repo.cwd, env: repo.env, input: content });
  return r.stdout.toString().trim();
}

/**
 * Reads blobs by their ids. Only full ids are read: a name that is no id (an anchor's `blob`
 * written by another clone as `stash@{0}:.env`, a branch) is never resolved, and is missing.
 */
export async function readBlobs(store: Store, oids: readonly string[]): Promise<Map<string, Buffer>> {
  const uniq = [...new Set(oids)].filter(isOid);
  const objs = await store.catFile.readMany(uniq);
  const out = new Map<string, Buffer>();
  uniq.forEach((o, i) => {
    const b = objs[i];
    if (b && b.type === 'blob') out.set(o, b.content);
  });
  return out;
}
