import type { BodyHunk } from '../merge/conflicts.js';
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
          const what = at.fields?.length ? ` differs in ${at.fields.join(', ')}` : '';
          // the other version's title only when it is not the record's (a body conflict is about the text)
          const title = at.title && at.title !== c.title ? `; its title: "${at.title}"` : '';
          if (!at.bodyDiff?.length) {
            lines.push(`    other version ${at.hash}${what}${title}`);
            continue;
          }
          lines.push(`    other version ${at.hash}${what}${title} (- kept, + other):`);
          lines.push(...diffLines(at.bodyDiff, `git show refs/memory:${at.path}`));
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

const MAX_DIFF_LINES = 12;
const clipLine = (s: string) => (s.length > 120 ? `${s.slice(0, 119)}…` : s);

/** A compact diff of a body conflict: at most MAX_DIFF_LINES lines, then where to read the rest. */
function diffLines(hunks: BodyHunk[], whole: string): string[] {
  const out: string[] = [];
  let left = 0;
  for (const h of hunks) {
    const lines = [
      `      @@ line ${h.line}`,
      ...h.kept.map((l) => `      - ${clipLine(l)}`),
      ...h.other.map((l) => `      + ${clipLine(l)}`),
    ];
    for (const l of lines) {
      if (out.length < MAX_DIFF_LINES) out.push(l);
      else if (!l.startsWith('      @@')) left++;
    }
  }
  if (left)
    out.push(
      `      … ${left} more line${left === 1 ? ' differs' : 's differ'} (the other version in full: ${whole})`,
    );
  return out;
}
