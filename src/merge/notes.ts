/**
 * Per-commit notes (`refs/notes/memory`, one JSON object per line) travel
 * beside the memory: fetched into refs/notes/mem-remotes/<remote>/memory and
 * merged with `git notes merge -s cat_sort_uniq` (lines of both sides, sorted,
 * duplicates dropped). The merge runs on a temporary notes ref and the real
 * ref moves by compare-and-swap, so a post-commit hook adding a note at the
 * same moment is never overwritten.
 */
import { randomBytes } from 'node:crypto';
import { err } from '../errors.js';
import { git, ZERO_OID } from '../gitstore/git.js';
import type { Repo } from '../gitstore/repo.js';
import type { Ident, Store } from '../gitstore/store.js';
import { NOTES_REF } from './remote.js';

export interface NotesMergeResult {
  before: string | null;
  after: string | null;
  /** 'none' (nothing to take), 'up-to-date', 'fast-forward', 'created' or 'merged'. */
  action: 'none' | 'up-to-date' | 'fast-forward' | 'created' | 'merged';
}

/** Compare-and-swap of any ref; false when it no longer holds `expected`. */
export async function casRef(
  repo: Repo,
  ref: string,
  next: string,
  expected: string | null,
): Promise<boolean> {
  const r = await git(['update-ref', ref, next, expected ?? ZERO_OID], {
    cwd: repo.cwd,
    env: repo.env,
    allowFail: true,
  });
  return r.code === 0;
}

function identEnv(repo: Repo, ident: Ident): NodeJS.ProcessEnv {
  return {
    ...repo.env,
    GIT_AUTHOR_NAME: repo.env.GIT_AUTHOR_NAME ?? ident.name,
    GIT_AUTHOR_EMAIL: repo.env.GIT_AUTHOR_EMAIL ?? ident.email,
    GIT_COMMITTER_NAME: repo.env.GIT_COMMITTER_NAME ?? ident.name,
    GIT_COMMITTER_EMAIL: repo.env.GIT_COMMITTER_EMAIL ?? ident.email,
  };
}

/** Merges the fetched notes commit `theirs` into refs/notes/memory. */
export async function mergeNotes(
  store: Store,
  theirs: string | null,
  ident: Ident,
): Promise<NotesMergeResult> {
  const repo = store.repo;
  for (let attempt = 0; attempt < 20; attempt++) {
    const ours = await store.commitOf(NOTES_REF);
    if (!theirs) return { before: ours, after: ours, action: 'none' };
    if (ours === theirs || (ours && (await store.isAncestor(theirs, ours))))
      return { before: ours, after: ours, action: 'up-to-date' };
    if (!ours || (await store.isAncestor(ours, theirs))) {
      if (await casRef(repo, NOTES_REF, theirs, ours)) {
        return { before: ours, after: theirs, action: ours ? 'fast-forward' : 'created' };
      }
      continue;
    }
    const tmp = `refs/notes/mem-tmp/${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await git(['update-ref', tmp, ours], { cwd: repo.cwd, env: repo.env });
      const r = await git(['notes', `--ref=${tmp}`, 'merge', '-q', '-s', 'cat_sort_uniq', theirs], {
        cwd: repo.cwd,
        env: identEnv(repo, ident),
        allowFail: true,
      });
      if (r.code !== 0) {
        throw err(
          'E_GIT',
          `cannot merge notes: ${r.stderr.trim().split('\n').pop()}`,
          'run git mem doctor; the memory itself was merged',
        );
      }
      const merged = await store.commitOf(tmp);
      if (!merged) throw err('E_GIT', 'git notes merge left no result');
      if (await casRef(repo, NOTES_REF, merged, ours))
        return { before: ours, after: merged, action: 'merged' };
    } finally {
      await git(['update-ref', '-d', tmp], { cwd: repo.cwd, env: repo.env, allowFail: true });
    }
  }
  throw err('E_CONFLICT_RETRY', `${NOTES_REF} kept moving during the notes merge`, 'try again');
}

export async function notesTip(store: Store): Promise<string | null> {
  return store.commitOf(NOTES_REF);
}
