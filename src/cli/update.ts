import { updateMemory } from '../commands/memory.js';
import { splitScopes } from '../model/glob.js';
import { parseDateInput, recordToJSON } from '../model/record.js';
import { defineCommand } from './command.js';
import { emit, list, openStore, readContent, secretPolicy } from './context.js';

export default defineCommand({
  command: 'update <ref>',
  describe: 'change fields of a memory (only what you pass changes)',
  builder: (y) =>
    y
      .positional('ref', { type: 'string', describe: 'id, id prefix or alias' })
      .option('content', { alias: 'c', type: 'string', describe: 'replace the body' })
      .option('file', { alias: 'f', type: 'string', describe: 'replace the body from a file' })
      .option('stdin', { type: 'boolean', describe: 'replace the body from stdin' })
      .option('title', { type: 'string' })
      .option('type', { type: 'string' })
      .option('tags', {
        type: 'string',
        array: true,
        describe: 'replace all tags (comma-separated or repeated)',
      })
      .option('add-tag', { type: 'string', array: true, describe: 'add tags' })
      .option('remove-tag', { type: 'string', array: true, describe: 'remove tags' })
      .option('status', { type: 'string', describe: 'pending, active, stale, superseded or archived' })
      .option('scope', {
        type: 'string',
        array: true,
        describe: 'replace scope globs (repeat or separate with commas; {a,b} stays whole)',
      })
      .option('confidence', { type: 'number' })
      .option('source', { type: 'string' })
      .option('expires', { type: 'string', describe: 'ISO date or duration (30d)' })
      .option('clear-expiry', { type: 'boolean', describe: 'remove the expiry' })
      .option('global', { type: 'boolean' })
      .option('allow-secret', { type: 'boolean' }),
  async run(a, ctx) {
    const wantsBody = a.content !== undefined || a.file !== undefined || a.stdin;
    const body = wantsBody ? await readContent(ctx, a, true) : undefined;
    if (a.expires && a['clear-expiry']) {
      const { err } = await import('../errors.js');
      throw err('E_INVALID_ARG', 'pass either --expires or --clear-expiry, not both');
    }
    const store = await openStore(ctx, { global: a.global });
    const r = await updateMemory(store, String(a.ref), {
      body,
      title: a.title,
      type: a.type,
      tags: a.tags !== undefined ? list(a.tags) : undefined,
      addTags: a['add-tag'] ? list(a['add-tag']) : undefined,
      removeTags: a['remove-tag'] ? list(a['remove-tag']) : undefined,
      status: a.status,
      scope: a.scope !== undefined ? splitScopes([a.scope].flat()) : undefined,
      confidence: a.confidence,
      source: a.source,
      expires: a.expires ? parseDateInput(a.expires) : undefined,
      clearExpiry: a['clear-expiry'],
      allowSecret: await secretPolicy(ctx, store, a['allow-secret'], {
        title: a.title,
        body,
        source: a.source,
        tags: [a.tags, ...(a['add-tag'] ?? [])].filter((t) => t !== undefined).join(','),
        scope: a.scope !== undefined ? splitScopes([a.scope].flat()).join(' ') : undefined,
      }),
    });
    emit(ctx, { ...recordToJSON(r.record), changed: r.changed, commit: r.commit }, () =>
      r.changed.length
        ? `Updated ${r.record.id.slice(0, 12)} (${r.changed.join(', ')}) in ${r.commit?.slice(0, 12)}`
        : `Nothing changed in ${r.record.id.slice(0, 12)}`,
    );
  },
});
