import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { insideRoot } from '../model/paths.js';
import type { Ctx } from './context.js';

/**
 * A path as the user typed it (relative to the cwd) → repository-relative,
 * normalised, with forward slashes. Refuses paths that escape the repository.
 */
export async function normalizeRepoPath(store: Store, ctx: Ctx, p: string): Promise<string> {
  const root = store.repo.workTree;
  if (!root) return p.replace(/^\.\//, '');
  const rel = insideRoot(root, ctx.cwd, p);
  if (rel === undefined)
    throw err('E_INVALID_ARG', `path ${p} is outside the repository`, `use a path inside ${root}`);
  return rel;
}
