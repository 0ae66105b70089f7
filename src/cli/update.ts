import { updateFromInput } from '../commands/memory.js';
import { err } from '../errors.js';
import { recordToJSON } from '../model/record.js';
import { defineCommand } from './command.js';
import { emit, openStore, readContent, secretScanFor } from './context.js';
import { updateInputOf, withFieldOptions } from './field-options.js';

export default defineCommand({
  command: 'update <ref>',
  describe:
    "change fields of a memory (only what you pass changes; '' clears a field; none on a terminal: the editor)",
  builder: (y) =>
    withFieldOptions(y, 'update')
      .positional('ref', { type: 'string', describe: 'id, id prefix or alias' })
      .option('content', { alias: 'c', type: 'string', describe: 'replace the body' })
      .option('file', { alias: 'f', type: 'string', describe: 'replace the body from a file' })
      .option('stdin', { type: 'boolean', describe: 'replace the body from stdin' })
      .option('clear-expiry', { type: 'boolean', describe: "remove the expiry (the same as --expires '')" })
      .option('global', { type: 'boolean' })
      .option('allow-secret', { type: 'boolean' }),
  async run(a, ctx) {
    const wantsBody = a.content !== undefined || a.file !== undefined || a.stdin;
    const body = wantsBody ? await readContent(ctx, a, true) : undefined;
    const input = updateInputOf(a as Record<string, unknown>);
    if (a['clear-expiry']) {
      if (input.expires !== undefined)
        throw err('E_INVALID_ARG', 'pass either --expires or --clear-expiry, not both');
      input.expires = '';
    }
    if (body !== undefined) input.body = body;
    const store = await openStore(ctx, { global: a.global });
    // nothing to change given, on a terminal: the title and body in the editor, as git commit --amend
    if (!wantsBody && !Object.keys(input).length && ctx.io.stdinIsTTY) {
      const { editMessage, editTemplate } = await import('./editor.js');
      const { record: current } = await store.get(String(a.ref));
      const edited = await editMessage(
        store.repo,
        ctx.env,
        editTemplate(current.title, current.body, [`Editing ${current.id}`]),
      );
      input.title = edited.title;
      input.body = edited.body;
    }
    const r = await updateFromInput(store, String(a.ref), input, {
      allowSecret: !!a['allow-secret'],
      secretScan: secretScanFor(ctx, store),
      warn: (line) => ctx.io.err(`${line}\n`),
    });
    emit(ctx, { ...recordToJSON(r.record), changed: r.changed, commit: r.commit }, () =>
      r.changed.length
        ? `Updated ${r.record.id.slice(0, 12)} (${r.changed.join(', ')}) in ${r.commit?.slice(0, 12)}`
        : `Nothing changed in ${r.record.id.slice(0, 12)}`,
    );
  },
});
