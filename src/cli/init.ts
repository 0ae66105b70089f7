import { initStore } from '../commands/memory.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'init',
  describe: 'create the memory store on refs/memory (idempotent)',
  builder: (y) => y.option('global', { type: 'boolean', describe: 'initialise the personal global store' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, create: true });
    const r = await initStore(store);
    emit(ctx, { created: r.created, ref: store.ref, commit: r.commit, gitDir: store.repo.commonDir }, () =>
      r.created
        ? `Initialized git-mem store on ${store.ref} (${r.commit.slice(0, 12)}) in ${store.repo.commonDir}\nNext: git mem add --type decision --title "…" --content "…"`
        : `git-mem store already initialized on ${store.ref} (${r.commit.slice(0, 12)}); nothing to do`,
    );
  },
});
