import { supersede } from '../commands/memory.js';
import { err } from '../errors.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'supersede <old> [new]',
  describe:
    'mark OLD as superseded by NEW (git mem supersede OLD NEW, or OLD --by NEW); both link to each other',
  builder: (y) =>
    y
      .positional('old', { type: 'string', describe: 'the memory replaced' })
      .positional('new', { type: 'string', describe: 'the memory that replaces it (or --by)' })
      .option('by', { type: 'string', describe: 'the memory that replaces it' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    if (a.new !== undefined && a.by !== undefined && String(a.new) !== String(a.by))
      throw err('E_INVALID_ARG', `two replacements given: ${a.new} and --by ${a.by}`, 'name NEW once');
    const by = a.new ?? a.by;
    if (by === undefined)
      throw err('E_INVALID_ARG', 'name the memory that replaces it', 'git mem supersede OLD NEW');
    const store = await openStore(ctx, { global: a.global });
    const r = await supersede(store, String(a.old), String(by));
    emit(
      ctx,
      { old: r.old.id, new: r.new.id, commit: r.commit },
      () =>
        `${r.old.id.slice(0, 12)} is ${r.commit ? '' : 'already '}superseded by ${r.new.id.slice(0, 12)}${r.commit ? '' : ': nothing changed'}`,
    );
  },
});
