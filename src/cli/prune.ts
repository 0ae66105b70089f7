import { pruneExpired } from '../commands/memory.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';
import { summaryJSON } from './format.js';

export default defineCommand({
  command: 'prune',
  describe: 'delete expired memories (tombstoned, in one commit)',
  builder: (y) =>
    y
      .option('dry-run', { type: 'boolean', describe: 'list what would be pruned' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const r = await pruneExpired(store, Date.now(), a['dry-run']);
    emit(ctx, r.pruned.map(summaryJSON), () =>
      r.pruned.length
        ? `${a['dry-run'] ? 'Would prune' : 'Pruned'} ${r.pruned.length} expired memor${r.pruned.length === 1 ? 'y' : 'ies'}:\n${r.pruned.map((p) => `  ${p.id.slice(0, 12)} ${p.title}`).join('\n')}`
        : 'Nothing expired',
    );
  },
});
