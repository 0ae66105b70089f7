import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { flowList, parseSimpleYaml, scalar } from '../src/model/fastyaml.js';

const TRICKY = [
  'plain words',
  'true',
  'False',
  'yes',
  'NO',
  'on',
  'null',
  '~',
  '',
  ' ',
  ' lead',
  'trail ',
  '123',
  '-1.5',
  '1e3',
  '.5',
  '0x1F',
  '0o17',
  '.inf',
  '-.Inf',
  '.nan',
  'a: b',
  'a:b',
  '#hash',
  'x #y',
  '- item',
  '? key',
  '[x]',
  '{y}',
  'a,b',
  '"quoted"',
  "'single'",
  'back\\slash',
  'tab\there',
  'new\nline',
  'ünïcødé ✓',
  '@at',
  '`tick`',
  '*star',
  '&amp',
  '!bang',
  '%pct',
  '|pipe',
  '>gt',
  'https://x.y/z?q=1#f',
  'packages/db/**',
  '**/*.ts',
  'src/{a,b}.ts',
  'C:\\path',
  '01ARZ3NDEKTSV4RRFFQ69G5FAV',
  '2026-01-01',
  '2026-01-01T00:00:00.000Z',
  'null ',
  'y',
  'n',
  '=',
  '<<',
  'a  b',
  'x\u2028y',
];

function rng(seed: number) {
  return () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
}

describe('fast YAML subset', () => {
  it('every scalar it writes reads back identically through the yaml library and the fast parser', () => {
    for (const s of TRICKY) {
      const line = `k: ${scalar(s)}\nl: ${flowList([s, 'x'])}\n`;
      expect(parse(line)).toEqual({ k: s, l: [s, 'x'] });
      const fast = parseSimpleYaml(line);
      if (fast) expect(fast).toEqual({ k: s, l: [s, 'x'] });
    }
  });

  it('on random documents, the fast parser either declines or agrees with the yaml library', () => {
    const r = rng(42);
    const alphabet = 'ab :#-[]{},"\'\\&*!|>%@`~01.eE+x\t';
    for (let i = 0; i < 3000; i++) {
      const len = Math.floor(r() * 14);
      let v = '';
      for (let j = 0; j < len; j++) v += alphabet[Math.floor(r() * alphabet.length)];
      const doc = `key: ${v}\n`;
      const fast = parseSimpleYaml(doc);
      if (!fast) continue;
      let full: unknown;
      try {
        full = parse(doc, { schema: 'core' });
      } catch {
        throw new Error(`fast parser accepted what yaml rejects: ${JSON.stringify(doc)}`);
      }
      expect(fast, JSON.stringify(doc)).toEqual(full);
    }
  });

  it('declines nested maps, anchors, block scalars and duplicate keys', () => {
    for (const d of [
      'a:\n  b: 1\n',
      'a: &x 1\nb: *x\n',
      'a: |\n  text\n',
      'a: 1\na: 2\n',
      'a: {b: 1}\n',
      '- x\n',
      'a: 1 # c\n',
    ]) {
      expect(parseSimpleYaml(d)).toBeUndefined();
    }
  });
});
