/**
 * The operations of the two-clone merge table: each changes one aspect of a
 * record in a side-specific way and can tell whether its effect survived in a
 * record (the merged one, or an attic version).
 */
import { expect } from 'vitest';
import { conflictOf, type EntryState } from '../src/merge/engine.js';
import { type MemoryRecord, parseRecord } from '../src/model/record.js';

export type Side = 'A' | 'B';

export interface Op {
  code: string;
  /** Changes the record in place (and raises its clock); 'rm' is handled by the caller. */
  apply: (r: MemoryRecord, s: Side) => void;
  /** True when the side's change is visible in this record. */
  has: (r: MemoryRecord, s: Side) => boolean;
}

const lower = (s: Side) => s.toLowerCase();
const bump = (r: MemoryRecord) => {
  r.clock += 1;
  r.updated = '2026-03-01T00:00:00.000Z';
};
const setLine = (body: string, n: number, text: string) => {
  const lines = body.split('\n');
  lines[n - 1] = text;
  return lines.join('\n');
};

export const OPS: Op[] = [
  { code: 'ti', apply: (r, s) => (r.title = `title ${s}`), has: (r, s) => r.title === `title ${s}` },
  {
    code: 'b1',
    apply: (r, s) => (r.body = setLine(r.body, 1, `line 1 by ${s}`)),
    has: (r, s) => r.body.includes(`line 1 by ${s}`),
  },
  {
    code: 'b5',
    apply: (r, s) => (r.body = setLine(r.body, 5, `line 5 by ${s}`)),
    has: (r, s) => r.body.includes(`line 5 by ${s}`),
  },
  {
    code: 'ty',
    apply: (r, s) => (r.type = s === 'A' ? 'convention' : 'known_fix'),
    has: (r, s) => r.type === (s === 'A' ? 'convention' : 'known_fix'),
  },
  {
    code: 'st',
    apply: (r, s) => (r.status = s === 'A' ? 'stale' : 'archived'),
    has: (r, s) => r.status === (s === 'A' ? 'stale' : 'archived'),
  },
  {
    code: 'co',
    apply: (r, s) => (r.confidence = s === 'A' ? 0.3 : 0.6),
    has: (r, s) => r.confidence === (s === 'A' ? 0.3 : 0.6),
  },
  {
    code: 'ex',
    apply: (r, s) => (r.expires = s === 'A' ? '2030-01-01T00:00:00.000Z' : '2031-01-01T00:00:00.000Z'),
    has: (r, s) => r.expires === (s === 'A' ? '2030-01-01T00:00:00.000Z' : '2031-01-01T00:00:00.000Z'),
  },
  {
    code: 'so',
    apply: (r, s) => (r.source = `source-${lower(s)}`),
    has: (r, s) => r.source === `source-${lower(s)}`,
  },
  {
    code: 'tg',
    apply: (r, s) => r.tags.push(`tag-${lower(s)}`),
    has: (r, s) => r.tags.includes(`tag-${lower(s)}`),
  },
  {
    code: 'tr',
    apply: (r) => (r.tags = r.tags.filter((t) => t !== 'base')),
    has: (r) => !r.tags.includes('base'),
  },
  {
    code: 'sc',
    apply: (r, s) => r.scope.push(`lib-${lower(s)}/**`),
    has: (r, s) => r.scope.includes(`lib-${lower(s)}/**`),
  },
  {
    code: 'an',
    apply: (r, s) => r.anchors.push({ path: `src/${lower(s)}.ts`, lines: [1, 2] }),
    has: (r, s) => r.anchors.some((a) => a.path === `src/${lower(s)}.ts`),
  },
  {
    code: 'ar',
    apply: (r, s) => {
      r.anchors = r.anchors.map((a) =>
        a.path === 'src/base.ts' ? { ...a, lines: s === 'A' ? [10, 14] : [20, 24] } : a,
      );
    },
    has: (r, s) => r.anchors.some((a) => a.path === 'src/base.ts' && a.lines?.[0] === (s === 'A' ? 10 : 20)),
  },
  {
    code: 'li',
    apply: (r, s) => r.links.related.push(`related-${lower(s)}`),
    has: (r, s) => r.links.related.includes(`related-${lower(s)}`),
  },
  {
    code: 'al',
    apply: (r, s) => (r.alias = `alias/${lower(s)}`),
    has: (r, s) => !!r.alias?.startsWith(`alias/${lower(s)}`),
  },
  {
    code: 'xt',
    apply: (r, s) => (r.extra.owner = `team-${lower(s)}`),
    has: (r, s) => r.extra.owner === `team-${lower(s)}`,
  },
  { code: 'rm', apply: () => {}, has: (r) => r.extra.deletion_attempted !== undefined },
];

export function applyOp(op: Op, r: MemoryRecord, s: Side): MemoryRecord {
  const c: MemoryRecord = structuredClone(r);
  op.apply(c, s);
  bump(c);
  return c;
}

/**
 * Expected outcome of op(row) by one side against op(col) by the other on the
 * SAME record. B = both effects in the record; W = the later/greater side wins
 * the field and the other version goes to the attic; C = body conflict: one
 * version kept, the other in the attic, record flagged; K = the modification
 * is kept and the deletion recorded (flagged); D = deleted (tombstone).
 */
export const TABLE = `
    ti  b1  b5  ty  st  co  ex  so  tg  tr  sc  an  ar  li  al  xt  rm
ti  W   B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   K
b1  B   C   B   B   B   B   B   B   B   B   B   B   B   B   B   B   K
b5  B   B   C   B   B   B   B   B   B   B   B   B   B   B   B   B   K
ty  B   B   B   W   B   B   B   B   B   B   B   B   B   B   B   B   K
st  B   B   B   B   W   B   B   B   B   B   B   B   B   B   B   B   K
co  B   B   B   B   B   W   B   B   B   B   B   B   B   B   B   B   K
ex  B   B   B   B   B   B   W   B   B   B   B   B   B   B   B   B   K
so  B   B   B   B   B   B   B   W   B   B   B   B   B   B   B   B   K
tg  B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   K
tr  B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   K
sc  B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   K
an  B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   K
ar  B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   K
li  B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   K
al  B   B   B   B   B   B   B   B   B   B   B   B   B   B   W   B   K
xt  B   B   B   B   B   B   B   B   B   B   B   B   B   B   B   W   K
rm  K   K   K   K   K   K   K   K   K   K   K   K   K   K   K   K   D
`;

export function expected(): Map<string, string> {
  const lines = TABLE.trim().split('\n');
  const cols = lines[0].trim().split(/\s+/);
  const out = new Map<string, string>();
  for (const line of lines.slice(1)) {
    const [row, ...cells] = line.trim().split(/\s+/);
    for (const [i, c] of cells.entries()) out.set(`${row}/${cols[i]}`, c);
  }
  return out;
}

/** Every side's change is in the merged record or in one of the attic versions. */
export function nothingLost(op: Op, s: Side, state: EntryState, attic: MemoryRecord[]): boolean {
  if (op.code === 'rm') return !state.rec || op.has(state.rec, s);
  return (!!state.rec && op.has(state.rec, s)) || attic.some((a) => op.has(a, s));
}

/** Asserts that a merged entry matches its table cell and lost nothing. */
export function checkOutcome(
  want: string | undefined,
  x: Op,
  y: Op,
  base: MemoryRecord,
  state: EntryState,
  atticTexts: string[],
  identical: boolean,
): void {
  const rec = state.rec;
  const flag = rec ? conflictOf(rec) : undefined;
  const label = `${x.code}/${y.code} → ${want}`;
  switch (want) {
    case 'B':
      expect(x.has(rec!, 'A') && y.has(rec!, 'B'), label).toBe(true);
      expect(atticTexts, label).toEqual([]);
      expect(flag, label).toBeUndefined();
      break;
    case 'W':
      expect([x.has(rec!, 'A'), y.has(rec!, 'B')].filter(Boolean), label).toHaveLength(1);
      expect(atticTexts, label).toHaveLength(1);
      expect(flag, label).toBeUndefined();
      break;
    case 'C':
      expect(atticTexts, label).toHaveLength(1);
      expect(flag?.reasons, label).toEqual(['body']);
      expect(flag?.attic, label).toHaveLength(1);
      break;
    case 'K':
      expect(rec, label).toBeDefined();
      expect(rec!.extra.deletion_attempted, label).toMatchObject({
        reason: expect.stringMatching(/^rm by [AB]$/),
      });
      expect(flag?.reasons, label).toEqual(['delete']);
      expect(state.tomb, label).toBeUndefined();
      break;
    case 'D':
      expect(rec, label).toBeUndefined();
      expect(state.tomb, label).toBeDefined();
      break;
    default:
      throw new Error(`no table entry for ${label}`);
  }
  // a real merge raises the clock past both sides; identical changes need none
  if (rec) expect(rec.clock, label).toBe(base.clock + (identical ? 1 : 2));
  const attic = atticTexts.map((t) => parseRecord(t));
  expect(nothingLost(x, 'A', state, attic), `${label}: A's change lost`).toBe(true);
  expect(nothingLost(y, 'B', state, attic), `${label}: B's change lost`).toBe(true);
}
