/**
 * Clones for the ops tier's sync tests: a real bare remote (test/sync-helpers.ts
 * bareRemote) and repositories that are copies of one template (a commit, no
 * store yet) with `origin` pointing at it, each with its Store open in-process.
 * sync, pull, push and remote then run through their run functions on that
 * store (runOn, test/support/template.ts): real git fetches and pushes, no
 * git-mem process and no store opened per command. A second store on one
 * clone, as a second process would open it: storeOn (test/support/anchors.ts).
 */
import { type Fresh, fresh, template } from './template.js';

/** A repository with one commit and no memory store: what a fresh clone of a project is. */
const CLONE = template('remotes-clone', { init: false });

/** A template copy with `name` (default origin) pointing at `url`; no remote when url is undefined. */
export async function cloneOf(url: string | undefined, name = 'origin'): Promise<Fresh> {
  const f = await fresh(CLONE);
  if (url !== undefined) f.git('remote', 'add', name, url);
  return f;
}
