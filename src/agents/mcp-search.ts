import { err } from '../errors.js';
import { resolveConfig } from '../gitstore/config.js';
import type { Store } from '../gitstore/store.js';
import { estimateTokens, type MemoryRecord } from '../model/record.js';
import { frame } from '../safety/frame.js';
import type { PackFilter, SearchHit } from '../search/index.js';
import { rulesFor } from '../search/rules.js';
import {
  entriesWhere,
  json,
  type McpEnv,
  newestFirst,
  normFile,
  readBodies,
  type ToolResult,
  text,
} from './mcp-env.js';
import type { Json } from './mcp-schemas.js';

// --- search, with a simple fallback ranking when the search module is missing

function words(s: string): string[] {
  return s.toLowerCase().match(/[a-z0-9_]+/g) ?? [];
}

/** Token-overlap ranking over titles, tags and bodies (the fallback when src/search is not there). Pure. */
export function simpleRank(
  records: MemoryRecord[],
  query: string,
  limit: number,
): Array<{ r: MemoryRecord; score: number }> {
  const q = [...new Set(words(query))].filter((w) => w.length > 1);
  if (!q.length) return [];
  const scored = records.map((r) => {
    const title = new Set(words(r.title));
    const tags = new Set(r.tags.flatMap(words));
    const body = new Set(words(r.body));
    let score = 0;
    for (const w of q) score += (title.has(w) ? 3 : 0) + (tags.has(w) ? 2 : 0) + (body.has(w) ? 1 : 0);
    return { r, score: score / (q.length * 6) };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || (a.r.updated < b.r.updated ? 1 : -1))
    .slice(0, limit);
}

type SearchModule = {
  searchMemories: (
    store: Store,
    q: { query: string; file?: string; types?: string[]; tags?: string[]; limit?: number },
    opts?: { recordUsage?: boolean },
  ) => Promise<unknown[]>;
  buildContextPack: (
    store: Store,
    o: { file?: string; query?: string; budget?: number; format?: 'md' | 'json' },
    opts?: Record<string, never>,
    filter?: PackFilter,
  ) => Promise<{ text: string; items: unknown[]; tokens: number; needed?: number; budget?: number }>;
};

async function searchModule(): Promise<SearchModule | null> {
  try {
    const m = (await import('../search/index.js')) as Partial<SearchModule>;
    return typeof m.searchMemories === 'function' && typeof m.buildContextPack === 'function'
      ? (m as SearchModule)
      : null;
  } catch {
    return null;
  }
}

export async function doSearch(env: McpEnv, a: Json): Promise<ToolResult> {
  const q = {
    query: String(a.query),
    file: normFile(env, a.file),
    types: a.types as string[] | undefined,
    tags: a.tags as string[] | undefined,
    limit: (a.limit as number) ?? 10,
  };
  const mod = await searchModule();
  if (mod) {
    const hits = (await mod.searchMemories(env.store, q)) as SearchHit[];
    const own = hits.map((h) => ({ ...h, store: 'project' }));
    let given: Array<{ id: string; store: string }> = own;
    if (env.teams?.length) {
      const { mergeHits, searchTeams } = await import('../search/layers.js');
      given = mergeHits(own, await searchTeams(env.teams, q), q.limit);
    }
    // the hits are given to the agent: each of this clone's counts as a use (a person's search does not)
    const { recordUse } = await import('../search/usage.js');
    recordUse(
      env.store.repo,
      given.filter((h) => h.store === 'project').map((h) => h.id),
    );
    return json(given);
  }
  const entries = await entriesWhere(
    env.store,
    (e) =>
      (e.status === 'active' || e.status === 'stale') &&
      (!q.types?.length || q.types.includes(e.type)) &&
      (!q.tags?.length || q.tags.every((t) => e.tags.includes(t))),
  );
  const ranked = simpleRank(await readBodies(env.store, entries), q.query, q.limit);
  return json(
    ranked.map(({ r, score }) => ({
      id: r.id,
      alias: r.alias ?? null,
      type: r.type,
      title: r.title,
      status: r.status,
      score: Math.round(score * 1e4) / 1e4,
      why: 'keywords',
      store: 'project',
    })),
  );
}

export async function doContext(env: McpEnv, a: Json): Promise<ToolResult> {
  const file = normFile(env, a.file);
  const query = a.query === undefined ? undefined : String(a.query);
  const budget = a.budget as number | undefined;
  const format = (a.format as 'md' | 'json' | undefined) ?? 'md';
  const mod = await searchModule();
  if (mod) {
    // with the context-llm-filter setting, the configured model keeps what bears on the task
    let filter: PackFilter | undefined;
    if ((await resolveConfig(env.store.repo.env, env.store)).values['context-llm-filter'] === true) {
      const [{ llmPackFilter }, { trustedLlmSettings }] = await Promise.all([
        import('./llm-filter.js'),
        import('./llm.js'),
      ]);
      filter = llmPackFilter({ query, file }, await trustedLlmSettings(env.store), env.store.repo.env);
    }
    const o = { file, query, budget, format };
    const pack = env.teams?.length
      ? await (await import('../search/layers.js')).buildLayeredPack(env.store, env.teams, o, {}, filter)
      : await mod.buildContextPack(env.store, o, {}, filter);
    pack.items = pack.items.map((i) => ({
      ...(i as object),
      store: (i as { store?: string }).store ?? 'project',
    }));
    if (!pack.items.length && pack.needed)
      throw err(
        'E_INVALID_ARG',
        `budget ${pack.budget} is too small for any memory in this pack`,
        `give a "budget" of ${pack.needed}`,
      );
    return format === 'json' ? json(pack) : text(pack.text || 'No memory for this context yet.');
  }
  // fallback: rules in scope, keyword matches, the two latest sessions, within the budget
  const limit = budget ?? 2000;
  const parts: string[] = [];
  let used = 0;
  const items: Json[] = [];
  const push = (section: string, id: string, title: string, body: string) => {
    const t = `### ${title}\n${body.trim()}\n`;
    const tok = estimateTokens(t);
    if (used + tok > limit) return;
    used += tok;
    parts.push(t);
    items.push({ id, section, title, tokens: tok });
  };
  for (const r of await rulesFor(env.store, file, env.global, env.teams))
    push('rules', r.id, r.title, r.body);
  if (query) {
    const entries = await entriesWhere(
      env.store,
      (e) => e.status === 'active' && e.type !== 'rule' && e.type !== 'session',
    );
    for (const { r } of simpleRank(await readBodies(env.store, entries), query, 10))
      push('matches', r.id, r.title, r.body);
  }
  const sessions = (await entriesWhere(env.store, (e) => e.type === 'session' && e.status === 'active'))
    .sort(newestFirst)
    .slice(0, 2);
  for (const r of await readBodies(env.store, sessions)) push('sessions', r.id, r.title, r.body);
  const body = parts.length ? frame('context', parts) : '';
  return format === 'json'
    ? json({ text: body, items, tokens: used })
    : text(body || 'No memory for this context yet.');
}
