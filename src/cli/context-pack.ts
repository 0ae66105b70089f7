import { err } from '../errors.js';
import { defineCommand } from './command.js';
import { emit, isGlobalStore, openStore, printJSON, settingsOf, teamStoresOf } from './context.js';
import { normalizeRepoPath } from './paths.js';

export default defineCommand({
  command: 'context',
  describe:
    'a context pack for an agent: rules and constraints in scope, best matches, recent sessions, within a token budget',
  builder: (y) =>
    y
      .option('file', {
        type: 'string',
        describe: 'the file being edited (rules, constraints and memories near it come first)',
      })
      .option('query', { alias: 'q', type: 'string', describe: 'what the agent is working on' })
      .option('budget', { type: 'number', describe: 'token budget (default: config context-budget, 2000)' })
      .option('format', {
        type: 'string',
        choices: ['md', 'json'] as const,
        describe: 'md (default): the framed text; json: text, items and tokens',
      })
      .option('sessions', { type: 'number', describe: 'latest session summaries to offer (default 2)' })
      .option('llm-filter', {
        type: 'boolean',
        describe:
          'retrieve wide and let the configured model (llm.* settings) keep what bears on the task; the ranked pack if it fails (default: the context-llm-filter setting)',
      })
      .option('daemon', {
        type: 'boolean',
        default: true,
        describe: 'use the query daemon when one runs (--no-daemon: this process)',
      })
      .option('global', { type: 'boolean', describe: 'use the personal global store' })
      .option('stores', {
        type: 'boolean',
        default: true,
        describe: 'also draw on the team stores (git mem store list); --no-stores: this project only',
      }),
  async run(a, ctx) {
    if (a.budget !== undefined && !(Number.isFinite(a.budget) && a.budget >= 0)) {
      throw err(
        'E_INVALID_ARG',
        `--budget must be a number of tokens, not "${a.budget}"`,
        'e.g. --budget 1500',
      );
    }
    if (a.sessions !== undefined && !(Number.isInteger(a.sessions) && a.sessions >= 0)) {
      throw err('E_INVALID_ARG', `--sessions must be a whole number, not "${a.sessions}"`);
    }
    const store = await openStore(ctx, { global: a.global, read: true });
    const file = a.file !== undefined ? await normalizeRepoPath(store, ctx, String(a.file)) : undefined;
    const o = { file, query: a.query, budget: a.budget, sessions: a.sessions, format: a.format };
    const teams = a.global || a.stores === false ? [] : await teamStoresOf(ctx, store);
    // with team stores the pack is built here (a daemon serves the project's store alone)
    const build = async (filter?: import('../search/index.js').PackFilter) => {
      if (!teams.length) return (await import('../search/index.js')).buildContextPack(store, o, {}, filter);
      return (await import('../search/layers.js')).buildLayeredPack(store, teams, o, {}, filter);
    };
    let pack:
      | { text: string; items: unknown[]; tokens: number; needed?: number; budget?: number }
      | undefined;
    const settings = await settingsOf(ctx, store);
    const useModel = a['llm-filter'] ?? settings['context-llm-filter'] === true;
    if (useModel) {
      // the model's filter runs here: a daemon answers only ranked packs
      const [{ llmPackFilter }, { trustedLlmSettings }] = await Promise.all([
        import('../agents/llm-filter.js'),
        import('../agents/llm.js'),
      ]);
      const diag: { reason?: string } = {};
      const filter = llmPackFilter({ query: a.query, file }, await trustedLlmSettings(store), ctx.env, diag);
      pack = await build(filter);
      if (diag.reason)
        ctx.io.err(
          `git-mem: note: the model did not filter this pack (${diag.reason}); it is the ranked pack\n`,
        );
    }
    if (!pack && a.daemon !== false && !a.global && !teams.length) {
      const { queryViaDaemon } = await import('../daemon/client.js');
      pack = (await queryViaDaemon(store, { op: 'context', q: o }, ctx.env)) as typeof pack;
    }
    pack ??= await build();
    if (!pack.items.length && pack.needed) {
      // there were memories for this pack, and the budget held none of them: a refusal, not an empty pack
      const which =
        a.budget !== undefined
          ? `--budget ${a.budget}`
          : `the context-budget setting (${pack.budget ?? '?'})`;
      throw err(
        'E_INVALID_ARG',
        `${which} is too small for any memory in this pack`,
        `the first needs ${pack.needed} tokens whole: try --budget ${pack.needed}`,
      );
    }
    if (!pack.items.length) ctx.io.err('git-mem: note: no memory for this context\n');
    const label = isGlobalStore(ctx, store) ? 'global' : 'project';
    const items = pack.items.map((i) => ({
      ...(i as object),
      store: (i as { store?: string }).store ?? label,
    }));
    const value = { text: pack.text, items, tokens: pack.tokens };
    if (a.format === 'json' && !ctx.json) printJSON(ctx, value);
    else emit(ctx, value, () => pack!.text);
  },
});
