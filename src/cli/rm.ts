import { removeMemories } from '../commands/memory.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'rm <refs..>',
  describe: 'delete memories in one commit (a tombstone keeps a later sync from bringing them back)',
  aliases: ['remove'],
  builder: (y) =>
    y
      .positional('refs', {
        type: 'string',
        array: true,
        describe: 'ids, id prefixes or aliases (all must exist, or nothing is removed)',
      })
      .option('reason', { type: 'string', describe: 'why (kept in the tombstones)' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const refs = [a.refs ?? []].flat().map(String);
    const r = await removeMemories(store, refs, a.reason);
    // one ref keeps its object (id, title, commit); several give the list of them (one commit)
    const items = r.removed.map((m) => ({ ...m, commit: r.commit }));
    emit(ctx, refs.length === 1 ? items[0] : items, () =>
      r.removed.map((m) => `Removed ${m.id.slice(0, 12)} "${m.title}" (${r.commit.slice(0, 12)})`).join('\n'),
    );
  },
});
