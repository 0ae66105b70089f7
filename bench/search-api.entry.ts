// Entry point bundled by bench/search.bench.mjs: the in-process search API and a store opener.
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';

export { searchMemories, buildContextPack } from '../src/search/index.js';
export { openIndex, forgetIndex } from '../src/search/store-index.js';

export async function openStoreAt(cwd: string, env: NodeJS.ProcessEnv): Promise<Store> {
  return new Store(await openRepo(cwd, env));
}
