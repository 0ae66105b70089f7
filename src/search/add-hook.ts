/**
 * `git mem add`'s duplicate warning (wired in through addHooks().beforeAdd):
 * a likely duplicate stops the add with E_DUPLICATE and shows it; --force
 * adds anyway with a note on stderr. A person's explicit add is stopped only
 * by a near-identical memory (same text, or the same title and similar text):
 * otherwise it warns and proceeds. Search failures never block an add.
 */

import type { Ctx } from '../cli/context.js';
import type { AddInput } from '../commands/memory.js';
import { err, isGitMemError } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { queryViaDaemon } from './daemon-client.js';

/**
 * Whether two titles name the same thing: the same numbers (item 1 is not item 9)
 * and at least half their words in common.
 */
export function sameTitle(x: string, y: string): boolean {
  const words = (s: string) =>
    new Set(
      s
        .normalize('NFKC')
        .toLowerCase()
        .match(/[\p{L}\p{N}_]+/gu) ?? [],
    );
  const a = words(x);
  const b = words(y);
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

export function duplicateGuard(
  ctx: Ctx,
  store: Store,
  a: Record<string, unknown>,
  o: { person?: boolean } = {},
): (input: AddInput) => Promise<number | undefined> {
  return async (input) => {
    let dups: Awaited<ReturnType<typeof import('./dedup.js').findDuplicates>>;
    try {
      const q = { title: input.title, body: input.body, tags: input.tags };
      // a running daemon (or one worth starting) holds the index already. Asked before
      // anything else awaits, so its answer overlaps the git processes add starts next
      const viaDaemon = a.global ? undefined : await queryViaDaemon(store, { op: 'dedup', q }, ctx.env);
      if (viaDaemon) dups = viaDaemon as typeof dups;
      else {
        const { findDuplicates } = await import('./dedup.js');
        const { providerFor } = await import('./index.js');
        dups = await findDuplicates(store, q, await providerFor(store));
      }
    } catch (e) {
      if (isGitMemError(e) && e.code === 'E_DUPLICATE') throw e;
      return undefined; // the check is advisory: never block an add because search failed
    }
    if (!dups.length) return undefined;
    const d = dups[0];
    const what = `${d.id.slice(0, 12)}${d.alias ? ` (${d.alias})` : ''} ${d.type} "${d.title}"`;
    const how =
      d.reason === 'exact'
        ? 'same text'
        : d.reason === 'overlap'
          ? `token overlap ${d.similarity}`
          : `cosine ${d.similarity}`;
    const more = dups.length > 1 ? ` and ${dups.length - 1} more` : '';
    if (o.person && !a.force && d.reason !== 'exact') {
      if (!sameTitle(d.title, input.title)) {
        ctx.io.err(`git-mem: warning: similar to ${what} (${how})${more}; added, since the titles differ\n`);
        return undefined;
      }
    }
    if (a.force) {
      ctx.io.err(`git-mem: note: likely duplicate of ${what} (${how})${more}; added anyway (--force)\n`);
      return undefined;
    }
    throw err(
      'E_DUPLICATE',
      `likely duplicate of ${what} (${how})${more}`,
      'update that memory instead, or pass --force to add anyway',
      {
        duplicates: dups.slice(0, 5),
      },
    );
  };
}
