/**
 * The one search operation: what `git mem search`, the web UI's Memories page and the MCP
 * `search` tool call, so the same question gets the same answer everywhere. It refuses a query
 * with nothing to search for, asks the store's query daemon when the caller allows one (else
 * ranks in this process: src/search/index.ts `searchMemories`), labels the hits with their
 * store, merges the team stores' (src/search/layers.ts) and counts what it returns as used when
 * the caller gives the hits to an agent.
 */

import { err, isGitMemError } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { type SearchHit, type SearchOptions, type SearchQuery, searchMemories } from './index.js';
import { labelHits, mergeHits, searchTeams } from './layers.js';
import type { NamedStore } from './rules.js';
import { terms } from './text.js';
import { recordUse } from './usage.js';

export interface RunSearchOptions extends SearchOptions {
  /** What the store's hits are labelled (`store` of each hit): `project` (default) or `global`. */
  label?: string;
  /** Team stores searched beside the store, their hits merged by weighted score. */
  teams?: readonly NamedStore[];
  /**
   * Ask the store's query daemon first, with this environment deciding whether one runs or is
   * started (src/daemon/client.ts); unset: ranked in this process.
   */
  daemonEnv?: NodeJS.ProcessEnv;
}

/**
 * Refuses a search with nothing to go on: no words, file, type or tag; or words that are all
 * common words or symbols (`the and of`, `.*`), unless the last word may be unfinished (`prefix`).
 */
export function checkQuery(q: SearchQuery): void {
  const filtered = !!q.file || !!q.types?.length || !!q.tags?.length;
  if (!q.query.trim() && !filtered)
    throw err(
      'E_INVALID_ARG',
      'nothing to search for',
      'pass words to look for, --file PATH, --type or --tag',
    );
  if (q.query.trim() && !filtered && !q.prefix && !terms(q.query).length)
    throw err(
      'E_INVALID_ARG',
      `nothing to search for in "${q.query.trim().slice(0, 60)}": only common words or symbols`,
      'pass words that say what the memory is about, --file PATH, --type or --tag',
    );
}

/** One store's hits: from its query daemon when one answers, else ranked here. */
async function ownHits(store: Store, q: SearchQuery, opts: RunSearchOptions): Promise<SearchHit[]> {
  if (opts.daemonEnv) {
    const { queryViaDaemon } = await import('../daemon/client.js');
    try {
      const hits = await queryViaDaemon(store, { op: 'search', q, count: false }, opts.daemonEnv);
      if (hits) return hits as SearchHit[];
    } catch (e) {
      if (isGitMemError(e)) throw e; // the query itself was refused
    }
  }
  return searchMemories(store, q, { ...opts, recordUsage: false });
}

/** The hits for a query, best first, at most `q.limit` (default 10), each labelled with its store. */
export async function runSearch(
  store: Store,
  q: SearchQuery,
  opts: RunSearchOptions = {},
): Promise<Array<SearchHit & { store: string }>> {
  checkQuery(q);
  const label = opts.label ?? 'project';
  let hits = labelHits(await ownHits(store, q, opts), label);
  if (opts.teams?.length) hits = mergeHits(hits, await searchTeams(opts.teams, q, opts), q.limit ?? 10);
  // given to an agent: each of this store's hits counts as a use (a person's search does not)
  if (opts.recordUsage === true)
    recordUse(
      store.repo,
      hits.filter((h) => h.store === label).map((h) => h.id),
    );
  return hits;
}
