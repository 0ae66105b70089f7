import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { exportRecords } from '../commands/bulk.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'export',
  describe: 'export every memory as JSON lines (stdout, or --out FILE)',
  builder: (y) =>
    y
      .option('jsonl', { type: 'boolean', default: true, describe: 'JSON lines (the default)' })
      .option('out', { alias: 'o', type: 'string', describe: 'write to a file instead of stdout' })
      .option('at', { type: 'string', describe: 'as the store was at a revision or date' })
      .option('dir', { type: 'string', describe: 'write the store as files into this folder' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, read: true });
    const commit = a.at ? await store.resolveAt(a.at) : await store.requireTip();
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
