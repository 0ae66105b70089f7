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

export function hitLines(hits: SearchHitView[]): string {
  if (!hits.length) return 'No matching memories.';
  return hits
    .map((h) => {
      const flag = h.status === 'active' ? '' : `  [${h.status}]`;
      const alias = h.alias ? `  (${h.alias})` : '';
      // the project's own memory is the default; anything else says where it comes from
      const from = h.store && h.store !== 'project' ? `  (from ${h.store})` : '';
      const type = h.type.length >= 14 ? h.type : h.type + ' '.repeat(14 - h.type.length);
      return `${h.id.slice(0, 12)}  ${type} ${h.title}${alias}${from}${flag}  ${h.score.toFixed(3)}\n    ${h.why}`;
    })
    .join('\n');
}
