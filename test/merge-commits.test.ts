import { describe, expect, it } from 'vitest';
import { addMemory, removeMemory, updateMemory } from '../src/commands/memory.js';
import { isGitMemError } from '../src/errors.js';
import type { EntryState } from '../src/merge/engine.js';
import {
  collectExpiredTombstones,
  mergeCommits,
  parseTombstone,
  tombstoneExpired,
} from '../src/merge/merge-commits.js';
import { newId } from '../src/model/id.js';
import { newRecord, parseRecord, recordPath, serializeRecord } from '../src/model/record.js';
import { writerLeftovers } from './helpers.js';
import { type Clone, clones, fetchTheirs, treeOf } from './merge-helpers.js';
import { applyOp, checkOutcome, expected, OPS, type Op, type Side } from './merge-ops.js';

/** Applies op i of one side to record i, all in one commit (rm writes a tombstone like git mem rm). */
async function applySide(c: Clone, s: Side, plan: Array<{ id: string; op: Op }>) {
  await c.store.write(async (tx) => {
    for (const { id, op } of plan) {
      const r = await tx.get(id);
      if (op.code === 'rm') {
        tx.removeRecord(id, {
          id,
          deleted: new Date().toISOString(),
          by: s,
          reason: `rm by ${s}`,
          clock: r.clock + 1,
        });
        continue;
      }
      const next = applyOp(op, r, s);
      if (next.alias) next.alias = `${next.alias}-${id.toLowerCase()}`;
      tx.putRecord(next);
    }
    return { message: `ops by ${s}`, value: null };
  });
}

async function stateAt(
  c: Clone,
  commit: string,
  id: string,
  atticPaths: string[],
): Promise<{ state: EntryState; attic: string[] }> {
  const state: EntryState = {};
  const rec = await c.store.readPath(commit, recordPath(id));
  if (rec) state.rec = parseRecord(rec.toString('utf8'));
  const tomb = await c.store.readPath(commit, `tombstones/${id.slice(-2)}/${id}.yaml`);
  if (tomb) state.tomb = parseTombstone(tomb.toString('utf8'), id);
  const attic: string[] = [];
  for (const p of atticPaths.filter((x) => x.startsWith(`attic/${id.slice(-2)}/${id}/`))) {
    attic.push((await c.store.readPath(commit, p))!.toString('utf8'));
  }
  return { state, attic };
}

describe('mergeCommits (two clones of one remote)', () => {
  it('every pair of operations on the same record and on different records, through real git, both ways', async () => {
    const {
      clones: [a, b],
    } = await clones(2);
    const table = expected();
    const same: Array<{ id: string; x: Op; y: Op }> = [];
    const diff: Array<{ id1: string; id2: string; x: Op; y: Op }> = [];
    const base = new Map<string, ReturnType<typeof newRecord>>();
    const mk = () => {
      const r = newRecord({
        id: newId(),
        type: 'decision',
        title: 'base title',
        body: 'line 1\nline 2\nline 3\nline 4\nline 5\n',
        now: '2026-01-01T00:00:00.000Z',
        tags: ['base', 'keep'],
        scope: ['src/**'],
        anchors: [{ path: 'src/base.ts', lines: [1, 5] }],
      });
      base.set(r.id, r);
      return r.id;
    };
    for (const x of OPS) for (const y of OPS) same.push({ id: mk(), x, y });
    // different records: each op of A against each op of B on another record
    for (const [i, x] of OPS.entries()) diff.push({ id1: mk(), id2: mk(), x, y: OPS[(i + 5) % OPS.length] });
    await a.store.write(async (tx) => {
      for (const r of base.values()) tx.putRecord(r);
      return { message: 'base', value: null };
    });
    a.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
    b.git('fetch', '-q', 'origin', '+refs/mem/memory:refs/memory');
    await applySide(a, 'A', [
      ...same.map((p) => ({ id: p.id, op: p.x })),
      ...diff.map((p) => ({ id: p.id1, op: p.x })),
    ]);
    await applySide(b, 'B', [
      ...same.map((p) => ({ id: p.id, op: p.y })),
      ...diff.map((p) => ({ id: p.id2, op: p.y })),
    ]);
    const aTip = (await a.store.tip())!;
    const bTip = (await b.store.tip())!;
    fetchTheirs(a, b.dir);
    fetchTheirs(b, a.dir);
    const mA = await mergeCommits(a.store, aTip, bTip);
    const mB = await mergeCommits(b.store, bTip, aTip);
    expect(treeOf(a, mA.commit!)).toBe(treeOf(b, mB.commit!));
    expect(mA.conflicts).toEqual(mB.conflicts);
    const flagged = [...table.entries()].filter(([, v]) => v === 'C' || v === 'K').length;
    expect(mA.conflicts).toHaveLength(flagged);
    const atticPaths = a.git('ls-tree', '-r', '--name-only', mA.commit!, 'attic').split('\n').filter(Boolean);
    for (const p of same) {
      const got = await stateAt(a, mA.commit!, p.id, atticPaths);
      const identical =
        p.x.code !== 'rm' &&
        p.y.code !== 'rm' &&
        serializeRecord(applyOp(p.x, base.get(p.id)!, 'A')) ===
          serializeRecord(applyOp(p.y, base.get(p.id)!, 'B'));
      checkOutcome(
        table.get(`${p.x.code}/${p.y.code}`),
        p.x,
        p.y,
        base.get(p.id)!,
        got.state,
        got.attic,
        identical,
      );
    }
    for (const p of diff) {
      const r1 = await stateAt(a, mA.commit!, p.id1, atticPaths);
      const r2 = await stateAt(a, mA.commit!, p.id2, atticPaths);
      if (p.x.code === 'rm') expect(r1.state.rec).toBeUndefined();
      else expect(p.x.has(r1.state.rec!, 'A')).toBe(true);
      if (p.y.code === 'rm') expect(r2.state.rec).toBeUndefined();
      else expect(p.y.has(r2.state.rec!, 'B')).toBe(true);
      expect([...r1.attic, ...r2.attic]).toEqual([]);
    }
  });

  it('fast-forwards, merges both ways to the same tree, and moves no ref', async () => {
    const {
      clones: [a, b],
    } = await clones(2);
    const shared = await addMemory(a.store, {
      type: 'decision',
      title: 'Use pnpm',
      body: 'line 1\nline 2\nline 3\n',
      tags: ['build'],
    });
    a.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
    // b is behind: merging a's tip into b's fast-forwards
    const bTip0 = (await b.store.tip())!;
    const aTip0 = fetchTheirs(b);
    const ff = await mergeCommits(b.store, bTip0, aTip0);
    expect(ff).toMatchObject({ commit: aTip0, fastForward: true, conflicts: [] });
    expect(await b.store.tip()).toBe(bTip0); // no ref moved
    expect(await mergeCommits(b.store, aTip0, bTip0)).toMatchObject({ commit: aTip0, fastForward: true });
    expect(await mergeCommits(b.store, null, aTip0)).toMatchObject({ commit: aTip0, fastForward: true });
    expect(await mergeCommits(b.store, aTip0, null)).toMatchObject({ commit: aTip0, fastForward: true });
    expect(await mergeCommits(b.store, aTip0, aTip0)).toMatchObject({ commit: aTip0, fastForward: true });
    b.git('update-ref', 'refs/memory', aTip0);

    // diverge: a edits the title and adds a tag; b edits the body and adds another record
    await updateMemory(a.store, shared.record.id, { title: 'Use pnpm 9', addTags: ['node'] });
    const onlyA = await addMemory(a.store, { type: 'convention', title: 'A only', body: 'a\n' });
    await updateMemory(b.store, shared.record.id, {
      body: 'line 1\nline 2 (b)\nline 3\n',
      removeTags: ['build'],
    });
    const onlyB = await addMemory(b.store, { type: 'convention', title: 'B only', body: 'b\n' });
    const aTip = (await a.store.tip())!;
    const bTip = (await b.store.tip())!;
    const theirsInA = fetchTheirs(a, b.dir);
    const theirsInB = fetchTheirs(b, a.dir);
    expect(theirsInA).toBe(bTip);
    expect(theirsInB).toBe(aTip);

    const mA = await mergeCommits(a.store, aTip, bTip, { now: new Date('2026-01-01T00:00:00Z') });
    const mB = await mergeCommits(b.store, bTip, aTip, { now: new Date('2026-02-01T00:00:00Z') });
    expect(mA.fastForward).toBe(false);
    expect(mA.conflicts).toEqual([]);
    expect(mA.stats).toMatchObject({ added: 1, merged: 1 });
    expect(mB.stats).toMatchObject({ added: 1, merged: 1 });
    expect(treeOf(a, mA.commit!)).toBe(treeOf(b, mB.commit!));
    expect(a.git('rev-list', '--parents', '-n', '1', mA.commit!).trim().split(' ')).toEqual([
      mA.commit,
      aTip,
      bTip,
    ]);
    expect(await a.store.tip()).toBe(aTip);
    expect(writerLeftovers(a)).toEqual([]);

    const rec = await a.store.readRecord(mA.commit, shared.record.id);
    expect(rec.title).toBe('Use pnpm 9');
    expect(rec.body).toBe('line 1\nline 2 (b)\nline 3\n');
    expect(rec.tags).toEqual(['node']);
    expect(rec.clock).toBe(3);
    expect((await a.store.readRecord(mA.commit, onlyA.record.id)).title).toBe('A only');
    expect((await a.store.readRecord(mA.commit, onlyB.record.id)).title).toBe('B only');
  });

  it('stops on a record that does not parse, naming it and its commit, writing nothing', async () => {
    const {
      clones: [a, b],
    } = await clones(2);
    const r = await addMemory(a.store, { type: 'decision', title: 'X', body: 'x\n' });
    await addMemory(b.store, { type: 'decision', title: 'Y', body: 'y\n' });
    // b commits a broken record through plumbing
    const bad = await addMemory(b.store, { type: 'decision', title: 'broken', body: 'z\n' });
    await b.store.write(async (tx) => {
      tx.put(recordPath(bad.record.id), '---\nid: [unclosed\n---\nbody\n');
      return { message: 'break it', value: null };
    });
    const bTip = (await b.store.tip())!;
    const aTip = (await a.store.tip())!;
    fetchTheirs(a, b.dir);
    const before = a.git('for-each-ref').trim();
    const e = await mergeCommits(a.store, aTip, bTip).catch((x) => x);
    expect(isGitMemError(e)).toBe(true);
    expect(e.code).toBe('E_MERGE');
    // the record and the commit that holds it, as data
    expect(e.data).toMatchObject({ problem: 'record', path: recordPath(bad.record.id), commit: bTip });
    expect(a.git('for-each-ref').trim()).toBe(before);
    // the same record on the ours side (the catalog of the tip knows it is bad) stops the merge too
    await b.store.catalog();
    fetchTheirs(b, a.dir);
    const beforeB = b.git('for-each-ref').trim();
    const e2 = await mergeCommits(b.store, bTip, aTip).catch((x) => x);
    expect(e2.code).toBe('E_MERGE');
    expect(e2.data).toMatchObject({ problem: 'record', path: recordPath(bad.record.id), commit: bTip });
    expect(b.git('for-each-ref').trim()).toBe(beforeB);
    void r;
  });

  it('a deletion against a modification keeps the modification and records the attempt', async () => {
    const {
      clones: [a, b],
    } = await clones(2);
    const r = await addMemory(a.store, { type: 'decision', title: 'keep me', body: 'x\n' });
    a.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
    b.git('fetch', '-q', 'origin', '+refs/mem/memory:refs/memory');
    await removeMemory(a.store, r.record.id, 'obsolete');
    await updateMemory(b.store, r.record.id, { title: 'keep me, edited' });
    const aTip = (await a.store.tip())!;
    const bTip = (await b.store.tip())!;
    fetchTheirs(a, b.dir);
    fetchTheirs(b, a.dir);
    const mA = await mergeCommits(a.store, aTip, bTip);
    const mB = await mergeCommits(b.store, bTip, aTip);
    expect(treeOf(a, mA.commit!)).toBe(treeOf(b, mB.commit!));
    const rec = await a.store.readRecord(mA.commit, r.record.id);
    expect(rec.title).toBe('keep me, edited');
    expect(rec.extra.deletion_attempted).toMatchObject({ reason: 'obsolete' });
    expect(a.git('ls-tree', '-r', '--name-only', mA.commit!)).not.toContain('tombstones/');
    expect(mA.conflicts).toEqual([r.record.id]);
  });
});

describe('mergeCommits: histories and tombstones', () => {
  it('merges two histories with no common commit as additions on both sides, the same both ways', async () => {
    const {
      clones: [a, b],
    } = await clones(2);
    // b starts its own history instead of the fetched one
    b.git('update-ref', '-d', 'refs/memory');
    const ra = await addMemory(a.store, { type: 'decision', title: 'from a', body: 'a\n' });
    const rb = await addMemory(b.store, { type: 'decision', title: 'from b', body: 'b\n' });
    const aTip = (await a.store.tip())!;
    const bTip = (await b.store.tip())!;
    fetchTheirs(a, b.dir);
    fetchTheirs(b, a.dir);
    expect(() => a.git('merge-base', aTip, bTip)).toThrow(); // no common commit
    const mA = await mergeCommits(a.store, aTip, bTip);
    const mB = await mergeCommits(b.store, bTip, aTip);
    expect(treeOf(a, mA.commit!)).toBe(treeOf(b, mB.commit!));
    expect((await a.store.catalogAt(mA.commit)).size).toBe(2);
    expect(mA.stats.added).toBe(1);
    void ra;
    void rb;
  });

  it('collects tombstones older than tombstone-ttl-days (shared config), by the later commit date', async () => {
    const {
      clones: [a, b],
    } = await clones(2);
    const old = await addMemory(a.store, { type: 'decision', title: 'old', body: 'o\n' });
    const fresh = await addMemory(a.store, { type: 'decision', title: 'fresh', body: 'f\n' });
    await a.store.write(async (tx) => {
      tx.put('config.yaml', 'tombstone-ttl-days: 5\n');
      return { message: 'config', value: null };
    });
    a.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
    b.git('fetch', '-q', 'origin', '+refs/mem/memory:refs/memory');
    await a.store.write(async (tx) => {
      tx.removeRecord(old.record.id, {
        id: old.record.id,
        deleted: new Date(Date.now() - 10 * 864e5).toISOString(),
        clock: 2,
      });
      tx.removeRecord(fresh.record.id, { id: fresh.record.id, deleted: new Date().toISOString(), clock: 2 });
      return { message: 'rm both', value: null };
    });
    await addMemory(b.store, { type: 'decision', title: 'b', body: 'b\n' });
    const aTip = (await a.store.tip())!;
    const bTip = (await b.store.tip())!;
    fetchTheirs(a, b.dir);
    fetchTheirs(b, a.dir);
    const mA = await mergeCommits(a.store, aTip, bTip);
    const mB = await mergeCommits(b.store, bTip, aTip);
    expect(treeOf(a, mA.commit!)).toBe(treeOf(b, mB.commit!));
    const files = a.git('ls-tree', '-r', '--name-only', mA.commit!);
    expect(files).not.toContain(`${old.record.id}.yaml`);
    expect(files).toContain(`${fresh.record.id}.yaml`);
    expect(files).not.toContain(recordPath(old.record.id));
  });
});

describe('tombstone collection without a merge', () => {
  it('collectExpiredTombstones drops only tombstones past the TTL, in one commit', async () => {
    const {
      clones: [a],
    } = await clones(1);
    const x = await addMemory(a.store, { type: 'decision', title: 'x', body: 'x\n' });
    const y = await addMemory(a.store, { type: 'decision', title: 'y', body: 'y\n' });
    await removeMemory(a.store, x.record.id);
    await removeMemory(a.store, y.record.id);
    const later = Date.now() + 91 * 864e5;
    const tip = await a.store.tip();
    expect(await collectExpiredTombstones(a.store, Date.now())).toEqual({ ids: [], commit: tip });
    const r = await collectExpiredTombstones(a.store, later);
    expect(r.ids.sort()).toEqual([x.record.id, y.record.id].sort());
    expect(a.git('ls-tree', '-r', '--name-only', 'refs/memory')).not.toContain('tombstones/');
    expect(a.git('rev-list', '--count', `${tip}..refs/memory`).trim()).toBe('1');
  });

  it('reads the deletion date quoted, unquoted or through YAML', () => {
    const now = Date.parse('2026-06-01T00:00:00Z');
    expect(tombstoneExpired('id: X\ndeleted: 2026-01-01T00:00:00.000Z\n', 'X', now, 90)).toBe(true);
    expect(tombstoneExpired('deleted: "2026-05-30T00:00:00Z"\n', 'X', now, 90)).toBe(false);
    expect(tombstoneExpired('{deleted: 2026-01-01}\n', 'X', now, 90)).toBe(true);
    expect(tombstoneExpired('not: [valid\n', 'X', now, 90)).toBe(false);
  });
});

describe('mergeCommits: criss-cross merges', () => {
  it('merges against a virtual base: edits both sides already share are not conflicts', async () => {
    const {
      clones: [a, b],
    } = await clones(2);
    const r = await addMemory(a.store, { type: 'decision', title: 't0', body: 'l1\nl2\nl3\n', tags: ['x'] });
    a.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
    b.git('fetch', '-q', 'origin', '+refs/mem/memory:refs/memory');
    const id = r.record.id;
    await updateMemory(a.store, id, { title: 't1' });
    await updateMemory(b.store, id, { body: 'l1\nl2 b\nl3\n' });
    const a1 = (await a.store.tip())!;
    const b1 = (await b.store.tip())!;
    fetchTheirs(a, b.dir);
    fetchTheirs(b, a.dir);
    // both merge at once: two merge commits with the same tree, neither containing the other
    const mA = await mergeCommits(a.store, a1, b1);
    const mB = await mergeCommits(b.store, b1, a1);
    a.git('update-ref', 'refs/memory', mA.commit!);
    b.git('update-ref', 'refs/memory', mB.commit!);
    // and go on editing the same record
    await updateMemory(a.store, id, { title: 't2' });
    await updateMemory(b.store, id, { body: 'l1\nl2 b\nl3 b\n', addTags: ['y'] });
    const a2 = (await a.store.tip())!;
    const b2 = (await b.store.tip())!;
    fetchTheirs(a, b.dir);
    fetchTheirs(b, a.dir);
    expect(a.git('merge-base', '--all', a2, b2).trim().split('\n')).toHaveLength(2);
    const m2A = await mergeCommits(a.store, a2, b2);
    const m2B = await mergeCommits(b.store, b2, a2);
    expect(treeOf(a, m2A.commit!)).toBe(treeOf(b, m2B.commit!));
    const rec = await a.store.readRecord(m2A.commit, id);
    expect(rec).toMatchObject({ title: 't2', body: 'l1\nl2 b\nl3 b\n', tags: ['x', 'y'] });
    expect(rec.extra.conflict).toBeUndefined();
    expect(a.git('ls-tree', '-r', '--name-only', m2A.commit!)).not.toContain('attic/');
    expect(m2A.conflicts).toEqual([]);
  });
});
