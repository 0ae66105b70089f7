import { memoryHistory, storeLog } from '../commands/history.js';
import { type CommitInfo, signatureText } from '../gitstore/commit-info.js';
import { provenanceText } from '../model/provenance.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';
import { colors } from './output.js';

/**
 * "agent claude-code (session …)" and the signature, for people: the agent whenever one made the
 * commit; the signature when any shown commit is signed (then an unsigned one stands out).
 */
function noteOf(i: CommitInfo | undefined, signed: boolean): string {
  return [
    i?.by?.kind === 'agent' ? provenanceText(i.by) : '',
    signed && i?.signature ? signatureText(i.signature) : '',
  ]
    .filter(Boolean)
    .join('; ');
}

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
      const { entries, infos, signed } = await storeLog(store, limit);
      emit(ctx, entries, () =>
        entries
          .map((l) => {
            const n = noteOf(infos.get(l.commit), signed);
            return `${l.commit.slice(0, 12)}  ${l.date}  ${l.author}  ${l.subject}${n ? `  [${n}]` : ''}`;
          })
          .join('\n'),
      );
      return;
    }
    const { entries: versions, infos, signed } = await memoryHistory(store, String(a.ref), limit);
    emit(ctx, versions, () =>
      versions
        .map((v) => {
          const n = noteOf(infos.get(v.commit), signed);
          return `${colors(ctx).id(v.commit.slice(0, 12))}  ${v.date}  ${v.author} <${v.email}>\n    ${v.subject}${v.deleted ? '  (deleted)' : ''}${n ? `\n    ${n}` : ''}`;
        })
        .join('\n'),
    );
  },
});
