import { resolve } from 'node:path';
import { importJsonl } from '../commands/bulk.js';
import { readTextFile, type TextLimit } from '../commands/context.js';
import { err, isGitMemError } from '../errors.js';
import { noteLine } from '../model/okf.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

/** The most one import reads (a file of JSON lines, or stdin): split a larger one. */
export const IMPORT_BYTES = 256 * 1024 * 1024;

export default defineCommand({
  command: 'import [file]',
  describe: 'import memories from JSON lines (one commit; "-" reads stdin) or an OKF bundle (--okf DIR)',
  builder: (y) =>
    y
      .positional('file', { type: 'string', describe: 'same as --jsonl FILE' })
      .option('jsonl', {
        type: 'string',
        describe: 'file of JSON lines {id?, type, title, body, tags?, anchors?, …}',
      })
      .option('dir', { type: 'string', describe: 'make the store hold this folder' })
      .option('okf', {
        type: 'string',
        describe: 'import an Open Knowledge Format bundle (a folder of markdown concepts; docs/okf.md)',
      })
      .option('global', { type: 'boolean' })
      .option('allow-secret', { type: 'boolean' }),
  async run(a, ctx) {
    if (a.dir !== undefined) {
      const store = await openStore(ctx, { global: a.global, create: true });
      const { importDir } = await import('../merge/layout.js');
      const r = await importDir(store, resolve(ctx.cwd, String(a.dir)), { allowSecret: a['allow-secret'] });
      const done = `${r.added} added, ${r.updated} updated, ${r.removed} removed`;
      return emit(ctx, r, () => `Imported ${a.dir}: ${done} (${r.commit?.slice(0, 12) ?? 'nothing'})`);
    }
    if (a.okf !== undefined) {
      const store = await openStore(ctx, { global: a.global, create: true });
      const { importOkf } = await import('../commands/okf.js');
      const { records, ...r } = await importOkf(store, resolve(ctx.cwd, String(a.okf)), {
        allowSecret: a['allow-secret'],
      });
      if (!ctx.json) {
        for (const s of r.skipped) ctx.io.err(`okf: skipped ${s.path}: ${s.reason}\n`);
        for (const n of r.notes) ctx.io.err(`${noteLine(n, ['concept', 'concepts'])}\n`);
      }
      return emit(
        ctx,
        {
          imported: records.length,
          added: r.added,
          replaced: r.replaced,
          unchanged: r.unchanged,
          commit: r.commit,
          ids: records.map((x) => x.id),
          skipped: r.skipped,
          notes: r.notes,
        },
        () => {
          const n = `${records.length} ${records.length === 1 ? 'concept' : 'concepts'} (${r.added} new, ${r.replaced} replaced, ${r.unchanged} unchanged)`;
          return r.commit ? `Imported ${n} in ${r.commit.slice(0, 12)}` : `${n}: nothing changed, no commit`;
        },
      );
    }
    // "-" is stdin (`import -`, `--jsonl -`)
    const source = a.jsonl ?? a.file;
    if (source === undefined)
      throw err('E_INVALID_ARG', 'nothing to import', 'pass --jsonl FILE (or --jsonl - for stdin)');
    // read through a bound (`import /dev/zero` never ends) and as UTF-8 only
    const limit = (what: string): TextLimit => ({ maxBytes: IMPORT_BYTES, what });
    let text: string;
    if (source === '-') text = (await ctx.io.readStdin(limit('stdin'))) ?? '';
    else {
      try {
        text = readTextFile(resolve(ctx.cwd, String(source)), limit(String(source)));
      } catch (e) {
        if (isGitMemError(e)) throw e;
        throw err(
          'E_INVALID_ARG',
          `cannot read ${source}: ${(e as NodeJS.ErrnoException).code ?? e}`,
          'check the path',
        );
      }
    }
    const store = await openStore(ctx, { global: a.global, create: true });
    const tty = ctx.io.isTTY && !ctx.json;
    const { records, ...r } = await importJsonl(store, text, {
      allowSecret: a['allow-secret'],
      onProgress: tty
        ? (d, t) =>
            ctx.io.err(`\rimporting ${d}/${t} ${'#'.repeat(Math.round((d / t) * 30)).padEnd(30, '.')}`)
        : undefined,
    });
    if (tty) ctx.io.err('\n');
    emit(
      ctx,
      {
        imported: records.length,
        added: r.added,
        replaced: r.replaced,
        unchanged: r.unchanged,
        commit: r.commit,
        ids: records.map((x) => x.id),
      },
      () => {
        const n = `${records.length} ${records.length === 1 ? 'memory' : 'memories'} (${r.added} new, ${r.replaced} replaced, ${r.unchanged} unchanged)`;
        return r.commit ? `Imported ${n} in ${r.commit.slice(0, 12)}` : `${n}: nothing changed, no commit`;
      },
    );
  },
});
