/**
 * Public API of search: used by `git mem search`, `git mem context`, the MCP
 * server, agent hooks and the query daemon. Everything heavy (the index, the
 * embedding providers) is loaded lazily inside these functions.
 */
import { staleReasons, staleReasonText } from '../anchors/types.js';
import { err } from '../errors.js';
import { resolveConfig } from '../gitstore/config.js';
import type { Store } from '../gitstore/store.js';
import { isType } from '../model/record.js';
import type { SearchDoc } from './docs.js';
import { dot } from './embed/vector-math.js';
import { type EmbeddingProvider, embedSafe, loadProvider } from './embeddings.js';
import type { SearchIndex } from './engine.js';
import { assemblePack, type Pack, type PackCandidate } from './pack.js';
import {
  bestTextMatches,
  DEFAULT_PARAMS,
  expansionTerms,
  fileProximity,
  type Ranked,
  type RankParams,
  rank,
  searchable,
} from './rank.js';
import { type BarInput, clearsBar, clearsSearchBar, distinctive } from './relevance.js';
import { rulesFor } from './rules.js';
import { type IndexState, indexIsOpen, openIndex, readRecords } from './store-index.js';
import { normalizePath, packageOf, pathWords, stem, terms, words } from './text.js';
import { recordUse, usageCounts } from './usage.js';

export interface SearchQuery {
  query: string;
  file?: string;
  types?: string[];
  tags?: string[];
  limit?: number;
  /** also superseded and archived memories (stale ones are always shown, flagged and demoted) */
  includeStale?: boolean;
  /**
   * The last word may be unfinished (a search as you type): it also matches
   * the indexed words it begins ("postg" finds "postgres").
   */
  prefix?: boolean;
}

/** How many indexed words an unfinished last word stands for at most. */
const PREFIX_TERMS = 16;

/** A search hit: what every surface (CLI, UI, MCP, the query daemon) gets back. */
export interface SearchHit {
  id: string;
  alias: string | null;
  type: string;
  title: string;
  status: string;
  score: number;
  why: string;
  /** the store it comes from: `project`, a team store's name, or `global` (src/search/search.ts labels it) */
  store?: string;
}

export interface SearchOptions {
  /** embedding provider; undefined = from settings, null = text only */
  provider?: EmbeddingProvider | null;
  /**
   * count what is returned as used (.git/mem/usage.log): a context pack's memories by default
   * (an agent is given them); a search's hits only when asked (the MCP search: the agent is
   * given them), not a list a person reads (git mem search, the UI)
   */
  recordUsage?: boolean;
  params?: RankParams;
  now?: number;
  /** drop text-only hits below the search bar (default true; a context pack has its own) */
  bar?: boolean;
  /** usage counts (default: the local counters of the store) */
  usage?: ReadonlyMap<string, number>;
}

const providerMemo = new WeakMap<Store, Promise<EmbeddingProvider | null>>();

/** The configured embedding provider for a store (memoised per store), or null. */
export function providerFor(store: Store): Promise<EmbeddingProvider | null> {
  let p = providerMemo.get(store);
  if (!p) {
    p = (async () => {
      try {
        const cfg = await resolveConfig(store.repo.env, store);
        return await loadProvider(
          cfg.values,
          store.repo.env,
          cfg.origin,
          store.repo.workTree ?? store.repo.cwd,
        );
      } catch {
        return null;
      }
    })();
    providerMemo.set(store, p);
  }
  return p;
}

async function state(store: Store, opts: SearchOptions): Promise<IndexState> {
  const provider = opts.provider === undefined ? await providerFor(store) : opts.provider;
  // a long-lived process (MCP server, UI) answers call after call: the postings, built once,
  // answer in a few ms where scanning every document's terms takes tens
  return openIndex(store, { provider, postings: store.longLived });
}

/**
 * Brings the store's index to its tip now, if this process holds it: what the next search would
 * do first. A long-lived process calls it right after its own write has been answered, so the
 * query that follows (an agent's search after its add) finds the index current instead of
 * applying the change itself. An index no query has opened is left unopened.
 */
export async function refreshIndex(store: Store): Promise<void> {
  if (indexIsOpen(store)) await state(store, {});
}

function validate(q: SearchQuery): void {
  for (const t of q.types ?? []) {
    if (!isType(t))
      throw err(
        'E_INVALID_ARG',
        `unknown type "${t}"`,
        'use one of the memory types (see git mem add --help)',
      );
  }
  if (q.limit !== undefined && !(Number.isInteger(q.limit) && q.limit > 0)) {
    throw err('E_INVALID_ARG', `--limit must be a positive whole number, not "${q.limit}"`);
  }
}

/** Ranking against an index already at the tip (the daemon and MCP server call this). */
async function rankIn(
  st: IndexState,
  q: SearchQuery,
  opts: SearchOptions = {},
  /** how many of the best the caller reads (the rest are not checked against the bars) */
  take = Number.POSITIVE_INFINITY,
): Promise<Ranked[]> {
  const idx = st.index;
  const now = opts.now ?? Date.now();
  const file = q.file ? normalizePath(q.file) : undefined;
  const query = (q.query ?? '').trim();
  let qterms = [...new Set(terms(query))];
  // the words typed (a run of Chinese is one, though the index cuts it into several)
  const typed = new Set(terms(query, false)).size;
  // an unfinished last word: the indexed words it begins join the query (not after a space: that word is done)
  let completions: string[] = [];
  if (q.prefix && query && !/\s$/.test(q.query)) {
    const last = words(query, false).pop();
    if (last) {
      const have = new Set(qterms);
      completions = idx.termsWithPrefix([last, stem(last)], PREFIX_TERMS).filter((t) => !have.has(t));
      qterms = [...qterms, ...completions];
    }
  }
  const where: Record<string, unknown> = {};
  if (q.types?.length) where.type = { in: q.types };
  const params = opts.params ?? DEFAULT_PARAMS;
  // long-lived processes score from postings; one-shot calls scan the documents' term counts
  const tags = (q.tags ?? []).map((t) => t.toLowerCase());
  const allowed = (d: SearchDoc) =>
    searchable(d, !!q.includeStale, now) &&
    !(q.types?.length && !q.types.includes(d.type)) &&
    !(tags.length && !tags.every((t) => d.tags.includes(t)));
  // the best text matches, cut to about preK: from postings in a long-lived process, else a scan
  const textMap = bestTextMatches(idx.textScores(qterms, params), allowed, params.preK);
  const ids = new Set<string>();
  for (const d of textMap.keys()) ids.add(d.id);
  if (file) {
    const dir = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : '';
    const keys = [file, dir, packageOf(file)].filter(Boolean);
    for (const id of idx.anchoredUnder(keys, 500)) ids.add(id);
    for (const d of idx.docs.values()) if (d.scope.length && fileProximity(d, file).score > 0) ids.add(d.id);
    // the path's words as a weak query when the query itself is empty
    if (!qterms.length)
      for (const id of idx.textCandidates(pathWords(file).join(' '), where, 200)) ids.add(id);
  }
  // vectors of the same lineage only
  let vector: Map<string, number> | undefined;
  const table = idx.vectors;
  if (query && st.provider && st.lineage && table && table.lineageKey === st.lineage && table.byId.size) {
    const qv = await embedSafe(st.provider, [query]);
    if (qv) {
      const sims: Array<[string, number]> = [];
      // a vector pointing nowhere near the query's (cosine 0 or below) says nothing of a match
      for (const [id, v] of table.byId) {
        const sim = dot(qv[0], v);
        if (sim > 0) sims.push([id, sim]);
      }
      sims.sort((a, b) => b[1] - a[1]);
      vector = new Map(sims.slice(0, 100));
      for (const [id] of vector) ids.add(id);
    }
  }
  const cands: SearchDoc[] = [];
  for (const id of ids) {
    const d = idx.docs.get(id);
    if (!d || !searchable(d, !!q.includeStale, now)) continue;
    if (q.types?.length && !q.types.includes(d.type)) continue;
    if (tags.length && !tags.every((t) => d.tags.includes(t))) continue;
    cands.push(d);
  }
  // nothing to go on but filters: list what the filters allow, most important first
  if (!query && !file) {
    for (const d of idx.docs.values()) {
      if (!searchable(d, !!q.includeStale, now)) continue;
      if (q.types?.length && !q.types.includes(d.type)) continue;
      if (tags.length && !tags.every((t) => d.tags.includes(t))) continue;
      cands.push(d);
    }
  }
  const usage = opts.usage ?? (st.repo ? usageCounts(st.repo) : undefined);
  const stats = idx.stats();
  let ranked = rank(cands, stats, { qterms, file, now, usage, vector, text: textMap }, params);
  // (sentence-like queries only: a one- or two-word lookup means exactly those words)
  if (params.prfDocs > 0 && typed >= 3) {
    // pseudo-relevance feedback: words of the best text matches find memories phrased differently
    const top = ranked
      .filter((r) => r.why.some((w) => w.startsWith('text')))
      .slice(0, params.prfDocs)
      .map((r) => r.doc);
    const exp = expansionTerms(top, qterms, stats, params.prfTerms);
    if (exp.length) {
      const have = new Set(cands.map((d) => d.id));
      for (const id of idx.termCandidates(exp)) {
        const d = idx.docs.get(id);
        if (!d || have.has(id) || !searchable(d, !!q.includeStale, now)) continue;
        if (q.types?.length && !q.types.includes(d.type)) continue;
        if (tags.length && !tags.every((t) => d.tags.includes(t))) continue;
        cands.push(d);
      }
      const all = [...qterms, ...exp];
      const qweights = [...qterms.map(() => 1), ...exp.map(() => params.prfWeight)];
      // from postings; a one-shot process scores just these candidates (rank, with bm25f)
      const sc = idx.hasPostings ? idx.textScores(all, params, qweights) : undefined;
      const text = sc
        ? new Map(sc.docs.map((d, i) => [d, { score: sc.scores[i], matched: sc.matched[i] }]))
        : undefined;
      ranked = rank(cands, stats, { qterms: all, qweights, file, now, usage, vector, text }, params);
    }
  }
  // a hit found by its text alone clears the search bar (relevance.ts clearsSearchBar): not a
  // tail of memories sharing one common word of the question (not while a word is being typed)
  const m = query && !completions.length && opts.bar !== false ? measureFor(query, stats) : undefined;
  // the hits with a reason of their own (text, vector, anchor, scope, tag) that clear the bar,
  // best first, as many as the caller reads: the bar is measured for those only
  const kept: Ranked[] = [];
  for (const r of ranked) {
    if (kept.length >= take) break;
    if (query || file) {
      if (!r.why.some((w) => /^(text|vector|anchored|scope|tag )/.test(w))) continue;
      if (
        m &&
        !r.why.some((w) => /^(vector|anchored|scope|tag )/.test(w)) &&
        !clearsSearchBar(m.measure(r.doc), m.words)
      )
        continue;
    }
    kept.push(r);
  }
  return kept;
}

function hitOf(r: Ranked): SearchHit {
  return {
    id: r.doc.id,
    alias: r.doc.alias ?? null,
    type: r.doc.type,
    title: r.doc.title,
    status: r.doc.superseded && r.doc.status === 'active' ? 'superseded' : r.doc.status,
    score: Math.round(r.score * 1e4) / 1e4,
    why: r.why.join('; '),
  };
}

export async function searchMemories(
  store: Store,
  q: SearchQuery,
  opts: SearchOptions = {},
): Promise<SearchHit[]> {
  validate(q);
  const st = await state(store, opts);
  const limit = q.limit ?? 10;
  const hits = (await rankIn(st, q, opts, limit)).map(hitOf);
  if (opts.recordUsage === true)
    recordUse(
      store.repo,
      hits.map((h) => h.id),
    );
  return hits;
}

export interface ContextOptions {
  file?: string;
  query?: string;
  budget?: number;
  format?: 'md' | 'json';
  /** how many latest session summaries to offer (default 2) */
  sessions?: number;
}

export interface ContextPack extends Pack {
  format?: 'md' | 'json';
  /** The budget the pack was built for (the option, else the context-budget setting). */
  budget?: number;
}

/** The words of a memory's anchor paths, worked out once per indexed document. */
const pathTermsOf = new WeakMap<SearchDoc, Set<string> | undefined>();
function pathTerms(d: SearchDoc): Set<string> | undefined {
  if (!d.paths.length) return undefined;
  let p = pathTermsOf.get(d);
  if (!p) {
    p = new Set(terms(d.paths.join(' ')));
    pathTermsOf.set(d, p);
  }
  return p;
}

/**
 * How a memory meets a question's words (relevance.ts BarInput): its distinctive words,
 * weighed by idf over the index, found in the title, tags, alias or anchor paths, or the
 * body. `words` is how many the measure weighs (the distinctive ones, else all);
 * undefined when the question has none.
 */
function measureFor(
  query: string,
  stats: ReturnType<SearchIndex['stats']>,
): { words: number; measure: (d: SearchDoc) => BarInput } | undefined {
  const all = [...new Set(terms(query))];
  const q = all.filter(distinctive).length ? all.filter(distinctive) : all;
  if (!q.length) return undefined;
  const idf = (t: string) => {
    const df = stats.df.get(t) ?? 0;
    return Math.log(1 + (stats.n - df + 0.5) / (df + 0.5));
  };
  const idfs = q.map(idf);
  const total = idfs.reduce((s, x) => s + x, 0) || 1;
  // asked of every constraint and of the ranking's head at every pack: one pass
  const measure = (d: SearchDoc): BarInput => {
    const tf = d.tf;
    let paths: Set<string> | undefined | null = null;
    let matched = 0;
    let inTitle = 0;
    let coverage = 0;
    for (let i = 0; i < q.length; i++) {
      const t = q[i];
      const at = tf.indexOf(t);
      let named = at >= 0 && !!(tf.c[3 * at] || tf.c[3 * at + 2]);
      if (!named) {
        if (paths === null) paths = pathTerms(d);
        named = !!paths?.has(t);
      }
      if (!named && !(at >= 0 && tf.c[3 * at + 1])) continue;
      matched++;
      if (named) inTitle++;
      coverage += idfs[i];
    }
    return { matched, inTitle, coverage: coverage / total };
  };
  return { words: q.length, measure };
}

/**
 * Whether a memory clears the relevance bar (relevance.ts, the prompt hook's) for a
 * question. A one-word question means that word.
 */
function barFor(query: string, stats: ReturnType<SearchIndex['stats']>): (d: SearchDoc) => boolean {
  const m = measureFor(query, stats);
  if (!m) return () => false;
  return (d) => {
    const h = m.measure(d);
    return m.words === 1 ? h.matched === 1 : clearsBar(h);
  };
}

/**
 * A context pack: rules in scope, constraints, the best matches for the query
 * and/or file, then the latest session summaries, within the token budget.
 */
/**
 * Narrows a pack's candidates (all but the rules in force): the ids to keep,
 * or null to keep the ranked pack as it is (the filter failed or had nothing
 * to say). The LLM filter (src/agents/llm-filter.ts) is one.
 */
export type PackFilter = (cands: readonly PackCandidate[]) => Promise<ReadonlySet<string> | null>;

export async function buildContextPack(
  store: Store,
  o: ContextOptions,
  opts: SearchOptions = {},
  filter?: PackFilter,
): Promise<ContextPack> {
  const c = await contextCandidates(store, o, opts, filter);
  if (!c.cands) return { text: '', items: [], tokens: 0 };
  const pack = assemblePack(c.cands, c.budget);
  if (opts.recordUsage !== false)
    recordUse(
      store.repo,
      pack.items.map((i) => i.id),
    );
  return { ...pack, format: o.format ?? 'md', budget: c.budget };
}

/**
 * What a context pack is made of, in order, before the budget is applied (no
 * candidates: the store has no memory yet): buildContextPack assembles one
 * store's; src/search/layers.ts puts a team store's after the project's.
 */
export async function contextCandidates(
  store: Store,
  o: ContextOptions,
  opts: SearchOptions = {},
  filter?: PackFilter,
): Promise<{ budget: number; cands: PackCandidate[] | null }> {
  let budget = o.budget;
  if (budget === undefined) {
    try {
      budget = Number((await resolveConfig(store.repo.env, store)).values['context-budget']) || 2000;
    } catch {
      budget = 2000;
    }
  }
  if (!(Number.isFinite(budget) && budget >= 0))
    throw err('E_INVALID_ARG', `--budget must be a number of tokens, not "${o.budget}"`);
  const tip = await store.tip();
  if (!tip) return { budget, cands: null };
  const file = o.file ? normalizePath(o.file) : undefined;
  const now = opts.now ?? Date.now();
  const st = await state(store, opts);
  const idx = st.index;
  const cands: PackCandidate[] = [];
  // asked only a question: memories that clear the relevance bar, and no rule scoped to some path
  const barOf = !file && o.query?.trim() ? barFor(o.query, idx.stats()) : undefined;
  // with a filter, what falls below the bar is offered to it too (over-retrieve, then filter); kept aside
  // for the ranked pack should the filter fail
  const below = new Set<string>();
  const bar = barOf && ((d: SearchDoc) => barOf(d) || (filter ? !!below.add(d.id) : false));
  // 1. rules in force for the file (most specific first); without a file, the unscoped ones
  const rules = (await rulesFor(store, file)).filter((r) => file !== undefined || !r.scope.length);
  for (const r of rules) {
    cands.push({
      id: r.id,
      alias: r.alias,
      type: 'rule',
      title: r.title,
      body: r.body,
      section: 'rules',
      note: r.matched ? `scope ${r.matched}` : undefined,
    });
  }
  const taken = new Set(cands.map((c) => c.id));
  // 2. constraints in scope: scoped ones that match the file, anchored ones near it, unscoped ones by relevance
  const ranked = await rankIn(
    st,
    { query: o.query ?? '', file },
    { ...opts, recordUsage: false, bar: false },
  );
  const rankPos = new Map(ranked.map((r, i) => [r.doc.id, i]));
  const constraints: Array<{ d: SearchDoc; key: number; note?: string }> = [];
  for (const d of idx.docs.values()) {
    if (d.type !== 'constraint' || !searchable(d, false, now) || d.status === 'pending' || taken.has(d.id))
      continue;
    const prox = fileProximity(d, file);
    if (d.scope.length && file && prox.score === 0) continue;
    if (d.scope.length && !file) continue;
    if (bar && !bar(d)) continue;
    const pos = rankPos.get(d.id);
    constraints.push({
      d,
      key: prox.score * 10 + (pos === undefined ? 0 : 5 / (1 + pos)) + d.confidence,
      note: prox.why,
    });
  }
  constraints.sort((a, b) => b.key - a.key || (a.d.id < b.d.id ? -1 : 1));
  // 3. best matches
  // the first 40 that qualify (the ranking holds every text match: thousands for common words)
  const matches: typeof ranked = [];
  for (const r of o.query || file ? ranked : []) {
    if (r.doc.type === 'rule' || r.doc.type === 'session' || r.doc.type === 'constraint') continue;
    if (bar && !bar(r.doc)) continue;
    if (matches.push(r) === 40) break;
  }
  // 4. latest session summaries
  const nSessions = o.sessions ?? 2;
  const sessionDocs: SearchDoc[] = [];
  for (const d of idx.docs.values())
    if (d.type === 'session' && searchable(d, false, now)) sessionDocs.push(d);
  const sessions = sessionDocs
    // a question alone gets the sessions it is about, unless --sessions asks for the latest
    .filter((d) => !bar || o.sessions !== undefined || bar(d))
    .sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : a.id < b.id ? 1 : -1))
    .slice(0, Math.max(0, nSessions));
  const wanted = [...constraints.slice(0, 40).map((c) => c.d), ...matches.map((m) => m.doc), ...sessions];
  const records = await readRecords(store, wanted, tip);
  const bodyOf = (id: string) => records.get(id)?.body ?? '';
  /** A stale memory's note says why it is stale. */
  const noteOf = (d: SearchDoc, note?: string) => {
    const r = d.status === 'stale' ? records.get(d.id) : undefined;
    const why = r ? staleReasons(r).map(staleReasonText).join('; ') : '';
    if (!why) return note;
    return [note, `stale: ${why.length > 200 ? `${why.slice(0, 199)}…` : why}`].filter(Boolean).join('; ');
  };
  for (const c of constraints.slice(0, 40)) {
    cands.push({
      id: c.d.id,
      alias: c.d.alias,
      type: c.d.type,
      title: c.d.title,
      body: bodyOf(c.d.id),
      status: c.d.status,
      section: 'constraints',
      note: noteOf(c.d, c.note),
    });
  }
  for (const m of matches) {
    cands.push({
      id: m.doc.id,
      alias: m.doc.alias,
      type: m.doc.type,
      title: m.doc.title,
      body: bodyOf(m.doc.id),
      status: m.doc.status,
      section: 'matches',
      note: noteOf(m.doc),
      score: m.score,
    });
  }
  for (const s of sessions) {
    cands.push({
      id: s.id,
      alias: s.alias,
      type: s.type,
      title: s.title,
      body: bodyOf(s.id),
      section: 'sessions',
      note: s.created.slice(0, 10),
    });
  }
  // a filter sees everything retrieved (wide: up to 40 constraints and 40 matches) and keeps what bears on the task
  const keep = filter ? await filter(cands.filter((c) => c.section !== 'rules')) : null;
  const chosen = keep
    ? cands.filter((c) => c.section === 'rules' || keep.has(c.id))
    : cands.filter((c) => !below.has(c.id));
  return { budget, cands: chosen };
}

export type { Ranked } from './rank.js';
export { dropIndex, openIndex, readStamp } from './store-index.js';
