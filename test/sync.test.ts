/**
 * git mem sync, pull, push and remote between clones of a real bare remote
 * (real git fetches and pushes, temp dirs): each clone is a template copy with
 * its Store open in-process (test/support/remotes.ts), and the commands run
 * through their run functions on it (runOn, jsonOn). The pre-push hook, which
 * git runs as a process that runs git-mem, is a system test
 * (test/system/sync-pre-push.test.ts).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { addMemory } from '../src/commands/memory.js';
import { newId } from '../src/model/id.js';
import { sh } from './helpers.js';
import { storeOn } from './support/anchors.js';
import { cloneOf } from './support/remotes.js';
import { type Fresh, jsonOn, runOn } from './support/template.js';
import { allText, bareRemote, tipOf, treeOf } from './sync-helpers.js';

/** Adds through the operation: the adds are set-up here, the commands under test are sync, pull, push. */
async function add(r: Fresh, title: string): Promise<string> {
  return (await addMemory(r.store, { type: 'decision', title, body: `${title} body\n` })).record.id;
}

describe('git mem sync between clones', () => {
  it('shares, merges and converges two clones through a bare remote', async () => {
    const remote = bareRemote();
    const a = await cloneOf(remote.url);
    const b = await cloneOf(remote.url);
    const idA = await add(a, 'Use pnpm');
    const s1 = await jsonOn(a, ['sync']);
    expect(s1).toMatchObject({ remote: 'origin', action: 'empty', pushed: true, attempts: 1 });
    // the remote holds it at refs/mem/memory (servers refuse one-level refs/memory)
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(a));
    expect(tipOf(a, 'refs/mem-remotes/origin/memory')).toBe(tipOf(a));
    const s2 = await jsonOn(b, ['sync']);
    expect(s2).toMatchObject({ action: 'created', pushed: false });
    expect(tipOf(b)).toBe(tipOf(a));
    // both sides change: different records on each side, then a sync each way
    await jsonOn(a, ['update', idA, '--add-tag', 'build']);
    const idB = await add(b, 'Tabs, not spaces');
    expect((await jsonOn(b, ['sync'])).action).toBe('ahead');
    const s3 = await jsonOn(a, ['sync']);
    expect(s3).toMatchObject({ action: 'merged', pushed: true });
    expect(Object.keys(s3.timings)).toEqual(['fetch', 'merge', 'push']);
    const merge = tipOf(a)!;
    expect(a.git('rev-list', '--parents', '-n', '1', merge).trim().split(' ')).toHaveLength(3);
    const s4 = await jsonOn(b, ['sync']);
    expect(s4).toMatchObject({ action: 'fast-forward', pushed: false });
    expect(tipOf(b)).toBe(merge);
    expect(treeOf(b)).toBe(treeOf(a));
    const listed = (await jsonOn(b, ['list'])).map((x: { id: string }) => x.id).sort();
    expect(listed).toEqual([idA, idB].sort());
    expect((await jsonOn(b, ['show', idA])).tags).toContain('build');
    // nothing shows up as a branch, and a plain push is unchanged
    expect(a.git('branch', '-r')).not.toMatch(/mem/);
    expect(a.git('config', '--get-regexp', '^remote\\.').includes('.push')).toBe(false);
    // an in-sync sync is a no-op
    expect(await jsonOn(a, ['sync'])).toMatchObject({ action: 'up-to-date', pushed: false });
  });

  it('treats a remote without memory as an empty store, and names a missing remote', async () => {
    const remote = bareRemote();
    const a = await cloneOf(remote.url);
    expect(await jsonOn(a, ['pull'])).toMatchObject({ action: 'empty', remoteTip: null });
    expect(await jsonOn(a, ['sync'])).toMatchObject({ action: 'empty', pushed: false });
    expect(tipOf(a)).toBeNull();
    // refused, naming the remote asked for and the ones there are
    const r = await runOn(a, ['sync', 'nope']);
    expect(r).toMatchObject({ exit: 1, code: 'E_REMOTE' });
    expect(r.message).toContain('"nope"');
    expect(r.message).toContain('origin');
    expect(r.hint).toContain('git mem sync origin');
    // no remote at all: the fix is the git command that adds one
    const lonely = await cloneOf(undefined);
    const r2 = await runOn(lonely, ['sync']);
    expect(r2).toMatchObject({ exit: 1, code: 'E_REMOTE' });
    expect(r2.message).toContain('"origin"');
    expect(r2.hint).toContain('git remote add origin URL');
  });

  it('pull and push do the halves; a rejected push says to sync', async () => {
    const remote = bareRemote();
    const a = await cloneOf(remote.url);
    const b = await cloneOf(remote.url);
    await add(a, 'first');
    expect(await jsonOn(a, ['push'])).toMatchObject({ pushed: true });
    expect(await jsonOn(a, ['push'])).toMatchObject({ pushed: false });
    const before = remote.git('rev-parse', 'refs/mem/memory').trim();
    expect(await jsonOn(b, ['pull'])).toMatchObject({ action: 'created' });
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(before);
    await add(a, 'second from a');
    await add(b, 'second from b');
    expect((await jsonOn(a, ['push'])).pushed).toBe(true);
    const bTip = tipOf(b);
    const rej = await runOn(b, ['push']);
    expect(rej).toMatchObject({ exit: 4, code: 'E_CONFLICT_RETRY' });
    expect(rej.data?.rejected).toEqual([expect.objectContaining({ ref: 'refs/mem/memory' })]);
    expect(rej.hint).toContain('git mem sync origin');
    expect(tipOf(b)).toBe(bTip);
    const pulled = await jsonOn(b, ['pull']);
    expect(pulled.action).toBe('merged');
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(a));
    expect((await jsonOn(b, ['push'])).pushed).toBe(true);
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(b));
  });

  it('two syncs at once in one repository both succeed and lose nothing', async () => {
    const remote = bareRemote();
    const a = await cloneOf(remote.url);
    const b = await cloneOf(remote.url);
    const idB = await add(b, 'remote side');
    await jsonOn(b, ['sync']);
    const idA = await add(a, 'local side');
    // two stores on one repository, as two processes would open them
    const a2 = await storeOn(a);
    const [r1, r2] = await Promise.all([runOn(a, ['sync']), runOn(a2, ['sync'])]);
    expect([r1.exit, r2.exit]).toEqual([0, 0]);
    await jsonOn(b, ['sync']);
    expect(tipOf(b)).toBe(tipOf(a));
    expect((await jsonOn(b, ['list'])).map((x: { id: string }) => x.id).sort()).toEqual([idA, idB].sort());
  });

  it('syncs the personal global store with --global', async () => {
    const remote = bareRemote();
    const a = await cloneOf(remote.url);
    expect((await runOn(a, ['add', '--global', '--title', 'my habit', '--content', 'x'])).exit).toBe(0);
    const globalDir = join(a.env.GIT_MEM_HOME!, 'store.git');
    sh('git', ['--git-dir', globalDir, 'remote', 'add', 'origin', remote.url], a.dir, a.env);
    expect(await jsonOn(a, ['sync', '--global'])).toMatchObject({ action: 'empty', pushed: true });
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(
      sh('git', ['--git-dir', globalDir, 'rev-parse', 'refs/memory'], a.dir, a.env).trim(),
    );
    expect(tipOf(a)).toBeNull();
  });

  it('uses the branch upstream remote by default', async () => {
    const r1 = bareRemote();
    const r2 = bareRemote();
    const a = await cloneOf(r1.url);
    a.git('remote', 'add', 'upstream', r2.url);
    a.git('push', '-q', 'upstream', 'HEAD:refs/heads/main');
    a.git('branch', '-q', '--set-upstream-to=upstream/main');
    await add(a, 'goes upstream');
    expect(await jsonOn(a, ['sync'])).toMatchObject({ remote: 'upstream', pushed: true });
    expect(r2.git('for-each-ref', 'refs/mem')).toMatch(/refs\/mem\/memory/);
    expect(r1.git('for-each-ref', 'refs/mem')).toBe('');
  });

  it('remote setup makes a plain git fetch bring memory and notes, without breaking it before', async () => {
    const remote = bareRemote();
    const a = await cloneOf(remote.url);
    const b = await cloneOf(remote.url);
    const set = await jsonOn(b, ['remote', 'setup']);
    expect(set.added).toHaveLength(2);
    expect((await jsonOn(b, ['remote', 'setup'])).added).toEqual([]);
    expect(b.git('config', '--get-all', 'remote.origin.fetch')).toContain(
      '+refs/mem/*:refs/mem-remotes/origin/*',
    );
    expect(() => b.git('config', '--get', 'remote.origin.push')).toThrow();
    // the remote has no memory yet: a plain fetch must still work
    b.git('fetch', '-q', 'origin');
    await add(a, 'shared');
    a.git('notes', '--ref=memory', 'add', '-m', '{"n":1}', 'HEAD');
    await jsonOn(a, ['sync']);
    b.git('fetch', '-q', 'origin');
    expect(tipOf(b, 'refs/mem-remotes/origin/memory')).toBe(tipOf(a));
    expect(tipOf(b, 'refs/notes/mem-remotes/origin/memory')).toBe(tipOf(a, 'refs/notes/memory'));
    expect(b.git('branch', '-r')).not.toMatch(/mem/);
    const status = await jsonOn(b, ['remote', 'status']);
    expect(status).toMatchObject({ setUp: true, tracking: { memory: tipOf(a) } });
    expect((await jsonOn(b, ['remote', 'remove'])).removed).toHaveLength(2);
    expect(b.git('config', '--get-all', 'remote.origin.fetch').trim()).toBe(
      '+refs/heads/*:refs/remotes/origin/*',
    );
  });

  it('merges notes line by line (cat_sort_uniq) and pushes them atomically with the memory', async () => {
    const remote = bareRemote();
    const a = await cloneOf(remote.url);
    const b = await cloneOf(remote.url);
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
    await jsonOn(a, ['sync']);
    b.git('notes', '--ref=memory', 'add', '-m', nb, c);
    const s = await jsonOn(b, ['sync']);
    expect(s).toMatchObject({ action: 'merged', notes: 'merged', pushed: true, pushedNotes: true });
    await jsonOn(a, ['sync']);
    const lines = (x: Fresh) => x.git('notes', '--ref=memory', 'show', c).trim().split('\n');
    expect(lines(a)).toEqual([na, nb].sort());
    expect(lines(b)).toEqual(lines(a));
    expect(remote.git('rev-parse', 'refs/notes/memory').trim()).toBe(tipOf(a, 'refs/notes/memory'));
    expect(allText(a)).toContain('a body');
  });

  it('init --remote-setup sets up the default remote; plain init suggests it', async () => {
    const remote = bareRemote();
    const a = await cloneOf(remote.url);
    // the suggestion is the human output's last line: its text is what is under test
    const r = await runOn(a, ['init'], { json: false });
    expect(r.exit).toBe(0);
    expect(r.stdout).toMatch(/git mem remote setup/);
    const b = await cloneOf(remote.url);
    const j = await jsonOn(b, ['init', '--remote-setup']);
    expect(j.remoteSetup).toMatchObject({ remote: 'origin' });
    expect(b.git('config', '--get-all', 'remote.origin.fetch')).toContain('refs/mem-remotes/origin');
    // no remote yet: init still succeeds and says what to do
    const lone = await cloneOf(undefined);
    const r2 = await runOn(lone, ['init', '--remote-setup'], { json: false });
    expect(r2.exit).toBe(0);
    expect(r2.stdout).toMatch(/No remote "origin" to set up yet: git remote add origin URL/);
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
