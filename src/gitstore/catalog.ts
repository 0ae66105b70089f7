/**
 * The catalog: summaries of every record at one commit. Its own module so the
 * store and the catalog cache (which both build catalogs) need not import each other.
 */
import { err } from '../errors.js';
import { abbreviate, normalizeIdInput } from '../model/id.js';
import { type RecordSummary, summaryToJSON } from '../model/record.js';
import { SharedMap } from '../model/shared-map.js';

export interface CatalogEntry extends RecordSummary {
  oid: string;
}
export interface BadRecord {
  path: string;
  oid: string;
  error: string;
}

/** The few fields resolution and cheap filters need, kept unparsed-JSON-free. */
export interface CatalogRow {
  id: string;
  oid: string;
  alias?: string;
  type: string;
  status: string;
  expires?: string;
  tags: string[];
}

/**
 * Summaries of every record at one commit (derived data, cached under
 * .git/mem/). Rows (id, oid, alias, type, status, expiry, tags) are always in
 * memory; each record's full summary is kept as its JSON text and parsed only
 * when `entries` is first read, so resolving an id or printing `list --json`
 * never parses 10k objects.
 */
/** What a summary's compact JSON line holds when its scope is not empty (and only then as a key). */
export const SCOPE_MARK = '"scope":["';

export class Catalog {
  readonly sortedIds: string[];
  /** id → row (shared with the catalog this one was updated from: see `fork`) */
  readonly rows: SharedMap<string, CatalogRow>;
  /** id → the record summary as compact JSON (the `list --json` element) */
  readonly lines: SharedMap<string, string>;
  private aliasMap?: Map<string, string>;
  private byType?: Map<string, readonly CatalogRow[]>;
  /** the type lists of the catalog this one was updated from, its rows, and the ids changed since */
  private typeBase?: TypeBase;
  private scopedList?: CatalogEntry[];
  private parsed?: Map<string, CatalogEntry>;
  constructor(
    readonly tip: string | null,
    rows: Map<string, CatalogRow> | SharedMap<string, CatalogRow>,
    lines: Map<string, string> | SharedMap<string, string>,
    readonly bad: BadRecord[],
    /** the ids of `rows` already sorted (a catalog updated from another passes them on) */
    sortedIds?: string[],
    /** the catalog this one was updated from, and the ids changed since (set or removed) */
    from?: { catalog: Catalog; changed: readonly string[] },
  ) {
    this.rows = rows instanceof SharedMap ? rows : SharedMap.of(rows);
    this.lines = lines instanceof SharedMap ? lines : SharedMap.of(lines);
    this.sortedIds = sortedIds ?? [...this.rows.keys()].sort();
    // the previous catalog's lists, where it built them (never the catalog itself: no chain of
    // catalogs is kept alive by the ones updated from them)
    const prev = from?.catalog.byType;
    if (prev) this.typeBase = { byType: prev, rows: from.catalog.rows, changed: from.changed };
  }

  /**
   * The rows of one type, in id order (the lists built on first use: a long-lived process asks
   * for the rules at every context pack, and they are a few of thousands of rows). A catalog
   * updated from one that had built them derives its lists from those and the rows that changed.
   */
  rowsOfType(type: string): readonly CatalogRow[] {
    if (!this.byType) {
      this.byType = this.typeBase
        ? typesUpdated(this.typeBase, this.rows)
        : typesOf(this.sortedIds, this.rows);
      this.typeBase = undefined;
    }
    return this.byType.get(type) ?? [];
  }

  /**
   * The summaries that have a scope (a rule's, a scoped memory's), in id order, each parsed on
   * its own: a summary's compact JSON line without SCOPE_MARK has none, so the other thousands
   * are not parsed (a check looks for literal scopes at every run).
   */
  get scoped(): readonly CatalogEntry[] {
    if (!this.scopedList) {
      this.scopedList = [];
      for (const id of this.sortedIds) {
        if (!this.parsed && !this.lines.get(id)!.includes(SCOPE_MARK)) continue;
        const e = this.entry(id)!;
        if (e.scope?.length) this.scopedList.push(e);
      }
    }
    return this.scopedList;
  }

  /** alias → id (built on first use: most catalogs of a long-lived process never resolve an alias) */
  get aliases(): ReadonlyMap<string, string> {
    if (!this.aliasMap) {
      this.aliasMap = new Map();
      for (const r of this.rows.values()) if (r.alias) this.aliasMap.set(r.alias, r.id);
    }
    return this.aliasMap;
  }

  /**
   * The sorted ids of this catalog with `added` ids put in and `removed` ones
   * taken out: cheaper than sorting them all when a few changed.
   */
  sortedWith(added: Iterable<string>, removed: Iterable<string>): string[] {
    const ids = [...this.sortedIds];
    const at = (id: string) => firstAtOrAfter(ids, id, (x) => x);
    for (const id of removed) {
      const i = at(id);
      if (ids[i] === id) ids.splice(i, 1);
    }
    for (const id of added) {
      const i = at(id);
      if (ids[i] !== id) ids.splice(i, 0, id);
    }
    return ids;
  }
  static fromEntries(tip: string | null, entries: Iterable<CatalogEntry>, bad: BadRecord[]): Catalog {
    const rows = new Map<string, CatalogRow>();
    const lines = new Map<string, string>();
    for (const e of entries) {
      rows.set(e.id, rowOf(e));
      lines.set(e.id, JSON.stringify(summaryToJSON(e)));
    }
    return new Catalog(tip, rows, lines, bad);
  }
  /** Full summaries (parsed on first use). */
  get entries(): Map<string, CatalogEntry> {
    if (!this.parsed) {
      const m = new Map<string, CatalogEntry>();
      for (const id of this.sortedIds) {
        const j = JSON.parse(this.lines.get(id)!);
        const e: CatalogEntry = { ...j, oid: this.rows.get(id)!.oid };
        if (j.alias == null) delete e.alias;
        if (j.expires == null) delete e.expires;
        m.set(id, e);
      }
      this.parsed = m;
    }
    return this.parsed;
  }
  /** One summary, parsed on its own (cheaper than `entries` when only a few are needed). */
  entry(id: string): CatalogEntry | undefined {
    if (this.parsed) return this.parsed.get(id);
    const line = this.lines.get(id);
    if (line === undefined) return undefined;
    const j = JSON.parse(line);
    const e: CatalogEntry = { ...j, oid: this.rows.get(id)!.oid };
    if (j.alias == null) delete e.alias;
    if (j.expires == null) delete e.expires;
    return e;
  }
  get size(): number {
    return this.rows.size;
  }
  oidOf(id: string): string | undefined {
    return this.rows.get(id)?.oid;
  }
  abbrev(id: string): string {
    return abbreviate(id, this.sortedIds);
  }
  /** Resolves an id, a unique id prefix, or an alias. */
  resolve(input: string): string {
    const s = input.trim();
    if (!s) throw err('E_INVALID_ARG', 'an id, id prefix or alias is required');
    const byAlias = this.aliases.get(s) ?? this.aliases.get(s.toLowerCase());
    if (byAlias) return byAlias;
    const p = normalizeIdInput(s);
    if (/^[0-9A-HJKMNP-TV-Z]+$/.test(p)) {
      const matches = this.prefixMatches(p);
      if (matches.length === 1) return matches[0];
      if (matches.length > 1) {
        const shown = matches.slice(0, 10).map((id) => {
          const title = (JSON.parse(this.lines.get(id) ?? '{}') as { title?: string }).title ?? '';
          return `${this.abbrev(id)} ${title}`;
        });
        throw err(
          'E_AMBIGUOUS',
          `"${s}" is ambiguous: ${matches.length} memories match (${shown.join('; ')})`,
          'type more characters of the id',
          { candidates: matches },
        );
      }
    }
    throw err('E_NOT_FOUND', `no memory matches "${s}"`, 'see git mem list for ids and aliases');
  }
  prefixMatches(prefix: string): string[] {
    const ids = this.sortedIds;
    const out: string[] = [];
    for (let i = firstAtOrAfter(ids, prefix, (x) => x); i < ids.length && ids[i].startsWith(prefix); i++)
      out.push(ids[i]);
    return out;
  }
}

/** The index of the first item of `sorted` (in id order) whose id is not below `id`: where `id` is or goes. */
function firstAtOrAfter<T>(sorted: readonly T[], id: string, idOf: (item: T) => string): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (idOf(sorted[mid]) < id) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface TypeBase {
  byType: ReadonlyMap<string, readonly CatalogRow[]>;
  rows: ReadonlyMap<string, CatalogRow>;
  changed: readonly string[];
}

/** Every row in a list of its type, in id order. */
function typesOf(
  sortedIds: readonly string[],
  rows: ReadonlyMap<string, CatalogRow>,
): Map<string, CatalogRow[]> {
  const out = new Map<string, CatalogRow[]>();
  for (const id of sortedIds) {
    const r = rows.get(id)!;
    const l = out.get(r.type);
    if (l) l.push(r);
    else out.set(r.type, [r]);
  }
  return out;
}

/**
 * The type lists of `rows`, from those of the rows they were updated from (`base`): the lists no
 * changed row was or is in are shared, the others copied with the changed rows taken out and put
 * in at their place in id order.
 */
function typesUpdated(
  base: TypeBase,
  rows: ReadonlyMap<string, CatalogRow>,
): Map<string, readonly CatalogRow[]> {
  const out = new Map(base.byType);
  const byType = new Map<string, { gone: Set<string>; put: CatalogRow[] }>();
  const touch = (type: string) => {
    let t = byType.get(type);
    if (!t) {
      t = { gone: new Set(), put: [] };
      byType.set(type, t);
    }
    return t;
  };
  for (const id of new Set(base.changed)) {
    const before = base.rows.get(id);
    const now = rows.get(id);
    if (before) touch(before.type).gone.add(id);
    if (now) touch(now.type).put.push(now);
  }
  for (const [type, { gone, put }] of byType) {
    // a copy of the list (its rows in id order), each changed row found by its id
    const list = [...(out.get(type) ?? [])];
    const at = (id: string) => firstAtOrAfter(list, id, (r) => r.id);
    for (const id of gone) {
      const i = at(id);
      if (list[i]?.id === id) list.splice(i, 1);
    }
    for (const r of put) list.splice(at(r.id), 0, r);
    if (list.length) out.set(type, list);
    else out.delete(type);
  }
  return out;
}

export function rowOf(e: CatalogEntry): CatalogRow {
  const r: CatalogRow = { id: e.id, oid: e.oid, type: e.type, status: e.status, tags: e.tags };
  if (e.alias) r.alias = e.alias;
  if (e.expires) r.expires = e.expires;
  return r;
}
