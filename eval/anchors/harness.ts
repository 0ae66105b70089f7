/** In-process entry points for the anchors evaluation and benchmark (bundled by run.mjs / the bench). */
import { anchorAddHooks } from '../../src/anchors/add-hooks.js';
import { runCheck, type CheckOptions } from '../../src/anchors/check.js';
import { addMemory, initStore } from '../../src/commands/memory.js';
import { parseAnchorSpec } from '../../src/cli/hooks-registry.js';
import { openRepo } from '../../src/gitstore/repo.js';
import { Store } from '../../src/gitstore/store.js';

export async function openStore(dir: string, env: NodeJS.ProcessEnv): Promise<Store> {
  return new Store(await openRepo(dir, env));
}

export async function init(store: Store) {
  return initStore(store);
}

/** Adds a memory anchored by `--anchor` or `--symbol` style specs; returns its id. */
export async function addAnchored(store: Store, title: string, anchor: string, symbol = false): Promise<string> {
  const spec = symbol
    ? (() => {
        const h = anchor.lastIndexOf('#');
        return h > 0 ? { path: anchor.slice(0, h), symbol: anchor.slice(h + 1) } : { path: '', symbol: anchor };
      })()
    : parseAnchorSpec(anchor);
  const hooks = anchorAddHooks(store.repo.workTree!, store);
  const { record } = await addMemory(store, { type: 'decision', title, body: title, anchors: [spec] }, hooks);
  return record.id;
}

export async function check(store: Store, opts: CheckOptions = {}) {
  return runCheck(store, opts);
}
