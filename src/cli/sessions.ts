/** `git mem sessions [show ID]`: the session summaries agents left behind. */
import { err } from '../errors.js';
import { recordToJSON } from '../model/record.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';
import { pad, recordText } from './format.js';

export default defineCommand({
  command: 'sessions [action] [ref]',
  describe: 'list agent session summaries, or show one (sessions show ID)',
  builder: (y) =>
    y
      .positional('action', { choices: ['list', 'show'] as const, describe: 'list (default) or show' })
      .positional('ref', {
        type: 'string',
        describe: 'with show: a session record id, prefix, or agent session id',
      })
      .option('limit', { type: 'number', describe: 'list at most this many (default 20)' }),
  async run(a, ctx) {
    const store = await openStore(ctx);
    const cat = await store.catalog();
    if (a.action === 'show') {
      if (!a.ref)
        throw err('E_INVALID_ARG', 'sessions show needs an id', 'see the ids with git mem sessions');
      const { resolveSession } = await import('../agents/sessions.js');
      const id = await resolveSession(store, String(a.ref));
      const { record } = await store.get(id);
      if (record.type !== 'session')
        throw err(
          'E_INVALID_ARG',
          `${record.id.slice(0, 12)} is a ${record.type}, not a session`,
          'use git mem show for other memories',
        );
      emit(ctx, recordToJSON(record), () => recordText(record, cat));
      return;
    }
    const limit = a.limit === undefined ? 20 : Number(a.limit);
    if (!(limit > 0)) throw err('E_INVALID_ARG', `--limit must be a positive number, not ${a.limit}`);
    const { sessionRows } = await import('../agents/sessions.js');
    const rows = await sessionRows(store, limit);
    emit(ctx, rows, () =>
      rows.length
        ? rows
            .map(
              (r) =>
                `${cat.abbrev(r.id)}  ${r.created.slice(0, 16).replace('T', ' ')}  ${pad(String(r.outcome ?? '?'), 12)} ${pad(r.duration_s === null ? '' : `${Math.round(Number(r.duration_s) / 60)} min`, 7)} ${r.title}${r.compressed ? ' [compressed]' : ''}`,
            )
            .join('\n')
        : 'No session summaries yet. Install the agent hooks with: git mem hooks install --claude',
    );
  },
});
