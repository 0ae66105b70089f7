import { describe, expect, it } from 'vitest';
import { insideRoot } from '../src/model/paths.js';

describe('insideRoot: a path of the repository, or undefined', () => {
  it('resolves relative paths from the base, absolute ones as they are', () => {
    expect(insideRoot('/r', '/r', 'src/a.ts')).toBe('src/a.ts');
    expect(insideRoot('/r', '/r/src', 'a.ts')).toBe('src/a.ts');
    expect(insideRoot('/r', '/r/src', '../b.ts')).toBe('b.ts');
    expect(insideRoot('/r', '/elsewhere', '/r/src/./a.ts')).toBe('src/a.ts');
    expect(insideRoot('/r', '/r', './src//a.ts')).toBe('src/a.ts');
    expect(insideRoot('/r', '/r', '.')).toBe('');
  });

  it('refuses what leaves the root, however it is spelt', () => {
    for (const [base, p] of [
      ['/r', '../x'],
      ['/r', '..'],
      ['/r', 'src/../../x'],
      ['/r/src', '../../x'],
      ['/r', '/etc/passwd'],
      ['/r', '/r/../etc/passwd'],
      ['/r', '/rr/x'],
    ])
      expect(insideRoot('/r', base, p), `${base} ${p}`).toBeUndefined();
  });

  it('takes a name that only begins with two dots', () => {
    expect(insideRoot('/r', '/r', '..notes')).toBe('..notes');
    expect(insideRoot('/r', '/r', 'a/..b/c')).toBe('a/..b/c');
  });
});
