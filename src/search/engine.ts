/**
 * The in-memory index: per-document metadata and term counts (docs.ts) for
 * filtering and BM25F scoring, corpus statistics, an inverted index of typed
 * arrays (postings.ts) built for long-lived processes, and an optional vector
 * table. No full text is kept: bodies stay in git and are read (one cat-file
 * batch) when a caller shows them.
 *
 * This replaced an Orama database (issue 16 item 6): at 100k memories Orama's
 * document store (full bodies) and radix tree took most of 2.3 GiB and most of
 * a 44 s build, while every ranking was already ours (BM25F over our own term
 * counts). What it still did — finding candidates — the postings do, with the
 * same rankings as the one-shot scan (tested).
 */
import type { MemoryRecord } from '../model/record.js';
import { docFromRecord, type SearchDoc, TermCounts } from './docs.js';
import { Postings, type TextScores } from './postings.js';
import { bestTextMatches, type CorpusStats, DEFAULT_PARAMS, type RankParams, scanScores } from './rank.js';
import { terms } from './text.js';

/** Everything an anchored path contributes to the anchor filter: the path and its folders. */
function pathKeys(paths: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = parts.length; i > 0; i--) out.add(parts.slice(0, i).join('/'));
  }
  return [...out];
}

export interface VectorTable {
  lineageKey: string;
  dim: number;
  /** id → unit vector */
  byId: Map<string, Float32Array>;
  /** content hash → vector, so an edit that keeps the text keeps its vector */
  byHash: Map<string, Float32Array>;
}

/** A document as a snapshot holds it: its terms named by their position in IndexData.terms. */
export type StoredDoc = Omit<SearchDoc, 'tf'> & { tf: { i: number[]; c: number[] } };

/** What a snapshot holds (JSON). */
export interface IndexData {
  /** every indexed term once, sorted; documents name theirs by position */
  terms: string[];
  /** how many documents hold each term (parallel to terms) */
  df: number[];
  lenSum: [number, number, number];
  docs: StoredDoc[];
}

/**
 * The index. Documents with their term counts are always in memory; the
 * postings are built only when something long-lived asks (ensurePostings:
 * daemon, MCP server, web UI), while a one-shot CLI call answers by scanning
 * the documents' term counts, which is cheaper than building postings it
 * would use once. Both give the same rankings.
 */
export class SearchIndex {
  readonly docs = new Map<string, SearchDoc>();
  readonly df = new Map<string, number>();
  private lenSum: [number, number, number] = [0, 0, 0];
  vectors?: VectorTable;
  /** one copy of each term, tag, type and status string for the whole index */
  private strings = new Map<string, string>();
  /** term → documents containing it, with the term's count per field (long-lived processes) */
  private postings?: Postings;

  private constructor() {}

  /** An empty index. */
  static create(): SearchIndex {
    return new SearchIndex();
  }

  /** An index from a snapshot's data (as JSON.parse gives it back). */
  static fromData(data: IndexData): SearchIndex {
    const idx = new SearchIndex();
    const terms = data.terms.map((t) => idx.intern(t));
    for (let i = 0; i < terms.length; i++) idx.df.set(terms[i], data.df[i]);
    for (const s of data.docs) {
      const d = s as unknown as SearchDoc;
      d.tf = new TermCounts(
        s.tf.i.map((i) => terms[i]),
        s.tf.c,
      );
      idx.internDoc(d);
      idx.docs.set(d.id, d);
    }
    idx.lenSum = [...data.lenSum];
    return idx;
  }

  private intern(s: string): string {
    const have = this.strings.get(s);
    if (have !== undefined) return have;
    this.strings.set(s, s);
    return s;
  }

  /** Shares the document's repeated strings with every other document's. */
  private internDoc(d: SearchDoc): void {
    d.type = this.intern(d.type) as SearchDoc['type'];
    d.status = this.intern(d.status) as SearchDoc['status'];
    for (let i = 0; i < d.tags.length; i++) d.tags[i] = this.intern(d.tags[i]);
    for (let i = 0; i < d.paths.length; i++) d.paths[i] = this.intern(d.paths[i]);
    for (let i = 0; i < d.scope.length; i++) d.scope[i] = this.intern(d.scope[i]);
  }

  /** Builds the postings (once; maintained on every change after). */
  ensurePostings(): void {
    this.postings ??= new Postings(this.docs.values(), this.df);
  }

  /** Whether postings are built (long-lived processes). */
  get hasPostings(): boolean {
    return this.postings !== undefined;
  }

  get size(): number {
    return this.docs.size;
  }

  stats(): CorpusStats {
    const n = this.docs.size || 1;
    return {
      n: this.docs.size,
      df: this.df,
      avg: [this.lenSum[0] / n, this.lenSum[1] / n, this.lenSum[2] / n],
    };
  }

  /** The snapshot's data as an object (tests; the store writes it with writeData). */
  data(): IndexData {
    let json = '';
    this.writeData((s) => {
      json += s;
    });
    return JSON.parse(json) as IndexData;
  }

  /**
   * Writes the snapshot's data as JSON in pieces of about a megabyte, a
   * thousand documents at a time: a 100k-memory index never exists as one
   * string or as a second copy of every document.
   */
  writeData(write: (chunk: string) => void): void {
    const terms = [...this.df.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const pos = new Map<string, number>();
    for (let i = 0; i < terms.length; i++) pos.set(terms[i], i);
    write(
      `{"terms":${JSON.stringify(terms)},"df":${JSON.stringify(terms.map((t) => this.df.get(t)))},"lenSum":${JSON.stringify(this.lenSum)},"docs":[`,
    );
    let part: string[] = [];
    let first = true;
    for (const d of this.docs.values()) {
      const stored: StoredDoc = { ...d, tf: { i: d.tf.t.map((t) => pos.get(t)!), c: Array.from(d.tf.c) } };
      part.push(JSON.stringify(stored));
      if (part.length === 1000) {
        write((first ? '' : ',') + part.join(','));
        first = false;
        part = [];
      }
    }
    if (part.length) write((first ? '' : ',') + part.join(','));
    write(']}');
  }

  private account(d: SearchDoc, sign: 1 | -1): void {
    for (let f = 0; f < 3; f++) this.lenSum[f] += sign * d.len[f];
    if (this.postings) {
      if (sign > 0) this.postings.add(d);
      else this.postings.remove(d.id);
    }
    for (const t of d.tf.t) {
      const v = (this.df.get(t) ?? 0) + sign;
      if (v > 0) this.df.set(t, v);
      else this.df.delete(t);
    }
  }

  /**
   * BM25F of every document containing a query term: from the postings (long-lived processes),
   * else from a scan of every document's term counts (scanScores: one-shot processes). The
   * same documents and scores to the last bit either way (tested), so both cut alike.
   */
  textScores(qterms: readonly string[], p: RankParams, qw?: readonly number[]): TextScores {
    const st = this.stats();
    if (!this.postings) return scanScores(this.docs.values(), qterms, st, p, qw);
    const idf = qterms.map((t) => {
      const df = this.df.get(t) ?? 0;
      return Math.log(1 + (st.n - df + 0.5) / (df + 0.5));
    });
    return this.postings.score(qterms, idf, st.avg, p, qw);
  }

  /** Adds or replaces a record. */
  put(r: MemoryRecord, oid?: string): SearchDoc {
    const doc = docFromRecord(r, oid);
    this.putDoc(doc);
    return doc;
  }

  putDoc(doc: SearchDoc): void {
    if (this.docs.has(doc.id)) this.remove(doc.id);
    const ts = doc.tf.t;
    for (let i = 0; i < ts.length; i++) ts[i] = this.intern(ts[i]);
    this.internDoc(doc);
    this.docs.set(doc.id, doc);
    this.account(doc, 1);
  }

  /** Removes a record. */
  remove(id: string): boolean {
    const d = this.docs.get(id);
    if (!d) return false;
    this.docs.delete(id);
    this.account(d, -1);
    this.vectors?.byId.delete(id);
    return true;
  }

  /**
   * Ids of documents matching any query term, optionally restricted by enum
   * filters (`type`/`status` {in|eq}, `paths`/`tagset` {containsAny}): at most
   * `limit`, best first by BM25F (ties by id), with postings or without.
   */
  textCandidates(query: string, where: Record<string, unknown> = {}, limit = 1000): string[] {
    const qterms = [...new Set(terms(query))];
    if (!qterms.length) return [];
    // the cut search ranks by (past the limit, only those scoring at least the limit-th best),
    // then best first, ties by id: the same list in the same order from postings or a scan
    const best = bestTextMatches(
      this.textScores(qterms, DEFAULT_PARAMS),
      (d) => matchesWhere(d, where),
      limit,
    );
    return [...best]
      .sort(([a, x], [b, y]) => y.score - x.score || (a.id < b.id ? -1 : 1))
      .slice(0, limit)
      .map(([d]) => d.id);
  }

  /**
   * Indexed terms that begin with one of `prefixes` (an unfinished word typed
   * so far), the most frequent first: what a search as you type also matches.
   */
  termsWithPrefix(prefixes: readonly string[], limit: number): string[] {
    const ps = [...new Set(prefixes)].filter((p) => p.length >= 2);
    if (!ps.length) return [];
    const hits: Array<[string, number]> = [];
    for (const [t, n] of this.df) if (ps.some((p) => t.startsWith(p))) hits.push([t, n]);
    return hits
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, limit)
      .map(([t]) => t);
  }

  /** Ids of documents containing any of these (already analysed) terms: postings, else a scan. */
  termCandidates(qterms: readonly string[]): string[] {
    const seen = new Set<SearchDoc>();
    if (this.postings) {
      for (const d of this.postings.docsWith(qterms)) seen.add(d);
    } else {
      for (const d of this.docs.values()) {
        for (const t of qterms) {
          if (d.tf.indexOf(t) >= 0) {
            seen.add(d);
            break;
          }
        }
      }
    }
    return [...seen].map((d) => d.id);
  }

  /** Ids of documents anchored at or under any of the given paths (at most `limit`). */
  anchoredUnder(paths: string[], limit = 1000): string[] {
    if (!paths.length) return [];
    const want = new Set(paths);
    const out: string[] = [];
    for (const d of this.docs.values()) {
      if (!d.paths.length) continue;
      if (pathKeys(d.paths).some((k) => want.has(k))) {
        out.push(d.id);
        if (out.length >= limit) break;
      }
    }
    return out;
  }
}

/** The enum filters of textCandidates, applied to a document. */
function matchesWhere(d: SearchDoc, where: Record<string, unknown>): boolean {
  for (const [k, cond] of Object.entries(where)) {
    const c = cond as { in?: string[]; eq?: string; nin?: string[]; containsAny?: string[] };
    let v: string | string[];
    if (k === 'type') v = d.type;
    else if (k === 'status') v = d.superseded && d.status === 'active' ? 'superseded' : d.status;
    else if (k === 'tagset') v = d.tags;
    else if (k === 'paths') v = pathKeys(d.paths);
    else continue;
    if (typeof v === 'string') {
      if (c.in && !c.in.includes(v)) return false;
      if (c.nin?.includes(v)) return false;
      if (c.eq !== undefined && c.eq !== v) return false;
    } else if (c.containsAny && !c.containsAny.some((x) => (v as string[]).includes(x))) return false;
  }
  return true;
}
