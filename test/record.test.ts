import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { abbreviate, fanout, isId, newId, normalizeIdInput } from '../src/model/id.js';
import {
  estimateTokens,
  type MemoryRecord,
  newRecord,
  parseDateInput,
  parseRecord,
  RecordParseError,
  recordPath,
  serializeRecord,
  validateAlias,
} from '../src/model/record.js';
import { entropy, scanSecrets } from '../src/safety/secrets.js';
import { ROOT } from './helpers.js';

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
    expect(() => parseRecord(text)).toThrow(/invalid YAML|alias/i);
  });

  it('validates on write: title, size, binary, type, alias', () => {
    const base = {
      id: newId(),
      type: 'decision' as const,
      title: 'ok',
      body: 'b',
      now: new Date().toISOString(),
    };
    expect(() => newRecord({ ...base, title: ' ' })).toThrow(/title is required/);
    expect(() => newRecord({ ...base, title: 'a\nb' })).toThrow(/one line/);
    expect(() => newRecord({ ...base, body: 'x'.repeat(70 * 1024) })).toThrow(/over the 65536-byte limit/);
    expect(() => newRecord({ ...base, body: 'bin\u0000ary' })).toThrow(/binary/);
    expect(() => newRecord({ ...base, type: 'nope' as never })).toThrow(/unknown type/);
    expect(() => validateAlias('Has Spaces')).toThrow(/invalid alias/);
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
    expect(() => parseDateInput('someday')).toThrow(/invalid date/);
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
    const files = readdirSync(join(ROOT, 'src'), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'));
    let n = 0;
    for (const f of files) {
      const lines = readFileSync(join(ROOT, 'src', f), 'utf8').split('\n');
      for (let at = 3; at + 12 < lines.length; at += 97) {
        const r = golden();
        r.anchors = [
          {
            path: `src/${f}`,
            lines: [at, at + 7],
            text: lines.slice(at, at + 8).join('\n'),
            before: lines.slice(at - 3, at),
            after: lines.slice(at + 8, at + 11),
          },
        ];
        r.extra = { stale_reasons: [`src/${f}:${at}-${at + 7}: changed: ${lines[at]}`] };
        const text = serializeRecord(r);
        expect(parseRecord(text)).toEqual(r);
        n++;
      }
    }
    expect(n).toBeGreaterThan(100);
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
    expect(scanSecrets('password=changeme\ntoken: ${GITHUB_TOKEN}\nUse a token to authenticate.')).toEqual(
      [],
    );
    expect(entropy('aaaa')).toBe(0);
  });
});
