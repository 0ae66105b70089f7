/**
 * What a record is to a reader: a curated memory, a pending proposal or a session summary. `list`,
 * `search` and the UI show the curated memories first and the other two apart (docs/search.md).
 * Pure.
 */
export type ListKind = 'memories' | 'pending' | 'sessions';

export function kindOf(e: { type: string; status: string }): ListKind {
  if (e.type === 'session') return 'sessions';
  return e.status === 'pending' ? 'pending' : 'memories';
}
