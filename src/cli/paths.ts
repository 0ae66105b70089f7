import { isAbsolute, relative, resolve } from 'node:path';
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import type { Ctx } from './context.js';

/**
 * A path as the user typed it (relative to the cwd) → repository-relative,
 * normalised, with forward slashes. Refuses paths that escape the repository.
 */
export async function normalizeRepoPath(store: Store, ctx: Ctx, p: string): Promise<string> {
  const root = store.repo.workTree;
  if (!root) return p.replace(/^\.\//, '');
  const abs = isAbsolute(p) ? p : resolve(ctx.cwd, p);
  const rel = relative(root, abs).split('\\').join('/');
  if (rel.startsWith('..') || isAbsolute(rel)) {
    throw err('E_INVALID_ARG', `path ${p} is outside the repository`, `use a path inside ${root}`);
  }
  return rel;
}
