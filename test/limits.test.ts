/**
 * One table of limits for a record (src/model/schema.ts), held by a local
 * write and by the sync boundary alike: the same bad values run through
 * validateRecord (add, update, import, MCP, UI) and through the boundary's
 * blobProblem (a remote's record file, as git-mem would have written it),
 * and both refuse each with the same code, naming the same field.
 */
import { describe, expect, it } from 'vitest';
import { isGitMemError } from '../src/errors.js';
import { mergeEntry } from '../src/merge/engine.js';
import { blobProblem } from '../src/merge/validate.js';
import { newId } from '../src/model/id.js';
import {
  type MemoryRecord,
  newRecord,
  recordPath,
  serializeRecord,
  validateRecord,
} from '../src/model/record.js';

const good = (): MemoryRecord =>
  newRecord({
    id: newId(),
    type: 'decision',
    title: 'use the query builder',
    body: 'line one\n\tindented\r\nline three\n',
    now: '2026-01-02T03:04:05.000Z',
    tags: ['db', 'sql'],
    scope: ['src/db/**'],
    anchors: [
      {
        path: 'src/a.ts',
        lines: [1, 2],
        current: { path: 'src/b.ts', lines: [3, 4], blob: 'a'.repeat(40), commit: 'b'.repeat(40) },
      },
    ],
  });

const ESC_OSC52 = '\u001b]52;c;SGVsbG8=\u0007';

/** name, what to change, the code both sides give, the field they name */
const table: Array<[string, (r: MemoryRecord) => void, string, string]> = [
  [
    '20,000 tags',
    (r) => (r.tags = Array.from({ length: 20_000 }, (_, i) => `t${i}`)),
    'E_INVALID_ARG',
    'tags',
  ],
  ['a tag holding ESC', (r) => (r.tags = [`a${ESC_OSC52}`]), 'E_INVALID_ARG', 'tags'],
  ['a tag of 65 characters', (r) => (r.tags = ['a'.repeat(65)]), 'E_INVALID_ARG', 'tags'],
  ['clock 1e308', (r) => (r.clock = 1e308), 'E_INVALID_RECORD', 'clock'],
  ['clock -1', (r) => (r.clock = -1), 'E_INVALID_RECORD', 'clock'],
  ['clock 1.5', (r) => (r.clock = 1.5), 'E_INVALID_RECORD', 'clock'],
  ['created as a map', (r) => (r.created = { a: 1 } as never), 'E_INVALID_RECORD', 'created'],
  ['created not a date', (r) => (r.created = 'yesterday'), 'E_INVALID_RECORD', 'created'],
  ['updated as a list', (r) => (r.updated = ['x'] as never), 'E_INVALID_RECORD', 'updated'],
  ['expires not a date', (r) => (r.expires = 'never'), 'E_INVALID_ARG', 'expires'],
  [
    'anchors[].current.path ../../../../etc/passwd',
    (r) => ((r.anchors[0].current as { path: string }).path = '../../../../etc/passwd'),
    'E_ANCHOR',
    'anchors[0].current.path',
  ],
  ['an absolute anchor path', (r) => (r.anchors[0].path = '/etc/passwd'), 'E_ANCHOR', 'anchors[0].path'],
  ['an anchor path holding ESC', (r) => (r.anchors[0].path = `a${ESC_OSC52}`), 'E_ANCHOR', 'anchors[0].path'],
  ['anchor lines from 0', (r) => (r.anchors[0].lines = [0, 2]), 'E_ANCHOR', 'anchors[0].lines'],
  ['anchor lines backwards', (r) => (r.anchors[0].lines = [5, 2]), 'E_ANCHOR', 'anchors[0].lines'],
  ['an anchor that is a string', (r) => (r.anchors = ['x' as never]), 'E_ANCHOR', 'anchors[0]'],
  ['a title holding OSC 52', (r) => (r.title = `copy ${ESC_OSC52}me`), 'E_INVALID_ARG', 'title'],
  [
    'a title holding a cursor move',
    (r) => (r.title = 'ok\u001b[1A\u001b[2Khidden'),
    'E_INVALID_ARG',
    'title',
  ],
  ['a title holding a C1 CSI', (r) => (r.title = 'ok\u009b2Jx'), 'E_INVALID_ARG', 'title'],
  ['a title of two lines', (r) => (r.title = 'a\nb'), 'E_INVALID_ARG', 'title'],
  ['a title as a number', (r) => (r.title = 42 as never), 'E_INVALID_ARG', 'title'],
  [
    'a body holding OSC 8',
    (r) => (r.body = 'see \u001b]8;;https://evil\u0007here\u001b]8;;\u0007\n'),
    'E_INVALID_ARG',
    'body',
  ],
  ['a body holding a lone CR', (r) => (r.body = 'shown\rhidden\n'), 'E_INVALID_ARG', 'body'],
  ['a body holding NUL', (r) => (r.body = 'a\u0000b\n'), 'E_BINARY', 'body'],
  ['a body over 64 KiB', (r) => (r.body = 'a'.repeat(64 * 1024 + 1)), 'E_TOO_LARGE', 'body'],
  ['confidence 2', (r) => (r.confidence = 2), 'E_INVALID_ARG', 'confidence'],
  ['confidence as a string', (r) => (r.confidence = '0.5' as never), 'E_INVALID_ARG', 'confidence'],
  ['an unknown type', (r) => (r.type = 'nope' as never), 'E_INVALID_ARG', 'type'],
  ['a source holding BEL', (r) => (r.source = 'x\u0007'), 'E_INVALID_ARG', 'source'],
  ['an author holding ESC', (r) => (r.author = `Eve ${ESC_OSC52}`), 'E_INVALID_ARG', 'author'],
  ['a scope leaving the repository', (r) => (r.scope = ['../x/**']), 'E_INVALID_ARG', 'scope'],
  [
    '300 scopes',
    (r) => (r.scope = Array.from({ length: 300 }, (_, i) => `s${i}/**`)),
    'E_INVALID_ARG',
    'scope',
  ],
  [
    'by.agent holding ESC',
    (r) => (r.by = { kind: 'agent', agent: `a${ESC_OSC52}` }),
    'E_INVALID_ARG',
    'by.agent',
  ],
  [
    '2,000 related links',
    (r) => (r.links.related = Array.from({ length: 2000 }, () => newId())),
    'E_INVALID_RECORD',
    'links.related',
  ],
  [
    '257 anchors',
    (r) => (r.anchors = Array.from({ length: 257 }, () => ({ path: 'a.ts' }))),
    'E_INVALID_ARG',
    'anchors',
  ],
  ['an alias that is not a path', (r) => (r.alias = 'Not An Alias'), 'E_INVALID_ARG', 'alias'],
];

/** What a local write says: the code and field of validateRecord's error, or null. */
function local(r: MemoryRecord): [string, unknown] | null {
  try {
    validateRecord(r);
    return null;
  } catch (e) {
    if (!isGitMemError(e)) throw e;
    return [e.code, e.data?.field];
  }
}

/** What the sync boundary says of the same record as a file a remote holds. */
function remote(r: MemoryRecord): [string, unknown] | null {
  const p = blobProblem(recordPath(r.id), Buffer.from(serializeRecord(r)));
  return p ? [String(p.code ?? p.kind), p.field] : null;
}

describe('one table of limits: a local write and the sync boundary agree', () => {
  it('a good record passes both (tabs, line feeds and CR LF in its body)', () => {
    const r = good();
    expect(local(r)).toBeNull();
    expect(remote(r)).toBeNull();
  });

  it.each(table)('%s: both refuse it, with the same code and field', (_name, change, code, field) => {
    const r = good();
    change(r);
    expect(local(r)).toEqual([code, field]);
    expect(remote(r)).toEqual([code, field]);
  });
});

describe('the clock stops at the largest safe integer', () => {
  it('a both-sided merge of a record a remote set there writes what every clone accepts', () => {
    const base = good();
    base.clock = Number.MAX_SAFE_INTEGER;
    const ours = { ...structuredClone(base), title: 'ours' };
    const theirs = { ...structuredClone(base), body: 'theirs\n' };
    const m = mergeEntry({ rec: base }, { rec: ours }, { rec: theirs });
    const rec = m.state.rec!;
    expect(rec.clock).toBe(Number.MAX_SAFE_INTEGER);
    expect(local(rec)).toBeNull();
    expect(remote(rec)).toBeNull();
  });
});
