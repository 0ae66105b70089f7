/**
 * What every handler of `git mem ui` works with: the repository's store,
 * the personal global store when there is one, and the directory and
 * environment of the run. Both stores are long-lived (like the MCP
 * server's): reads go through their running cat-file, writes through their
 * running git writers, and the ref's tip is read afresh on every request, so
 * a change made by the CLI or an agent meanwhile shows at the next request.
 */
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';

export interface UiEnv {
  store: Store;
  global?: Store;
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export function storeNamed(env: UiEnv, name: unknown): Store {
  if (name === undefined || name === null || name === '' || name === 'project') return env.store;
  if (name === 'global') {
    if (!env.global)
      throw err('E_NOT_FOUND', 'there is no personal global store', 'add one with git mem add --global');
    return env.global;
  }
  throw err('E_INVALID_ARG', `unknown store "${String(name)}"`, 'use project or global');
}

/**
 * One value per key, remembered while the key stays the same (the memory
 * tip, the code HEAD): a derived view is computed once per change.
 */
export class Memo<T> {
  private key?: string;
  private value?: Promise<T>;
  get(key: string, make: () => Promise<T>): Promise<T> {
    if (this.key !== key || !this.value) {
      this.key = key;
      this.value = make();
      this.value.catch(() => {
        if (this.key === key) this.value = undefined;
      });
    }
    return this.value;
  }
}

/** The memo of `env` in `table`, made on first use. */
export function memoOf<T>(table: WeakMap<UiEnv, Memo<T>>, env: UiEnv): Memo<T> {
  let m = table.get(env);
  if (!m) {
    m = new Memo<T>();
    table.set(env, m);
  }
  return m;
}
