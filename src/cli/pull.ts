import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';
import { describePull } from './sync.js';

export default defineCommand({
  command: 'pull [remote]',
  describe: 'fetch the memory and its notes from a remote and merge them (no push)',
  builder: (y) =>
    y
      .positional('remote', { type: 'string', describe: 'remote name (default: the upstream, else origin)' })
      .option('global', { type: 'boolean', describe: 'pull into the personal global store' })
      .option('quiet', { alias: 'q', type: 'boolean', describe: 'print nothing on success' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, config: true });
    const { pull } = await import('../merge/sync.js');
    const r = await pull(store, { remote: a.remote, interactive: ctx.io.stdinIsTTY });
    emit(ctx, r, () => (a.quiet ? '' : describePull(r)));
  },
});
