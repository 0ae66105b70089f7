import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'reindex',
  describe: 'rebuild the search index from refs/memory (derived data under .git/mem/search; always safe)',
  builder: (y) =>
    y
      .option('status', { type: 'boolean', describe: 'only show what the cached index reflects' })
      .option('global', { type: 'boolean', describe: 'the personal global store' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const { dropIndex, openIndex, readStamp, providerFor } = await import('../search/index.js');
    if (a.status) {
      const stamp = readStamp(store);
      const tip = await store.tip();
      const value = stamp
        ? { ...stamp, current: stamp.tip === tip, storeTip: tip }
        : { tip: null, current: false, storeTip: tip };
      emit(ctx, value, () =>
        stamp
          ? `index at ${stamp.tip.slice(0, 12)} (format ${stamp.format}, ${stamp.docs} memor${stamp.docs === 1 ? 'y' : 'ies'}, ${stamp.lineage ? 'with vectors' : 'text only'}); store at ${tip?.slice(0, 12) ?? '(empty)'}${stamp.tip === tip ? '' : ' (will be brought up to date on the next search)'}`
          : 'no index cached yet; the next search builds it',
      );
      return;
    }
    const t0 = performance.now();
    dropIndex(store);
    const { stopDaemon } = await import('../daemon/client.js');
    await stopDaemon(store);
    const st = await openIndex(store, { provider: await providerFor(store), rebuild: true });
    const ms = Math.round(performance.now() - t0);
    const value = { tip: st.tip, memories: st.index.size, vectors: st.index.vectors?.byId.size ?? 0, ms };
    emit(
      ctx,
      value,
      () =>
        `Reindexed ${st.index.size} memor${st.index.size === 1 ? 'y' : 'ies'} at ${st.tip?.slice(0, 12) ?? '(empty store)'} in ${ms} ms${value.vectors ? ` (${value.vectors} vectors)` : ''}`,
    );
  },
});
