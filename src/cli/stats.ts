import { storeStats } from '../commands/stats.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'stats',
  describe: 'counts by type and status, tokens, commits',
  builder: (y) => y.option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, read: true });
    const s = await storeStats(store);
    emit(ctx, s, () =>
      [
        `${s.records} ${s.records === 1 ? 'memory' : 'memories'}, ~${s.tokens} tokens, ${s.commits} commit${s.commits === 1 ? '' : 's'} on ${store.ref}${s.tip ? ` (${s.tip.slice(0, 12)})` : ''}`,
        `by type:   ${
          Object.entries(s.byType)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || '-'
        }`,
        `by status: ${
          Object.entries(s.byStatus)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || '-'
        }`,
        `anchored ${s.anchored}, expired ${s.expired}, malformed ${s.malformed}`,
      ].join('\n'),
    );
  },
});
