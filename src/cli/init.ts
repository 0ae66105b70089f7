import { initStore } from '../commands/memory.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'init',
  describe: 'create the memory store on refs/memory (idempotent)',
  builder: (y) =>
    y
      .option('global', { type: 'boolean', describe: 'initialise the personal global store' })
      .option('remote-setup', { type: 'boolean', describe: 'also make git fetch bring the memory from the default remote' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, create: true });
    const r = await initStore(store);
    const rs = a.global ? {} : await (await import('../merge/remote.js')).initRemoteStep(store.repo, !!a['remote-setup']);
    const remoteNote = rs.hint ? `\n${rs.hint}` : '';
    emit(ctx, { created: r.created, ref: store.ref, commit: r.commit, gitDir: store.repo.commonDir, ...(rs.setup ? { remoteSetup: rs.setup } : {}) }, () =>
      (r.created
        ? `Initialized git-mem store on ${store.ref} (${r.commit.slice(0, 12)}) in ${store.repo.commonDir}\nNext: git mem add --type decision --title "…" --content "…"`
        : `git-mem store already initialized on ${store.ref} (${r.commit.slice(0, 12)}); nothing to do`) + remoteNote,
    );
  },
});
