/**
 * Search results and context packs over several stores: the project's own
 * memory and the team stores registered beside it (src/commands/stores.ts),
 * each result labelled with the store it came from.
 *
 * The rule is simple on purpose. Project results are first-class. A team
 * store's search scores are multiplied by TEAM_PRIOR before the lists are
 * merged, so a team memory outranks a project one only when it matches
 * clearly better; on equal weighted scores the project comes first, then the
 * team stores in the order registered. In a context pack every section lists
 * the project's items before the team stores' (rules, constraints), except
 * best matches, which are ordered by the same weighted score; team stores add
 * no session summaries (theirs are about another repository's work). One
 * budget covers the whole pack.
 */

import type { Store } from '../gitstore/store.js';
import {
  type ContextOptions,
  type ContextPack,
  contextCandidates,
  type PackFilter,
  type SearchHit,
  type SearchOptions,
  type SearchQuery,
  searchMemories,
} from './index.js';
import { assemblePack, type PackCandidate, type Section } from './pack.js';
import type { NamedStore } from './rules.js';
import { recordUse } from './usage.js';

/** What a team store's scores are multiplied by before they are merged with the project's. */
export const TEAM_PRIOR = 0.8;

/** Labels one store's hits. */
export function labelHits<T extends object>(hits: readonly T[], store: string): Array<T & { store: string }> {
  return hits.map((h) => ({ ...h, store }));
}

/**
 * Merges the project's hits with each team store's (scores × TEAM_PRIOR, the
 * score shown is the weighted one), best first, at most `limit`.
 */
export function mergeHits<T extends { score: number }>(
  project: readonly (T & { store: string })[],
  teams: ReadonlyArray<{ name: string; hits: readonly T[] }>,
  limit: number,
): Array<T & { store: string }> {
  const all = [
    ...project.map((h, i) => ({ h, layer: 0, i })),
    ...teams.flatMap((t, n) =>
      t.hits.map((h, i) => ({
        h: { ...h, score: Math.round(h.score * TEAM_PRIOR * 1e4) / 1e4, store: t.name },
        layer: n + 1,
        i,
      })),
    ),
  ];
  all.sort((a, b) => b.h.score - a.h.score || a.layer - b.layer || a.i - b.i);
  return all.slice(0, limit).map((x) => x.h);
}

/** Each team store's hits for the query (searched in this process; usage is counted for the project only). */
export async function searchTeams(
  teams: readonly NamedStore[],
  q: SearchQuery,
  opts: SearchOptions = {},
): Promise<Array<{ name: string; hits: SearchHit[] }>> {
  return Promise.all(
    teams.map(async (t) => ({
      name: t.name,
      hits: (await t.store.tip()) ? await searchMemories(t.store, q, { ...opts, recordUsage: false }) : [],
    })),
  );
}

const SECTIONS: Section[] = ['rules', 'constraints', 'matches', 'sessions'];

/**
 * A context pack from the project and its team stores under one budget (the
 * project's budget setting applies). With no team store it is exactly the
 * project's pack, its items labelled `project`.
 */
export async function buildLayeredPack(
  project: Store,
  teams: readonly NamedStore[],
  o: ContextOptions,
  opts: SearchOptions = {},
  filter?: PackFilter,
): Promise<ContextPack> {
  const own = await contextCandidates(project, o, opts, filter);
  const budget = own.budget;
  const others = await Promise.all(
    teams.map(async (t) => ({
      name: t.name,
      c: await contextCandidates(t.store, { ...o, budget }, { ...opts, recordUsage: false }, filter),
    })),
  );
  const layers: Array<{ store: string; prior: number; cands: PackCandidate[] }> = [
    { store: 'project', prior: 1, cands: own.cands ?? [] },
    ...others.map((t) => ({ store: t.name, prior: TEAM_PRIOR, cands: t.c.cands ?? [] })),
  ];
  if (!own.cands && layers.every((l) => !l.cands.length)) return { text: '', items: [], tokens: 0 };
  const ordered: PackCandidate[] = [];
  for (const section of SECTIONS) {
    if (section === 'sessions') {
      ordered.push(
        ...layers[0].cands.filter((c) => c.section === section).map((c) => ({ ...c, store: 'project' })),
      );
      continue;
    }
    const part = layers.flatMap((l, layer) =>
      l.cands
        .filter((c) => c.section === section)
        .map((c, i) => ({ c: { ...c, store: l.store }, w: (c.score ?? 0) * l.prior, layer, i })),
    );
    if (section === 'matches') part.sort((a, b) => b.w - a.w || a.layer - b.layer || a.i - b.i);
    ordered.push(...part.map((x) => x.c));
  }
  const pack = assemblePack(ordered, budget);
  if (opts.recordUsage !== false)
    recordUse(
      project.repo,
      pack.items.filter((i) => i.store === 'project').map((i) => i.id),
    );
  return { ...pack, format: o.format ?? 'md', budget };
}
