/** `git mem strategy add|record|list`: procedural memory with success/failure counts (seed 001). */
import { err } from '../errors.js';
import { defineCommand } from './command.js';
import { emit, list, openStore, readContent } from './context.js';
import { pad } from './format.js';

export default defineCommand({
  command: 'strategy <action> [ref]',
  describe: 'strategies: add one, record an outcome (--success/--failure), list by confidence',
  builder: (y) =>
    y
      .positional('action', { choices: ['add', 'record', 'list'] as const })
      .positional('ref', { type: 'string', describe: 'with record: the strategy id, prefix or alias' })
      .option('success', { type: 'boolean', describe: 'with record: it worked' })
      .option('failure', { type: 'boolean', describe: 'with record: it did not' })
      .option('title', { type: 'string', describe: 'with add: one line naming the approach' })
      .option('content', { type: 'string', describe: 'with add: when it applies, preconditions, notes' })
      .option('file', { type: 'string', describe: 'with add: read the content from a file' })
      .option('tags', { type: 'string', array: true, describe: 'with add: tags' })
      .option('all', { type: 'boolean', describe: 'with list: include archived strategies' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { create: true });
    const mod = await import('../agents/strategy.js');
    if (a.action === 'add') {
      if (!a.title) throw err('E_INVALID_ARG', 'a title is required', 'pass --title "…"');
      const body = (await readContent(ctx, a, true)) ?? '';
      const { addMemory } = await import('../commands/memory.js');
      const { record } = await addMemory(store, {
        type: 'strategy',
        title: String(a.title),
        body,
        tags: list(a.tags),
        confidence: mod.STRATEGY_NEW,
        extra: { successes: 0, failures: 0 },
      });
      emit(
        ctx,
        { id: record.id, title: record.title, confidence: record.confidence },
        () => `added strategy ${record.id.slice(0, 12)} (confidence ${record.confidence})`,
      );
      return;
    }
    if (a.action === 'record') {
      if (!a.ref)
        throw err('E_INVALID_ARG', 'name the strategy', 'git mem strategy record ID --success|--failure');
      if (!!a.success === !!a.failure)
        throw err('E_INVALID_ARG', 'pass exactly one of --success or --failure');
      const r = await mod.recordOutcome(store, String(a.ref), a.success ? 'success' : 'failure');
      emit(
        ctx,
        {
          id: r.record.id,
          title: r.record.title,
          confidence: r.record.confidence,
          status: r.record.status,
          ...r.counts,
        },
        () =>
          `${r.record.id.slice(0, 12)} ${r.record.title}: ${r.counts.successes} success${r.counts.successes === 1 ? '' : 'es'}, ${r.counts.failures} failure${r.counts.failures === 1 ? '' : 's'}, confidence ${r.record.confidence}${r.archived ? ' — archived (below 0.3)' : ''}`,
      );
      return;
    }
    if (a.ref) throw err('E_INVALID_ARG', 'strategy list takes no id');
    if (!(await store.tip())) {
      emit(ctx, [], () => 'No strategies yet. Add one with: git mem strategy add --title "…" --content "…"');
      return;
    }
    const cat = await store.catalog();
    const entries = [...cat.entries.values()].filter(
      (e) => e.type === 'strategy' && (a.all || e.status !== 'archived'),
    );
    const { parseRecord, recordPath } = await import('../model/record.js');
    const blobs = await store.catFile.readMany(entries.map((e) => e.oid));
    const rows = entries
      .map((e, i) => {
        const r = parseRecord(blobs[i]!.content.toString('utf8'), recordPath(e.id));
        return { id: r.id, title: r.title, confidence: r.confidence, status: r.status, ...mod.countsOf(r) };
      })
      .sort((x, y) => y.confidence - x.confidence || (x.id < y.id ? -1 : 1));
    emit(ctx, rows, () =>
      rows.length
        ? rows
            .map(
              (r) =>
                `${cat.abbrev(r.id)}  ${pad(r.confidence.toFixed(2), 5)} ${pad(`${r.successes}✓ ${r.failures}✗`, 8)} ${r.title}${r.status !== 'active' ? ` [${r.status}]` : ''}`,
            )
            .join('\n')
        : 'No strategies yet. Add one with: git mem strategy add --title "…" --content "…"',
    );
  },
});
