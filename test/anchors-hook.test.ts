import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, sh } from './helpers.js';

// End to end: `git mem hooks install`, then a real `git commit` runs the chained
// post-commit hook through bin/git-mem.js (built by `npm run build`).
const SRC = [
  'def alpha(x):',
  '    y = x * 2',
  '    return y + 1',
  '',
  '',
  'def beta():',
  "    return 'b'",
  '',
].join('\n');

describe('post-commit hook', () => {
  it('records verdicts for the files a commit touched and writes a note on the commit', async () => {
    const r = makeRepo();
    r.write('m.py', SRC);
    r.write('other.txt', 'x\n');
    r.commitAll('init');
    await r.memJson(['init']);
    const { id } = await r.memJson([
      'add',
      '--title',
      'alpha doubles',
      '--content',
      'x',
      '--anchor',
      'm.py:1-3',
    ]);
    const inst = await r.memJson(['hooks', 'install']);
    expect(inst[0]).toMatchObject({ hook: 'post-commit', action: 'installed' });
    // a commit that does not touch anchored files: no note, no memory commit
    const tip0 = r.git('rev-parse', 'refs/memory').trim();
    r.write('other.txt', 'y\n');
    r.commitAll('unrelated');
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip0);
    expect(() => r.git('notes', '--ref=memory', 'show', 'HEAD')).toThrow();
    // a commit that edits the anchored lines
    r.write('m.py', SRC.replace('x * 2', 'x * 3'));
    sh('git', ['add', '-A'], r.dir, r.env);
    // the hook's program starts without NODE_EXTRA_CA_CERTS (it opens no connection): node would
    // otherwise load that CA bundle first on every commit, here warning that it cannot
    const ca = { ...r.env, NODE_EXTRA_CA_CERTS: join(r.dir, 'no-such-ca.pem') };
    const out = sh('sh', ['-c', 'git commit -q -m "edit alpha" 2>&1'], r.dir, ca);
    // the one line the hook prints: what went stale
    expect(out).toBe(
      'git-mem: 1 memory went stale with this commit (git mem stale; git log --notes=memory)\n',
    );
    const note = r
      .git('notes', '--ref=memory', 'show', 'HEAD')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(note).toEqual([
      expect.objectContaining({
        id,
        verdict: 'changed',
        reason: expect.stringMatching(/anchored lines edited/),
      }),
    ]);
    expect(r.git('log', '-1', '--notes=memory', '--format=%N')).toContain('"verdict":"changed"');
    const shown = await r.memJson(['show', id]);
    expect(shown.status).toBe('stale');
    expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(/^mem: post-commit/);
    // a later commit touching the file elsewhere: the memory is still stale, but that is not news
    const tip1 = r.git('rev-parse', 'refs/memory').trim();
    r.write('m.py', `${SRC.replace('x * 2', 'x * 3')}\n# appended\n`);
    r.commitAll('append');
    expect(() => r.git('notes', '--ref=memory', 'show', 'HEAD')).toThrow();
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip1);
  });

  it('skips past its time budget: one line naming git mem check, exit 0, the commit made, nothing written', async () => {
    const r = makeRepo();
    const lines = (v: number) => Array.from({ length: 20 }, (_, i) => `const v${i} = ${v};`).join('\n');
    r.write('many.ts', `${lines(1)}\n`);
    r.commitAll('init');
    await r.memJson(['init']);
    for (let i = 0; i < 20; i++)
      await r.memJson(['add', '--title', `v${i} is one`, '--content', 'x', '--anchor', `many.ts:${i + 1}`]);
    await r.memJson(['hooks', 'install']);
    const mem = r.git('rev-parse', 'refs/memory').trim();
    r.git('config', 'mem.post-commit-budget-ms', '1');
    r.write('many.ts', `${lines(2)}\n`);
    sh('git', ['add', '-A'], r.dir, r.env);
    const out = sh('sh', ['-c', 'git commit -q -m "edit all" 2>&1; echo "exit=$?"'], r.dir, r.env);
    const [line, exit] = out.trim().split('\n');
    expect(exit).toBe('exit=0');
    expect(line).toMatch(
      /^git-mem: post-commit check skipped: 20 anchors to judge would take over its 1 ms budget \(post-commit-budget-ms\); run git mem check \(logged in .*post-commit\.log\)$/,
    );
    expect(out.trim().split('\n')).toHaveLength(2);
    expect(r.git('log', '-1', '--format=%s').trim()).toBe('edit all');
    // nothing partial: neither the memory commit nor the note
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(mem);
    expect(r.git('for-each-ref', 'refs/notes/')).toBe('');
    r.git('fsck', '--no-dangling', '--connectivity-only');
    const log = readFileSync(join(r.dir, '.git', 'mem', 'logs', 'post-commit.log'), 'utf8');
    expect(log).toMatch(
      /post-commit: skipped: over its 1 ms budget after \d+ ms \(\d+ of 20 anchors judged\)/,
    );
    // the work skipped was real: git mem check records the 20 verdicts
    const check = await r.memJson(['check']);
    expect(check.changes.filter((c: { to: string }) => c.to === 'stale')).toHaveLength(20);
    // with room in its budget the next commit is checked as usual: no skip line
    r.git('config', 'mem.post-commit-budget-ms', '600000');
    r.write('many.ts', `${lines(3)}\n`);
    sh('git', ['add', '-A'], r.dir, r.env);
    const again = sh('sh', ['-c', 'git commit -q -m "edit again" 2>&1; echo "exit=$?"'], r.dir, r.env);
    expect(again).toBe('exit=0\n');
  });

  it('never blocks a commit: a broken store logs the error and prints one warning', async () => {
    const r = makeRepo();
    r.write('a.txt', 'a\n');
    r.commitAll('init');
    await r.memJson(['hooks', 'install']);
    const blob = sh('git', ['hash-object', '-w', '--stdin'], r.dir, r.env, 'junk\n').trim();
    r.git('update-ref', 'refs/memory', blob);
    r.write('a.txt', 'b\n');
    sh('git', ['add', '-A'], r.dir, r.env);
    const res = sh('sh', ['-c', 'git commit -q -m change 2>&1; echo "exit=$?"'], r.dir, r.env);
    expect(res).toMatch(/exit=0/);
    expect(res).toMatch(
      /git-mem: warning: post-commit staleness check failed: refs\/memory does not point at a commit/,
    );
    expect(res.trim().split('\n')).toHaveLength(2);
    expect(r.git('log', '-1', '--format=%s').trim()).toBe('change');
    const log = join(r.dir, '.git', 'mem', 'logs', 'post-commit.log');
    expect(existsSync(log)).toBe(true);
    expect(readFileSync(log, 'utf8')).toMatch(/does not point at a commit/);
  });
});

describe('post-commit hook with core.hooksPath and an existing hook', () => {
  it('chains the existing hook, still notes the commit, and uninstall restores the original', async () => {
    const r = makeRepo();
    r.write('m.py', SRC);
    r.commitAll('init');
    await r.memJson(['init']);
    const { id } = await r.memJson(['add', '--title', 'beta', '--content', 'x', '--symbol', 'm.py#beta']);
    r.git('config', 'core.hooksPath', '.githooks');
    const mine = '#!/bin/sh\necho ran >> "$(git rev-parse --show-toplevel)/.hook-ran"\n';
    r.write('.githooks/post-commit', mine);
    sh('chmod', ['+x', '.githooks/post-commit'], r.dir, r.env);
    const inst = await r.memJson(['hooks', 'install']);
    expect(inst[0]).toMatchObject({ action: 'chained', path: join(r.dir, '.githooks', 'post-commit') });
    r.write('m.py', SRC.replace('def beta', 'def beta_renamed'));
    r.commitAll('rename beta');
    expect(readFileSync(join(r.dir, '.hook-ran'), 'utf8')).toBe('ran\n');
    const note = JSON.parse(r.git('notes', '--ref=memory', 'show', 'HEAD').trim());
    expect(note).toMatchObject({
      id,
      verdict: 'symbol_renamed',
      reason: 'symbol beta renamed to beta_renamed',
    });
    const un = await r.memJson(['hooks', 'uninstall']);
    expect(un[0]).toMatchObject({ action: 'restored' });
    expect(readFileSync(join(r.dir, '.githooks', 'post-commit'), 'utf8')).toBe(mine);
  });
});
