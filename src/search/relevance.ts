/**
 * The UserPromptSubmit injection: memories relevant to the prompt, only when
 * they clear a relevance bar. Kept apart from the session-start pack so the
 * prompt hook loads as little as possible.
 */
import type { Store } from '../gitstore/store.js';
import { anchorPathNow, isExpired, type MemoryRecord, parseRecord, recordPath } from '../model/record.js';
import { clip, frame, type Injection, neutralize, oneLine, PRIORITY } from '../safety/frame.js';
import { fileMentions, stem, terms, words } from './text.js';

// ------------------------------------------------------------------ per-prompt relevance

/**
 * Words too common in requests to a coding agent to say what a prompt is about (and the filler
 * of a prompt with no content: "ok continue"), as terms (text.ts: stemmed like every word).
 */
const WEAK = new Set(
  'use using used add adding make fix fixing get set want need like change try run don doesn isn won ll ve re thing something way work works correctly properly code file files can could would please help thanks great ok okay yes yeah now let go continue proceed next sure'
    .split(' ')
    .map(stem),
);

/** A request term (text.ts terms) that says what it is about: not one every request to an agent uses. */
export function distinctive(term: string): boolean {
  return !WEAK.has(term);
}

/** Whether a file a request names is the anchored path (or its tail: `pool.ts` names `src/db/pool.ts`). */
function namesFile(mention: string, anchor: string): boolean {
  const a = anchor.toLowerCase();
  return a === mention || a.endsWith(`/${mention}`) || mention.endsWith(a);
}

/**
 * A request's words as relevance weighs them: its distinctive terms, each with the part of the
 * word as typed that its other forms share (found in the catalog's text as a substring:
 * `deploying` → term `deploi`, sought as `deplo`), and the files it names, each one word.
 */
export function requestWords(prompt: string): {
  terms: string[];
  needles: Map<string, string>;
  files: string[];
} {
  const files = fileMentions(prompt);
  const needles = new Map<string, string>();
  // a path is one word: its parts are not the request's words
  const rest = files.length
    ? prompt.toLowerCase().replace(/\S+/g, (w) => (fileMentions(w).length ? ' ' : w))
    : prompt;
  for (const w of words(rest)) {
    const [t] = terms(w, false);
    if (t === undefined || !distinctive(t) || needles.has(t)) continue;
    let n = 0;
    while (n < t.length && n < w.length && t[n] === w[n]) n++;
    let needle = n === t.length ? t : t.slice(0, n);
    if (needle.endsWith('i') && needle.length > 3) needle = needle.slice(0, -1); // retries, retry: retr
    needles.set(t, needle.length >= 2 ? needle : t);
  }
  for (const f of files) needles.set(f, f);
  return { terms: [...needles.keys()].filter((t) => !files.includes(t)), needles, files };
}

/** How a memory met a request's distinctive words. */
export interface BarInput {
  /** distinctive request words found in the memory (title, tags, alias, anchors or body) */
  matched: number;
  /** of those, found in the title, tags, alias or anchor paths */
  inTitle: number;
  /** the matched words' share of the request's weight (idf), 0..1 */
  coverage: number;
  /** the request names a file the memory is anchored to */
  fileHit?: boolean;
}

/**
 * The relevance bar, one for the prompt hook and for context packs asked only a
 * question: two distinctive words covering half the request's weight, or two in
 * the title covering a fifth of it, or three covering 35 % with one in the title —
 * or a file the request names that the memory is anchored to.
 */
export function clearsBar(h: BarInput): boolean {
  return (
    !!h.fileHit ||
    (h.matched >= 2 && h.coverage >= 0.5) ||
    (h.inTitle >= 2 && h.coverage >= 0.2) ||
    (h.matched >= 3 && h.coverage >= 0.35 && h.inTitle >= 1)
  );
}

/**
 * The bar a search hit reached only through its text must clear (the measure of clearsBar,
 * a lower bar: a person asked, and reads a list). A question of n distinctive words: the
 * words the memory holds must weigh (idf) at least SEARCH_SHARE of an average word of the
 * question, coverage >= SEARCH_SHARE / n, so a hit that shares only the common word of
 * the question (`text app`: app) drops out while a paraphrase's one rare word still finds
 * its memory. A one-word question keeps every hit holding that word. Measured on the
 * retrieval eval (docs/search.md): 0.5 keeps nDCG@10 and Recall@10, 0.65 costs both.
 */
export const SEARCH_SHARE = 0.5;

export function clearsSearchBar(h: BarInput, words: number): boolean {
  if (words <= 1) return h.matched >= 1;
  return !!h.fileHit || h.coverage >= SEARCH_SHARE / words;
}

export interface Scored {
  id: string;
  score: number;
  coverage: number;
  matched: string[];
}

/**
 * Memories relevant to a prompt: a lexical pass over the catalog (idf weights from the
 * summaries: titles, tags, aliases, anchor paths) and, up to RECORD_PASS_MAX memories, over
 * the records' text, then the bar (clearsBar) on title + body and the cut to the ones close
 * to the best (CLOSE_TO_BEST).
 * One computation from the store's catalog and records, whichever process runs it: the
 * search daemon (op `prompt`, its catalog warm) answers exactly what the hook answers alone
 * (test/daemon-agreement.test.ts).
 */
/** The catalog's memories a prompt may be given, as one lower-case text (its summaries' JSON), per catalog. */
interface CatalogText {
  ids: string[];
  oids: string[];
  /** where each summary starts in `big` */
  starts: number[];
  big: string;
  /** id → its index */
  at: Map<string, number>;
  /** index → expiry (ms) of the memories that have one */
  expires: Map<number, number>;
}
const textOf = new WeakMap<object, CatalogText>();

/** Built once per catalog: a long-lived process (the daemon) answers prompt after prompt from it. */
function catalogText(cat: Awaited<ReturnType<Store['catalog']>>): CatalogText {
  const had = textOf.get(cat);
  if (had) return had;
  const t: CatalogText = { ids: [], oids: [], starts: [], big: '', at: new Map(), expires: new Map() };
  const parts: string[] = [];
  let at = 0;
  for (const row of cat.rows.values()) {
    if (row.status !== 'active' || row.type === 'session' || row.type === 'rule') continue;
    const line = cat.lines.get(row.id) ?? '';
    if (row.expires) t.expires.set(t.ids.length, Date.parse(row.expires));
    t.at.set(row.id, t.ids.length);
    t.ids.push(row.id);
    t.oids.push(row.oid);
    t.starts.push(at);
    parts.push(line);
    at += line.length + 1;
  }
  t.big = parts.join('\n').toLowerCase();
  textOf.set(cat, t);
  return t;
}

/** The entry of a joined text a position falls in, from where each entry starts. */
function entryIn(starts: number[], pos: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * Catalogs up to this many memories have their records' text read for the relevance pass (one
 * batched read of every record: once per catalog in a daemon, once per prompt in the hook, +78 ms
 * cold at 1,000 memories on a machine three times slower than the reference), so a prompt meets
 * a memory by words of its body; a bigger store's hook would exceed its time goal
 * (bench/RESULTS-agents.md: ≤ +200 ms cold).
 */
export const RECORD_PASS_MAX = 1000;

/** Every record of a catalog as one lower-case text, entry by entry as in CatalogText; per catalog. */
const recordsOf = new WeakMap<CatalogText, Promise<{ big: string; starts: number[] } | undefined>>();
function recordText(store: Store, t: CatalogText): Promise<{ big: string; starts: number[] } | undefined> {
  let p = recordsOf.get(t);
  if (!p) {
    p =
      t.ids.length > RECORD_PASS_MAX
        ? Promise.resolve(undefined)
        : store.catFile.readMany(t.oids).then((blobs) => {
            const starts: number[] = [];
            const parts: string[] = [];
            let at = 0;
            for (const b of blobs) {
              const s = b ? b.content.toString('utf8') : '';
              starts.push(at);
              parts.push(s);
              at += s.length + 1;
            }
            return { big: parts.join('\n').toLowerCase(), starts };
          });
    recordsOf.set(t, p);
    p.catch(() => recordsOf.delete(t));
  }
  return p;
}

export interface RelevanceOptions {
  exclude?: Set<string>;
  limit?: number;
  now?: number;
  tip?: string;
}

export async function relevantMemories(
  store: Store,
  prompt: string,
  opts: RelevanceOptions = {},
): Promise<Array<Scored & { record: MemoryRecord }>> {
  const now = opts.now ?? Date.now();
  const req = requestWords(prompt);
  let q = [...req.terms.slice(0, 48), ...req.files.slice(0, 8)];
  if (!q.length) return [];
  const tip = opts.tip ?? (await store.tip());
  if (!tip) return [];
  // start git cat-file now (a small read), so its process start overlaps loading the catalog
  void store.catFile.read(tip).catch(() => null);
  const cat = await store.catalog();
  const text = catalogText(cat);
  const { ids, oids, starts, big } = text;
  // what this prompt may not be given: expired memories, and those the session was given already
  // (kept in the text, left out of every count: the same numbers as a text without them)
  const skip = new Set<number>();
  for (const [e, exp] of text.expires) if (exp <= now) skip.add(e);
  if (opts.exclude?.size) for (const id of opts.exclude) if (text.at.has(id)) skip.add(text.at.get(id)!);
  const N = ids.length - skip.size;
  if (!N) return [];
  const entryAt = (pos: number) => entryIn(starts, pos);
  // which summaries hold each prompt word (substring: word matches are checked on the few candidates)
  const hits = new Map<string, Set<number>>();
  for (const t of q) {
    const set = new Set<number>();
    const n = req.needles.get(t) ?? t;
    for (let pos = big.indexOf(n); pos >= 0; pos = big.indexOf(n, pos + n.length)) {
      const e = entryAt(pos);
      if (!skip.has(e)) set.add(e);
      if (e + 1 < ids.length) pos = Math.max(pos, starts[e + 1] - n.length);
    }
    hits.set(t, set);
  }
  // words in more than a fifth of the summaries say nothing
  if (N >= 10) q = q.filter((t) => hits.get(t)!.size / N <= 0.2);
  const idf = (t: string) => Math.log(1 + (N + 1) / ((hits.get(t)?.size ?? 0) + 0.5));
  const score = new Map<number, number>();
  for (const t of q) for (const e of hits.get(t)!) score.set(e, (score.get(e) ?? 0) + idf(t));
  // a word met only in a memory's record (its body) counts too, when the catalog is small enough
  // to hold every record's text: a pasted error message is in the body of the fix, not its title
  const records = await recordText(store, text);
  if (records)
    for (const t of q) {
      const n = req.needles.get(t) ?? t;
      const inSummary = hits.get(t)!;
      let last = -1;
      for (let pos = records.big.indexOf(n); pos >= 0; pos = records.big.indexOf(n, pos + n.length)) {
        const e = entryIn(records.starts, pos);
        if (e !== last && !skip.has(e) && !inSummary.has(e)) score.set(e, (score.get(e) ?? 0) + idf(t));
        last = e;
        if (e + 1 < ids.length) pos = Math.max(pos, records.starts[e + 1] - n.length);
      }
    }
  const paths = q.filter((t) => req.files.includes(t));
  const cands = [...score]
    // ties in id order: the same candidates whatever order the catalog holds its rows in
    .sort((x, y) => y[1] - x[1] || (ids[x[0]] < ids[y[0]] ? -1 : 1))
    .slice(0, 30)
    .map(([e]) => {
      let anchors: string[] = [];
      try {
        anchors = (JSON.parse(cat.lines.get(ids[e]) ?? '{}').anchors ?? []).map(String);
      } catch {}
      const fileHit = paths.some((p) => anchors.some((a) => namesFile(p, a)));
      return { id: ids[e], oid: oids[e], fileHit };
    });
  if (!cands.length || !q.length) return [];
  const totalW = q.reduce((s, t) => s + idf(t), 0);
  const blobs = await store.catFile.readMany(cands.map((c) => c.oid));
  const out: Array<Scored & { record: MemoryRecord }> = [];
  cands.forEach((c, i) => {
    const b = blobs[i];
    if (!b) return;
    let r: MemoryRecord;
    try {
      r = parseRecord(b.content.toString('utf8'), recordPath(c.id));
    } catch {
      return;
    }
    if (r.status !== 'active' || r.type === 'session' || r.type === 'rule' || isExpired(r, now)) return;
    const anchored = r.anchors.map(anchorPathNow);
    const T = new Set(terms(`${r.title} ${r.tags.join(' ')} ${r.alias ?? ''} ${anchored.join(' ')}`));
    for (const a of anchored) T.add(a.toLowerCase());
    const D = new Set(terms(r.body));
    for (const f of fileMentions(r.body)) D.add(f);
    for (const f of req.files) if (anchored.some((a) => namesFile(f, a))) T.add(f);
    const matched = q.filter((t) => D.has(t) || T.has(t));
    const coverage = matched.reduce((s, t) => s + idf(t), 0) / totalW;
    const inTitle = matched.filter((t) => T.has(t)).length;
    if (!clearsBar({ matched: matched.length, inTitle, coverage, fileHit: c.fileHit })) return;
    out.push({
      id: r.id,
      score: coverage + 0.05 * inTitle + (c.fileHit ? 0.5 : 0) + (PRIORITY[r.type] ?? 3) / 100,
      coverage,
      matched,
      record: r,
    });
  });
  out.sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  // what clears the bar far below the best answer is noise beside it (eval/prompt-hook: precision)
  const floor = (out[0]?.score ?? 0) * CLOSE_TO_BEST;
  return out.filter((h) => h.score >= floor).slice(0, opts.limit ?? 5);
}

/**
 * A prompt is given the memories scoring at least this share of its best one's score: on the
 * shared dev set this keeps every prompt's relevant memory and lifts the precision of what is
 * injected from 0.61 to 0.83 (docs/agents.md, eval/prompt-hook/run.mjs).
 */
export const CLOSE_TO_BEST = 0.7;

/** The UserPromptSubmit injection: empty when nothing clears the bar. */
export async function promptContext(
  store: Store,
  prompt: string,
  opts: Omit<RelevanceOptions, 'tip' | 'now'> & { maxChars?: number } = {},
): Promise<Injection> {
  const tip = await store.tip();
  if (!tip || !prompt.trim()) return { text: '', ids: [] };
  const hits = await relevantMemories(store, prompt, { ...opts, tip });
  if (!hits.length) return { text: '', ids: [] };
  const max = opts.maxChars ?? 6000;
  const per = Math.floor((max - 400) / hits.length);
  const lines = hits.map((h) =>
    clip(
      `- (${h.record.type}) ${oneLine(neutralize(h.record.title), 160)} [${h.id.slice(0, 12)}]\n  ${neutralize(h.record.body).trim().replace(/\n/g, '\n  ')}`,
      per,
    ),
  );
  return {
    text: frame('relevant', [`## Memories that may bear on this request\n${lines.join('\n')}`], max),
    ids: hits.map((h) => h.id),
  };
}
