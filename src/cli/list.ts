import micromatch from 'micromatch';
import { err } from '../errors.js';
import type { CatalogEntry } from '../gitstore/store.js';
import { isExpired, isStatus, isType } from '../model/record.js';
import { defineCommand } from './command.js';
import { emit, list, openStore } from './context.js';
import { summaryJSON, summaryLine } from './format.js';
import { normalizeRepoPath } from './paths.js';

export interface ListFilter {
  category?: string;
  type?: string[];
  tag?: string[];
  status?: string[];
  scopeFile?: string;
  includeExpired?: boolean;
}

/** Pure filter over catalog entries; sorted oldest first (ids are time-ordered). */
type Filterable = Pick<CatalogEntry, 'id' | 'tags' | 'alias' | 'expires'> & {
  type: string;
  status: string;
  scope?: string[];
  anchors?: string[];
};

export function filterEntries<T extends Filterable>(
  entries: Iterable<T>,
  f: ListFilter,
  now = Date.now(),
): T[] {
  for (const t of f.type ?? [])
    if (!isType(t)) throw err('E_INVALID_ARG', `unknown type "${t}"`, 'see git mem add --help for types');
  for (const s of f.status ?? []) if (!isStatus(s)) throw err('E_INVALID_ARG', `unknown status "${s}"`);
  const out: T[] = [];
  for (const e of entries) {
    if (!f.includeExpired && isExpired(e, now)) continue;
    if (f.type?.length && !f.type.includes(e.type)) continue;
    if (f.status?.length && !f.status.includes(e.status)) continue;
    if (f.tag?.length && !f.tag.every((t) => e.tags.includes(t.toLowerCase()))) continue;
    if (f.category) {
      const c = f.category.replace(/\/$/, '');
      if (!e.alias || !(e.alias === c || e.alias.startsWith(`${c}/`))) continue;
    }
    if (f.scopeFile !== undefined) {
      const p = f.scopeFile;
      const scope = e.scope ?? [];
      if (scope.length && !micromatch.isMatch(p, scope, { dot: true })) continue;
      if (!scope.length && !(e.anchors ?? []).some((a) => a === p)) continue;
    }
    out.push(e);
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

export default defineCommand({
  command: 'list [category]',
  describe: 'list memories (filters combine; a category is an alias prefix like standards/ts/)',
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
      .option('include-expired', { type: 'boolean', describe: 'also list expired memories' })
      .option('at', { type: 'string', describe: 'as the store was at a revision or date' })
      .option('global', { type: 'boolean', describe: 'list the personal global store' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const at = a.at ? await store.resolveAt(a.at) : undefined;
    const cat = at ? await store.catalogAt(at, false) : await store.catalog();
    const scopeFile =
      a['scope-file'] !== undefined
        ? await normalizeRepoPath(store, ctx, String(a['scope-file']))
        : undefined;
    const filter = {
      category: a.category,
      type: list(a.type),
      tag: list(a.tag),
      status: list(a.status),
      scopeFile,
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
    const rows = filterEntries(cat.entries.values(), filter);
    emit(ctx, rows.map(summaryJSON), () => {
      const lines = rows.map((r) => summaryLine(r, cat));
      if (cat.bad.length)
        lines.push(`warning: ${cat.bad.length} malformed record(s) skipped; run git mem doctor`);
      return lines.length
        ? lines.join('\n')
        : 'No memories. Add one with: git mem add --title "…" --content "…"';
    });
    if (cat.bad.length && ctx.json)
      ctx.io.err(`git-mem: warning: ${cat.bad.length} malformed record(s) skipped; run git mem doctor\n`);
  },
});
