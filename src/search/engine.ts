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
import { docFromRecord, type SearchDoc } from './docs.js';
import type { CorpusStats } from './rank.js';
import { terms } from './text.js';

/** Appended to every indexed and queried token: a prefix of a token can then only match itself. */
export const TOKEN_END = '\u0003';

// biome-ignore lint/suspicious/noExplicitAny: Orama's generic types are not worth threading through
type AnyOrama = any;
type OramaModule = typeof import('@orama/orama');

let oramaP: Promise<OramaModule> | undefined;
export function loadOrama(): Promise<OramaModule> {
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

export function oramaTokenizer() {
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
export function pathKeys(paths: readonly string[]): string[] {
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

export class SearchIndex {
  readonly docs = new Map<string, SearchDoc>();
  readonly df = new Map<string, number>();
  private lenSum: [number, number, number] = [0, 0, 0];
  vectors?: VectorTable;

  private constructor(
    readonly orama: OramaModule,
    readonly db: AnyOrama,
  ) {}

  static async create(): Promise<SearchIndex> {
    const o = await loadOrama();
    const db = o.create({
      schema: SCHEMA,
      sort: { enabled: false },
      components: { tokenizer: oramaTokenizer() },
    });
    return new SearchIndex(o, db);
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

  private account(d: SearchDoc, sign: 1 | -1): void {
    for (let f = 0; f < 3; f++) this.lenSum[f] += sign * d.len[f];
    const seen = new Set<string>([...Object.keys(d.tf[0]), ...Object.keys(d.tf[1]), ...Object.keys(d.tf[2])]);
    for (const t of seen) {
      const v = (this.df.get(t) ?? 0) + sign;
      if (v > 0) this.df.set(t, v);
      else this.df.delete(t);
    }
  }

  /** Adds or replaces a record. */
  put(r: MemoryRecord, oid?: string): SearchDoc {
    const doc = docFromRecord(r, oid);
    this.putDoc(doc, r.body);
    return doc;
  }

  putDoc(doc: SearchDoc, body: string): void {
    if (this.docs.has(doc.id)) this.remove(doc.id);
    // Orama keeps the object it is given: hand it a fresh one, never ours
    this.orama.insert(this.db, {
      id: doc.id,
      title: doc.title,
      body,
      tags: `${doc.tags.join(' ')} ${doc.alias ?? ''}`,
      type: doc.type,
      status: doc.superseded && doc.status === 'active' ? 'superseded' : doc.status,
      tagset: [...doc.tags],
      paths: pathKeys(doc.paths),
    });
    this.docs.set(doc.id, doc);
    this.account(doc, 1);
  }

  /**
   * Removes a record. A restored index keeps no bodies (they are in git); pass
   * the old body so its tokens leave the full-text index too.
   */
  remove(id: string, oldBody?: string): boolean {
    const d = this.docs.get(id);
    if (!d) return false;
    if (oldBody !== undefined) {
      const stored = this.orama.getByID(this.db, id) as { body?: string } | undefined;
      if (stored && !stored.body) stored.body = oldBody;
    }
    this.orama.remove(this.db, id);
    this.docs.delete(id);
    this.account(d, -1);
    this.vectors?.byId.delete(id);
    return true;
  }

  /**
   * Ids of documents matching any query term (Orama full text), optionally
   * restricted by enum filters. `limit` bounds the candidate set.
   */
  textCandidates(query: string, where: Record<string, unknown> = {}, limit = 1000): string[] {
    if (!terms(query).length) return [];
    const res = this.orama.search(this.db, {
      term: query,
      properties: ['title', 'body', 'tags'],
      threshold: 1,
      limit,
      where: Object.keys(where).length ? where : undefined,
      boost: { title: 2, tags: 1.5 },
    }) as { hits: Array<{ id: string }> };
    return res.hits.map((h) => h.id);
  }

  /** Ids of documents anchored at or under any of the given paths (the `paths` enum). */
  anchoredUnder(paths: string[], limit = 1000): string[] {
    if (!paths.length) return [];
    const res = this.orama.search(this.db, { term: '', where: { paths: { containsAny: paths } }, limit }) as {
      hits: Array<{ id: string }>;
    };
    return res.hits.map((h) => h.id);
  }

  /**
   * Raw Orama data for the on-disk cache, made compact: no bodies in the
   * document store (they are in git), no Orama term frequencies (we score
   * with our own), no vectors (they are never in Orama).
   */
  saveRaw(): unknown {
    const raw = this.orama.save(this.db) as {
      docs: { docs: Record<string, Record<string, unknown>> };
      index: { frequencies: Record<string, unknown> };
    };
    const docs: Record<string, Record<string, unknown>> = {};
    for (const [k, v] of Object.entries(raw.docs.docs)) if (v) docs[k] = { ...v, body: '' };
    const frequencies: Record<string, unknown> = {};
    for (const k of Object.keys(raw.index.frequencies)) frequencies[k] = {};
    return { ...raw, docs: { ...raw.docs, docs }, index: { ...raw.index, frequencies } };
  }

  static async restore(raw: unknown, docs: SearchDoc[]): Promise<SearchIndex> {
    const idx = await SearchIndex.create();
    idx.orama.load(idx.db, raw as never);
    for (const d of docs) {
      idx.docs.set(d.id, d);
      idx.account(d, 1);
    }
    return idx;
  }
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
