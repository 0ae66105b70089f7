/**
 * The anchors' pure parts: the line diff and range mapping, relocation of an
 * anchored range in a file's new text, and the symbol grammars. No git.
 */
import { describe, expect, it } from 'vitest';
import { diffLines, mapRange } from '../../src/anchors/diff.js';
import { gate, relocate } from '../../src/anchors/relocate.js';
import { extractSymbols } from '../../src/anchors/symbols.js';
import { hashLines, wsHash } from '../../src/anchors/text.js';

const lines = (n: number, p = 'line') => Array.from({ length: n }, (_, i) => `${p} ${i + 1}`);
const reloc = (oldLines: string[], newLines: string[], start: number, end: number) => {
  const needle = oldLines.slice(start - 1, end);
  return relocate({
    oldLines,
    newLines,
    start,
    end,
    hash: hashLines(needle),
    wshash: wsHash(needle),
    before: oldLines.slice(Math.max(0, start - 4), start - 1),
    after: oldLines.slice(end, end + 3),
  });
};

describe('line diff and range mapping', () => {
  it('maps a range shifted by lines inserted and removed above it', () => {
    const a = lines(20);
    const b = ['new 1', 'new 2', ...a.slice(0, 3), ...a.slice(5)];
    const d = diffLines(a, b);
    expect(mapRange(d, 10, 12)).toEqual({ start: 10, end: 12, intact: true });
    expect(mapRange(d, 4, 6).intact).toBe(false);
  });
  it('marks a range with an inserted line inside as not intact', () => {
    const a = lines(10);
    const b = [...a.slice(0, 5), 'inserted', ...a.slice(5)];
    expect(mapRange(diffLines(a, b), 4, 7).intact).toBe(false);
    expect(mapRange(diffLines(a, b), 1, 3)).toEqual({ start: 1, end: 3, intact: true });
    expect(mapRange(diffLines(a, b), 8, 10)).toEqual({ start: 9, end: 11, intact: true });
  });
});

describe('relocate', () => {
  const file = [
    'import x',
    '',
    'function a() {',
    '  return 1;',
    '}',
    '',
    'function b() {',
    '  return 2;',
    '}',
    '',
  ];
  it('follows a block moved below another one', () => {
    const moved = [
      'import x',
      '',
      'function b() {',
      '  return 2;',
      '}',
      '',
      'function a() {',
      '  return 1;',
      '}',
      '',
    ];
    const r = reloc(file, moved, 3, 5);
    expect(r.kind).not.toBe('lost');
    expect([r.start, r.end]).toEqual([7, 9]);
  });
  it('never reports an edited range as found', () => {
    const edited = [...file];
    edited[3] = '  return 42;';
    expect(reloc(file, edited, 3, 5).kind).toBe('lost');
  });
  it('does not take a copy that already existed elsewhere for the edited anchored copy', () => {
    const dup = ['function a() {', '  return 1;', '}', 'x', 'function a() {', '  return 1;', '}'];
    const edited = ['function a() {', '  return 2;', '}', 'x', 'function a() {', '  return 1;', '}'];
    expect(reloc(dup, edited, 1, 3).kind).toBe('lost');
  });
  it('accepts whitespace-only reformatting through the hash gate', () => {
    const reformatted = file.map((l) => l.replace(/^ {2}/, '    '));
    const r = reloc(file, reformatted, 3, 5);
    expect(r.kind).toBe('found');
    expect([r.start, r.end]).toEqual([3, 5]);
    const needle = ['foo(a,', '    b)'];
    expect(gate(['foo(a, b)'], hashLines(needle), wsHash(needle))).toBe('whitespace');
  });
  it('prefers the copy whose context matches when the text is duplicated', () => {
    const a = ['ctx A1', 'ctx A2', 'dup', 'after A', 'x', 'y', 'z'];
    const b = ['other', 'dup', 'noise', 'ctx A1', 'ctx A2', 'dup', 'after A', 'x', 'y', 'z'];
    const r = reloc(a, b, 3, 3);
    expect([r.start, r.end]).toEqual([6, 6]);
  });
});

describe('symbols (tree-sitter grammars load for every supported language)', () => {
  const cases: Array<[string, string, string]> = [
    [
      'typescript',
      'export function foo(a: number) {\n  return a;\n}\nclass K {\n  bar() { return 1; }\n}\n',
      'K.bar',
    ],
    ['javascript', 'const foo = (a) => a;\nclass K { bar() { return 1; } }\n', 'K.bar'],
    ['python', 'def foo(a):\n    return a\n\nclass K:\n    def bar(self):\n        return 1\n', 'K.bar'],
    [
      'go',
      'package p\n\nfunc foo(a int) int {\n\treturn a\n}\n\ntype K struct{}\n\nfunc (k *K) bar() int { return 1 }\n',
      'K.bar',
    ],
    [
      'rust',
      'fn foo(a: i32) -> i32 {\n    a\n}\nstruct K;\nimpl K {\n    fn bar(&self) -> i32 { 1 }\n}\n',
      'K.bar',
    ],
    ['java', 'class K {\n  int foo(int a) {\n    return a;\n  }\n  int bar() { return 1; }\n}\n', 'K.bar'],
  ];
  for (const [lang, src, qualified] of cases) {
    it(`${lang}: finds definitions with qualified names`, async () => {
      const defs = await extractSymbols(lang, src);
      expect(defs.map((d) => d.qualified)).toContain(qualified);
      expect(defs.some((d) => d.name === 'foo' || d.qualified.endsWith('.foo'))).toBe(true);
    });
  }
  it('keeps the body hash across a rename and changes it on an edit', async () => {
    const a = await extractSymbols('python', 'def foo(a):\n    return a + 1\n');
    const b = await extractSymbols('python', 'def bar(a):\n    return a + 1\n');
    const c = await extractSymbols('python', 'def foo(a):\n    return a + 2\n');
    expect(a[0].bodyHash).toBe(b[0].bodyHash);
    expect(a[0].bodyHash).not.toBe(c[0].bodyHash);
  });
});

describe('relocate: common lines', () => {
  it('takes the copy of a common line that its distinctive context surrounds, not the one the diff aligned', () => {
    const block = (n: string) => [
      `function ${n}() {`,
      `  const ${n}1 = ${n}(1);`,
      `  const ${n}2 = ${n}(2);`,
      '  return a + b;',
      '}',
      '',
    ];
    const old = [...block('p'), ...block('q'), ...block('r')];
    const shuffled = [...block('r'), ...block('q'), ...block('p')];
    const r = reloc(old, shuffled, 4, 4); // p's return line
    expect([r.start, r.end]).toEqual([16, 16]);
  });
});
