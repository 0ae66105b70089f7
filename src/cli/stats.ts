import { isExpired } from '../model/record.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'stats',
  describe: 'counts by type and status, tokens, commits',
  builder: (y) => y.option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, read: true });
    const tip = await store.tip();
    const cat = await store.catalog();
    const byType: Record<string, number> = {};
    const byStatus: Record<string, number> = {};
    let tokens = 0;
    let expired = 0;
    let anchored = 0;
    for (const e of cat.entries.values()) {
      byType[e.type] = (byType[e.type] ?? 0) + 1;
      byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
      tokens += e.tokens;
      if (isExpired(e)) expired++;
      if (e.anchors.length) anchored++;
    }
    const commits = tip ? (await store.log()).length : 0;
    const s = {
      records: cat.size,
      byType,
      byStatus,
      tokens,
      expired,
      anchored,
      malformed: cat.bad.length,
      commits,
      tip,
    };
    emit(ctx, s, () =>
      [
        `${s.records} ${s.records === 1 ? 'memory' : 'memories'}, ~${tokens} tokens, ${commits} commit${commits === 1 ? '' : 's'} on ${store.ref}${tip ? ` (${tip.slice(0, 12)})` : ''}`,
        `by type:   ${
          Object.entries(byType)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || '-'
        }`,
        `by status: ${
          Object.entries(byStatus)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ') || '-'
        }`,
        `anchored ${anchored}, expired ${expired}, malformed ${cat.bad.length}`,
      ].join('\n'),
    );
  },
});
