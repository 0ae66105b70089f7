/** micromatch, loaded on first use (see lazy.ts): ~100 KB that only glob-matching commands need. */
import type Micromatch from 'micromatch';
import { lazyRequire } from './lazy.js';

export function isMatch(
  path: string,
  patterns: string | readonly string[],
  options?: Micromatch.Options,
): boolean {
  return lazyRequire<typeof Micromatch>('micromatch').isMatch(path, patterns as string | string[], options);
}

export const micromatch = {
  isMatch,
};
export default micromatch;
