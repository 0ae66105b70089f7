/**
 * The store on refs/memory: reads through one `git cat-file --batch` (the tip
 * too), writes objects through git's hash-object (writer.ts, git
 * processes that live as long as the Store), and moves the ref only by one
 * `git update-ref --stdin` transaction, compare-and-swap against the tip it
 * was built on. git writes every object, ref, lock and reflog. The
 * user's HEAD, index and working tree are never read or written.
 *
 * `Store` is built in layers, one file each: reading (store-read.ts), the
 * catalog (store-catalog.ts), git's configuration and the identity
 * (store-config.ts), notes (store-notes.ts) and writing — the transaction and
 * the compare-and-swap of the ref (store-write.ts). Everything is importable
 * from here.
 */
import { CatFile } from './git.js';
import { openRepo } from './repo.js';
import { MEMORY_REF } from './store-read.js';
import { StoreWriter } from './store-write.js';

export type { Ident } from './store-config.js';
export type { NoteAdd } from './store-notes.js';
export { MEMORY_REF, StoreReader, type TreeEntry } from './store-read.js';
export { type Change, StoreWriter, Tx, type WriteResult } from './store-write.js';
export type { RefUpdate } from './writer.js';

export const FORMAT_PATH = 'FORMAT';
export const FORMAT_VERSION = 1;
export const SHARED_CONFIG_PATH = 'config.yaml';
export const FORMAT_TEXT = `# git-mem store; see https://www.npmjs.com/package/git-mem\nformat: ${FORMAT_VERSION}\n`;

/** The memory store of one ref: every read, the catalog, the configuration and every write. */
export class Store extends StoreWriter {}

/**
 * The store of the repository at `cwd`, found by `git rev-parse` (openRepo) while the store's
 * `git cat-file --batch` starts beside it: git runs both from `cwd` with `env`, as the store's
 * reads would, so they find the same repository, and the first read does not wait for a process
 * to start after rev-parse has answered (a start costs tens of milliseconds on a busy machine).
 * Where rev-parse refuses, the cat-file is ended with the refusal.
 */
export async function openRepositoryStore(cwd: string, env: NodeJS.ProcessEnv): Promise<Store> {
  const cat = new CatFile(cwd, env);
  cat.warm();
  try {
    return new Store(await openRepo(cwd, env), MEMORY_REF, cat);
  } catch (e) {
    cat.close();
    throw e;
  }
}
