/**
 * The in-memory index: an Orama database (full text over title, body and
 * tags; enums for type, status, tags and anchored paths) plus our own
 * per-document term statistics for BM25F scoring and an optional vector
 * table. Orama is imported lazily (never on the path of `git mem show`).
 *
 * Orama traps designed around here (each pinned by test/search-orama.test.ts):
 * - full-text search matches prefixes ("test" finds "testing"): every token we
 *   index and query ends with a terminator, so a prefix can only match itself;
 * - `where` on a `string` field matches any token: filters use `enum` fields;
 * - its BM25 divides term frequency by field length before BM25's own length
 *   normalisation: Orama only finds candidates, we score them (BM25F);
 * - vectors: it keeps (and after a vector search nulls) the caller's document
 *   objects, rejects Float32Array, turns hybrid weight 0 into 0.5 and drops
 *   matches under 0.8 similarity by default: vectors live in our own Float32
 *   table, compared by exact cosine scan, fused by our own RRF, never inside Orama;
 * - its persistence plugin breaks on this schema: we save Orama's raw `save()`
 *   data as JSON (no vectors in it) and vectors as a Float32 file.
 */
import type { MemoryRecord } from '../model/record.js';
import { docFromRecord, type SearchDoc, type TermFreq } from './docs.js';
import { Postings } from './postings.js';
import type { CorpusStats } from './rank.js';
import { terms } from './text.js';

/** Appended to every indexed and queried token: a prefix of a token can then only match itself. */
export const TOKEN_END = '\u0003';

// biome-ignore lint/suspicious/noExplicitAny: Orama's generic types are not worth threading through
type AnyOrama = any;
type OramaModule = typeof import('@orama/orama');

let oramaP: Promise<OramaModule> | undefined;
function loadOrama(): Promise<OramaModule> {
  oramaP ??= import('@orama/orama');
  return oramaP;
}

export const SCHEMA = {
  title: 'string',
  body: 'string',
  tags: 'string',
  type: 'enum',
  status: 'enum',
  tagset: 'enum[]',
  paths: 'enum[]',
} as const;

function oramaTokenizer() {
  return {
    language: 'english',
    normalizationCache: new Map<string, string>(),
    tokenize(raw: string): string[] {
      if (typeof raw !== 'string') return [raw];
      const out: string[] = [];
      for (const t of new Set(terms(raw))) out.push(t + TOKEN_END);
      return out;
    },
  };
}

/** Everything an anchored path contributes to the `paths` enum: the path and its folders. */
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

/** Words in more documents than this are looked up in our postings, not in Orama (see textCandidates). */
export const ORAMA_MAX_DF = 500;

type PendingOp = { op: 'put'; doc: SearchDoc; body: string } | { op: 'remove'; id: string; body?: string };

/** A term table as countTerms makes it: no prototype, so V8 keeps it as a dictionary. */
function termTable(o: TermFreq): TermFreq {
  return Object.assign(Object.create(null) as TermFreq, o);
}

/** What a snapshot holds besides the Orama data. */
export interface IndexData {
  docs: SearchDoc[];
  df: Array<[string, number]>;
  lenSum: [number, number, number];
}

/**
 * The index. Our own part (documents with term statistics) is always in
 * memory; the Orama database is loaded only when something needs it: a
 * long-lived process (daemon, MCP server) calls ensureOrama() once, while a
 * one-shot CLI call answers by scanning the term statistics, which is much
 * cheaper than restoring Orama's structures (the fast path for small stores).
 * Changes made while Orama is not loaded are queued and applied when it is.
 */
export class SearchIndex {
  readonly docs = new Map<string, SearchDoc>();
  readonly df = new Map<string, number>();
  private lenSum: [number, number, number] = [0, 0, 0];
  vectors?: VectorTable;
  private mod?: OramaModule;
  private db?: AnyOrama;
  private pending: PendingOp[] = [];
  /** Orama data saved with the snapshot (loaded on demand), or undefined to build from bodies */
  private rawLoader?: () => unknown;
  /** bodies for building Orama when no saved data exists (read from git) */
  private bodyReader?: (docs: SearchDoc[]) => Promise<Map<string, string>>;
  /** generation of the Orama data on disk this index matches (undefined once changed) */
  oramaGen?: string;
  /** term → documents containing it, with the term's count per field (built for long-lived processes, with Orama) */
  private postings?: Postings;

  private constructor() {}

  /** An empty index with Orama loaded (used for builds from scratch). */
  static async create(): Promise<SearchIndex> {
    const idx = new SearchIndex();
    await idx.ensureOrama();
    return idx;
  }

  /** An index from a snapshot; Orama's part loads on first need through `rawLoader`. */
  static fromData(
    data: IndexData,
    rawLoader: (() => unknown) | undefined,
    bodyReader?: (docs: SearchDoc[]) => Promise<Map<string, string>>,
    oramaGen?: string,
  ): SearchIndex {
    const idx = new SearchIndex();
    for (const d of data.docs) {
      // JSON.parse gives each term table a shape of its own (10k shapes at 10k memories), and a
      // lookup of a word among them costs ~1.6 µs; tables without a prototype are dictionaries, as
      // countTerms makes them, where the same lookup is ~0.1 µs (scans, ranking and the pack's bar)
      d.tf = [termTable(d.tf[0]), termTable(d.tf[1]), termTable(d.tf[2])];
      idx.docs.set(d.id, d);
    }
    for (const [t, n] of data.df) idx.df.set(t, n);
    idx.lenSum = [...data.lenSum];
    idx.rawLoader = rawLoader;
    idx.bodyReader = bodyReader;
    idx.oramaGen = oramaGen;
    return idx;
  }

  /** Restores from Orama's raw data and documents (recomputing statistics). */
  static async restore(raw: unknown, docs: SearchDoc[]): Promise<SearchIndex> {
    const idx = new SearchIndex();
    for (const d of docs) {
      idx.docs.set(d.id, d);
      idx.account(d, 1);
    }
    idx.rawLoader = () => raw;
    await idx.ensureOrama();
    return idx;
  }

  get oramaLoaded(): boolean {
    return this.db !== undefined;
  }

  /** Loads Orama (saved data, or a build from the records' bodies) and applies queued changes. */
  async ensureOrama(): Promise<void> {
    if (this.db) return;
    const o = await loadOrama();
    const db = o.create({
      schema: SCHEMA,
      sort: { enabled: false },
      components: { tokenizer: oramaTokenizer() },
    });
    let raw: unknown;
    try {
      raw = this.rawLoader?.();
    } catch {
      raw = undefined;
    }
    this.mod = o;
    this.db = db;
    if (raw) {
      o.load(db, raw as never);
    } else if (this.docs.size) {
      // no usable saved data: index every current document (bodies from git); queued changes are already in docs
      const docs = [...this.docs.values()];
      const bodies = this.bodyReader ? await this.bodyReader(docs) : new Map<string, string>();
      for (const d of docs) this.oramaInsert(d, bodies.get(d.id) ?? '');
      this.pending = [];
    }
    for (const op of this.pending) {
      if (op.op === 'put') this.oramaInsert(op.doc, op.body);
      else this.oramaRemove(op.id, op.body);
    }
    this.pending = [];
    this.rawLoader = undefined;
    this.ensurePostings();
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

  data(): IndexData {
    return { docs: [...this.docs.values()], df: [...this.df], lenSum: [...this.lenSum] };
  }

  private account(d: SearchDoc, sign: 1 | -1): void {
    for (let f = 0; f < 3; f++) this.lenSum[f] += sign * d.len[f];
    if (this.postings) {
      if (sign > 0) this.postings.add(d);
      else this.postings.remove(d.id);
    }
    const seen = new Set<string>([...Object.keys(d.tf[0]), ...Object.keys(d.tf[1]), ...Object.keys(d.tf[2])]);
    for (const t of seen) {
      const v = (this.df.get(t) ?? 0) + sign;
      if (v > 0) this.df.set(t, v);
      else this.df.delete(t);
    }
  }

  /** Builds the postings (once; maintained on every change after). */
  private ensurePostings(): Postings {
    this.postings ??= new Postings(this.docs.values());
    return this.postings;
  }

  /**
   * BM25F of every document containing a query term, straight from the
   * postings (long-lived processes): no per-document property lookups, which
   * are slow on thousands of differently shaped term-frequency objects.
   * Undefined when there are no postings (one-shot processes).
   */
  textScores(
    qterms: readonly string[],
    p: { k1: number; w: readonly number[]; b: readonly number[] },
    qw?: readonly number[],
  ): { docs: SearchDoc[]; scores: number[] } | undefined {
    if (!this.postings) return undefined;
    const st = this.stats();
    const idf = qterms.map((t) => {
      const df = this.df.get(t) ?? 0;
      return Math.log(1 + (st.n - df + 0.5) / (df + 0.5));
    });
    return this.postings.score(qterms, idf, st.avg, p, qw);
  }

  /** Adds or replaces a record. */
  put(r: MemoryRecord, oid?: string): SearchDoc {
    const doc = docFromRecord(r, oid);
    this.putDoc(doc, r.body);
    return doc;
  }

  putDoc(doc: SearchDoc, body: string): void {
    if (this.docs.has(doc.id)) this.remove(doc.id);
    if (this.db) this.oramaInsert(doc, body);
    else this.pending.push({ op: 'put', doc, body });
    this.docs.set(doc.id, doc);
    this.account(doc, 1);
    this.oramaGen = undefined;
  }

  private oramaInsert(doc: SearchDoc, body: string): void {
    // Orama keeps the object it is given: hand it a fresh one, never ours
    this.mod!.insert(this.db, {
      id: doc.id,
      title: doc.title,
      body,
      tags: `${doc.tags.join(' ')} ${doc.alias ?? ''}`,
      type: doc.type,
      status: doc.superseded && doc.status === 'active' ? 'superseded' : doc.status,
      tagset: [...doc.tags],
      paths: pathKeys(doc.paths),
    });
  }

  private oramaRemove(id: string, oldBody?: string): void {
    if (oldBody !== undefined) {
      const stored = this.mod!.getByID(this.db, id) as { body?: string } | undefined;
      if (stored && !stored.body) stored.body = oldBody;
    }
    this.mod!.remove(this.db, id);
  }

  /**
   * Removes a record. A restored index keeps no bodies (they are in git); pass
   * the old body so its tokens leave the full-text index too.
   */
  remove(id: string, oldBody?: string): boolean {
    const d = this.docs.get(id);
    if (!d) return false;
    if (this.db) this.oramaRemove(id, oldBody);
    else this.pending.push({ op: 'remove', id, body: oldBody });
    this.docs.delete(id);
    this.account(d, -1);
    this.vectors?.byId.delete(id);
    this.oramaGen = undefined;
    return true;
  }

  /** The body Orama holds for a record ('' when restored from disk or not loaded). */
  storedBody(id: string): string {
    if (!this.db) {
      for (let i = this.pending.length - 1; i >= 0; i--) {
        const op = this.pending[i];
        if (op.op === 'put' && op.doc.id === id) return op.body;
      }
      return '';
    }
    return ((this.mod!.getByID(this.db, id) as { body?: string } | undefined)?.body ?? '') as string;
  }

  /**
   * Ids of documents matching any query term, optionally restricted by enum
   * filters (`type`/`status` {in|eq}, `paths`/`tagset` {containsAny}). With
   * Orama loaded it answers (at most `limit`); otherwise the term statistics
   * are scanned (every match).
   */
  textCandidates(query: string, where: Record<string, unknown> = {}, limit = 1000): string[] {
    const qterms = [...new Set(terms(query))];
    if (!qterms.length) return [];
    // Orama's radix lookup merges a word's documents with Array.includes, quadratic in
    // the word's document count (~80 ms for a word in 8k of 10k records): Orama answers
    // for selective words; a query with a common word goes through our postings
    if (this.db && this.selective(qterms)) {
      const res = this.mod!.search(this.db, {
        term: query,
        properties: ['title', 'body', 'tags'],
        threshold: 1,
        limit,
        where: Object.keys(where).length ? where : undefined,
        boost: { title: 2, tags: 1.5 },
      }) as { hits: Array<{ id: string }> };
      return res.hits.map((h) => h.id);
    }
    if (this.postings) {
      const out: string[] = [];
      for (const d of this.postings.docsWith(qterms)) if (matchesWhere(d, where)) out.push(d.id);
      return out;
    }
    const out: string[] = [];
    for (const d of this.docs.values()) {
      let hit = false;
      for (const t of qterms) {
        if (d.tf[0][t] || d.tf[1][t] || d.tf[2][t]) {
          hit = true;
          break;
        }
      }
      if (hit && matchesWhere(d, where)) out.push(d.id);
    }
    return out;
  }

  /** Whether Orama should answer for these terms (every one in at most ORAMA_MAX_DF documents). */
  selective(qterms: readonly string[]): boolean {
    return qterms.every((t) => (this.df.get(t) ?? 0) <= ORAMA_MAX_DF);
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

  /** Whether postings are built (long-lived processes). */
  get hasPostings(): boolean {
    return this.postings !== undefined;
  }

  /** Ids of documents containing any of these (already analysed) terms: postings, else a scan. */
  termCandidates(qterms: readonly string[]): string[] {
    const seen = new Set<SearchDoc>();
    if (this.postings) {
      for (const d of this.postings.docsWith(qterms)) seen.add(d);
    } else {
      for (const d of this.docs.values()) {
        for (const t of qterms) {
          if (d.tf[0][t] || d.tf[1][t] || d.tf[2][t]) {
            seen.add(d);
            break;
          }
        }
      }
    }
    return [...seen].map((d) => d.id);
  }

  /** Ids of documents anchored at or under any of the given paths (the `paths` enum). */
  anchoredUnder(paths: string[], limit = 1000): string[] {
    if (!paths.length) return [];
    if (this.db) {
      const res = this.mod!.search(this.db, {
        term: '',
        where: { paths: { containsAny: paths } },
        limit,
      }) as {
        hits: Array<{ id: string }>;
      };
      return res.hits.map((h) => h.id);
    }
    const want = new Set(paths);
    const out: string[] = [];
    for (const d of this.docs.values()) if (pathKeys(d.paths).some((k) => want.has(k))) out.push(d.id);
    return out;
  }

  /**
   * Raw Orama data for the on-disk cache, made compact: no bodies in the
   * document store (they are in git), no Orama term frequencies (we score
   * with our own), no vectors (they are never in Orama). Loads Orama first.
   */
  async saveRaw(): Promise<unknown> {
    await this.ensureOrama();
    const raw = this.mod!.save(this.db) as {
      docs: { docs: Record<string, Record<string, unknown>> };
      index: { frequencies: Record<string, unknown> };
    };
    const docs: Record<string, Record<string, unknown>> = {};
    for (const [k, v] of Object.entries(raw.docs.docs)) if (v) docs[k] = { ...v, body: '' };
    const frequencies: Record<string, unknown> = {};
    for (const k of Object.keys(raw.index.frequencies)) frequencies[k] = {};
    return { ...raw, docs: { ...raw.docs, docs }, index: { ...raw.index, frequencies } };
  }
}

/** The enum filters of textCandidates, applied to a document (scan path). */
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

/** Cosine similarity of unit vectors (dot product). */
export function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

export function unit(v: ArrayLike<number>): Float32Array {
  const out = new Float32Array(v.length);
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) out[i] = v[i] / n;
  return out;
}
