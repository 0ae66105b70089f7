import { recordToJSON } from '../model/record.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';
import { recordText } from './format.js';
import { colors } from './output.js';

export default defineCommand({
  command: 'show <ref>',
  describe: 'show one memory by id, unique id prefix or alias',
  builder: (y) =>
    y
      .positional('ref', { type: 'string', describe: 'id, id prefix or alias' })
      .option('at', { type: 'string', describe: 'as the store was at a revision or date' })
      .option('global', { type: 'boolean', describe: 'read the personal global store' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const at = a.at ? await store.resolveAt(a.at) : undefined;
    const { record, catalog } = await store.get(String(a.ref), at);
    emit(ctx, recordToJSON(record), () => recordText(record, catalog, colors(ctx)));
  },
});
