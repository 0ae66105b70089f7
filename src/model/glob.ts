/**
 * Glob matching (micromatch), in one place. micromatch is loaded on first use
 * (scripts/build.mjs keeps it out of the bundle): most commands never match a glob.
 */
import { createRequire } from 'node:module';
import type Micromatch from 'micromatch';
import { err } from '../errors.js';

/** In the build: the library bundled into one file beside the chunks (src/model/yaml.ts). */
declare const __GIT_MEM_VENDOR__: Record<string, string> | undefined;

let lib: typeof Micromatch | undefined;

function load(): typeof Micromatch {
  const at = typeof __GIT_MEM_VENDOR__ === 'object' ? __GIT_MEM_VENDOR__.micromatch : 'micromatch';
  lib ??= createRequire(import.meta.url)(at) as typeof Micromatch;
  return lib;
}

export function isMatch(
  path: string,
  patterns: string | readonly string[],
  options?: Micromatch.Options,
): boolean {
  return load().isMatch(path, patterns as string | string[], options);
}

/** The test of isMatch compiled once, for many paths against the same globs (isMatch compiles on every call). */
export function matcher(
  patterns: string | readonly string[],
  options?: Micromatch.Options,
): (path: string) => boolean {
  const m = load();
  // a list matches when one of its globs does (as isMatch reads a list)
  const tests = (typeof patterns === 'string' ? [patterns] : patterns).map((p) => m.matcher(p, options));
  return tests.length === 1 ? tests[0] : (path) => tests.some((t) => t(path));
}

export const micromatch = {
  isMatch,
  matcher,
};
export default micromatch;

/**
 * Scope globs from `--scope` values: each value may list several, separated
 * by commas, but a comma inside braces or brackets belongs to the glob
 * (`src/{a,b}/**`, `src/[a,b].ts`). Empty pieces are dropped.
 */
export function splitScopes(values: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const v of values) {
    const s = String(v);
    let depth = 0;
    let bracket = false;
    let from = 0;
    const flush = (to: number) => {
      const piece = s.slice(from, to).trim();
      if (piece) out.push(piece);
      from = to + 1;
    };
    for (let i = 0; i < s.length; i++) {
      const ch = s[i];
      if (ch === '\\') i++;
      else if (bracket) bracket = ch !== ']';
      else if (ch === '[') bracket = true;
      else if (ch === '{') depth++;
      else if (ch === '}' && depth > 0) depth--;
      else if (ch === ',' && depth === 0) flush(i);
    }
    flush(s.length);
  }
  return out;
}

/** The first bracket a glob opens and never closes ('[', '{' or '('), if any. */
function unclosed(glob: string): string | undefined {
  const open: string[] = [];
  const pairs: Record<string, string> = { ']': '[', '}': '{', ')': '(' };
  for (let i = 0; i < glob.length; i++) {
    const ch = glob[i];
    if (ch === '\\') i++;
    else if (ch === '[' || ch === '{' || ch === '(') open.push(ch);
    else if (ch in pairs) {
      if (open.pop() !== pairs[ch]) return ch;
    }
  }
  return open[0];
}

/**
 * Scope globs as a memory stores them: relative to the repository root, inside
 * it, and well formed. Throws E_INVALID_ARG naming the first bad one.
 */
export function validateScopes(scopes: readonly string[]): string[] {
  for (const s of scopes) {
    const p = s.replace(/^!/, '');
    const why = !p.trim()
      ? 'is empty'
      : /^(\/|~|[A-Za-z]:[\\/])/.test(p)
        ? 'is not relative to the repository root'
        : p.split(/[\\/]/).includes('..')
          ? 'leaves the repository (..)'
          : unclosed(p)
            ? `has an unbalanced "${unclosed(p)}"`
            : undefined;
    if (why)
      throw err(
        'E_INVALID_ARG',
        `scope "${s}" ${why}`,
        'scopes are globs relative to the repository root, e.g. src/db/**',
      );
  }
  return [...scopes];
}

/**
 * A scope entry that names one path, not a pattern: no glob character and no
 * negation. Such an entry follows its file through renames (src/anchors/scopes.ts).
 */
export function isLiteralScope(s: string): boolean {
  return !!s && !/[*?[\]{}()!+@\\]/.test(s) && !s.endsWith('/');
}
