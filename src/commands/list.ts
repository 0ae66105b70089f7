/**
 * Filtering memory summaries: what `git mem list` and the web UI's Memories
 * page select by type, status, tag, alias prefix and file. Pure.
 */
import { err } from '../errors.js';
import type { CatalogEntry } from '../gitstore/catalog.js';
import micromatch from '../model/glob.js';
import { kindOf, type ListKind } from '../model/kinds.js';
import { expiredAt, isStatus, isType } from '../model/record.js';

export { kindOf, type ListKind };

/** The kinds, in the order `list`, `search` and the UI show them. */
export const LIST_KINDS: readonly ListKind[] = ['memories', 'pending', 'sessions'];

/**
 * Whether a list shows the curated memories alone, with the pending proposals and session
 * summaries apart (counted by `git mem list`, a section of their own in the UI): when no kind,
 * type or status was asked for. Asked for one, it lists every record that matches.
 */
export function listsApart(f: Pick<ListFilter, 'kinds' | 'type' | 'status'>): boolean {
  return !f.kinds?.length && !f.type?.length && !f.status?.length;
}

/** The kinds named in a list (`memories,pending`), checked. */
export function parseKinds(list: readonly string[] | undefined): ListKind[] {
  const out: ListKind[] = [];
  for (const k of list ?? []) {
    if (!(LIST_KINDS as readonly string[]).includes(k))
      throw err('E_INVALID_ARG', `unknown kind "${k}"`, `use ${LIST_KINDS.join(', ')}`);
    if (!out.includes(k as ListKind)) out.push(k as ListKind);
  }
  return out;
}

export interface ListFilter {
  category?: string;
  /** only records of these kinds (curated memories, pending proposals, session summaries) */
  kinds?: ListKind[];
  type?: string[];
  tag?: string[];
  status?: string[];
  scopeFile?: string;
  includeExpired?: boolean;
}

/** What a filter reads of a summary (catalog rows and full entries both have it). */
export type Filterable = Pick<CatalogEntry, 'id' | 'tags' | 'alias' | 'expires'> & {
  type: string;
  status: string;
  scope?: string[];
  anchors?: string[];
};

/** Validates a filter once and returns the predicate (pure). */
export function makeFilter(f: ListFilter, now = Date.now()): (e: Filterable) => boolean {
  for (const t of f.type ?? [])
    if (!isType(t)) throw err('E_INVALID_ARG', `unknown type "${t}"`, 'see git mem add --help for types');
  for (const s of f.status ?? []) if (!isStatus(s)) throw err('E_INVALID_ARG', `unknown status "${s}"`);
  const types = f.type?.length ? new Set(f.type) : undefined;
  const statuses = f.status?.length ? new Set(f.status) : undefined;
  const tags = f.tag?.length ? f.tag.map((t) => t.toLowerCase()) : undefined;
  const category = f.category?.replace(/\/$/, '');
  const kinds = f.kinds?.length ? new Set(f.kinds) : undefined;
  const expired = expiredAt(now);
  return (e) => {
    if (!f.includeExpired && expired(e)) return false;
    if (types && !types.has(e.type)) return false;
    if (statuses && !statuses.has(e.status)) return false;
    if (kinds && !kinds.has(kindOf(e))) return false;
    if (tags && !tags.every((t) => e.tags.includes(t))) return false;
    if (category !== undefined && !(e.alias === category || e.alias?.startsWith(`${category}/`)))
      return false;
    if (f.scopeFile !== undefined) {
      const p = f.scopeFile;
      const scope = e.scope ?? [];
      if (scope.length && !micromatch.isMatch(p, scope, { dot: true })) return false;
      if (!scope.length && !(e.anchors ?? []).some((a) => a === p)) return false;
    }
    return true;
  };
}

/** Pure filter over catalog entries; sorted oldest first (ids are time-ordered). */
export function filterEntries<T extends Filterable>(
  entries: Iterable<T>,
  f: ListFilter,
  now = Date.now(),
): T[] {
  const keep = makeFilter(f, now);
  const out: T[] = [];
  for (const e of entries) if (keep(e)) out.push(e);
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}
