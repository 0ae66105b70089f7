import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { abbreviate, fanout, isId, newId, normalizeIdInput } from '../src/model/id.js';
import {
  BLOCK_OPTIONS,
  estimateTokens,
  type MemoryRecord,
  newRecord,
  parseDateInput,
  parseRecord,
  RecordParseError,
  readFrontmatter,
  readFrontmatterByLibrary,
  readFrontmatterFast,
  recordPath,
  serializeRecord,
  splitFrontmatter,
  validateAlias,
  writeBlockFields,
} from '../src/model/record.js';
import { stringify as stringifyYaml } from '../src/model/yaml.js';
import { entropy, scanSecrets } from '../src/safety/secrets.js';
import { ROOT, rng, thrown } from './helpers.js';

function full(): MemoryRecord {
  return newRecord({
    id: newId(Date.UTC(2026, 0, 2)),
    type: 'known_fix',
    title: 'ECONNREFUSED on CI: wait for postgres',
    body: 'Run `pg_isready` in a loop before the db suite.\n\n- line two\n',
    now: '2026-01-02T03:04:05.000Z',
    author: 'Ann <ann@example.com>',
    tags: ['db', 'CI', 'db'],
    scope: ['packages/db/**'],
    alias: 'fixes/db/econnrefused',
    status: 'pending',
    confidence: 0.65,
    source: 'https://example.com/issue/1',
    expires: '2027-01-01T00:00:00.000Z',
    anchors: [{ path: 'packages/db/src/pool.ts', lines: [10, 20], blob: 'abc', custom: { nested: [1, 2] } }],
    links: { supersedes: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'], related: [] },
    extra: { x_team: 'core', review: { by: 'bob', votes: 3 }, list: ['a', 'b'] },
  });
}

describe('record format', () => {
  it('round-trips every field, including unknown ones, byte-stable', () => {
    const r = full();
    const text = serializeRecord(r);
    const back = parseRecord(text);
    expect(back).toEqual(r);
    expect(serializeRecord(back)).toBe(text);
    expect(text.startsWith('---\nid: ')).toBe(true);
    expect(r.tags).toEqual(['db', 'ci']);
  });

  it('keeps unknown frontmatter written by others untouched through parse/serialize', () => {
    const id = newId();
    const text = `---\nid: ${id}\ntype: decision\ntitle: T\nstatus: active\ntags: []\nconfidence: 0.8\ncreated: 2026-01-01T00:00:00.000Z\nupdated: 2026-01-01T00:00:00.000Z\nclock: 3\nfuture_field:\n  deep:\n    - 1\n    - two\nzeta: true\n---\nBody\n`;
    const r = parseRecord(text);
    expect(r.extra).toEqual({ future_field: { deep: [1, 'two'] }, zeta: true });
    expect(parseRecord(serializeRecord(r)).extra).toEqual(r.extra);
    expect(serializeRecord(r)).toContain('future_field:');
  });

  it('rejects malformed frontmatter with a parse error, never a crash', () => {
    const id = newId();
    const bad = [
      'no frontmatter',
      '---\nid: x\n',
      `---\nid: ${id}\ntype: nonsense\ntitle: t\n---\n`,
      `---\nid: ${id}\ntype: decision\ntitle: [unclosed\n---\n`,
      `---\nid: ${id}\nid: ${id}\ntype: decision\n---\n`,
      '---\n- a list\n---\n',
    ];
    for (const t of bad) expect(() => parseRecord(t, 'p.md')).toThrow(RecordParseError);
  });

  it('refuses YAML alias bombs (billion laughs)', () => {
    const id = newId();
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 9; i++) {
      const p = String.fromCharCode(96 + i);
      const n = String.fromCharCode(97 + i);
      lines.push(`${n}: &${n} [*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p},*${p}]`);
    }
    const text = `---\nid: ${id}\ntype: decision\ntitle: bomb\n${lines.join('\n')}\n---\n`;
    expect(() => parseRecord(text)).toThrow(RecordParseError);
  });

  it('validates on write: title, size, binary, type, alias', () => {
    const base = {
      id: newId(),
      type: 'decision' as const,
      title: 'ok',
      body: 'b',
      now: new Date().toISOString(),
    };
    const refused = (over: Record<string, unknown>) => thrown(() => newRecord({ ...base, ...over }));
    expect(refused({ title: ' ' })).toMatchObject({ code: 'E_INVALID_ARG', data: { field: 'title' } });
    expect(refused({ title: 'a\nb' })).toMatchObject({ code: 'E_INVALID_ARG', data: { field: 'title' } });
    expect(refused({ body: 'x'.repeat(70 * 1024) })).toMatchObject({
      code: 'E_TOO_LARGE',
      data: { field: 'body' },
    });
    expect(refused({ body: 'bin\u0000ary' })).toMatchObject({ code: 'E_BINARY', data: { field: 'body' } });
    expect(refused({ type: 'nope' })).toMatchObject({ code: 'E_INVALID_ARG', data: { field: 'type' } });
    expect(thrown(() => validateAlias('Has Spaces'))).toMatchObject({ code: 'E_INVALID_ARG' });
    expect(validateAlias('standards/ts/eslint')).toBe('standards/ts/eslint');
  });

  it('ids are ordered, unique, abbreviated uniquely and fanned out by their random end', () => {
    const ids = Array.from({ length: 500 }, () => newId(1_700_000_000_000));
    expect(new Set(ids).size).toBe(500);
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(isId(id)).toBe(true);
    const sorted = [...ids].sort();
    const abbrevs = ids.map((id) => abbreviate(id, sorted));
    expect(new Set(abbrevs).size).toBe(500);
    for (const [i, a] of abbrevs.entries()) expect(ids[i].startsWith(a)).toBe(true);
    expect(recordPath(ids[0])).toBe(`memories/${fanout(ids[0])}/${ids[0]}.md`);
    expect(normalizeIdInput('01arz3ndektsv4rrffq69g5fav')).toBe('01ARZ3NDEKTSV4RRFFQ69G5FAV');
  });

  it('estimates tokens as characters / 4 and parses dates and durations', () => {
    expect(estimateTokens('abcdefgh')).toBe(2);
    expect(parseDateInput('2026-12-31')).toBe('2026-12-31T00:00:00.000Z');
    expect(Date.parse(parseDateInput('2d', new Date(0)))).toBe(2 * 864e5);
    expect(thrown(() => parseDateInput('someday'))).toMatchObject({ code: 'E_INVALID_ARG' });
  });
});

// The bytes of a record as git-mem has always written them (one-line values on one line, strings
// plain only when unambiguous, else JSON-quoted; anchors and other nested values as block YAML).
const GOLDEN = `---
id: "01JD3KX9QF2A7M4W8B5N6C1D0E"
type: known_fix
title: "ECONNREFUSED: wait for \\"postgres\\" #ci"
alias: fixes/db/econnrefused
status: stale
tags: [db, ci-cd]
scope: ["packages/db/**", "src/{a,b}.ts"]
confidence: 0.65
source: agent
author: "Ann <ann@example.com>"
created: "2026-01-02T03:04:05.000Z"
updated: "2026-01-02T03:04:05.000Z"
clock: 1
stale_reasons: ["src/db/pool.ts:3-5: changed: lines 3-5 edited"]
x_flag: true
x_n: 3
links:
  related:
    - 01ARZ3NDEKTSV4RRFFQ69G5FAV
anchors:
  - path: src/db/pool.ts
    lines:
      - 3
      - 5
    commit: 1aecdc151d456076ed8cfe293a20e26549241b65
    blob: b25c2e4c0e64d463423e78c5f2dd1f8f90a28189
    hash: e33f5466e6fe103e3bb87bd201bc5596
    text: |-
      export function connect(url: string) {
        const p = new Pool({ url }); // "retry": yes
        return p;
    before:
      - ""
      - "# a heading"
    after:
      - "}"
    verdict:
      status: changed
      reason: lines 3-5 edited
      confidence: 1
      from:
        path: src/db/pool.ts
        lines:
          - 3
          - 5
      to: null
      commit: cccccccccccccccccccccccccccccccccccccccc
      checked: 2026-01-03T00:00:00.000Z
---
Run \`pg_isready\` first.
`;

/** Anchors cut from this repository's own source files, eight lines every `step` lines, with the line they start at. */
function sourceAnchors(step: number): Array<{ anchor: MemoryRecord['anchors'][number]; first: string }> {
  const out: Array<{ anchor: MemoryRecord['anchors'][number]; first: string }> = [];
  const files = readdirSync(join(ROOT, 'src'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'));
  for (const f of files) {
    const lines = readFileSync(join(ROOT, 'src', f), 'utf8').split('\n');
    for (let at = 3; at + 12 < lines.length; at += step) {
      out.push({
        first: lines[at],
        anchor: {
          path: `src/${f}`,
          lines: [at, at + 7],
          text: lines.slice(at, at + 8).join('\n'),
          before: lines.slice(at - 3, at),
          after: lines.slice(at + 8, at + 11),
        },
      });
    }
  }
  return out;
}

function golden(): MemoryRecord {
  return newRecord({
    id: '01JD3KX9QF2A7M4W8B5N6C1D0E',
    type: 'known_fix',
    title: 'ECONNREFUSED: wait for "postgres" #ci',
    body: 'Run `pg_isready` first.\n',
    now: '2026-01-02T03:04:05.000Z',
    author: 'Ann <ann@example.com>',
    tags: ['db', 'ci-cd'],
    scope: ['packages/db/**', 'src/{a,b}.ts'],
    alias: 'fixes/db/econnrefused',
    status: 'stale',
    confidence: 0.65,
    source: 'agent',
    links: { related: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'] },
    anchors: [
      {
        path: 'src/db/pool.ts',
        lines: [3, 5],
        commit: '1aecdc151d456076ed8cfe293a20e26549241b65',
        blob: 'b25c2e4c0e64d463423e78c5f2dd1f8f90a28189',
        hash: 'e33f5466e6fe103e3bb87bd201bc5596',
        text: 'export function connect(url: string) {\n  const p = new Pool({ url }); // "retry": yes\n  return p;',
        before: ['', '# a heading'],
        after: ['}'],
        verdict: {
          status: 'changed',
          reason: 'lines 3-5 edited',
          confidence: 1,
          from: { path: 'src/db/pool.ts', lines: [3, 5] },
          to: null,
          commit: 'c'.repeat(40),
          checked: '2026-01-03T00:00:00.000Z',
        },
      },
    ],
    extra: { stale_reasons: ['src/db/pool.ts:3-5: changed: lines 3-5 edited'], x_flag: true, x_n: 3 },
  });
}

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
  'bell\u0007',
  '---',
  '...',
];

describe('frontmatter codec', () => {
  it('writes the on-disk format byte for byte, and reads it back as the same record', () => {
    const r = golden();
    expect(serializeRecord(r)).toBe(GOLDEN);
    expect(parseRecord(GOLDEN)).toEqual(r);
  });

  it('reads back every string it writes, as a value, in a list and in an anchor', () => {
    const r = golden();
    for (const s of TRICKY) {
      r.extra = { k: s, l: [s, 'x'], n: { deep: s } };
      r.anchors = [{ path: 'a.ts', text: s, before: [s] }];
      r.source = s || undefined;
      const text = serializeRecord(r);
      const back = parseRecord(text);
      expect(back.extra, JSON.stringify(s)).toEqual(r.extra);
      expect(back.anchors).toEqual(r.anchors);
      expect(back.source).toEqual(r.source);
      expect(serializeRecord(back)).toBe(text);
    }
  });

  it('round-trips anchors holding real source code', () => {
    const cut = sourceAnchors(97);
    for (const { anchor, first } of cut) {
      const r = golden();
      r.anchors = [anchor];
      const [at, end] = anchor.lines!;
      r.extra = { stale_reasons: [`${anchor.path}:${at}-${end}: changed: ${first}`] };
      const text = serializeRecord(r);
      expect(parseRecord(text)).toEqual(r);
    }
    expect(cut.length).toBeGreaterThan(100);
  });
});

/** What the yaml library makes of a frontmatter: its value, or its error message. */
function byLibrary(yaml: string): { value?: unknown; error?: string } {
  try {
    return { value: readFrontmatterByLibrary(yaml) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** readFrontmatter must give exactly what the library gives: the same value, or the same error. */
function expectSameAsLibrary(yaml: string): void {
  const lib = byLibrary(yaml);
  let ours: { value?: unknown; error?: string };
  try {
    ours = { value: readFrontmatter(yaml) };
  } catch (e) {
    ours = { error: (e as Error).message };
  }
  expect(ours, JSON.stringify(yaml)).toStrictEqual(lib);
}

describe('frontmatter reader (one-line fields read directly, the rest by the yaml library)', () => {
  const ALPHABET = [
    ...'abcXYZ019 _-./@+()',
    ...',[]{}:#&*!|>\'"%`?=~\\',
    '\t',
    '\n',
    '\r',
    '\u0000',
    '\u0007',
    '\u001b',
    '\u007f',
    '\u0085',
    '\u00a0',
    '\u2028',
    '\u2029',
    '\ufeff',
    '\ufffd',
    'é',
    'ß',
    '✓',
    '😀',
    '中',
  ];
  const WORDS = [
    ...TRICKY,
    'true',
    'null',
    'Null',
    'NULL',
    'TRUE',
    '-0',
    '0',
    '007',
    '1.0',
    '1e+21',
    '2026-01-01',
  ];

  function randomString(r: () => number): string {
    if (r() < 0.3) return WORDS[Math.floor(r() * WORDS.length)];
    const n = Math.floor(r() * (r() < 0.1 ? 260 : 24));
    let s = '';
    for (let i = 0; i < n; i++) {
      // mostly plain characters, sometimes anything in the alphabet
      s += r() < 0.7 ? ALPHABET[Math.floor(r() * 17)] : ALPHABET[Math.floor(r() * ALPHABET.length)];
    }
    return s;
  }

  function randomValue(r: () => number, depth = 0): unknown {
    const k = r();
    if (k < 0.35) return randomString(r);
    if (k < 0.45)
      return [0, 1, -1, 0.5, -2.25, 1e21, 1.5e-7, 123456789, 2 ** 53 + 2, Math.floor(r() * 1e6)][
        Math.floor(r() * 10)
      ];
    if (k < 0.5) return r() < 0.5;
    if (k < 0.53) return null;
    if (k < 0.75) return Array.from({ length: Math.floor(r() * 4) }, () => randomString(r));
    if (depth > 1) return randomString(r);
    if (k < 0.88) return Array.from({ length: Math.floor(r() * 3) }, () => randomValue(r, depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(r() * 3); i > 0; i--) o[`k${i}`] = randomValue(r, depth + 1);
    return o;
  }

  function randomRecord(r: () => number): MemoryRecord {
    const rec = golden();
    rec.title = randomString(r) || 't';
    rec.alias = r() < 0.5 ? randomString(r) || undefined : undefined;
    rec.tags = Array.from({ length: Math.floor(r() * 4) }, () => randomString(r));
    rec.scope = r() < 0.3 ? [randomString(r)] : [];
    rec.confidence = [0.8, 0, 1, 0.123456789, 0.5][Math.floor(r() * 5)];
    rec.source = r() < 0.4 ? randomString(r) || undefined : undefined;
    rec.author = r() < 0.4 ? randomString(r) || undefined : undefined;
    rec.by =
      r() < 0.5
        ? { kind: 'agent', agent: randomString(r) || 'a', session: randomString(r) || undefined }
        : undefined;
    if (rec.by && rec.by.session === undefined) delete rec.by.session;
    rec.created = r() < 0.8 ? '2026-01-02T03:04:05.000Z' : randomString(r);
    rec.expires = r() < 0.2 ? randomString(r) || undefined : undefined;
    rec.clock = Math.floor(r() * 1000);
    rec.links = { supersedes: r() < 0.2 ? [randomString(r)] : [], superseded_by: [], related: [] };
    if (r() < 0.5) rec.anchors = [];
    rec.extra = {};
    for (let i = Math.floor(r() * 4); i > 0; i--) {
      const key =
        r() < 0.8 ? `x_${i}` : ['true', 'null', 'yes', '~', 'on', 'k.e-y', '_'][Math.floor(r() * 7)];
      rec.extra[key] = randomValue(r);
    }
    return rec;
  }

  it('reads the one-line fields of what serializeRecord writes without the library, and agrees with it', () => {
    for (const rec of [golden(), full()]) {
      const { yaml } = splitFrontmatter(serializeRecord(rec));
      expect(readFrontmatterFast(yaml)).toBeDefined();
      expectSameAsLibrary(yaml);
    }
    // the benchmark's records (gen.mjs): every line one-line, nothing left for the library
    const plain = golden();
    plain.anchors = [];
    plain.by = undefined;
    plain.links = { supersedes: [], superseded_by: [], related: [] };
    plain.extra = {};
    const { yaml } = splitFrontmatter(serializeRecord(plain));
    expect(yaml).not.toMatch(/^\s/m);
    expect(readFrontmatterFast(yaml)).toStrictEqual(readFrontmatterByLibrary(yaml));
    // what an agent writes: `by` as a map of one-line fields, read without the library too
    plain.by = {
      kind: 'agent',
      agent: 'claude-code',
      session: '3f2a9c1e-77b0-4b1e-9d2c-0a5e8c6f1b2d',
      model: 'x-1',
    };
    const agent = splitFrontmatter(serializeRecord(plain)).yaml;
    expect(agent).toContain('by:\n  kind: agent\n');
    expect(readFrontmatterFast(agent.replace(/^by:/m, 'by:\n  x: [unclosed'))).toBeUndefined();
    expect(readFrontmatterFast(agent)).toStrictEqual(readFrontmatterByLibrary(agent));
  });

  it('agrees with the library on every tricky string, as a value, in a list, as a title, tag and key', () => {
    const r = golden();
    for (const s of [...TRICKY, '😀 emoji', '\u0085nel', 'bom\ufeff', 'x\u2029', 'tab\tin', 'c1\u009b']) {
      r.title = s || 't';
      r.tags = [s, 'x'];
      r.source = s || undefined;
      r.extra = { k: s, l: [s, 'x'], n: { deep: s } };
      expectSameAsLibrary(splitFrontmatter(serializeRecord(r)).yaml);
      r.extra = { [s || 'e']: 1 };
      expectSameAsLibrary(splitFrontmatter(serializeRecord(r)).yaml);
      expect(parseRecord(serializeRecord(r)).extra, JSON.stringify(s)).toEqual(r.extra); // the key as written
    }
  });

  it('agrees with the library on 1500 random records of every shape', () => {
    const r = rng(16);
    let fast = 0;
    for (let i = 0; i < 1500; i++) {
      const { yaml } = splitFrontmatter(serializeRecord(randomRecord(r)));
      expectSameAsLibrary(yaml);
      if (readFrontmatterFast(yaml)) fast++;
    }
    // most are read directly (the rest: keys or values the reader leaves to the library)
    expect(fast).toBeGreaterThan(1000);
  });

  it('agrees with the library on hand-written frontmatter, errors included', () => {
    const id = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const head = `id: "${id}"\ntype: decision\n`;
    const cases = [
      `${head}title: plain`,
      `${head}title: plain # a comment\n`,
      `${head}title: "quoted" # a comment\n`,
      `${head}title: two\n  lines\n`,
      `${head}title: "two\n  lines"\n`,
      `${head}title: 'single'\n`,
      `${head}title: "esc \\x41 \\N \\_ \\e"\n`,
      `${head}title: "json \\u00e9 \\/ \\t"\n`,
      `${head}title:  two spaces\n`,
      `${head}title: plain\ntitle: again\n`,
      `${head}title: plain\n"title": again\n`,
      `${head}tags: [a, b]\ntags:\n  - c\n`,
      `${head}tags: [a,b]\n`,
      `${head}tags: [ a, b ]\n`,
      `${head}tags: [a, [b]]\n`,
      `${head}tags: [a, {b: c}]\n`,
      `${head}tags: [a, b, ]\n`,
      `${head}tags: [a, "b, c", "d\\"]"]\n`,
      `${head}tags: [1, true, null, ~]\n`,
      `${head}tags: [unclosed\n`,
      // numbers and number-like words, each where the direct reader would read it (the keys y and n it leaves)
      ...[
        '0.5',
        '007',
        '0x1F',
        '0o17',
        '1e3',
        '1E3',
        '-0',
        '.5',
        '1_000',
        '1.',
        '+1',
        '-1.5e-7',
        '12345678901234567890',
      ]
        .concat([
          '1-2',
          '0b101',
          '0o8',
          '3f2a9c1e',
          '2026-01-01',
          '1:30',
          '2026-11-26T20:10:39.543Z',
          '2026-11-26 20:10:39',
          '12:30:',
          '1::2',
          '1:-2',
          '1:2 3:4',
          '1:#',
          '190:20:30',
          '1:30.5',
          '9 lives',
          '.inf',
          '.NaN',
          'y',
          'n',
        ])
        .flatMap((v) => [`${head}x: ${v}\n`, `${head}x: [${v}, a]\n`, `${head}by:\n  x: ${v}\n`]),
      `${head}y: 1\nn: 2\n`,
      `${head}a: true\nb: True\nc: yes\nd: ~\ne: null\nf:\ng: on\n`,
      `${head}true: 1\n`,
      `${head}null: 1\n`,
      `${head}1: one\n`,
      `${head}__proto__: x\n`,
      `${head}by:\n  kind: agent\n  agent: claude-code\n`,
      `${head}by: {kind: person}\n`,
      `${head}by:\n  kind: agent\n  kind: again\n`,
      `${head}by:\n  kind: agent\n    deeper: x\n`,
      `${head}by:\n  kind: agent\n  lines:\n    - 1\n`,
      `${head}by:\n  - x\n`,
      `${head}by:\n\n  kind: agent\n`,
      `${head}by:\n  kind: agent\n\n  agent: a\n`,
      `${head}by:\n  kind: agent # c\n`,
      `${head}by:\n  k:\n`,
      `${head}by: # c\n  kind: agent\n`,
      `${head}by:\n   kind: agent\n`,
      `${head}by:\n  kind: agent\n by2: x\n`,
      `${head}by:\n  true: x\n`,
      `${head}by:\n  __proto__: x\n`,
      `${head}by:\nnext: x\n`,
      `${head}by:\n`,
      `${head}by:\n  kind: agent\nanchors:\n  - path: a.ts\n`,
      `${head}by:\n  kind: agent\nid: again\n`,
      `${head}by:\n  kind: agent\n"id": again\n`,
      `${head}x: &a [1, 2]\ny: *a\n`,
      `${head}x: plain\ny: &a [1, 2]\nz: *a\n`,
      `${head}x: plain\n\ny: after a blank line\n`,
      `${head}x: plain\n# a comment line\ny: z\n`,
      `${head}x: plain\n  - bad indent\n`,
      `${head}x: plain\n- a list item\n`,
      `${head}x: plain\n---\ny: z\n`,
      `${head}x: plain\n...\n`,
      `${head}x: plain\n%YAML 1.1\n`,
      `%YAML 1.1\n---\n${head}x: yes\n`,
      `\ufeff${head}x: y\n`,
      `${head}x: !!str 123\n`,
      `${head}x: plain\ny: !!str 123\n`,
      `${head}x: plain\n? complex\n: key\n`,
      `${head}x: plain\n<<: {y: 1}\n`,
      `${head}x: plain\r\ny: z\r\n`,
      `${head}x: "\u0085"\n`,
      `${head}x: "\u2028"\n`,
      `${head}x:\ty\n`,
      `${head}k.e-y: v\n_: w\n`,
      '- a list\n',
      'just a scalar\n',
      '',
      '\n',
    ];
    for (const yaml of cases) expectSameAsLibrary(yaml);
  });

  /** Source-like text: lines of code, indented or not, blank, spaces only, tabs, odd characters, trailing line feeds. */
  function randomText(r: () => number, any = true): string {
    const lines: string[] = [];
    for (let n = Math.floor(r() * 9); n >= 0; n--) {
      const k = r();
      if (k < 0.12) lines.push('');
      else if (k < 0.18) lines.push(' '.repeat(1 + Math.floor(r() * 9)));
      else if (k < 0.22) lines.push(`\t${any ? randomString(r) : 'tab\tbed'}`);
      else if (k < 0.3 && any) lines.push(randomString(r));
      else {
        const pad = ' '.repeat(Math.floor(r() * 4) * 2 + (r() < 0.1 ? 1 : 0));
        const code = [
          'const x = foo(a, b);',
          'if (a: b) { return "x" } # not a comment',
          '- item',
          '  }',
          '"""',
          'end',
          '#include <x.h>',
          '---',
          'key: value',
          '| > & * ! % @ `',
        ];
        lines.push(`${pad}${code[Math.floor(r() * code.length)]}${r() < 0.1 ? '  ' : ''}`);
      }
    }
    return lines.join('\n') + '\n'.repeat(r() < 0.5 ? 0 : Math.floor(r() * 3));
  }

  it('reads anchors holding random source-like text without the library, and agrees with it', () => {
    const r = rng(29);
    // any: strings from the whole alphabet, control characters included (the library writes
    // escapes and folded quoted strings the direct reader leaves to it); else only code-like text
    for (const any of [true, false]) {
      let direct = 0;
      const N = 700;
      for (let i = 0; i < N; i++) {
        const rec = golden();
        const str = () => (any ? randomString(r) : 'x_1');
        rec.anchors = Array.from({ length: 1 + Math.floor(r() * 3) }, () => {
          const text = randomText(r, any);
          const a: Record<string, unknown> = { path: `src/${str() || 'f'}.ts`, lines: [3, 9], text };
          if (r() < 0.7) a.before = text.split('\n').slice(0, 3);
          if (r() < 0.7) a.after = [str(), randomText(r, any)];
          if (r() < 0.3) a.sym = { lang: 'ts', kind: 'function', name: str(), hash: 'ab12' };
          if (r() < 0.2) a.current = { path: 'x.ts', lines: [1, 2], verdict: null, empty: [], none: {} };
          return a as unknown as MemoryRecord['anchors'][number];
        });
        const { yaml } = splitFrontmatter(serializeRecord(rec));
        expectSameAsLibrary(yaml);
        const fast = readFrontmatterFast(yaml, true);
        // read directly (expectSameAsLibrary above held readFrontmatter, which returns this, to the library)
        if (fast) direct++;
      }
      // code-like text is read directly; what is left (about 11 %, as this generator makes many
      // lines of spaces) is text the library writes as a quoted string over several lines (its
      // last line blank spaces) or as a block of blank lines only
      if (!any) expect(direct).toBeGreaterThan(N * 0.85);
      else expect(direct).toBeGreaterThan(N * 0.1);
    }
  });

  it('reads an anchor with the verdict a check records without the library', () => {
    const r = golden();
    const at = { path: 'src/a.ts', lines: [6, 13] as [number, number] };
    r.anchors = [
      {
        path: 'src/a.ts',
        lines: [5, 12],
        text: 'export function f() {\n  return 1;\n}',
        current: { ...at, blob: 'a'.repeat(40), commit: 'b'.repeat(40) },
        verdict: {
          status: 'moved',
          reason: 'lines shifted by +1 by edits elsewhere in the file',
          confidence: 1,
          from: { path: 'src/a.ts', lines: [5, 12] },
          to: at,
          commit: 'b'.repeat(40),
          checked: '2026-11-26T20:10:39.543Z',
        },
      } as unknown as MemoryRecord['anchors'][number],
    ];
    const { yaml } = splitFrontmatter(serializeRecord(r));
    expect(yaml).toContain('checked: 2026-11-26T20:10:39.543Z\n'); // plain, as the library writes it
    const fast = readFrontmatterFast(yaml, true);
    expect(fast, yaml).toBeDefined();
    expect(fast).toStrictEqual(readFrontmatterByLibrary(yaml));
  });

  it('reads the anchors of real source code without the library', () => {
    const cut = sourceAnchors(61);
    for (const { anchor } of cut) {
      const r = golden();
      r.anchors = [anchor];
      const { yaml } = splitFrontmatter(serializeRecord(r));
      const fast = readFrontmatterFast(yaml, true);
      expect(fast, yaml).toBeDefined();
      expect(fast).toStrictEqual(readFrontmatterByLibrary(yaml));
    }
    expect(cut.length).toBeGreaterThan(150);
  });

  it('agrees with the library on hand-written block frontmatter, errors included', () => {
    const head = 'id: "01ARZ3NDEKTSV4RRFFQ69G5FAV"\ntype: decision\n';
    const a = `${head}anchors:\n  - path: a.ts\n`;
    const cases = [
      `${a}    text: |-\n      x\n      y\n`,
      `${a}    text: |-\n      x\n     y\n`,
      `${a}    text: |\n      x\n\n`,
      `${a}    text: |+\n      x\n\n\n`,
      `${a}    text: |+\n      x\n\n    lines: []\n`,
      `${a}    text: |2-\n        x\n       y\n`,
      `${a}    text: |-2\n        x\n`,
      `${a}    text: |1-\n       x\n`,
      `${a}    text: |-\n        \n      x\n`,
      `${a}    text: |-\n      \n      x\n`,
      `${a}    text: |-\n      x\n        \n`,
      `${a}    text: |-\n      x\n       \n      y\n`,
      `${a}    text: |-\n\tx\n`,
      `${a}    text: |-\n      x\t\n      \ty\n`,
      `${a}    text: |- # c\n      x\n`,
      `${a}    text: >-\n      x\n      y\n`,
      `${a}    text: |-\n    lines: []\n`,
      `${a}    text: |-\n`,
      `${a}    text: |\n      x\n  - path: b.ts\n`,
      `${a}    text: "x\\ny"\n`,
      `${a}    text: 'it''s'\n`,
      `${a}    text: 'it's'\n`,
      `${a}    text: plain # comment\n`,
      `${a}    text: a: b\n`,
      `${a}    text: "x" # c\n`,
      `${a}    text: &x a\n    again: *x\n`,
      `${a}    text: !!str 12\n`,
      `${a}    text: 0x1F\n`,
      `${a}    text: .5\n`,
      `${a}    text: ~\n`,
      `${a}    text: null\n`,
      `${a}    text: Null\n`,
      `${a}    text: yes\n`,
      `${a}    text:\n`,
      `${a}    text:\n      nested: x\n`,
      `${a}    text: x\n    text: y\n`,
      `${a}    lines:\n      - 1\n      - 2\n`,
      `${a}    lines:\n    - 1\n`,
      `${a}    lines:\n      - - 1\n`,
      `${a}    lines:\n      -\n        - 1\n`,
      `${a}    lines:\n      - [1, 2]\n`,
      `${a}    lines:\n      - 1\n\n      - 2\n`,
      `${a}    lines:\n      - 1\n     - 2\n`,
      `${a}    lines:\n      - 1\n    # c\n`,
      `${a}    sym:\n      name: f\n      name: g\n`,
      `${a}    sym:\n      __proto__: x\n`,
      `${a}    sym:\n      true: x\n`,
      `${a}    sym: {}\n    e: []\n`,
      `${a}    sym: { }\n`,
      `${a}  - path: b.ts\n    blob: 1398bf8dfbfef6b1bca154fc98d37044011a51be\n    hash: 1e5\n`,
      `${a}    before:\n      - const x = foo(a, b);\n      - "  indented"\n      - '"q"'\n`,
      `${a}    before:\n      - http://x.y/z\n      - k: v\n`,
      `${a}    before:\n      - |-\n        x\n          y\n      - z\n`,
      `${a}next: x\nanchors: again\n`,
      `${a}id: again\n`,
      `${a}links:\n  related:\n    - x\n`,
      `${a}\u00a0x: y\n`,
      `${a}    text: |-\n      x\u2028y\n`,
      `${a}    text: |-\n      x\u0085y\n`,
      `${head}anchors:\n- path: a.ts\n`,
      `${head}anchors:\n   - path: a.ts\n`,
      `${head}anchors:\n  - path: a.ts\n    lines:\n${'  '.repeat(40)}- 1\n`,
    ];
    for (const yaml of cases) expectSameAsLibrary(yaml);
    // the deepest nesting the reader takes, then one deeper: both as the library reads them
    let deep = 'x: 1';
    for (let d = 0; d < 20; d++) deep = `k${d}:\n${deep.replace(/^/gm, '  ')}`;
    expectSameAsLibrary(`${head}${deep}\n`);
  });

  /** The block part as the yaml library alone writes it. */
  const byLibraryWriter = (fields: Record<string, unknown>) => stringifyYaml(fields, BLOCK_OPTIONS);

  it('writes the block part byte for byte as the library does, or leaves it to the library', () => {
    const r = rng(41);
    let direct = 0;
    let codeDirect = 0;
    const N = 1500;
    for (let i = 0; i < N; i++) {
      const any = i % 2 === 0;
      const str = () => (any ? randomString(r) : 'x_1');
      const anchors = Array.from({ length: 1 + Math.floor(r() * 3) }, () => {
        const text = randomText(r, any);
        const a: Record<string, unknown> = { path: `src/${str() || 'f'}.ts`, lines: [3, 9], text };
        if (r() < 0.7) a.before = text.split('\n').slice(0, 3);
        if (r() < 0.7) a.after = [str(), randomText(r, any)];
        if (r() < 0.3) a.sym = { lang: 'ts', name: str(), n: [0, -0, 1.5, 1e21, -7][Math.floor(r() * 5)] };
        if (r() < 0.2)
          a.current = { path: 'x.ts', lines: [], verdict: null, none: {}, deep: [{ a: [] }, {}] };
        return a;
      });
      const fields: Record<string, unknown> = { anchors };
      if (any && r() < 0.5) fields[`x_${i}`] = randomValue(r);
      if (any && r() < 0.2)
        fields[['true', 'null', 'yes', '~', 'k.e-y', '_'][Math.floor(r() * 6)]] = randomValue(r);
      const ours = writeBlockFields(fields);
      if (ours === undefined) continue;
      expect(ours, JSON.stringify(fields)).toBe(byLibraryWriter(fields));
      direct++;
      if (!any) codeDirect++;
    }
    // code-like anchors are written directly but for texts ending in a line of spaces, which the
    // library writes as quoted strings over several lines (this generator makes many: ~18 %)
    expect(codeDirect).toBeGreaterThan((N / 2) * 0.75);
    expect(direct).toBeGreaterThan(N * 0.4);
    // every tricky string, as a value, in a list, in a map, as a text of several lines
    for (const s of [
      ...TRICKY,
      ...WORDS,
      '---',
      '- x',
      '-x',
      '? x',
      ':x',
      'a:',
      'a #b',
      'a#b',
      '%x',
      '...',
      ' \n',
      '\n',
      '\n\n',
      'a\n',
      'a\n\n',
      ' a\nb',
      '\n a',
      'a \nb',
      'a\n \nb',
      'a\t\n',
      '0o17',
      '0x1F',
      '1e3',
      '.inf',
      '-.Inf',
      '.NaN',
      '+1',
      '1.',
      'yes',
      'on',
      '~',
      '',
    ]) {
      const fields = { k: s, l: [s, 'x'], n: { deep: s, more: [{ t: `${s}\n${s}` }] } };
      const ours = writeBlockFields(fields);
      if (ours !== undefined) expect(ours, JSON.stringify(s)).toBe(byLibraryWriter(fields));
    }
  });

  it('writes the anchors of real source code without the library, as the library would', () => {
    const cut = sourceAnchors(61);
    for (const { anchor } of cut) {
      const fields = { anchors: [anchor] };
      const ours = writeBlockFields(fields);
      expect(ours, JSON.stringify(fields)).toBeDefined();
      expect(ours).toBe(byLibraryWriter(fields));
    }
    expect(cut.length).toBeGreaterThan(150);
  });

  it('parses every record the same way with and without the direct reader', () => {
    const r = rng(7);
    for (let i = 0; i < 300; i++) {
      const text = serializeRecord(randomRecord(r));
      const { yaml } = splitFrontmatter(text);
      const lib = byLibrary(yaml);
      if (lib.error) {
        expect(() => parseRecord(text)).toThrow(lib.error);
        continue;
      }
      const rec = parseRecord(text);
      const o = lib.value as Record<string, unknown>;
      expect(rec.title).toBe(String(o.title ?? ''));
      expect(rec.tags).toStrictEqual(
        Array.isArray(o.tags)
          ? o.tags.filter((x) => x != null).map(String)
          : o.tags == null
            ? []
            : [String(o.tags)],
      );
      expect(rec.extra).toStrictEqual(
        Object.fromEntries(
          Object.entries(o)
            .filter(
              ([k]) =>
                ![
                  'id',
                  'type',
                  'title',
                  'alias',
                  'status',
                  'tags',
                  'scope',
                  'confidence',
                  'source',
                  'author',
                  'by',
                  'created',
                  'updated',
                  'expires',
                  'clock',
                  'links',
                  'anchors',
                ].includes(k),
            )
            .concat(rec.by || o.by == null ? [] : [['by', o.by]]),
        ),
      );
    }
  });
});

describe('secret scanning', () => {
  const cases: Array<[string, string]> = [
    ['private key block', '-----BEGIN RSA PRIVATE KEY-----\nMIIE'],
    ['AWS access key id', 'key AKIAIOSFODNN7EXAMPLE here'],
    ['GitHub token', `token ghp_${'a1B2'.repeat(9)}`],
    ['GitLab token', 'glpat-abcdefghij1234567890'],
    ['Slack token', 'xoxb-123456789012-abcdefghij'],
    [
      'JSON Web Token',
      'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U',
    ],
    ['password or token assignment', 'DB_PASSWORD=Zx9!kQ2#vB7m'],
  ];
  for (const [kind, text] of cases) {
    it(`finds a ${kind} with its position`, () => {
      const f = scanSecrets(`first line\n${text}`);
      expect(f[0]?.kind).toBe(kind);
      expect(f[0]?.line).toBe(2);
      expect(f[0]?.preview).not.toContain(text.slice(8, 20));
    });
  }
  it('ignores placeholders and prose', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal ${…} placeholder, as a config file holds it
    expect(scanSecrets('password=changeme\ntoken: ${GITHUB_TOKEN}\nUse a token to authenticate.')).toEqual(
      [],
    );
    expect(entropy('aaaa')).toBe(0);
  });
  it('takes a passphrase of words for a secret where the name says so, not a repeated word', () => {
    for (const t of [
      'DB_PASSWORD=correcthorsebatterystaple',
      'export API_KEY=mysupersecretpassword',
      'password: correcthorsebatterystaple',
    ])
      expect(
        scanSecrets(t).map((f) => f.kind),
        t,
      ).toEqual(['password or token assignment']);
    for (const t of ['password=passwordpassword', 'token: notavailable', 'DB_PASSWORD=hunter'])
      expect(scanSecrets(t), t).toEqual([]);
  });
});
