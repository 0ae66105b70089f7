import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';
import { describePush } from './sync.js';

export default defineCommand({
  command: 'push [remote]',
  describe: 'push the memory and its notes to a remote without force (rejected: run git mem sync)',
  builder: (y) =>
    y
      .positional('remote', { type: 'string', describe: 'remote name (default: the upstream, else origin)' })
      .option('global', { type: 'boolean', describe: 'push the personal global store' })
      .option('quiet', { alias: 'q', type: 'boolean', describe: 'print nothing on success' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, config: true });
    const { push } = await import('../merge/sync.js');
    const r = await push(store, { remote: a.remote, interactive: ctx.io.stdinIsTTY });
    emit(ctx, r, () => (a.quiet ? '' : describePush(r)));
  },
});
