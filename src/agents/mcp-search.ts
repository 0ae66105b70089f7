import { err } from '../errors.js';
import { resolveConfig } from '../gitstore/config.js';
import type { PackFilter } from '../search/index.js';
import { json, type McpEnv, normFile, type ToolResult, text } from './mcp-env.js';
import type { Json } from './mcp-schemas.js';

// --- search and context: the operations the CLI and the web UI call too

export async function doSearch(env: McpEnv, a: Json): Promise<ToolResult> {
  const { runSearch } = await import('../search/search.js');
  const hits = await runSearch(
    env.store,
    {
      query: String(a.query),
      file: normFile(env, a.file),
      types: a.types as string[] | undefined,
      tags: a.tags as string[] | undefined,
      limit: (a.limit as number) ?? 10,
    },
    // the hits are given to the agent: each of this clone's counts as a use (a person's search does not)
    { teams: env.teams, recordUsage: true },
  );
  return json(hits);
}

export async function doContext(env: McpEnv, a: Json): Promise<ToolResult> {
  const file = normFile(env, a.file);
  const query = a.query === undefined ? undefined : String(a.query);
  const budget = a.budget as number | undefined;
  const format = (a.format as 'md' | 'json' | undefined) ?? 'md';
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
    : await (await import('../search/index.js')).buildContextPack(env.store, o, {}, filter);
  pack.items = pack.items.map((i) => ({ ...i, store: i.store ?? 'project' }));
  if (!pack.items.length && pack.needed)
    throw err(
      'E_INVALID_ARG',
      `budget ${pack.budget} is too small for any memory in this pack`,
      `give a "budget" of ${pack.needed}`,
    );
  return format === 'json' ? json(pack) : text(pack.text || 'No memory for this context yet.');
}
