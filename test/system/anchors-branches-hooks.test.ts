/**
 * The hooks git runs: `git mem hooks install` writes post-commit, post-merge
 * and post-rewrite, and git runs them (the launched binary, through PATH) at
 * a commit, a merge and a `git pull --rebase`. What each hook's operation
 * does on every kind of branch is test/ops/anchors-branches.test.ts, run
 * in-process; here only that git runs them, end to end. The hooks run the
 * built binary (node scripts/build.mjs first).
 */
import { describe, expect, it } from 'vitest';
import { makeRepo, type TestRepo } from '../helpers.js';
import { notesOf as notes, FN_SRC as SRC } from '../support/anchors.js';
import { bareRemote } from '../sync-helpers.js';

/** main with f.js, a memory anchored to f.js:5-10. */
async function anchoredRepo(r: TestRepo = makeRepo()): Promise<{ r: TestRepo; id: string }> {
  r.write('f.js', SRC);
  r.write('other.txt', 'x\n');
  r.commitAll('init');
  await r.memJson(['init']);
  const { id } = await r.memJson([
    'add',
    '--title',
    'fn5 to fn10',
    '--content',
    'x',
    '--anchor',
    'f.js:5-10',
  ]);
  return { r, id };
}

const memTip = (r: TestRepo) => r.git('rev-parse', 'refs/memory').trim();

describe('the hooks git runs', () => {
  it('post-commit notes a feature commit and leaves the record; post-merge records the merge into main once', async () => {
    const { r, id } = await anchoredRepo();
    const inst = await r.memJson(['hooks', 'install']);
    expect(inst.map((h: { hook: string }) => h.hook)).toEqual(['post-commit', 'post-merge', 'post-rewrite']);
    const tip0 = memTip(r);
    r.git('checkout', '-q', '-b', 'feature');
    r.git('mv', 'f.js', 'g.js');
    r.commitAll('rename on feature');
    expect(memTip(r)).toBe(tip0);
    expect(notes(r)).toEqual([
      expect.objectContaining({ id, verdict: 'renamed', to: { path: 'g.js', lines: [5, 10] } }),
    ]);
    r.git('checkout', '-q', 'main');
    r.git('merge', '-q', '--no-ff', '-m', 'merge feature', 'feature');
    expect(r.git('rev-list', '--count', `${tip0}..refs/memory`).trim()).toBe('1');
    expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(
      /^mem: post-merge \w{12}: 1 record updated/,
    );
    expect((await r.memJson(['show', id])).anchors[0].current).toMatchObject({
      path: 'g.js',
      lines: [5, 10],
    });
  });

  it('the post-rewrite hook records what a git pull --rebase brought onto main', async () => {
    const remote = bareRemote();
    const { r: a, id } = await anchoredRepo();
    a.git('remote', 'add', 'origin', remote.url);
    a.git('push', '-q', 'origin', 'main');
    await a.memJson(['sync']);
    const b = makeRepo();
    b.git('remote', 'add', 'origin', remote.url);
    b.git('fetch', '-q', 'origin');
    b.git('checkout', '-q', '-B', 'main', 'origin/main');
    b.git('remote', 'set-head', 'origin', 'main');
    await b.memJson(['sync']);
    const hooks = await b.memJson(['hooks', 'install']);
    expect(JSON.stringify(hooks)).toContain('post-rewrite');
    // upstream renames the anchored file; the teammate has a commit of their own, so the pull rebases it
    a.git('mv', 'f.js', 'g.js');
    a.commitAll('rename upstream');
    a.git('push', '-q', 'origin', 'main');
    b.write('other.txt', 'y\n');
    b.commitAll('local work');
    const tip0 = memTip(b);
    b.git('-c', 'pull.rebase=true', 'pull', '-q', 'origin', 'main');
    expect(memTip(b)).not.toBe(tip0);
    expect(b.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(/^mem: post-rewrite /);
    const shown = await b.memJson(['show', id]);
    expect(shown.anchors[0].current).toMatchObject({ path: 'g.js', lines: [5, 10] });
  });
});
