import { supersede } from '../commands/memory.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'supersede <old>',
  describe: 'mark OLD as superseded by NEW; both link to each other',
  builder: (y) =>
    y
      .positional('old', { type: 'string' })
      .option('by', { type: 'string', demandOption: true, describe: 'the memory that replaces it' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const r = await supersede(store, String(a.old), String(a.by));
    emit(
      ctx,
      { old: r.old.id, new: r.new.id, commit: r.commit },
      () => `${r.old.id.slice(0, 12)} is superseded by ${r.new.id.slice(0, 12)}`,
    );
  },
});
