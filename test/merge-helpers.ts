/**
 * Two (or more) clones of one bare remote, each with its own store, for the
 * merge tests. The memory ref travels with plain `git push`/`git fetch` of
 * refs/memory (the sync command does this for users).
 */

import { initStore } from '../src/commands/memory.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { isolatedEnv, sh, tmpDir } from './helpers.js';

export interface Clone {
  dir: string;
  env: NodeJS.ProcessEnv;
  store: Store;
  git: (...args: string[]) => string;
}

export async function openClone(dir: string, env: NodeJS.ProcessEnv): Promise<Clone> {
  const store = new Store(await openRepo(dir, env));
  return { dir, env, store, git: (...args) => sh('git', args, dir, env) };
}

/** A bare remote holding an initialised store, and `n` clones that fetched it. */
export async function clones(
  n: number,
  names = ['alice', 'bob', 'carol', 'dave', 'erin'],
): Promise<{ remote: string; clones: Clone[] }> {
  const remote = tmpDir('gm-remote-');
  const env0 = isolatedEnv();
  sh('git', ['init', '-q', '--bare', remote], remote, env0);
  const out: Clone[] = [];
  for (let i = 0; i < n; i++) {
    const env = isolatedEnv({
      GIT_AUTHOR_NAME: names[i],
      GIT_AUTHOR_EMAIL: `${names[i]}@example.com`,
      GIT_COMMITTER_NAME: names[i],
      GIT_COMMITTER_EMAIL: `${names[i]}@example.com`,
    });
    const dir = tmpDir(`gm-${names[i]}-`);
    sh('git', ['clone', '-q', remote, dir], dir, env);
    const c = await openClone(dir, env);
    if (i === 0) {
      await initStore(c.store);
      c.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
    } else {
      c.git('fetch', '-q', 'origin', 'refs/mem/memory:refs/memory');
    }
    out.push(c);
  }
  return { remote, clones: out };
}

/** Fetches the remote's memory ref into a tracking ref and returns its commit. */
export function fetchTheirs(c: Clone, from: string = 'origin'): string {
  c.git(
    'fetch',
    '-q',
    from,
    from === 'origin' ? '+refs/mem/memory:refs/mem-test/theirs' : '+refs/memory:refs/mem-test/theirs',
  );
  return c.git('rev-parse', 'refs/mem-test/theirs').trim();
}

export function treeOf(c: Clone, commit: string): string {
  return c.git('rev-parse', `${commit}^{tree}`).trim();
}
