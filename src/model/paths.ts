/**
 * Paths that name a file of the repository: what a person types (relative to their directory)
 * or an agent sends (relative to the work tree, or absolute). One rule for every caller: the
 * path, resolved, must stay inside the work tree. Pure path arithmetic; nothing is read.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { anchorPathProblem } from './schema.js';

/**
 * `p` (absolute, or relative to `base`) as a path relative to `root`, with forward slashes
 * (`''` for the root itself); undefined when it leaves `root` (`..`, another absolute path).
 */
export function insideRoot(root: string, base: string, p: string): string | undefined {
  const rel = relative(root, isAbsolute(p) ? resolve(p) : resolve(base, p));
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel.split(sep).join('/');
}

/** The one rule for a path a record names lives with the record's limits (src/model/schema.ts). */
export { anchorPathProblem };

/** A path a record may name: repository-relative and normalised (anchorPathProblem finds nothing). */
export function isRepoPath(p: unknown): p is string {
  return anchorPathProblem(p) === null;
}
