import { describe, expect, it } from 'vitest';
import { makeRepo } from './helpers.js';

describe('git mem basics', () => {
  it('adds, shows, lists and removes a memory in an empty repository', async () => {
    const r = makeRepo();
    const init = await r.memJson(['init']);
    expect(init.created).toBe(true);
    const again = await r.memJson(['init']);
    expect(again.created).toBe(false);
    const { id } = await r.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'Use pnpm',
      '--content',
      'We use pnpm.',
      '--tags',
      'build,deps',
    ]);
    expect(id).toMatch(/^[0-9A-Z]{26}$/);
    const shown = await r.memJson(['show', id.slice(0, 12).toLowerCase()]);
    expect(shown).toMatchObject({
      id,
      title: 'Use pnpm',
      tags: ['build', 'deps'],
      type: 'decision',
      status: 'active',
      body: 'We use pnpm.\n',
    });
    const listed = await r.memJson(['list']);
    expect(listed.map((x: { id: string }) => x.id)).toEqual([id]);
    expect(r.git('log', '--format=%s', 'refs/memory').split('\n')[0]).toBe(
      `mem: add ${id.slice(0, 12)} "Use pnpm"`,
    );
    await r.memJson(['rm', id]);
    expect(await r.memJson(['list'])).toEqual([]);
    expect(r.git('ls-tree', '-r', '--name-only', 'refs/memory')).toContain(
      `tombstones/${id.slice(-2)}/${id}.yaml`,
    );
  });
});
