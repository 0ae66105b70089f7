/** Human output of search hits. Pure. */
import { kindOf } from '../commands/list.js';
import type { SearchHit } from './index.js';

/**
 * The hits in rank order, curated memories first; pending proposals and session summaries after
 * them under their own heading (never mixed in), each group in rank order.
 */
export function hitLines(hits: readonly SearchHit[]): string {
  if (!hits.length) return 'No matching memories.';
  // the kinds `list` shows apart (src/commands/list.ts kindOf)
  const apart = (h: SearchHit) => kindOf(h) !== 'memories';
  const curated = hits.filter((h) => !apart(h));
  const rest = hits.filter(apart);
  const lines = (list: readonly SearchHit[]) =>
    list
      .map((h) => {
        const flag = h.status === 'active' ? '' : `  [${h.status}]`;
        const alias = h.alias ? `  (${h.alias})` : '';
        // the project's own memory is the default; anything else says where it comes from
        const from = h.store && h.store !== 'project' ? `  (from ${h.store})` : '';
        const type = h.type.length >= 14 ? h.type : h.type + ' '.repeat(14 - h.type.length);
        return `${h.id.slice(0, 12)}  ${type} ${h.title}${alias}${from}${flag}  ${h.score.toFixed(3)}\n    ${h.why}`;
      })
      .join('\n');
  if (!rest.length) return lines(curated);
  const head = 'Pending proposals and session summaries:';
  return curated.length ? `${lines(curated)}\n\n${head}\n${lines(rest)}` : `${head}\n${lines(rest)}`;
}
