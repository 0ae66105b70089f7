import { filterEntries, kindOf, type ListKind, listsApart, makeFilter } from '../commands/list.js';
import { listJsonFromCache } from '../gitstore/catalog-cache.js';
import { defineCommand } from './command.js';
import { emit, filterList, openStore } from './context.js';
import { summaryJSON, summaryLine } from './format.js';
import { colors } from './output.js';
import { normalizeRepoPath } from './paths.js';

export default defineCommand({
  command: 'list [category]',
  describe:
    'list memories (filters combine; a category is an alias prefix like standards/ts/; proposals and sessions apart: --pending, --sessions)',
  aliases: ['ls'],
  builder: (y) =>
    y
      .positional('category', { type: 'string', describe: 'alias prefix' })
      .option('type', { type: 'string', array: true, describe: 'only these types' })
      .option('tag', { type: 'string', array: true, describe: 'only memories with all these tags' })
      .option('status', { type: 'string', array: true, describe: 'only these statuses' })
      .option('scope-file', {
        type: 'string',
        describe: 'only memories scoped to (or anchored at) this file',
      })
      .option('sessions', {
        type: 'boolean',
        describe: 'only the session summaries',
      })
      .option('pending', {
        type: 'boolean',
        describe: 'only the pending proposals (with --sessions: both)',
      })
      .option('include-expired', { type: 'boolean', describe: 'also list expired memories' })
      .option('at', { type: 'string', describe: 'as the store was at a revision or date' })
      .option('global', { type: 'boolean', describe: 'list the personal global store' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, read: true });
    const kinds = [a.sessions && 'sessions', a.pending && 'pending'].filter(Boolean) as ListKind[];
    const at = a.at ? await store.resolveAt(a.at) : undefined;
    if (ctx.json && !at && a['scope-file'] === undefined) {
      // fastest path: copy the cached JSON of each kept summary, no catalog built
      const tip = await store.tip();
      const f = {
        category: a.category,
        type: filterList(a.type, 'type'),
        tag: filterList(a.tag, 'tag'),
        status: filterList(a.status, 'status'),
        kinds,
        includeExpired: a['include-expired'],
      };
      const now = Date.now();
      // decode only the fields this filter reads
      const need = new Set<'id' | 'alias' | 'type' | 'status' | 'expires' | 'tags'>();
      if (!f.includeExpired) need.add('expires');
      if (f.type.length || kinds.length) need.add('type');
      if (f.status.length || kinds.length) need.add('status');
      if (f.tag.length) need.add('tags');
      if (f.category !== undefined) need.add('alias');
      const hit = tip ? listJsonFromCache(store.repo, store.ref, tip, makeFilter(f, now), need) : undefined;
      if (hit) {
        if (ctx.io.outBytes) ctx.io.outBytes(hit.json);
        else ctx.io.out(hit.json.toString('utf8'));
        if (hit.bad)
          ctx.io.err(`git-mem: warning: ${hit.bad} malformed record(s) skipped; run git mem doctor\n`);
        return;
      }
    }
    const cat = at ? await store.catalogAt(at, false) : await store.catalog();
    const scopeFile =
      a['scope-file'] !== undefined
        ? await normalizeRepoPath(store, ctx, String(a['scope-file']))
        : undefined;
    const filter = {
      category: a.category,
      type: filterList(a.type, 'type'),
      tag: filterList(a.tag, 'tag'),
      status: filterList(a.status, 'status'),
      scopeFile,
      kinds,
      includeExpired: a['include-expired'],
    };
    if (ctx.json && scopeFile === undefined) {
      // fast path: filter on the catalog rows and print the cached JSON of each summary as is
      const hits = filterEntries(cat.rows.values(), filter);
      ctx.io.out(hits.length ? `[\n${hits.map((h) => cat.lines.get(h.id)).join(',\n')}\n]\n` : '[]\n');
      if (cat.bad.length)
        ctx.io.err(`git-mem: warning: ${cat.bad.length} malformed record(s) skipped; run git mem doctor\n`);
      return;
    }
    const all = filterEntries(cat.entries.values(), filter);
    // read by a person, with no kind, type or status asked for: the curated memories, and the
    // pending proposals and session summaries counted apart (--json and yaml list every record, as they did)
    const apart = !ctx.json && !ctx.yaml && listsApart(filter);
    const rows = apart ? all.filter((r) => kindOf(r) === 'memories') : all;
    const count = (k: ListKind) => (apart ? all.filter((r) => kindOf(r) === k).length : 0);
    const nPending = count('pending');
    const nSessions = count('sessions');
    emit(ctx, rows.map(summaryJSON), () => {
      const lines = rows.map((r) => summaryLine(r, cat, colors(ctx)));
      if (nPending || nSessions) {
        if (lines.length) lines.push('');
        if (nPending)
          lines.push(
            `${nPending} pending proposal${nPending === 1 ? '' : 's'} not shown: git mem list --pending (review: git mem review)`,
          );
        if (nSessions)
          lines.push(
            `${nSessions} session summar${nSessions === 1 ? 'y' : 'ies'} not shown: git mem list --sessions (or git mem sessions)`,
          );
      }
      if (cat.bad.length)
        lines.push(`warning: ${cat.bad.length} malformed record(s) skipped; run git mem doctor`);
      if (lines.length) return lines.join('\n');
      // an empty store invites a first memory; a filter that matched nothing says so
      return cat.entries.size
        ? 'No memories match.'
        : 'No memories. Add one with: git mem add --title "…" --content "…"';
    });
    if (cat.bad.length && ctx.json)
      ctx.io.err(`git-mem: warning: ${cat.bad.length} malformed record(s) skipped; run git mem doctor\n`);
  },
});
