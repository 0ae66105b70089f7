/**
 * The pre-push hook end to end: `git push` runs the installed hook, which runs
 * git-mem (the built binary) and sends the memory along with the branch. Real
 * processes beyond git, so a system test; sync, pull and push themselves are
 * ops tests (test/sync.test.ts).
 */
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMemory } from '../../src/commands/memory.js';
import { openRepo } from '../../src/gitstore/repo.js';
import { Store } from '../../src/gitstore/store.js';
import { BIN, ROOT, runBinAsync, sh } from '../helpers.js';
import { bareRemote, clone, tipOf } from '../sync-helpers.js';

const stores = new Map<string, Store>();
afterAll(() => {
  for (const s of stores.values()) s.close();
});
/** Adds through the core library: the adds are set-up here, what is under test is the hook. */
async function add(r: ReturnType<typeof clone>, title: string): Promise<string> {
  let s = stores.get(r.dir);
  if (!s) {
    s = new Store(await openRepo(r.dir, r.env));
    stores.set(r.dir, s);
  }
  return (await addMemory(s, { type: 'decision', title, body: `${title} body\n` })).record.id;
}

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
    // and the CLI says so clearly: one line, its code, the ref the remote refused
    const r = await a.mem(['sync', '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    const { error } = JSON.parse(r.stdout);
    expect(error).toMatchObject({ code: 'E_REMOTE', remote: 'origin' });
    expect(error.rejected).toEqual([expect.objectContaining({ ref: 'refs/mem/memory' })]);
  });
});
