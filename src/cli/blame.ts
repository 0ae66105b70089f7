import { parseAnchorSpecs } from '../anchors/types.js';
import type { BlameLoc, BlameMemory, BlameResult } from '../commands/blame.js';
import { err, isGitMemError } from '../errors.js';
import { provenanceText } from '../model/provenance.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';
import { type Colors, colors } from './output.js';
import { normalizeRepoPath } from './paths.js';

/** FILE[:START[-END]] → the file and its lines (the anchor-spec parser, with blame's wording). */
function parseTarget(spec: string): { file: string; start?: number; end?: number } {
  try {
    const [a] = parseAnchorSpecs([spec]);
    return { file: a.path, start: a.lines?.[0], end: a.lines?.[1] };
  } catch (e) {
    if (isGitMemError(e) && e.code === 'E_INVALID_ARG')
      throw err(
        'E_INVALID_ARG',
        `invalid FILE[:START[-END]] "${spec}"`,
        'lines start at 1 and END is at least START: git mem blame src/app.ts:10-20',
      );
    throw e;
  }
}

const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 10) : '?');

function place(l: BlameLoc | null, path: string): string {
  if (!l) return 'nowhere at HEAD';
  const where = l.path === path ? '' : `${l.path}:`;
  const lines = l.lines
    ? `${l.lines[0] === l.lines[1] ? 'line' : 'lines'} ${l.lines[0]}${l.lines[0] === l.lines[1] ? '' : `-${l.lines[1]}`}`
    : 'whole file';
  return `${where}${lines}${l.symbol ? ` (${l.symbol})` : ''}`;
}

function verifiedText(m: BlameMemory): string {
  const v = m.verified;
  if (!v) return 'not confirmed since a check found it stale';
  const at = v.commit ? ` at ${v.commit.slice(0, 12)}` : '';
  return `last verified ${day(v.at)}${at} (${v.by === 'check' ? 'by a check' : 'when anchored'})`;
}

function human(r: BlameResult, c: Colors): string {
  const range = r.lines ? `:${r.lines[0]}${r.lines[1] === r.lines[0] ? '' : `-${r.lines[1]}`}` : '';
  const out = [`${r.path}${range} at HEAD ${c.id(r.head.slice(0, 12))}`];
  if (!r.memories.length && !r.rules.length) {
    out.push(
      '',
      `No memory is anchored here and no rule covers ${r.path}.`,
      `Anchor one: git mem add --anchor ${r.path}${range} --type decision --title "…" --content "…"`,
    );
    return out.join('\n');
  }
  if (r.memories.length) {
    out.push('', `Memories anchored here (${r.memories.length}):`);
    for (const m of r.memories) {
      const flag = m.status === 'active' ? '' : `  ${c.warn(`[${m.status}]`)}`;
      const verdict = m.verdict.stale ? c.warn(m.verdict.status) : m.verdict.status;
      out.push(
        `${c.id(m.id.slice(0, 12))}  ${m.type}  ${m.title}${flag}`,
        `    ${place(m.at ?? null, r.path)}: ${verdict}, ${m.verdict.reason}`,
        `    ${c.dim(`by ${m.author ?? '?'} (${provenanceText(m.by)}) ${day(m.created)}; ${verifiedText(m)}`)}`,
      );
    }
  }
  if (r.rules.length) {
    out.push('', `Rules for ${r.path} (${r.rules.length}):`);
    for (const x of r.rules)
      out.push(
        `${c.id(x.id.slice(0, 12))}  ${x.title}  [${x.matched ?? 'everywhere'}]`,
        `    ${c.dim(`by ${x.author ?? '?'} (${provenanceText(x.by)}) ${day(x.created)}`)}`,
      );
  }
  return out.join('\n');
}

export default defineCommand({
  command: 'blame <target>',
  describe:
    'the memories anchored to lines of a file and the rules for it: who wrote them, when, and their verdict at HEAD',
  builder: (y) =>
    y.positional('target', {
      type: 'string',
      describe: 'FILE, FILE:LINE or FILE:START-END (lines as at HEAD)',
    }),
  async run(a, ctx) {
    const { file, start, end } = parseTarget(String(a.target));
    const store = await openStore(ctx, { read: true });
    const path = await normalizeRepoPath(store, ctx, file);
    const { blame } = await import('../commands/blame.js');
    const r = await blame(store, { path, start, end });
    emit(ctx, r, () => human(r, colors(ctx)));
  },
});
