import { hitLines } from '../search/format.js';
import { defineCommand } from './command.js';
import { type Ctx, emit, filterList, isGlobalStore, openStore, teamStoresOf } from './context.js';
import { normalizeRepoPath } from './paths.js';

async function searchArgs(a: Record<string, unknown>, ctx: Ctx) {
  const store = await openStore(ctx, { global: !!a.global, read: true });
  const query = (Array.isArray(a.query) ? a.query : a.query ? [a.query] : []).map(String).join(' ');
  const file = a.file !== undefined ? await normalizeRepoPath(store, ctx, String(a.file)) : undefined;
  return {
    store,
    q: {
      query,
      file,
      types: filterList(a.type, 'type'),
      tags: filterList(a.tag, 'tag'),
      limit: a.limit === undefined ? 10 : Number(a.limit),
      includeStale: !!a.all,
    },
  };
}

export default defineCommand({
  command: 'search [query..]',
  describe:
    'find memories by text, the file being edited, type and tag (ranked; stale ones flagged; proposals and sessions after curated memories)',
  aliases: ['find'],
  builder: (y) =>
    y
      .positional('query', { type: 'string', array: true, describe: 'words to look for' })
      .option('file', {
        type: 'string',
        describe: 'the file being edited: memories anchored or scoped near it rank higher',
      })
      .option('type', {
        type: 'string',
        array: true,
        describe: 'only these types (comma-separated or repeated)',
      })
      .option('tag', {
        type: 'string',
        array: true,
        describe: 'only memories with all these tags (comma-separated or repeated)',
      })
      .option('limit', { alias: 'n', type: 'number', describe: 'how many results (default 10)' })
      .option('all', { type: 'boolean', describe: 'also superseded and archived memories' })
      .option('daemon', {
        type: 'boolean',
        default: true,
        describe: 'use (or start) the query daemon for a large store; --no-daemon to search in this process',
      })
      .option('global', { type: 'boolean', describe: 'search the personal global store' })
      .option('stores', {
        type: 'boolean',
        default: true,
        describe: 'also search the team stores (git mem store list); --no-stores: this project only',
      }),
  async run(a, ctx) {
    const { store, q } = await searchArgs(a, ctx);
    const { runSearch } = await import('../search/search.js');
    const hits = await runSearch(store, q, {
      label: isGlobalStore(ctx, store) ? 'global' : 'project',
      teams: a.global || a.stores === false ? [] : await teamStoresOf(ctx, store),
      daemonEnv: a.daemon !== false && !a.global ? ctx.env : undefined,
    });
    // ids shown at 12 characters (the catalog's minimum abbreviation): loading the catalog of a big store would cost more than the search
    emit(ctx, hits, () => hitLines(hits));
  },
});
