/**
 * What a sync pushes and what it then records as the remote's: a memory written after the merge
 * and before the push goes with it; one written while the push is on the wire is neither claimed
 * as pushed (the tracking ref names what the remote holds) nor left behind by the next
 * `git mem push`. The remote's pre-receive hook holds the push open until the test has written.
 */
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { addMemory } from '../../src/commands/memory.js';
import { openRepo } from '../../src/gitstore/repo.js';
import { Store } from '../../src/gitstore/store.js';
import { sync } from '../../src/merge/sync.js';
import { until } from '../helpers.js';
import { bareRemote, clone, tipOf } from '../sync-helpers.js';

/** A clone whose first memory its remote has, and whose second it has not yet. */
async function sharedThenAhead() {
  const remote = bareRemote();
  const a = clone(remote.url);
  await a.memJson(['add', '--title', 'first', '--content', 'one\n']);
  await a.memJson(['sync']);
  await a.memJson(['add', '--title', 'second', '--content', 'two\n']);
  return { remote, a };
}

it('a write during the push is not recorded as pushed; the next push sends it', async () => {
  const { remote, a } = await sharedThenAhead();
  // the remote holds every push until the test says go
  const started = join(remote.dir, 'push-started');
  const go = join(remote.dir, 'push-go');
  const hook = join(remote.dir, 'hooks', 'pre-receive');
  writeFileSync(
    hook,
    `#!/bin/sh\ncat >/dev/null\n: > '${started}'\nwhile [ ! -e '${go}' ]; do sleep 0.02; done\n`,
  );
  chmodSync(hook, 0o755);

  const syncing = a.mem(['sync', '--json']);
  let pushed: string | null;
  try {
    await until(() => (existsSync(started) ? true : undefined), 20_000); // the push reached the remote
    pushed = tipOf(a); // what the push carries: the tip when it started
    await a.memJson(['add', '--title', 'third', '--content', 'written while the push runs\n']);
  } finally {
    writeFileSync(go, ''); // never leave the remote's hook waiting
  }
  const r = await syncing;
  expect(r.code, r.stderr).toBe(0);

  const onRemote = remote.git('rev-parse', 'refs/mem/memory').trim();
  expect(onRemote).toBe(pushed);
  // the tracking ref names what the remote holds, not the later local tip
  expect(a.git('rev-parse', 'refs/mem-remotes/origin/memory').trim()).toBe(onRemote);
  expect(tipOf(a)).not.toBe(onRemote);

  // so a plain push sends the memory written meanwhile
  const p = await a.memJson<{ pushed: boolean; local: string }>(['push']);
  expect(p.pushed).toBe(true);
  expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(a));
}, 60_000);

const stores: Store[] = [];
afterAll(() => {
  for (const s of stores) s.close();
});

it('a write between the merge and the push goes with the push, and is tracked as pushed', async () => {
  const { remote, a } = await sharedThenAhead();
  const store = new Store(await openRepo(a.dir, a.env));
  stores.push(store);
  const res = await sync(store, {
    hooks: {
      beforePush: async () => {
        await addMemory(store, { type: 'decision', title: 'after the merge', body: 'three\n' });
      },
    },
  });
  expect(res.pushed).toBe(true);
  const onRemote = remote.git('rev-parse', 'refs/mem/memory').trim();
  expect(onRemote).toBe(tipOf(a));
  expect(a.git('rev-parse', 'refs/mem-remotes/origin/memory').trim()).toBe(onRemote);
});
