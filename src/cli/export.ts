import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { exportRecords } from '../commands/bulk.js';
import { err } from '../errors.js';
import { noteLine, OKF_VERSION } from '../model/okf.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'export',
  describe:
    'export every memory as JSON lines (stdout, or --out FILE), or as an OKF bundle (--format okf --dir DIR)',
  builder: (y) =>
    y
      .option('jsonl', { type: 'boolean', default: true, describe: 'JSON lines (the default)' })
      .option('out', { alias: 'o', type: 'string', describe: 'write to a file instead of stdout' })
      .option('at', { type: 'string', describe: 'as the store was at a revision or date' })
      .option('dir', { type: 'string', describe: 'write the store as files into this folder' })
      .option('format', {
        type: 'string',
        describe: 'okf: with --dir, write an Open Knowledge Format v0.2 bundle (docs/okf.md)',
      })
      .option('force', {
        type: 'boolean',
        describe: 'with --format okf: write into a folder that is not empty',
      })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, read: true });
    const commit = a.at ? await store.resolveAt(a.at) : await store.requireTip();
    if (a.format !== undefined) {
      if (a.format !== 'okf')
        throw err(
          'E_INVALID_ARG',
          `unknown export format "${a.format}"`,
          'use --format okf (or no --format for JSON lines)',
        );
      if (a.dir === undefined)
        throw err('E_INVALID_ARG', '--format okf needs --dir DIR', 'pass the folder to write');
      const { okfBundle, writeBundle } = await import('../commands/okf.js');
      const dir = resolve(ctx.cwd, String(a.dir));
      const b = await okfBundle(store, commit);
      writeBundle(dir, b.files, !!a.force);
      // what OKF has no field for: said, one line per kind (kept in the git_mem extension)
      if (!ctx.json) for (const n of b.notes) ctx.io.err(`${noteLine(n, ['memory', 'memories'])}\n`);
      return emit(
        ctx,
        {
          dir: a.dir,
          format: 'okf',
          concepts: b.concepts,
          files: b.files.length,
          kept_in_extension: b.notes,
        },
        () =>
          `Exported ${b.concepts} ${b.concepts === 1 ? 'memory' : 'memories'} to ${a.dir} as OKF ${OKF_VERSION} (${b.files.length} files)`,
      );
    }
    if (a.dir !== undefined) {
      const { exportDir } = await import('../merge/layout.js');
      const r = await exportDir(store, commit, resolve(ctx.cwd, String(a.dir)));
      const done = `${r.written} written, ${r.unchanged} unchanged, ${r.removed} removed`;
      const left = r.left.length
        ? `\nLeft ${r.left.length} file${r.left.length === 1 ? '' : 's'} that ${r.left.length === 1 ? 'is' : 'are'} not the store's (${r.left.slice(0, 3).join(', ')}${r.left.length > 3 ? ', …' : ''}): move ${r.left.length === 1 ? 'it' : 'them'} out before git mem import --dir`
        : '';
      return emit(ctx, r, () => `Exported ${commit.slice(0, 12)} to ${a.dir}: ${done}${left}`);
    }
    const lines = await exportRecords(store, commit);
    const text = lines.map((l) => JSON.stringify(l)).join('\n') + (lines.length ? '\n' : '');
    if (a.out) {
      writeFileSync(resolve(ctx.cwd, String(a.out)), text);
      ctx.io.err(`Exported ${lines.length} memor${lines.length === 1 ? 'y' : 'ies'} to ${a.out}\n`);
    } else ctx.io.out(text);
  },
});
