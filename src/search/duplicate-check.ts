/**
 * The duplicate step of the add operation (src/commands/add.ts): a likely
 * duplicate stops the add with E_DUPLICATE naming it; with `force` the add
 * goes on and `warn` gets a note. Search failures never block an add.
 */

import { daemonLikely, queryViaDaemon } from '../daemon/client.js';
import { err, isGitMemError } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { mark } from '../trace.js';
import { words } from './text.js';

export interface DuplicateCheck {
  env: NodeJS.ProcessEnv;
  /** Ask the search daemon (running, or worth starting); false for the global store. */
  daemon: boolean;
  /** Add anyway; the duplicate is reported through warn. */
  force: boolean;
  /** A person's explicit add: a likely duplicate whose title differs only warns. */
  person?: boolean;
  warn?: (line: string) => void;
}

/**
 * Starts loading the in-process search modules when no search daemon runs
 * (an add calls this first, so the files are read while its git processes start).
 */
export function preload(store: Store, env: NodeJS.ProcessEnv, daemon: boolean): void {
  if (daemon && daemonLikely(store, env)) return;
  import('./dedup.js').catch(() => {});
  import('./index.js').catch(() => {});
}

export async function checkDuplicates(
  store: Store,
  q: { title: string; body: string; tags?: string[] },
  opts: DuplicateCheck,
): Promise<void> {
  let dups: Awaited<ReturnType<typeof import('./dedup.js').findDuplicates>>;
  try {
    // a running daemon (or one worth starting) holds the index already. Asked before
    // anything else awaits, so its answer overlaps the git processes add starts next
    const viaDaemon = opts.daemon ? await queryViaDaemon(store, { op: 'dedup', q }, opts.env) : undefined;
    if (viaDaemon) dups = viaDaemon as typeof dups;
    else {
      const { findDuplicates } = await import('./dedup.js');
      const { providerFor } = await import('./index.js');
      mark('duplicates: search loaded');
      dups = await findDuplicates(store, q, await providerFor(store));
    }
    mark('duplicates: checked');
  } catch (e) {
    if (isGitMemError(e) && e.code === 'E_DUPLICATE') throw e;
    return; // the check is advisory: never block an add because search failed
  }
  if (!dups.length) return;
  const d = dups[0];
  const what = `${d.id.slice(0, 12)}${d.alias ? ` (${d.alias})` : ''} ${d.type} "${d.title}"`;
  const how =
    d.reason === 'exact'
      ? 'same text'
      : d.reason === 'overlap'
        ? `token overlap ${d.similarity}`
        : `cosine ${d.similarity}`;
  const more = dups.length > 1 ? ` and ${dups.length - 1} more` : '';
  if (opts.person && !opts.force && d.reason !== 'exact' && !sameTitle(d.title, q.title)) {
    opts.warn?.(`git-mem: warning: similar to ${what} (${how})${more}; added, since the titles differ`);
    return;
  }
  if (opts.force) {
    opts.warn?.(`git-mem: note: likely duplicate of ${what} (${how})${more}; added anyway (--force)`);
    return;
  }
  throw err(
    'E_DUPLICATE',
    `likely duplicate of ${what} (${how})${more}`,
    'update that memory instead, or pass --force to add anyway',
    {
      duplicates: dups.slice(0, 5),
    },
  );
}

/**
 * Whether two titles name the same thing: the same numbers (item 1 is not item 9)
 * and at least half their words in common.
 */
export function sameTitle(x: string, y: string): boolean {
  // words as search reads them (src/search/text.ts): the titles' words as typed, unstemmed
  const a = new Set(words(x, false));
  const b = new Set(words(y, false));
  const nums = (w: Set<string>) =>
    [...w]
      .filter((t) => /\d/.test(t))
      .sort()
      .join(' ');
  if (nums(a) !== nums(b)) return false;
  const shared = [...a].filter((t) => b.has(t)).length;
  const union = new Set([...a, ...b]).size;
  return union === 0 || shared / union >= 0.5;
}
