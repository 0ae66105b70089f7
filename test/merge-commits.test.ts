import { describe, expect, it } from 'vitest';
import { addMemory, removeMemory, updateMemory } from '../src/commands/memory.js';
import { isGitMemError } from '../src/errors.js';
import { mergeCommits } from '../src/merge/merge-commits.js';
import { recordPath } from '../src/model/record.js';
import { clones, fetchTheirs, treeOf } from './merge-helpers.js';

describe('mergeCommits (two clones of one remote)', () => {
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
    expect(a.git('for-each-ref', 'refs/mem-tmp').trim()).toBe('');

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
    expect(e.message).toContain(recordPath(bad.record.id));
    expect(e.message).toContain(bTip.slice(0, 12));
    expect(a.git('for-each-ref').trim()).toBe(before);
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
