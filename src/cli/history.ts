import { memoryHistory, storeLog } from '../commands/history.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';
import { colors } from './output.js';

export default defineCommand({
  command: 'history [ref]',
  describe: 'every version of a memory (or of the whole store) with author, date and commit',
  aliases: ['log'],
  builder: (y) =>
    y
      .positional('ref', { type: 'string', describe: 'id, id prefix or alias (omit for the whole store)' })
      .option('limit', { alias: 'n', type: 'number', describe: 'at most N entries' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, read: true });
    const limit = a.limit ?? Number.POSITIVE_INFINITY;
    if (!a.ref) {
      const log = await storeLog(store, limit);
      emit(ctx, log, () =>
        log.map((l) => `${l.commit.slice(0, 12)}  ${l.date}  ${l.author}  ${l.subject}`).join('\n'),
      );
      return;
    }
    const { versions } = await memoryHistory(store, String(a.ref), limit);
    emit(ctx, versions, () =>
      versions
        .map(
          (v) =>
            `${colors(ctx).id(v.commit.slice(0, 12))}  ${v.date}  ${v.author} <${v.email}>\n    ${v.subject}${v.deleted ? '  (deleted)' : ''}`,
        )
        .join('\n'),
    );
  },
});
