/**
 * A clone is told when a merge did not keep its own change (issue #30 item 4):
 * the sync that brings the merge in names the record and `git mem conflicts`,
 * and `list` and `show` mark the record until `git mem resolve` clears it.
 * Two real clones through a bare remote, the CLI in-process.
 */
import { describe, expect, it } from 'vitest';
import type { TestRepo } from './helpers.js';
import { bareRemote, clone, tipOf } from './sync-helpers.js';

/** A and B share one memory through a bare remote. */
async function shared(body = 'deploy on friday\nrollback by script\n') {
  const remote = bareRemote();
  const a = clone(remote.url);
  const b = clone(remote.url);
  const { id } = await a.memJson(['add', '--type', 'decision', '--title', 'Deploys', '--content', body]);
  await a.memJson(['sync']);
  expect((await b.memJson(['sync'])).action).toBe('created');
  return { a, b, id: id as string };
}

const listed = async (r: TestRepo, id: string) =>
  (await r.memJson<Array<{ id: string; conflict?: boolean }>>(['list'])).find((x) => x.id === id)!;

/** The record is marked in list and show (human and --json) until resolved, then not. */
async function markedUntilResolved(r: TestRepo, id: string) {
  expect((await listed(r, id)).conflict).toBe(true);
  expect((await r.mem(['list'])).stdout).toMatch(new RegExp(`${id.slice(0, 8)}\\w*\\s.*⚑ conflict`));
  expect((await r.memJson(['show', id])).conflict).toBe(true);
  expect((await r.mem(['show', id])).stdout).toMatch(/^conflict: +⚑ conflict/m);
  await r.memJson(['resolve', id]);
  expect('conflict' in (await listed(r, id))).toBe(false);
  expect((await r.mem(['list'])).stdout).not.toContain('⚑');
  expect('conflict' in (await r.memJson(['show', id]))).toBe(false);
  expect((await r.mem(['show', id])).stdout).not.toMatch(/^conflict:/m);
}

describe('a clone whose change a merge did not keep is told', () => {
  it('names the record whose edit went to the attic on the fast-forward that brings the merge', async () => {
    const { a, b, id } = await shared();
    await a.memJson(['update', id, '--content', 'deploy on monday\nrollback by script\n']);
    // B edits the same line twice: its later clock wins the clash, A's version goes to the attic
    await b.memJson(['update', id, '--content', 'deploy on sunday\nrollback by script\n']);
    await b.memJson(['update', id, '--content', 'deploy on tuesday\nrollback by script\n']);
    expect((await a.memJson(['sync'])).action).toBe('ahead');
    const sb = await b.memJson(['sync']);
    expect(sb).toMatchObject({ action: 'merged', conflicts: [id] });
    // B's own edit won: B lost nothing
    expect(sb.flagged).toEqual([]);
    const aBefore = tipOf(a);
    const sa = await a.mem(['sync']);
    expect(sa.code).toBe(0);
    expect(sa.stdout).toMatch(/^Fast-forwarded/);
    expect(sa.stdout).toContain(`${id.slice(0, 12)}  Deploys: your edit was kept in the attic`);
    expect(sa.stdout).toContain('git mem conflicts');
    // the attic entry it names holds A's version
    const conflicts = await a.memJson(['conflicts']);
    expect(conflicts).toHaveLength(1);
    const hash = conflicts[0].attic[0].hash;
    expect(conflicts[0].attic[0].from).toBe(aBefore);
    // the same in --json, on a clone one sync behind (A again, rewound)
    a.git('update-ref', 'refs/memory', aBefore!);
    const json = await a.memJson(['pull']);
    expect(json.action).toBe('fast-forward');
    expect(json.flagged).toEqual([{ id, title: 'Deploys', reason: 'attic', attic: [hash] }]);
    // a sync with nothing new says nothing more
    expect((await a.memJson(['sync'])).flagged).toEqual([]);
    await markedUntilResolved(a, id);
  });

  it('names the record when this clone builds the merge that puts its own edit in the attic', async () => {
    const { a, b, id } = await shared();
    await a.memJson(['update', id, '--content', 'deploy on sunday\nrollback by script\n']);
    await a.memJson(['update', id, '--content', 'deploy on monday\nrollback by script\n']);
    await b.memJson(['update', id, '--content', 'deploy on tuesday\nrollback by script\n']);
    await a.memJson(['sync']);
    const sb = await b.memJson(['sync']);
    expect(sb.action).toBe('merged');
    expect(sb.flagged).toMatchObject([{ id, reason: 'attic' }]);
    // A's edit won: A is not told anything lost
    const sa = await a.memJson(['sync']);
    expect(sa.action).toBe('fast-forward');
    expect(sa.flagged).toEqual([]);
    await markedUntilResolved(b, id);
  });

  it('names the record whose title edit lost to a later one (kept in the attic, not flagged)', async () => {
    const { a, b, id } = await shared();
    await a.memJson(['update', id, '--title', 'Deploys on Monday']);
    // B's title is the later edit (its clock is higher): A's goes to the attic
    await b.memJson(['update', id, '--title', 'Deploys on Sunday']);
    await b.memJson(['update', id, '--title', 'Deploys on Tuesday']);
    await a.memJson(['sync']);
    const sb = await b.memJson(['sync']);
    expect(sb).toMatchObject({ action: 'merged', conflicts: [], flagged: [] });
    const aBefore = tipOf(a)!;
    const sa = await a.mem(['sync']);
    expect(sa.stdout).toMatch(/^Fast-forwarded/);
    expect(sa.stdout).toContain(
      `${id.slice(0, 12)}  Deploys on Tuesday: your title edit lost to a later one`,
    );
    const path = sa.stdout.match(/refs\/memory:(attic\/\S+\.md)/)![1];
    expect(a.git('show', `refs/memory:${path}`)).toContain('title: Deploys on Monday');
    // not flagged (the later clock decided): nothing to resolve, no mark
    expect(sa.stdout).not.toContain('git mem conflicts');
    expect('conflict' in (await listed(a, id))).toBe(false);
    a.git('update-ref', 'refs/memory', aBefore);
    const json = await a.memJson(['pull']);
    expect(json.flagged).toEqual([
      {
        id,
        title: 'Deploys on Tuesday',
        reason: 'fields',
        fields: ['title'],
        attic: [path.split('/')[3].slice(0, 16)],
      },
    ]);
  });

  it('names the record whose deletion lost to an edit (it came back)', async () => {
    const { a, b, id } = await shared();
    await b.memJson(['rm', id, '--reason', 'obsolete']);
    await a.memJson(['update', id, '--content', 'deploy on monday\nrollback by script\n']);
    await b.memJson(['sync']);
    const sa = await a.memJson(['sync']);
    expect(sa).toMatchObject({ action: 'merged', conflicts: [id], flagged: [] });
    const sb = await b.mem(['sync']);
    expect(sb.code).toBe(0);
    expect(sb.stdout).toMatch(/^Fast-forwarded/);
    expect(sb.stdout).toContain(`${id.slice(0, 12)}  Deploys: your deletion lost to an edit`);
    expect(sb.stdout).toContain('git mem conflicts');
    const list = await b.memJson(['conflicts']);
    expect(list).toMatchObject([{ id, reasons: ['delete'] }]);
    await markedUntilResolved(b, id);
  });
});
