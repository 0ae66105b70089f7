import { removeMemory } from '../commands/memory.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'rm <ref>',
  describe: 'delete a memory (a tombstone keeps a later sync from bringing it back)',
  aliases: ['remove'],
  builder: (y) =>
    y
      .positional('ref', { type: 'string', describe: 'id, id prefix or alias' })
      .option('reason', { type: 'string', describe: 'why (kept in the tombstone)' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const r = await removeMemory(store, String(a.ref), a.reason);
    emit(ctx, r, () => `Removed ${r.id.slice(0, 12)} "${r.title}" (${r.commit.slice(0, 12)})`);
  },
});
