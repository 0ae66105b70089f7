/** Glob matching (micromatch), in one place. */
import Micromatch from 'micromatch';

export function isMatch(
  path: string,
  patterns: string | readonly string[],
  options?: Micromatch.Options,
): boolean {
  return Micromatch.isMatch(path, patterns as string | string[], options);
}

export const micromatch = {
  isMatch,
};
export default micromatch;
