/**
 * The Memories and Memory pages: the list (search as you type over the
 * index `git mem search` uses, the filters of `git mem list`, sorting,
 * pages), one memory with its anchors, the code they point at and why it
 * went stale, and its versions.
 */
import {
  baseOf,
  type FullAnchor,
  isOid,
  type Loc,
  STALE_VERDICTS,
  staleReasons,
  staleReasonText,
} from '../anchors/types.js';
import { type MemoryVersion, memoryHistory, resolveWithTombstones } from '../commands/history.js';
import { kindOf, type ListKind, listsApart, makeFilter, parseKinds } from '../commands/list.js';
import { err } from '../errors.js';
import type { Catalog, CatalogEntry } from '../gitstore/catalog.js';
import type { Store } from '../gitstore/store.js';
import { isRepoPath } from '../model/paths.js';
import {
  isFlagged,
  type MemoryRecord,
  recordPath,
  recordToJSON,
  STATUSES,
  summaryToJSON,
} from '../model/record.js';
import { diffRows, hunks, splitText } from './diff.js';
import { storeNamed, type UiEnv } from './env.js';
import { uiSearch } from './search.js';
import type {
  AnchorCode,
  AnchorView,
  CodeLoc,
  CodeView,
  Conforms,
  DiffRow,
  Is,
  MemoryHistory,
  MemoryItem,
  MemoryLink,
  MemoryList,
  MemorySummary,
  MemoryView,
  RecordJson,
  RecordKind,
  StoreName,
  TagCount,
  Version,
  VersionDiff,
} from './wire.js';

export const SORTS = ['relevance', 'updated', 'created', 'title', 'type', 'status', 'confidence'] as const;
export type Sort = (typeof SORTS)[number];

export interface MemoriesQuery {
  q?: string;
  type?: string[];
  status?: string[];
  tag?: string[];
  /** only these kinds (memories, pending, sessions); none: the curated memories, the others apart (as `git mem list`) */
  kind?: string[];
  /** project, global or all */
  store?: string;
  /** only memories anchored to this file or under this folder */
  path?: string;
  sort?: string;
  order?: string;
  page?: number;
  size?: number;
  /** the store as it was at a revision or date (project store; search does not apply) */
  at?: string;
}

/** A record in the JSON of the API: recordToJSON's (src/model/record.ts), held to the wire's RecordJson. */
export function recordJSON(r: MemoryRecord): RecordJson {
  return recordToJSON(r);
}
type _RecordChecks = [
  // the record as `git mem show --json` gives it, field by field
  Is<Conforms<ReturnType<typeof recordToJSON>, RecordJson>>,
  // the summary of the list (summaryToJSON, spread into MemoryItem)
  Is<Conforms<ReturnType<typeof summaryToJSON>, MemorySummary>>,
  // the kinds of `git mem list` (src/commands/list.ts), both ways
  Is<Conforms<ListKind, RecordKind>>,
  Is<Conforms<RecordKind, ListKind>>,
];

/** How many search hits a list considers at most (then filtered and paged). */
const SEARCH_CAP = 500;
const MAX_PAGE = 200;
/** How many pending proposals and session summaries a list shows apart from its curated memories. */
const APART = 20;

function normPath(p: string): string {
  return p.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+$/, '');
}

function underPath(e: CatalogEntry, p: string): boolean {
  return e.anchors.some((a) => a === p || a.startsWith(`${p}/`));
}

type Keyed = Pick<CatalogEntry, 'id' | 'updated' | 'created' | 'title' | 'type' | 'status' | 'confidence'>;

/** Ascending comparisons by each sort key, ties broken by id (ids are time-ordered). */
const byKey: Record<Exclude<Sort, 'relevance'>, (a: Keyed, b: Keyed) => number> = {
  created: (a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  updated: (a, b) => (a.updated < b.updated ? -1 : a.updated > b.updated ? 1 : 0),
  title: (a, b) => a.title.localeCompare(b.title),
  type: (a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0),
  status: (a, b) => STATUSES.indexOf(a.status) - STATUSES.indexOf(b.status),
  confidence: (a, b) => a.confidence - b.confidence,
};
const ascending = (sort: Exclude<Sort, 'relevance'>) => (a: Keyed, b: Keyed) =>
  byKey[sort](a, b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * A catalog's ids in ascending order of a key, computed once per catalog
 * (a catalog is kept per tip). By creation it is the catalog's own order
 * (ids are time-ordered): no summary is parsed for the first page.
 */
const orders = new WeakMap<Catalog, Map<string, string[]>>();
function sortedIds(cat: Catalog, sort: Exclude<Sort, 'relevance'>): readonly string[] {
  if (sort === 'created') return cat.sortedIds;
  let m = orders.get(cat);
  if (!m) {
    m = new Map();
    orders.set(cat, m);
  }
  let ids = m.get(sort);
  if (!ids) {
    ids = [...cat.entries.values()].sort(ascending(sort)).map((e) => e.id);
    m.set(sort, ids);
  }
  return ids;
}

interface Candidate {
  name: StoreName;
  cat: Catalog;
  id: string;
  score?: number;
  why?: string;
}

/** One page of memories: searched, filtered, sorted. Only the page's summaries are read in full. */
export async function listMemories(env: UiEnv, q: MemoriesQuery): Promise<MemoryList> {
  const size = Math.min(MAX_PAGE, Math.max(1, Math.floor(q.size ?? 50)));
  const page = Math.max(1, Math.floor(q.page ?? 1));
  const query = (q.q ?? '').trim() ? (q.q as string) : '';
  const which = q.store === 'global' ? ['global'] : q.store === 'all' ? ['project', 'global'] : ['project'];
  const stores = which.flatMap((n) =>
    n === 'global' && !env.global ? [] : [{ name: n as StoreName, store: storeNamed(env, n) }],
  );
  // the filters of `git mem list`, checked once (an unknown type or status is refused)
  const keep = makeFilter({ type: q.type, status: q.status, tag: q.tag });
  // the kinds of `git mem list`: asked for, else the curated memories with the others apart, as
  // `git mem list` does (a type or status asked for lists every kind)
  const kinds = parseKinds(q.kind);
  const apart = listsApart({ kinds, type: q.type, status: q.status });
  const main: ListKind[] | null = kinds.length ? kinds : apart ? ['memories'] : null;
  const path = q.path ? normPath(q.path) : undefined;
  let at: { commit: string; ref: string } | undefined;
  if (q.at) {
    if (which.includes('global') && which.length === 1)
      throw err('E_INVALID_ARG', 'looking back works on the project store', 'pick the project store');
    at = { ref: q.at, commit: await env.store.resolveAt(q.at) };
  }
  const searching = !!query && !at;
  const sort: Sort = (SORTS as readonly string[]).includes(q.sort ?? '')
    ? (q.sort as Sort)
    : searching
      ? 'relevance'
      : 'created';
  const desc = q.order ? q.order !== 'asc' : sort !== 'title' && sort !== 'type' && sort !== 'status';
  // the row holds every field the filters read; a path needs the summary's anchors
  const passes = (cat: Catalog, id: string) => {
    const row = cat.rows.get(id);
    if (!row || !keep(row)) return false;
    if (path === undefined) return true;
    const e = cat.entries.get(id); // parsed once per catalog
    return !!e && underPath(e, path);
  };
  const found: Candidate[] = [];
  for (const { name, store } of stores) {
    if (at && name !== 'project') continue;
    const cat = at ? await store.catalogAt(at.commit, false) : await store.catalog();
    if (searching) {
      const retired = !q.status?.length || q.status.some((s) => s === 'superseded' || s === 'archived');
      const hits = await uiSearch(env, store, {
        query,
        types: q.type,
        tags: q.tag,
        limit: SEARCH_CAP,
        includeStale: retired,
        prefix: true,
      });
      for (const h of hits)
        if (passes(cat, h.id)) found.push({ name, cat, id: h.id, score: h.score, why: h.why });
    } else {
      const ids = sortedIds(cat, sort as Exclude<Sort, 'relevance'>);
      for (let i = 0; i < ids.length; i++) {
        const id = ids[desc ? ids.length - 1 - i : i];
        if (passes(cat, id)) found.push({ name, cat, id });
      }
    }
  }
  // search hits (and lists from two stores) are put in order here; one store's list is in order already
  if (sort === 'relevance') found.sort((a, b) => (b.score ?? 0) - (a.score ?? 0) || (a.id < b.id ? -1 : 1));
  else if (searching || stores.length > 1) {
    const cmp = ascending(sort);
    const keyed = found.map((c) => ({ c, e: c.cat.entry(c.id)! }));
    keyed.sort((a, b) => (desc ? -cmp(a.e, b.e) : cmp(a.e, b.e)));
    found.splice(0, found.length, ...keyed.map((k) => k.c));
  }
  // each kind counted; the main list holds its kinds, the others (when apart) follow it in a section
  const counts: Record<ListKind, number> = { memories: 0, pending: 0, sessions: 0 };
  const shown: Candidate[] = [];
  const rest: Candidate[] = [];
  for (const c of found) {
    const k = kindOf(c.cat.rows.get(c.id)!);
    counts[k]++;
    if (!main || main.includes(k)) shown.push(c);
    else if (apart && rest.length < APART) rest.push(c);
  }
  const item = (c: Candidate): MemoryItem => ({
    ...summaryToJSON(c.cat.entry(c.id)!),
    store: c.name,
    ...(c.score !== undefined ? { score: c.score, why: c.why } : {}),
  });
  return {
    total: shown.length,
    kinds: main,
    counts,
    apart: rest.map(item),
    capped: searching && found.length >= SEARCH_CAP,
    page,
    size,
    sort,
    order: desc ? 'desc' : 'asc',
    at: at ?? null,
    items: shown.slice((page - 1) * size, page * size).map(item),
  };
}

const tagMemo = new WeakMap<Catalog, TagCount[]>();

/** The tags in use, most used first (for the filter), per store; counted once per catalog. */
export async function tagCounts(store: Store, limit = 200): Promise<TagCount[]> {
  const cat = await store.catalog();
  let tags = tagMemo.get(cat);
  if (!tags) {
    const n = new Map<string, number>();
    for (const r of cat.rows.values()) for (const t of r.tags) n.set(t, (n.get(t) ?? 0) + 1);
    tags = [...n].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    tagMemo.set(cat, tags);
  }
  return tags.slice(0, limit);
}

// ------------------------------------------------------------------ one memory

/** Where a check followed an anchor (src/anchors/types.ts Loc), sent as the wire's CodeLoc. */
type _AnchorChecks = Is<Conforms<Loc, CodeLoc>>;

function anchorView(a: FullAnchor, index: number): AnchorView {
  const v = a.verdict;
  return {
    index,
    path: a.path,
    lines: a.lines ?? null,
    symbol: a.sym?.qualified ?? a.symbol ?? null,
    commit: a.commit ?? null,
    blob: a.blob ?? null,
    current: a.current
      ? { path: a.current.path, lines: a.current.lines ?? null, commit: a.current.commit }
      : null,
    verdict: v
      ? { status: v.status, reason: v.reason, commit: v.commit, to: v.to ?? null, checked: v.checked }
      : null,
    stale: !!v && STALE_VERDICTS.has(v.status),
  };
}

async function linkTitles(cat: Catalog, r: MemoryRecord): Promise<MemoryLink[]> {
  const out: MemoryLink[] = [];
  for (const [kind, ids] of Object.entries(r.links)) {
    if (!Array.isArray(ids)) continue;
    for (const id of ids.map(String)) {
      const e = cat.entry(id);
      out.push({ kind, id, title: e?.title ?? null, status: e?.status ?? null });
    }
  }
  return out;
}

/** A memory with everything its page shows but the code. */
export async function memoryView(
  env: UiEnv,
  ref: string,
  opts: { store?: string; at?: string } = {},
): Promise<MemoryView> {
  const store = storeNamed(env, opts.store);
  const at = opts.at ? await store.resolveAt(opts.at) : undefined;
  const { record } = await store.get(ref, at);
  // a person opened it: a use (not an old version of it)
  if (!at) (await import('../search/usage.js')).recordUse(store.repo, [record.id]);
  const cat = at ? await store.catalogAt(at, false) : await store.catalog();
  return {
    store: opts.store === 'global' ? 'global' : 'project',
    at: at ?? null,
    record: recordJSON(record),
    abbrev: cat.abbrev(record.id),
    staleReasons: staleReasons(record).map(staleReasonText),
    anchors: (record.anchors as FullAnchor[]).map(anchorView),
    links: await linkTitles(cat, record),
    // the same test as the mark of the list and of git mem list / show
    conflict: isFlagged(record),
    /** re-anchoring needs a work tree (it reads where the code is now) */
    canReanchor: !at && store === env.store && !!store.repo.workTree && record.anchors.length > 0,
  };
}

const CONTEXT = 3;
const WHOLE_FILE_LINES = 80;

function codeWindow(
  text: string,
  range: [number, number] | undefined,
  head: Omit<CodeView, 'from' | 'lines' | 'mark' | 'truncated'>,
): CodeView {
  const all = splitText(text);
  if (!range) {
    return {
      ...head,
      from: 1,
      lines: all.slice(0, WHOLE_FILE_LINES),
      mark: null,
      truncated: all.length > WHOLE_FILE_LINES,
    };
  }
  const from = Math.max(1, range[0] - CONTEXT);
  const to = Math.min(all.length, range[1] + CONTEXT);
  return { ...head, from, lines: all.slice(from - 1, to), mark: range, truncated: false };
}

function isBinary(b: Buffer): boolean {
  return b.subarray(0, 8000).includes(0);
}

/**
 * One anchor's code: as it was when last known intact (the anchored blob, or
 * where a check last followed it), as it is at HEAD, and the diff between
 * the two around the anchored lines: for a stale anchor, the change that
 * made it stale.
 */
export async function anchorCode(
  env: UiEnv,
  ref: string,
  index: number,
  opts: { store?: string } = {},
): Promise<AnchorCode> {
  const store = storeNamed(env, opts.store);
  const { record } = await store.get(ref);
  const a = (record.anchors as FullAnchor[])[index];
  if (!a) throw err('E_NOT_FOUND', `${record.id.slice(0, 12)} has no anchor ${index}`);
  const base = baseOf(a);
  const baseBlob = base ? await store.readBlob(base.blob) : null;
  const anchored =
    base && baseBlob && !isBinary(baseBlob)
      ? codeWindow(baseBlob.toString('utf8'), base.lines, {
          path: base.path,
          blob: base.blob,
          commit: base.commit,
        })
      : null;
  // where the code is now: where the last check followed it, else where it was
  const v = a.verdict;
  // a path the record names is looked up in HEAD's tree only, and only when it stays inside the repository
  const toPath = (v?.to as { path?: unknown } | null)?.path;
  const nowPath = isRepoPath(toPath) ? toPath : (base?.path ?? a.path);
  const nowLines = ((v?.to as { lines?: [number, number] } | null)?.lines ?? (v ? undefined : base?.lines)) as
    | [number, number]
    | undefined;
  const headCommit = (await store.catFile.read('HEAD^{commit}').catch(() => null))?.oid ?? null;
  const headObj =
    headCommit && isRepoPath(nowPath)
      ? await store.catFile.read(`${headCommit}:${nowPath}`).catch(() => null)
      : null;
  const head =
    headObj && headObj.type === 'blob' && !isBinary(headObj.content)
      ? codeWindow(headObj.content.toString('utf8'), nowLines, {
          path: nowPath,
          blob: headObj.oid,
          commit: headCommit,
        })
      : null;
  // the diff: from the last intact blob to the one the stale verdict was given at, else to HEAD's
  let diff: DiffRow[] | null = null;
  let diffTo: { blob: string | null; commit: string | null } | null = null;
  if (base && baseBlob && !isBinary(baseBlob)) {
    let after: { buf: Buffer | null; blob: string | null; commit: string | null } | null = null;
    if (v && STALE_VERDICTS.has(v.status) && (v.blob === '' || isOid(v.blob)))
      after = v.blob
        ? { buf: await store.readBlob(v.blob), blob: v.blob, commit: v.commit }
        : { buf: Buffer.alloc(0), blob: null, commit: v.commit };
    else if (headObj?.type === 'blob')
      after = { buf: headObj.content, blob: headObj.oid, commit: headCommit };
    if (after?.buf && !isBinary(after.buf) && after.blob !== base.blob) {
      const rows = diffRows(splitText(baseBlob.toString('utf8')), splitText(after.buf.toString('utf8')));
      diff = hunks(rows, CONTEXT, base.lines).slice(0, 400);
      diffTo = { blob: after.blob, commit: after.commit };
    }
  }
  return { index, anchor: anchorView(a, index), anchored, head, diff, diffTo };
}

// ------------------------------------------------------------------ history

export async function historyView(
  env: UiEnv,
  ref: string,
  opts: { store?: string } = {},
): Promise<MemoryHistory> {
  const store = storeNamed(env, opts.store);
  const { id, entries: versions } = await memoryHistory(store, ref, 200);
  return { id, versions };
}
type _VersionChecks = Is<Conforms<MemoryVersion, Version>>;

/** The record file of a memory at two commits, line by line (frontmatter and body). */
export async function versionDiff(
  env: UiEnv,
  ref: string,
  from: string,
  to: string,
  opts: { store?: string } = {},
): Promise<VersionDiff> {
  const store = storeNamed(env, opts.store);
  const id = await resolveWithTombstones(store, ref);
  const text = async (c: string) => {
    if (!/^[0-9a-f]{7,64}$/i.test(c)) throw err('E_INVALID_ARG', `not a commit id: "${c}"`);
    if (!(await store.hasCommit(c))) throw err('E_NOT_FOUND', `no commit ${c}`);
    return (await store.readPath(c, recordPath(id)))?.toString('utf8') ?? '';
  };
  const [a, b] = [await text(from), await text(to)];
  return { id, from, to, rows: hunks(diffRows(splitText(a), splitText(b)), 5) };
}
