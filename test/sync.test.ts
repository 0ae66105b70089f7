import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMemory } from '../src/commands/memory.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { newId } from '../src/model/id.js';
import { BIN, makeRepo, ROOT, runBinAsync, sh } from './helpers.js';
import { allText, bareRemote, clone, tipOf, treeOf } from './sync-helpers.js';

const stores = new Map<string, Store>();
afterAll(() => {
  for (const s of stores.values()) s.close();
});
/** Adds through the core library: the adds are set-up here, the CLI under test is sync. */
async function add(r: ReturnType<typeof clone>, title: string): Promise<string> {
  let s = stores.get(r.dir);
  if (!s) {
    s = new Store(await openRepo(r.dir, r.env));
    stores.set(r.dir, s);
  }
  return (await addMemory(s, { type: 'decision', title, body: `${title} body\n` })).record.id;
}

describe('git mem sync between clones', () => {
  it('shares, merges and converges two clones through a bare remote', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    const idA = await add(a, 'Use pnpm');
    const s1 = await a.memJson(['sync']);
    expect(s1).toMatchObject({ remote: 'origin', action: 'empty', pushed: true, attempts: 1 });
    // the remote holds it at refs/mem/memory (servers refuse one-level refs/memory)
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(a));
    expect(tipOf(a, 'refs/mem-remotes/origin/memory')).toBe(tipOf(a));
    const s2 = await b.memJson(['sync']);
    expect(s2).toMatchObject({ action: 'created', pushed: false });
    expect(tipOf(b)).toBe(tipOf(a));
    // both sides change: different records on each side, then a sync each way
    await a.memJson(['update', idA, '--add-tag', 'build']);
    const idB = await add(b, 'Tabs, not spaces');
    expect((await b.memJson(['sync'])).action).toBe('ahead');
    const s3 = await a.memJson(['sync']);
    expect(s3).toMatchObject({ action: 'merged', pushed: true });
    expect(Object.keys(s3.timings)).toEqual(['fetch', 'merge', 'push']);
    const merge = tipOf(a)!;
    expect(a.git('rev-list', '--parents', '-n', '1', merge).trim().split(' ')).toHaveLength(3);
    const s4 = await b.memJson(['sync']);
    expect(s4).toMatchObject({ action: 'fast-forward', pushed: false });
    expect(tipOf(b)).toBe(merge);
    expect(treeOf(b)).toBe(treeOf(a));
    const listed = (await b.memJson(['list'])).map((x: { id: string }) => x.id).sort();
    expect(listed).toEqual([idA, idB].sort());
    expect((await b.memJson(['show', idA])).tags).toContain('build');
    // nothing shows up as a branch, and a plain push is unchanged
    expect(a.git('branch', '-r')).not.toMatch(/mem/);
    expect(a.git('config', '--get-regexp', '^remote\\.').includes('.push')).toBe(false);
    // an in-sync sync is a no-op
    expect(await a.memJson(['sync'])).toMatchObject({ action: 'up-to-date', pushed: false });
  });

  it('treats a remote without memory as an empty store, and names a missing remote', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    expect(await a.memJson(['pull'])).toMatchObject({ action: 'empty', remoteTip: null });
    expect(await a.memJson(['sync'])).toMatchObject({ action: 'empty', pushed: false });
    expect(tipOf(a)).toBeNull();
    const r = await a.mem(['sync', 'nope']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no remote named "nope" \(known remotes: origin\)/);
    const lonely = makeRepo({ commit: true });
    const r2 = await lonely.mem(['sync']);
    expect(r2.stderr).toMatch(/no remote named "origin".*git remote add origin URL/);
  });

  it('pull and push do the halves; a rejected push says to sync', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    await add(a, 'first');
    expect(await a.memJson(['push'])).toMatchObject({ pushed: true });
    expect(await a.memJson(['push'])).toMatchObject({ pushed: false });
    const before = remote.git('rev-parse', 'refs/mem/memory').trim();
    expect(await b.memJson(['pull'])).toMatchObject({ action: 'created' });
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(before);
    await add(a, 'second from a');
    await add(b, 'second from b');
    expect((await a.memJson(['push'])).pushed).toBe(true);
    const bTip = tipOf(b);
    const rej = await b.mem(['push']);
    expect(rej.code).toBe(4);
    expect(rej.stderr).toMatch(/origin has memory this repository does not.*run git mem sync origin/);
    expect(tipOf(b)).toBe(bTip);
    const pulled = await b.memJson(['pull']);
    expect(pulled.action).toBe('merged');
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(a));
    expect((await b.memJson(['push'])).pushed).toBe(true);
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(b));
  });

  it('two syncs at once in one repository both succeed and lose nothing', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    const idB = await add(b, 'remote side');
    await b.memJson(['sync']);
    const idA = await add(a, 'local side');
    const [r1, r2] = await Promise.all([a.mem(['sync', '--json']), a.mem(['sync', '--json'])]);
    expect([r1.code, r2.code]).toEqual([0, 0]);
    await b.memJson(['sync']);
    expect(tipOf(b)).toBe(tipOf(a));
    expect((await b.memJson(['list'])).map((x: { id: string }) => x.id).sort()).toEqual([idA, idB].sort());
  });

  it('syncs the personal global store with --global', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    expect((await a.mem(['add', '--global', '--title', 'my habit', '--content', 'x'])).code).toBe(0);
    const globalDir = join(a.env.GIT_MEM_HOME!, 'store.git');
    sh('git', ['--git-dir', globalDir, 'remote', 'add', 'origin', remote.url], a.dir, a.env);
    expect(await a.memJson(['sync', '--global'])).toMatchObject({ action: 'empty', pushed: true });
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(
      sh('git', ['--git-dir', globalDir, 'rev-parse', 'refs/memory'], a.dir, a.env).trim(),
    );
    expect(tipOf(a)).toBeNull();
  });

  it('uses the branch upstream remote by default', async () => {
    const r1 = bareRemote();
    const r2 = bareRemote();
    const a = clone(r1.url);
    a.git('remote', 'add', 'upstream', r2.url);
    a.git('push', '-q', 'upstream', 'HEAD:refs/heads/main');
    a.git('branch', '-q', '--set-upstream-to=upstream/main');
    await add(a, 'goes upstream');
    expect(await a.memJson(['sync'])).toMatchObject({ remote: 'upstream', pushed: true });
    expect(r2.git('for-each-ref', 'refs/mem')).toMatch(/refs\/mem\/memory/);
    expect(r1.git('for-each-ref', 'refs/mem')).toBe('');
  });

  it('remote setup makes a plain git fetch bring memory and notes, without breaking it before', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    const set = await b.memJson(['remote', 'setup']);
    expect(set.added).toHaveLength(2);
    expect((await b.memJson(['remote', 'setup'])).added).toEqual([]);
    expect(b.git('config', '--get-all', 'remote.origin.fetch')).toContain(
      '+refs/mem/*:refs/mem-remotes/origin/*',
    );
    expect(() => b.git('config', '--get', 'remote.origin.push')).toThrow();
    // the remote has no memory yet: a plain fetch must still work
    b.git('fetch', '-q', 'origin');
    await add(a, 'shared');
    a.git('notes', '--ref=memory', 'add', '-m', '{"n":1}', 'HEAD');
    await a.memJson(['sync']);
    b.git('fetch', '-q', 'origin');
    expect(tipOf(b, 'refs/mem-remotes/origin/memory')).toBe(tipOf(a));
    expect(tipOf(b, 'refs/notes/mem-remotes/origin/memory')).toBe(tipOf(a, 'refs/notes/memory'));
    expect(b.git('branch', '-r')).not.toMatch(/mem/);
    const status = await b.memJson(['remote', 'status']);
    expect(status).toMatchObject({ setUp: true, tracking: { memory: tipOf(a) } });
    expect((await b.memJson(['remote', 'remove'])).removed).toHaveLength(2);
    expect(b.git('config', '--get-all', 'remote.origin.fetch').trim()).toBe(
      '+refs/heads/*:refs/remotes/origin/*',
    );
  });

  it('merges notes line by line (cat_sort_uniq) and pushes them atomically with the memory', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    // same code commit in both clones
    a.git('push', '-q', 'origin', 'HEAD:refs/heads/main');
    b.git('fetch', '-q', 'origin', 'main');
    const c = a.git('rev-parse', 'HEAD').trim();
    b.git('update-ref', 'refs/heads/shared', c);
    await add(a, 'a');
    await add(b, 'b');
    // note lines as the post-commit hook writes them (sync refuses notes of any other shape)
    const na = JSON.stringify({ id: newId(), verdict: 'changed', reason: 'from a' });
    const nb = JSON.stringify({ id: newId(), verdict: 'changed', reason: 'from b' });
    a.git('notes', '--ref=memory', 'add', '-m', na, c);
    await a.memJson(['sync']);
    b.git('notes', '--ref=memory', 'add', '-m', nb, c);
    const s = await b.memJson(['sync']);
    expect(s).toMatchObject({ action: 'merged', notes: 'merged', pushed: true, pushedNotes: true });
    await a.memJson(['sync']);
    const lines = (x: typeof a) => x.git('notes', '--ref=memory', 'show', c).trim().split('\n');
    expect(lines(a)).toEqual([na, nb].sort());
    expect(lines(b)).toEqual(lines(a));
    expect(remote.git('rev-parse', 'refs/notes/memory').trim()).toBe(tipOf(a, 'refs/notes/memory'));
    expect(allText(a)).toContain('a body');
  });

  it('init --remote-setup sets up the default remote; plain init suggests it', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const r = await a.mem(['init']);
    expect(r.stdout).toMatch(/git mem remote setup/);
    const b = clone(remote.url);
    const j = await b.memJson(['init', '--remote-setup']);
    expect(j.remoteSetup).toMatchObject({ remote: 'origin' });
    expect(b.git('config', '--get-all', 'remote.origin.fetch')).toContain('refs/mem-remotes/origin');
    // no remote yet: init still succeeds and says what to do
    const lone = makeRepo();
    const r2 = await lone.mem(['init', '--remote-setup']);
    expect(r2.code).toBe(0);
    expect(r2.stdout).toMatch(/No remote "origin" to set up yet: git remote add origin URL/);
  });
});

describe('the pre-push hook', () => {
  beforeAll(() => {
    if (!existsSync(join(ROOT, 'dist', 'cli.js'))) sh('npm', ['run', '-s', 'build'], ROOT, process.env);
  });

  it('sends the memory along with a branch push, once, with no recursion; GIT_MEM_NO_SYNC=1 skips', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const env = { ...a.env, GIT_MEM_CMD: `"${process.execPath}" "${BIN}"` };
    // a user pre-push hook that counts its runs: it gets chained, and must run once per user push
    const count = join(a.dir, '.git', 'pre-push-count');
    writeFileSync(
      join(a.dir, '.git', 'hooks', 'pre-push'),
      `#!/bin/sh\ncat >/dev/null\necho run >> "${count}"\nexit 0\n`,
    );
    chmodSync(join(a.dir, '.git', 'hooks', 'pre-push'), 0o755);
    expect((await runBinAsync(['hooks', 'install', '--pre-push'], { cwd: a.dir, env })).code).toBe(0);
    await add(a, 'travels with the branch');
    sh('git', ['push', '-q', 'origin', 'HEAD:refs/heads/main'], a.dir, env);
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(a));
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(1);
    expect(readFileSync(join(a.dir, '.git', 'mem', 'logs', 'pre-push.log'), 'utf8')).toMatch(
      /ok: origin .*pushed/,
    );
    // skipped on request
    await add(a, 'stays home');
    a.write('x.txt', 'x');
    a.commitAll('x');
    sh('git', ['push', '-q', 'origin', 'HEAD:refs/heads/main'], a.dir, { ...env, GIT_MEM_NO_SYNC: '1' });
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).not.toBe(tipOf(a));
    expect(readFileSync(count, 'utf8').trim().split('\n')).toHaveLength(2);
  });

  it('never blocks the user push when the memory cannot go', async () => {
    const remote = bareRemote();
    // the server refuses memory refs (a protected namespace)
    const hook = join(remote.dir, 'hooks', 'pre-receive');
    writeFileSync(
      hook,
      '#!/bin/sh\nwhile read old new ref; do case "$ref" in refs/mem/*) echo "no memory here" >&2; exit 1;; esac; done\nexit 0\n',
    );
    chmodSync(hook, 0o755);
    const a = clone(remote.url);
    const env = { ...a.env, GIT_MEM_CMD: `"${process.execPath}" "${BIN}"` };
    expect((await runBinAsync(['hooks', 'install', '--pre-push'], { cwd: a.dir, env })).code).toBe(0);
    await add(a, 'refused');
    sh('git', ['push', '-q', 'origin', 'HEAD:refs/heads/main'], a.dir, env);
    expect(remote.git('rev-parse', 'refs/heads/main').trim()).toBe(a.git('rev-parse', 'HEAD').trim());
    expect(remote.git('for-each-ref', 'refs/mem')).toBe('');
    expect(readFileSync(join(a.dir, '.git', 'mem', 'logs', 'pre-push.log'), 'utf8')).toMatch(
      /error: origin refused the memory push/,
    );
    // and the CLI says so clearly
    const r = await a.mem(['sync']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/origin refused the memory push: refs\/mem\/memory/);
  });
});

describe('sync pure parts', () => {
  it('backs off exponentially with jitter, bounded', async () => {
    const { backoffMs } = await import('../src/merge/sync.js');
    expect(backoffMs(1, () => 0)).toBe(25);
    expect(backoffMs(1, () => 1)).toBe(75);
    expect(backoffMs(3, () => 0.5)).toBe(200);
    expect(backoffMs(30, () => 1)).toBe(3000);
    expect(backoffMs(30, () => 0)).toBe(1000);
  });

  it('knows when a user push already carries the memory refs', async () => {
    const { pushesMemoryRefs } = await import('../src/hooks/pre-push.js');
    const z = '0'.repeat(40);
    expect(pushesMemoryRefs(`refs/heads/main ${z} refs/heads/main ${z}\n`)).toBe(false);
    expect(pushesMemoryRefs(`refs/memory ${z} refs/mem/memory ${z}\n`)).toBe(true);
    expect(
      pushesMemoryRefs(
        `refs/heads/x ${z} refs/heads/x ${z}\nrefs/notes/memory ${z} refs/notes/memory ${z}\n`,
      ),
    ).toBe(true);
    expect(pushesMemoryRefs('')).toBe(false);
  });

  it('uses glob refspecs that map the remote refs into the tracking refs', async () => {
    const { fetchRefspecs, trackingRef, notesTrackingRef } = await import('../src/merge/remote.js');
    expect(fetchRefspecs('up')).toEqual([
      '+refs/mem/*:refs/mem-remotes/up/*',
      '+refs/notes/memory*:refs/notes/mem-remotes/up/memory*',
    ]);
    expect(trackingRef('up')).toBe('refs/mem-remotes/up/memory');
    expect(notesTrackingRef('up')).toBe('refs/notes/mem-remotes/up/memory');
  });
});
