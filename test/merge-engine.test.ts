import { describe, expect, it } from 'vitest';
import {
  conflictOf,
  type EntryState,
  expiredTombstone,
  mergeBody,
  mergeEntry,
  mergeSet,
  mergeStores,
  type StoreMaps,
  stateText,
  type Tombstone,
} from '../src/merge/engine.js';
import { newId } from '../src/model/id.js';
import { type MemoryRecord, newRecord, parseRecord } from '../src/model/record.js';
import { applyOp, checkOutcome, expected, OPS, type Op, type Side } from './merge-ops.js';

function baseRecord(id = newId()): MemoryRecord {
  return newRecord({
    id,
    type: 'decision',
    title: 'base title',
    body: 'line 1\nline 2\nline 3\nline 4\nline 5\n',
    now: '2026-01-01T00:00:00.000Z',
    author: 'Base <base@example.com>',
    tags: ['base', 'keep'],
    scope: ['src/**'],
    anchors: [{ path: 'src/base.ts', lines: [1, 5] }],
  });
}

function sideState(op: Op, base: MemoryRecord, s: Side): EntryState {
  if (op.code === 'rm') {
    return {
      tomb: {
        id: base.id,
        deleted: '2026-03-01T00:00:00.000Z',
        by: s,
        reason: `rm by ${s}`,
        clock: base.clock + 1,
      },
    };
  }
  return { rec: applyOp(op, base, s) };
}

describe('merge engine: the table of operation pairs on the same record', () => {
  const table = expected();
  it('the table covers exactly the operations', () => {
    expect([...new Set([...table.keys()].map((k) => k.split('/')[0]))]).toEqual(OPS.map((o) => o.code));
    expect(table.size).toBe(OPS.length ** 2);
  });
  for (const x of OPS) {
    for (const y of OPS) {
      it(`${x.code} (A) × ${y.code} (B)`, () => {
        const base = baseRecord();
        const a = sideState(x, base, 'A');
        const b = sideState(y, base, 'B');
        const ab = mergeEntry({ rec: base }, a, b, { ours: 'A', theirs: 'B' });
        const ba = mergeEntry({ rec: base }, b, a, { ours: 'B', theirs: 'A' });
        // the same result whichever side merges
        expect(stateText(ab.state)).toBe(stateText(ba.state));
        // the same attic entries whichever side merges; `side` names the merging side's view of it
        const flip = { ours: 'theirs', theirs: 'ours' } as const;
        expect(ab.attic.map(({ side, ...e }) => ({ ...e, side: side && flip[side] }))).toEqual(ba.attic);
        checkOutcome(
          table.get(`${x.code}/${y.code}`),
          x,
          y,
          base,
          ab.state,
          ab.attic.map((e) => e.text),
          stateText(a) === stateText(b),
        );
      });
    }
  }
});

describe('merge engine: operation pairs on different records', () => {
  it('takes both sides as they are for every pair', () => {
    const base: StoreMaps = { records: new Map(), tombstones: new Map() };
    const sa: StoreMaps = { records: new Map(), tombstones: new Map() };
    const sb: StoreMaps = { records: new Map(), tombstones: new Map() };
    const pairs: Array<{ x: Op; y: Op; r1: string; r2: string }> = [];
    for (const x of OPS) {
      for (const y of OPS) {
        const r1 = baseRecord();
        const r2 = baseRecord();
        for (const r of [r1, r2]) {
          base.records.set(r.id, r);
          sa.records.set(r.id, r);
          sb.records.set(r.id, r);
        }
        const a = sideState(x, r1, 'A');
        const b = sideState(y, r2, 'B');
        sa.records.delete(r1.id);
        if (a.rec) sa.records.set(r1.id, a.rec);
        if (a.tomb) sa.tombstones.set(r1.id, a.tomb);
        sb.records.delete(r2.id);
        if (b.rec) sb.records.set(r2.id, b.rec);
        if (b.tomb) sb.tombstones.set(r2.id, b.tomb);
        pairs.push({ x, y, r1: r1.id, r2: r2.id });
      }
    }
    // each side's aliases are side-specific but the same for all its records: give them unique ones
    let n = 0;
    for (const m of [sa, sb]) for (const r of m.records.values()) if (r.alias) r.alias = `${r.alias}-${n++}`;
    const ab = mergeStores(base, sa, sb, { labels: { ours: 'A', theirs: 'B' } });
    const ba = mergeStores(base, sb, sa, { labels: { ours: 'B', theirs: 'A' } });
    expect(ab.attic).toEqual([]);
    expect(ab.conflicts).toEqual([]);
    expect([...ab.records.keys()].sort()).toEqual([...ba.records.keys()].sort());
    for (const [id, r] of ab.records)
      expect(stateText({ rec: r })).toBe(stateText({ rec: ba.records.get(id) }));
    for (const { x, y, r1, r2 } of pairs) {
      const m1 = ab.records.get(r1);
      const m2 = ab.records.get(r2);
      if (x.code === 'rm') expect(m1 === undefined && ab.tombstones.has(r1)).toBe(true);
      else expect(x.has(m1!, 'A')).toBe(true);
      if (y.code === 'rm') expect(m2 === undefined && ab.tombstones.has(r2)).toBe(true);
      else expect(y.has(m2!, 'B')).toBe(true);
    }
  });
});

describe('merge engine: rules', () => {
  it('the later Lamport clock wins a scalar, whatever the text', () => {
    const base = baseRecord();
    const a = applyOp(OPS[0], applyOp(OPS[0], base, 'B'), 'A'); // two edits: clock +2, title "title A"
    const b = { ...applyOp(OPS[0], base, 'B'), title: 'zzz later text' };
    const r = mergeEntry({ rec: base }, { rec: a }, { rec: b });
    expect(r.state.rec!.title).toBe('title A');
    expect(r.state.rec!.clock).toBe(a.clock + 1);
    expect(parseRecord(r.attic[0].text).title).toBe('zzz later text');
    expect(parseRecord(r.attic[0].text).extra.attic).toMatchObject({
      reason: 'field-conflict',
      fields: ['title'],
    });
  });

  it('one-sided changes are taken as they are; a deletion of an unchanged record stands', () => {
    const base = baseRecord();
    const a = applyOp(OPS[0], base, 'A');
    expect(mergeEntry({ rec: base }, { rec: a }, { rec: base }).state.rec).toBe(a);
    expect(mergeEntry({ rec: base }, { rec: base }, { rec: a }).outcome).toBe('theirs');
    const tomb: Tombstone = { id: base.id, deleted: '2026-01-02T00:00:00Z', clock: 2 };
    const r = mergeEntry({ rec: base }, { rec: base }, { tomb });
    expect(r.state).toEqual({ tomb });
  });

  it('with no base, a tombstone beats an older record and loses to a newer one', () => {
    const rec = baseRecord();
    const tomb: Tombstone = { id: rec.id, deleted: '2026-01-02T00:00:00Z', clock: rec.clock + 1 };
    expect(mergeEntry(undefined, { rec }, { tomb }).state).toEqual({ tomb });
    expect(mergeEntry(undefined, { tomb }, { rec }).state).toEqual({ tomb });
    const newer = { ...rec, clock: rec.clock + 5 };
    const kept = mergeEntry(undefined, { rec: newer }, { tomb });
    expect(kept.outcome).toBe('kept');
    expect(kept.state.rec!.extra.deletion_attempted).toMatchObject({ clock: rec.clock + 1 });
    // a tombstone without a clock (an old prune) still stops a resurrection
    expect(mergeEntry(undefined, { rec: newer }, { tomb: { id: rec.id } }).state).toEqual({
      tomb: { id: rec.id },
    });
  });

  it('two sides adding the same id merge with an empty base: nothing lost, flagged', () => {
    const id = newId();
    const a = { ...baseRecord(id), title: 'from A', body: 'A wrote this\n', tags: ['a'] };
    const b = { ...baseRecord(id), title: 'from B', body: 'B wrote that\n', tags: ['b'] };
    const r = mergeEntry(undefined, { rec: a }, { rec: b }, { ours: 'c1', theirs: 'c2' });
    const r2 = mergeEntry(undefined, { rec: b }, { rec: a }, { ours: 'c2', theirs: 'c1' });
    expect(stateText(r.state)).toBe(stateText(r2.state));
    expect(r.state.rec!.tags.sort()).toEqual(['a', 'b']);
    expect(conflictOf(r.state.rec!)?.reasons).toEqual(['body']);
    const bodies = [r.state.rec!.body, parseRecord(r.attic[0].text).body].sort();
    expect(bodies).toEqual(['A wrote this\n', 'B wrote that\n']);
    expect(parseRecord(r.attic[0].text).extra.attic).toMatchObject({ reason: 'body-conflict' });
    expect(['c1', 'c2']).toContain((parseRecord(r.attic[0].text).extra.attic as { from: string }).from);
  });

  it('both sides deleting keeps one tombstone, chosen the same both ways', () => {
    const rec = baseRecord();
    const t1: Tombstone = { id: rec.id, deleted: '2026-01-02T00:00:00Z', clock: 2, by: 'a' };
    const t2: Tombstone = { id: rec.id, deleted: '2026-01-03T00:00:00Z', clock: 2, by: 'b' };
    expect(mergeEntry({ rec }, { tomb: t1 }, { tomb: t2 }).state).toEqual(
      mergeEntry({ rec }, { tomb: t2 }, { tomb: t1 }).state,
    );
  });

  it('an alias given to two records by two sides stays with the older record; the other is flagged', () => {
    const r1 = baseRecord();
    const r2 = baseRecord();
    const base: StoreMaps = {
      records: new Map([
        [r1.id, r1],
        [r2.id, r2],
      ]),
      tombstones: new Map(),
    };
    const sa: StoreMaps = {
      records: new Map([
        [r1.id, { ...r1, alias: 'std/x', clock: 2 }],
        [r2.id, r2],
      ]),
      tombstones: new Map(),
    };
    const sb: StoreMaps = {
      records: new Map([
        [r1.id, r1],
        [r2.id, { ...r2, alias: 'std/x', clock: 2 }],
      ]),
      tombstones: new Map(),
    };
    const m = mergeStores(base, sa, sb);
    expect(m.records.get(r1.id)!.alias).toBe('std/x');
    expect(m.records.get(r2.id)!.alias).toBeUndefined();
    expect(conflictOf(m.records.get(r2.id)!)).toEqual({ reasons: ['alias'], attic: [], alias: 'std/x' });
    expect(m.conflicts).toEqual([r2.id]);
    const m2 = mergeStores(base, sb, sa);
    expect(stateText({ rec: m2.records.get(r2.id) })).toBe(stateText({ rec: m.records.get(r2.id) }));
  });

  it('sets unite with removals respected, in a deterministic order', () => {
    expect(mergeSet(['x', 'y'], ['x', 'y', 'a'], ['y', 'b'])).toEqual(['y', 'a', 'b']);
    expect(mergeSet([], ['a'], ['a'])).toEqual(['a']);
  });

  it('bodies merge line by line; conflicting lines take the winner', () => {
    expect(mergeBody('1\n2\n3\n4\n', '1a\n2\n3\n4\n', '1\n2\n3\n4b\n')).toEqual({
      value: '1a\n2\n3\n4b\n',
      clash: false,
    });
    expect(mergeBody('1\n2\n', 'x\n2\n', 'y\n2\n')).toEqual({ value: 'x\n2\n', clash: true });
  });

  it('keeps both review flags when both sides flagged one record', () => {
    const base = baseRecord();
    const a = {
      ...applyOp(OPS[0], base, 'A'),
      extra: { conflict: { reasons: ['body'], attic: ['attic/a'] } },
    };
    const b = { ...applyOp(OPS[3], base, 'B'), extra: { conflict: { reasons: ['delete'], attic: [] } } };
    const r = mergeEntry({ rec: base }, { rec: a }, { rec: b });
    expect(conflictOf(r.state.rec!)).toEqual({ reasons: ['body', 'delete'], attic: ['attic/a'] });
  });

  it('expires tombstones after the configured number of days', () => {
    const t: Tombstone = { id: 'X', deleted: '2026-01-01T00:00:00Z' };
    expect(expiredTombstone(t, Date.parse('2026-01-05T00:00:00Z'), 3)).toBe(true);
    expect(expiredTombstone(t, Date.parse('2026-01-03T00:00:00Z'), 3)).toBe(false);
    expect(expiredTombstone({ id: 'X' }, Date.parse('2030-01-01'), 3)).toBe(false);
    expect(expiredTombstone(t, Date.parse('2030-01-01'), 0)).toBe(false);
  });
});
