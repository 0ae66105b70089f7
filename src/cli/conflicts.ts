import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'conflicts',
  describe: 'list memories a merge flagged for review (settle them with git mem resolve)',
  builder: (y) => y.option('global', { type: 'boolean', describe: 'the personal global store' }),
  async run(a, ctx) {
    const { listConflicts } = await import('../merge/conflicts.js');
    const store = await openStore(ctx, { global: a.global });
    const list = await listConflicts(store);
    emit(ctx, list, () => {
      if (!list.length) return 'No memories flagged for review.';
      const lines: string[] = [];
      for (const c of list) {
        lines.push(`${c.id.slice(0, 12)}  [${c.reasons.join(', ')}]  ${c.title}`);
        for (const at of c.attic) {
          const what = at.fields?.length ? ` (${at.fields.join(', ')})` : '';
          lines.push(`    other version ${at.hash}${what}${at.title ? `: "${at.title}"` : ''}`);
        }
        if (c.deletion)
          lines.push(
            `    deletion attempted${c.deletion.by ? ` by ${c.deletion.by}` : ''}${c.deletion.reason ? `: ${c.deletion.reason}` : ''}`,
          );
        if (c.lostAlias) lines.push(`    lost the alias "${c.lostAlias}" to an older memory`);
      }
      lines.push('', 'Settle one with: git mem resolve ID [--take ours|theirs|HASH] [--content TEXT]');
      return lines.join('\n');
    });
  },
});
