import { verifyMemories } from '../commands/verify.js';
import { recordToJSON } from '../model/record.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'verify <refs..>',
  describe: 'confirm memories still hold: records who and when, and restarts an expiry',
  builder: (y) =>
    y
      .positional('refs', { type: 'string', describe: 'ids, id prefixes or aliases' })
      .option('by', { type: 'string', describe: 'who confirms them (default: your git identity)' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const refs = [a.refs ?? []].flat().map(String);
    const r = await verifyMemories(store, refs, { by: a.by });
    emit(ctx, { verified: r.records.map(recordToJSON), commit: r.commit }, () =>
      r.records
        .map(
          (x) =>
            `Verified ${x.id.slice(0, 12)} "${x.title}"${x.expires ? ` (expires ${x.expires})` : ''}${r.commit ? ` in ${r.commit.slice(0, 12)}` : ''}`,
        )
        .join('\n'),
    );
  },
});
