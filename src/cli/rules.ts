import { rulesFor } from '../commands/rules.js';
import { defineCommand } from './command.js';
import { emit, maybeGlobalStore, openStore } from './context.js';
import { normalizeRepoPath } from './paths.js';

export default defineCommand({
  command: 'rules',
  describe: 'the rules in force for a file, most specific first (project over global)',
  builder: (y) => y.option('file', { type: 'string', describe: 'the file being edited' }).option('no-global', { type: 'boolean', describe: 'project rules only' }),
  async run(a, ctx) {
    const store = await openStore(ctx);
    const file = a.file !== undefined ? await normalizeRepoPath(store, ctx, String(a.file)) : undefined;
    const global = a.global === false || a['no-global'] ? undefined : await maybeGlobalStore(ctx);
    const rules = await rulesFor(store, file, global);
    emit(ctx, rules, () =>
      rules.length
        ? rules.map((r) => `${r.id.slice(0, 12)}  [${r.origin}${r.matched ? ` ${r.matched}` : ''}] ${r.title}\n    ${r.body.trim().split('\n').join('\n    ')}`).join('\n')
        : `No rules${file ? ` for ${file}` : ''}. Add one with: git mem add --type rule --scope 'src/**/*.ts' --title "…" --content "…"`,
    );
  },
});
