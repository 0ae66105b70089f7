/** One tokenizer (src/search/text.ts): the duplicate check's title comparison reads words as search does. */
import { describe, expect, it } from 'vitest';
import { sameTitle } from '../src/search/duplicate-check.js';
import { words } from '../src/search/text.js';

describe('what a word is, everywhere', () => {
  it('sameTitle reads camelCase, invisible characters and wide letters as search does', () => {
    // search finds `use effect` in `useEffect`, and `password` in `pass\u200Bword`
    expect(words('useEffect cleanup', false)).toEqual(expect.arrayContaining(['use', 'effect']));
    expect(sameTitle('useEffect cleanup on unmount', 'use effect cleanup on unmount')).toBe(true);
    expect(sameTitle('pass\u200Bword rotation', 'password rotation')).toBe(true);
    expect(sameTitle('Ｐｏｏｌ size', 'pool size')).toBe(true);
    // as before: numbers must agree, and half the words
    expect(sameTitle('parallel writer 1 item 9', 'parallel writer 1 item 1')).toBe(false);
    expect(sameTitle('Connection pooling via pgbouncer', 'Connection pooling through pgbouncer')).toBe(true);
    expect(sameTitle('use pnpm', 'deploy on fridays')).toBe(false);
  });
});
