/**
 * Paths that name a file of the repository: what a person types (relative to their directory)
 * or an agent sends (relative to the work tree, or absolute). One rule for every caller: the
 * path, resolved, must stay inside the work tree. Pure path arithmetic; nothing is read.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path';

/**
 * `p` (absolute, or relative to `base`) as a path relative to `root`, with forward slashes
 * (`''` for the root itself); undefined when it leaves `root` (`..`, another absolute path).
 */
export function insideRoot(root: string, base: string, p: string): string | undefined {
  const rel = relative(root, isAbsolute(p) ? resolve(p) : resolve(base, p));
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return undefined;
  return rel.split(sep).join('/');
}

/**
 * Where a repository-relative path a record names (an anchor's path, where a check last found it)
 * fails to stay inside the repository, or null: not absolute, no control characters, no `..`, `.`
 * or empty segments, not in `.git`. Such a path is only ever looked up in a commit's tree.
 */
export function anchorPathProblem(p: unknown): string | null {
  if (typeof p !== 'string' || p === '') return 'an anchor without a path';
  const show = JSON.stringify(p);
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p) || p.startsWith('\\'))
    return `anchor path ${show} is absolute: anchors are relative to the repository`;
  if (/[\u0000-\u001f\u007f]/.test(p)) return `anchor path ${show} holds control characters`;
  const segs = p.split(/[\\/]/);
  if (segs.some((s) => s === '..')) return `anchor path ${show} is outside the repository`;
  if (segs.some((s) => s === '' || s === '.')) return `anchor path ${show} is not a normalised relative path`;
  if (/^\.git$/i.test(segs[0])) return `anchor path ${show} points inside .git`;
  return null;
}

/** A path a record may name: repository-relative and normalised (anchorPathProblem finds nothing). */
export function isRepoPath(p: unknown): p is string {
  return anchorPathProblem(p) === null;
}
