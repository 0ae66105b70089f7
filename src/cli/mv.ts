import { moveMemory } from '../commands/memory.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'mv <ref> <alias>',
  describe: 'give a memory a new alias (its path in the category tree)',
  aliases: ['move'],
  builder: (y) =>
    y
      .positional('ref', { type: 'string' })
      .positional('alias', { type: 'string' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const r = await moveMemory(store, String(a.ref), String(a.alias));
    emit(ctx, { id: r.record.id, alias: r.record.alias, commit: r.commit }, () =>
      r.changed.length
        ? `Moved ${r.record.id.slice(0, 12)} to ${r.record.alias}`
        : `${r.record.id.slice(0, 12)} is already ${r.record.alias}`,
    );
  },
});
