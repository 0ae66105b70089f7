/** Human output of search hits (shared by the CLI command and its fast path). Pure, no imports. */

export interface SearchHitView {
  id: string;
  alias: string | null;
  type: string;
  title: string;
  status: string;
  score: number;
  why: string;
  /** the store it comes from: `project`, a team store's name, or `global` */
  store?: string;
}

/**
 * The hits in rank order, curated memories first; pending proposals and session summaries after
 * them under their own heading (never mixed in), each group in rank order.
 */
export function hitLines(hits: SearchHitView[]): string {
  if (!hits.length) return 'No matching memories.';
  const apart = (h: SearchHitView) => h.type === 'session' || h.status === 'pending';
  const curated = hits.filter((h) => !apart(h));
  const rest = hits.filter(apart);
  const lines = (list: SearchHitView[]) =>
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
