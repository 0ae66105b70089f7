/**
 * Faults: a push killed mid-way, an unreachable remote, a remote that moves
 * during the merge, a remote holding a malformed record. Each gives a clear
 * error, leaves the local store intact, and the next sync succeeds.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMemory } from '../src/commands/memory.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { sync } from '../src/merge/sync.js';
import { newId } from '../src/model/id.js';
import { recordPath } from '../src/model/record.js';
import { BIN, errorOf, ROOT, sh, tmpDir } from './helpers.js';
import { bareRemote, clone, tipOf } from './sync-helpers.js';

const stores: Store[] = [];
afterAll(() => {
  for (const s of stores) s.close();
});
async function storeOf(r: ReturnType<typeof clone>): Promise<Store> {
  const s = new Store(await openRepo(r.dir, r.env));
  stores.push(s);
  return s;
}
async function add(r: ReturnType<typeof clone>, title: string): Promise<string> {
  return (await r.memJson(['add', '--title', title, '--content', `${title}\n`, '--force'])).id;
}
const ids = async (r: ReturnType<typeof clone>) =>
  (await r.memJson(['list'])).map((x: { id: string }) => x.id).sort();

describe('sync faults', () => {
  it('an unreachable remote: clear error, store untouched, next sync succeeds', async () => {
    const a = clone('/nonexistent/nowhere.git');
    const id = await add(a, 'kept locally');
    const before = tipOf(a);
    const r = await a.mem(['sync', '--json']);
    expect(r.code).toBe(1);
    // the remote and URL it could not fetch from, and git's own reason
    expect(errorOf(r)).toMatchObject({
      code: 'E_REMOTE',
      remote: 'origin',
      url: '/nonexistent/nowhere.git',
      stderr: expect.stringContaining('nowhere'),
    });
    expect(r.stderr).toMatch(/the local memory is unchanged/); // the hint
    expect(tipOf(a)).toBe(before);
    // a server that does not answer
    a.git('remote', 'set-url', 'origin', 'git://127.0.0.1:9/none.git');
    const r2 = await a.mem(['sync', '--json']);
    expect(r2.code).toBe(1);
    expect(JSON.parse(r2.stdout).error.code).toBe('E_REMOTE');
    expect(tipOf(a)).toBe(before);
    const remote = bareRemote();
    a.git('remote', 'set-url', 'origin', remote.url);
    expect(await a.memJson(['sync'])).toMatchObject({ pushed: true });
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(before);
    expect(await ids(a)).toEqual([id]);
  });

  it('a push killed mid-way: the remote keeps its old memory, the local store is whole, the next sync succeeds', async () => {
    if (!existsSync(join(ROOT, 'dist', 'cli.js'))) sh('npm', ['run', '-s', 'build'], ROOT, process.env);
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    const idB = await add(b, 'from b');
    await b.memJson(['sync']);
    const remoteBefore = remote.git('rev-parse', 'refs/mem/memory').trim();
    const idA = await add(a, 'from a');
    // the server stalls inside the push; we kill the whole sync (node, git push, receive-pack)
    const marker = join(tmpDir('gm-marker-'), 'in-push');
    const hook = join(remote.dir, 'hooks', 'pre-receive');
    writeFileSync(hook, `#!/bin/sh\ncat >/dev/null\ntouch "${marker}"\nsleep 30\nexit 0\n`);
    chmodSync(hook, 0o755);
    const child = spawn(process.execPath, [BIN, 'sync'], {
      cwd: a.dir,
      env: a.env,
      detached: true,
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((res) => child.on('exit', (code) => res(code)));
    for (let i = 0; i < 400 && !existsSync(marker); i++) await new Promise((r) => setTimeout(r, 50));
    expect(existsSync(marker)).toBe(true);
    process.kill(-child.pid!, 'SIGKILL');
    await exited;
    rmSync(hook);
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(remoteBefore);
    // locally: the merge landed (or not yet) but the store is complete and readable
    expect(await ids(a)).toEqual([idA, idB].sort());
    a.git('fsck', '--no-dangling', '--connectivity-only', 'refs/memory');
    const s = await a.memJson(['sync']);
    expect(s.pushed).toBe(true);
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(a));
    await b.memJson(['sync']);
    expect(await ids(b)).toEqual([idA, idB].sort());
  });

  it('a remote that moves during the merge: the push is rejected, fetch-merge-push runs again', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    await add(b, 'b1');
    await b.memJson(['sync']);
    await add(a, 'a1');
    const sa = await storeOf(a);
    const sb = await storeOf(b);
    const local = await storeOf(a);
    let raced = false;
    const res = await sync(sa, {
      sleep: async () => {},
      hooks: {
        beforeLocalUpdate: async ({ attempt }) => {
          // a local writer lands between the merge and the ref update: merged again, not lost
          if (attempt === 1 && !raced) {
            raced = true;
            await addMemory(local, { type: 'decision', title: 'local racer', body: 'x' });
          }
        },
        beforePush: async ({ attempt }) => {
          if (attempt === 1) {
            await addMemory(sb, { type: 'decision', title: 'b2 during the merge', body: 'y' });
            await b.memJson(['sync']);
          }
        },
      },
    });
    expect(res.attempts).toBe(2);
    expect(res.pushed).toBe(true);
    await b.memJson(['sync']);
    const titles = (await b.memJson(['list'])).map((x: { title: string }) => x.title).sort();
    expect(titles).toEqual(['a1', 'b1', 'b2 during the merge', 'local racer']);
    expect(tipOf(b)).toBe(tipOf(a));

    // a remote that never stops moving: bounded retries, a clear error, everything merged so far kept
    let n = 0;
    await add(a, 'a2');
    const e = await sync(sa, {
      retries: 2,
      sleep: async () => {},
      hooks: {
        beforePush: async () => {
          await addMemory(sb, { type: 'decision', title: `b churn ${n++}`, body: 'z' });
          await b.memJson(['sync']);
        },
      },
    }).catch((x) => x);
    expect(e.code).toBe('E_CONFLICT_RETRY');
    // the push was tried three times (retries: 2), each after a merge the remote had moved past
    expect(n).toBe(3);
    expect((await a.memJson(['list'])).map((x: { title: string }) => x.title)).toContain('b churn 1');
    expect(await a.memJson(['sync'])).toMatchObject({ pushed: true });
    await b.memJson(['sync']);
    expect(tipOf(b)).toBe(tipOf(a));
  });

  describe('a remote holding a malformed record', () => {
    let remote: ReturnType<typeof bareRemote>;
    let b: ReturnType<typeof clone>;
    let badPath: string;
    let badCommit: string;
    let d: ReturnType<typeof clone>;
    beforeAll(async () => {
      remote = bareRemote();
      b = clone(remote.url);
      await add(b, 'fine');
      await b.memJson(['sync']);
      // d has what the remote had before the broken record: its next sync is a fast-forward
      d = clone(remote.url);
      await d.memJson(['sync']);
      await d.memJson(['list']);
      // b writes a broken file with plain git and pushes it by hand
      const bad = sh(
        'git',
        ['hash-object', '-w', '--stdin'],
        b.dir,
        b.env,
        '---\nid: [unterminated\n---\nbody\n',
      ).trim();
      badPath = recordPath(newId());
      const idx = join(tmpDir('gm-idx-'), 'index');
      const env = { ...b.env, GIT_INDEX_FILE: idx };
      sh('git', ['read-tree', 'refs/memory'], b.dir, env);
      sh('git', ['update-index', '--add', '--cacheinfo', `100644,${bad},${badPath}`], b.dir, env);
      const tree = sh('git', ['write-tree'], b.dir, env).trim();
      badCommit = b.git('commit-tree', tree, '-p', 'refs/memory', '-m', 'hand-made broken record').trim();
      b.git('update-ref', 'refs/memory', badCommit);
      b.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
    });

    it('stops the sync naming the record and its commit; nothing is written; a repaired remote syncs', async () => {
      // a clone with its own changes (a real merge) and one without (a fast-forward)
      const a = clone(remote.url);
      const c = clone(remote.url);
      await add(a, 'from a');
      const tipA = tipOf(a);
      // the record that does not parse, and the commit that brought it, as the error's data
      const malformed = { code: 'E_MERGE', problem: 'record', path: badPath, commit: badCommit };
      const r = await a.mem(['sync', '--json']);
      expect(r.code).toBe(4);
      expect(errorOf(r)).toMatchObject(malformed);
      expect(tipOf(a)).toBe(tipA);
      const rc = await c.mem(['sync', '--json']);
      expect(rc.code).toBe(4);
      expect(errorOf(rc)).toMatchObject(malformed);
      expect(tipOf(c)).toBeNull();
      const tipD = tipOf(d);
      const rd = await d.mem(['sync', '--json']);
      expect(rd.code).toBe(4);
      expect(errorOf(rd)).toMatchObject(malformed);
      expect(tipOf(d)).toBe(tipD);
      expect((await d.memJson(['list'])).map((x: { title: string }) => x.title)).toEqual(['fine']);
      // b repairs it (removes the file) and pushes
      const idx = join(tmpDir('gm-idx-'), 'index');
      const env = { ...b.env, GIT_INDEX_FILE: idx };
      sh('git', ['read-tree', 'refs/memory'], b.dir, env);
      sh('git', ['update-index', '--remove', '--force-remove', badPath], b.dir, env);
      const tree = sh('git', ['write-tree'], b.dir, env).trim();
      const fixed = b.git('commit-tree', tree, '-p', 'refs/memory', '-m', 'remove the broken record').trim();
      b.git('update-ref', 'refs/memory', fixed);
      b.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
      expect(await a.memJson(['sync'])).toMatchObject({ action: 'merged', pushed: true });
      expect(await c.memJson(['sync'])).toMatchObject({ action: 'created' });
      expect((await c.memJson(['list'])).map((x: { title: string }) => x.title).sort()).toEqual([
        'fine',
        'from a',
      ]);
    });
  });
});
