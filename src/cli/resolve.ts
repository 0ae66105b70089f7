import { err } from '../errors.js';
import { defineCommand } from './command.js';
import { emit, openStore, readContent } from './context.js';

export default defineCommand({
  command: 'resolve <ref>',
  describe: 'settle a memory flagged by a merge: keep it, take the other version, or give new content',
  builder: (y) =>
    y
      .positional('ref', { type: 'string', describe: 'id, id prefix or alias' })
      .option('take', {
        type: 'string',
        describe:
          'ours = the version the memory holds (default); theirs = the other version (or the attempted deletion); or an attic HASH',
      })
      .option('content', { type: 'string', describe: 'the settled body text' })
      .option('file', { type: 'string', describe: 'read the settled body from a file' })
      .option('allow-secret', { type: 'boolean' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const { resolveConflict } = await import('../merge/conflicts.js');
    if (a.take !== undefined && (a.content !== undefined || a.file !== undefined)) {
      throw err('E_INVALID_ARG', 'pass either --take or --content/--file, not both');
    }
    const content =
      a.content !== undefined || a.file !== undefined ? await readContent(ctx, a, true) : undefined;
    const store = await openStore(ctx, { global: a.global });
    const r = await resolveConflict(store, String(a.ref), {
      take: a.take === undefined ? undefined : String(a.take),
      content,
      allowSecret: a['allow-secret'],
    });
    const what = {
      kept: 'kept its version',
      'took-attic': 'took the other version',
      deleted: 'applied the deletion',
      content: 'set the new content',
    }[r.action];
    emit(ctx, r, () => `Resolved ${r.id.slice(0, 12)}: ${what} (${r.commit?.slice(0, 12)})`);
  },
});
