/**
 * Rules in force for a file (seed 000, Layer 1): scoped globs, most specific
 * first; at equal specificity project over team stores (in the order
 * registered) over global.
 */

import type { Store } from '../gitstore/store.js';
import micromatch from '../model/glob.js';
import { expiredAt, parseRecord, recordPath, ruleInForce } from '../model/record.js';

export interface RuleInForce {
  id: string;
  alias: string | null;
  title: string;
  body: string;
  scope: string[];
  origin: 'project' | 'team' | 'global';
  /** the store it comes from: `project`, a team store's name, or `global` */
  store: string;
  /** the glob that matched, or null for an unscoped rule */
  matched: string | null;
  specificity: number;
}

/** Literal characters in a glob: `src/db/**` is more specific than `**\/*.ts`. */
function globSpecificity(glob: string): number {
  const literal = glob.replace(/\*\*|\*|\?|\[[^\]]*\]|\{[^}]*\}/g, '');
  return literal.length + (glob.includes('*') ? 0 : 1000);
}

function matchScope(
  scope: string[],
  file: string | undefined,
): { matched: string | null; specificity: number } | null {
  if (!scope.length) return { matched: null, specificity: 0 };
  if (file === undefined) return { matched: null, specificity: 0 };
  let best: { matched: string; specificity: number } | null = null;
  for (const g of scope) {
    if (
      micromatch.isMatch(file, g, { dot: true }) ||
      micromatch.isMatch(file, `${g.replace(/\/$/, '')}/**`, { dot: true })
    ) {
      const s = globSpecificity(g);
      if (!best || s > best.specificity) best = { matched: g, specificity: s };
    }
  }
  return best;
}

async function rulesOf(
  store: Store,
  origin: RuleInForce['origin'],
  file: string | undefined,
  label: string = origin,
): Promise<RuleInForce[]> {
  const tip = await store.tip();
  if (!tip) return [];
  const cat = await store.catalog();
  const hits: Array<{ id: string; m: { matched: string | null; specificity: number } }> = [];
  // an expired rule is in force nowhere, as an expired memory is listed and searched nowhere
  const expired = expiredAt(Date.now());
  for (const row of cat.rowsOfType('rule')) {
    // rows carry type and status, so only rule summaries are parsed
    if (row.status !== 'active') continue;
    const e = cat.entry(row.id)!;
    if (!ruleInForce(e, expired)) continue;
    const m = matchScope(e.scope, file);
    if (m) hits.push({ id: e.id, m });
  }
  const blobs = await store.catFile.readMany(hits.map((h) => cat.oidOf(h.id)!));
  return hits.map((h, i) => {
    const r = parseRecord(blobs[i]!.content.toString('utf8'), recordPath(h.id));
    return {
      id: r.id,
      alias: r.alias ?? null,
      title: r.title,
      body: r.body,
      scope: r.scope,
      origin,
      store: label,
      matched: h.m.matched,
      specificity: h.m.specificity,
    };
  });
}

/** A team store to read beside the project's: its name labels what comes from it. */
export interface NamedStore {
  name: string;
  store: Store;
}

export async function rulesFor(
  store: Store,
  file?: string,
  global?: Store,
  teams: readonly NamedStore[] = [],
): Promise<RuleInForce[]> {
  const layers = await Promise.all([
    rulesOf(store, 'project', file),
    ...teams.map((t) => rulesOf(t.store, 'team', file, t.name)),
    global ? rulesOf(global, 'global', file) : [],
  ]);
  const rank = new Map(layers.flatMap((rules, i) => rules.map((r) => [r, i] as const)));
  return layers
    .flat()
    .sort(
      (a, b) =>
        b.specificity - a.specificity ||
        rank.get(a)! - rank.get(b)! ||
        (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
    );
}
