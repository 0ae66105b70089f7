/**
 * Clones for the ops tier's sync tests: a real bare remote (test/sync-helpers.ts
 * bareRemote) and repositories that are copies of one template (a commit, no
 * store yet) with `origin` pointing at it, each with its Store open in-process.
 * sync, pull, push and remote then run through their run functions on that
 * store (runOn, test/support/template.ts): real git fetches and pushes, no
 * git-mem process and no store opened per command.
 */
import { afterEach } from 'vitest';
import { openRepo } from '../../src/gitstore/repo.js';
import { Store } from '../../src/gitstore/store.js';
import { type Fresh, fresh, jsonOn, runOn, template } from './template.js';

/** A repository with one commit and no memory store: what a fresh clone of a project is. */
const CLONE = template('remotes-clone', { init: false });

/** A template copy with `name` (default origin) pointing at `url`; no remote when url is undefined. */
export async function cloneOf(url: string | undefined, name = 'origin'): Promise<Fresh> {
  const f = await fresh(CLONE);
  if (url !== undefined) f.git('remote', 'add', name, url);
  return f;
}

const open: Store[] = [];
afterEach(() => {
  for (const s of open.splice(0)) s.close();
});

/**
 * A second store opened in-process on the same repository, as a second git-mem
 * process would open it: it shares no memo, writer or catalog with the first.
 */
export async function secondStore(f: Fresh): Promise<Fresh> {
  const store = new Store(await openRepo(f.dir, f.env));
  open.push(store);
  const g: Fresh = { ...f, store };
  // the copy's own command helpers ran on its first store: these run on this one
  g.mem = async (args, o = {}) => {
    const { exit, code, ...rest } = await runOn(g, args, { ...o, json: args.includes('--json') });
    return { ...rest, code: exit, error: code };
  };
  g.memJson = (args, o = {}) => jsonOn(g, args, o);
  return g;
}
