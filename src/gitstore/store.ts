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
import { type Repo, repoFromRevParse } from './repo.js';
import { MEMORY_REF } from './store-read.js';
import { type StoreOpening, storeProcesses } from './store-start.js';
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
 * The store of the repository at `cwd`, found by `git rev-parse` (as openRepo finds it) while the
 * store's `git cat-file --batch` starts beside it, and as `opening` asks the config read (`config`)
 * and the object writers too (`write`): all by one process start (store-start.ts), since each
 * start blocks this thread until the child runs (tens of milliseconds on a busy machine), or
 * taken from the launcher, which started them while the CLI loaded. git runs each from `cwd`
 * with `env`, as the store's own processes would, so they find the same repository. Where
 * rev-parse refuses, the others are ended with the refusal.
 */
export async function openRepositoryStore(
  cwd: string,
  env: NodeJS.ProcessEnv,
  opening: StoreOpening = 'read',
): Promise<Store> {
  const [revParse, cat, ...writing] = storeProcesses(cwd, env, opening);
  const reader = new CatFile(cwd, env);
  reader.warm(cat);
  let repo: Repo;
  try {
    repo = await repoFromRevParse(revParse, cwd, env);
  } catch (e) {
    reader.close();
    for (const p of writing) p.stdin.destroy();
    throw e;
  }
  const store = new Store(repo, MEMORY_REF, reader);
  const [config, ...writers] = writing;
  if (config) store.gitConfig(config).catch(() => {});
  if (writers.length) store.writer.adopt(writers);
  return store;
}
