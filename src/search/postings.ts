/**
 * Term → documents with per-field counts, in typed arrays indexed by a
 * document ordinal: the inverted index of long-lived processes. Scoring a word
 * that occurs in most records is a tight loop over numbers (no Map per
 * document, no string keys, no property lookups), and a list costs 10 bytes
 * per entry (a 4-byte ordinal, three 2-byte counts) instead of the 32 of
 * plain number arrays. Ordinals only grow, so every list is sorted.
 * A removed or replaced document leaves a tombstone that queries skip; the
 * lists are rebuilt when tombstones pile up. Pure.
 */
import type { SearchDoc } from './docs.js';

interface List {
  n: number;
  ords: Int32Array;
  /** three counts per entry: title, body, tags */
  c: Uint16Array;
}

/** How many query terms `score` says a document matched, one bit each; later terms set MASK_MORE. */
export const MASK_TERMS = 30;
export const MASK_MORE = 1 << MASK_TERMS;

/** The documents a query's terms occur in, their BM25F scores and the terms each matched. */
export interface TextScores {
  docs: SearchDoc[];
  scores: number[];
  /** bit i: the document matched terms[i] (i < MASK_TERMS); bit MASK_TERMS: one of the later terms */
  matched: number[];
}

function list(cap: number): List {
  return { n: 0, ords: new Int32Array(cap), c: new Uint16Array(cap * 3) };
}

export class Postings {
  private lists = new Map<string, List>();
  private byOrd: Array<SearchDoc | null> = [];
  private ordOf = new Map<string, number>();
  private dead = 0;
  private acc = new Float64Array(0);
  private masks = new Int32Array(0);

  /** `df` (term → number of documents), when known, sizes every list exactly once. */
  constructor(docs: Iterable<SearchDoc>, df?: ReadonlyMap<string, number>) {
    if (df) for (const [t, n] of df) this.lists.set(t, list(n));
    for (const d of docs) this.add(d);
  }

  add(d: SearchDoc): void {
    if (this.ordOf.has(d.id)) this.remove(d.id);
    const ord = this.byOrd.length;
    this.byOrd.push(d);
    this.ordOf.set(d.id, ord);
    const { t: ts, c: counts } = d.tf;
    for (let i = 0; i < ts.length; i++) {
      const t = ts[i];
      let l = this.lists.get(t);
      if (!l) {
        l = list(4);
        this.lists.set(t, l);
      } else if (l.n === l.ords.length) {
        const cap = Math.max(4, l.n * 2);
        const ords = new Int32Array(cap);
        ords.set(l.ords);
        const c = new Uint16Array(cap * 3);
        c.set(l.c);
        l.ords = ords;
        l.c = c;
      }
      const j = l.n++;
      l.ords[j] = ord;
      l.c[3 * j] = Math.min(counts[3 * i], 65535);
      l.c[3 * j + 1] = Math.min(counts[3 * i + 1], 65535);
      l.c[3 * j + 2] = Math.min(counts[3 * i + 2], 65535);
    }
  }

  remove(id: string): void {
    const ord = this.ordOf.get(id);
    if (ord === undefined) return;
    this.byOrd[ord] = null;
    this.ordOf.delete(id);
    this.dead++;
    if (this.dead > 1000 && this.dead > this.byOrd.length / 4) this.compact();
  }

  private compact(): void {
    const live = this.byOrd.filter((d): d is SearchDoc => d !== null);
    this.lists = new Map();
    this.byOrd = [];
    this.ordOf = new Map();
    this.dead = 0;
    for (const d of live) this.add(d);
  }

  /** Documents containing any of the terms. */
  docsWith(terms: readonly string[]): SearchDoc[] {
    const seen = new Set<SearchDoc>();
    for (const t of terms) {
      const l = this.lists.get(t);
      if (!l) continue;
      for (let j = 0; j < l.n; j++) {
        const d = this.byOrd[l.ords[j]];
        if (d) seen.add(d);
      }
    }
    return [...seen];
  }

  /**
   * BM25F of every document containing a term (weights per term, idf given):
   * the documents, their scores and which terms each matched, in parallel arrays.
   * A score is bm25f's (src/search/rank.ts) to the last bit: the same operations in the
   * same order. `matched` is a bit per term (bit i: terms[i]), for the first MASK_TERMS terms.
   */
  score(
    terms: readonly string[],
    idf: readonly number[],
    avg: readonly number[],
    p: { k1: number; w: readonly number[]; b: readonly number[] },
    qw?: readonly number[],
  ): TextScores {
    if (this.acc.length < this.byOrd.length) {
      this.acc = new Float64Array(this.byOrd.length * 2);
      this.masks = new Int32Array(this.byOrd.length * 2);
    }
    const acc = this.acc;
    const masks = this.masks;
    const touched: number[] = [];
    const w0 = p.w[0];
    const w1 = p.w[1];
    const w2 = p.w[2];
    const b0 = p.b[0];
    const b1 = p.b[1];
    const b2 = p.b[2];
    const a0 = avg[0] || 1;
    const a1 = avg[1] || 1;
    const a2 = avg[2] || 1;
    for (let i = 0; i < terms.length; i++) {
      const l = this.lists.get(terms[i]);
      if (!l) continue;
      const k = (qw ? qw[i] : 1) * idf[i] * (p.k1 + 1);
      const bit = i < MASK_TERMS ? 1 << i : 0;
      const { ords, c, n } = l;
      for (let j = 0; j < n; j++) {
        const d = this.byOrd[ords[j]];
        if (!d) continue;
        const len = d.len;
        const tfw =
          (c[3 * j] ? (w0 * c[3 * j]) / (1 - b0 + (b0 * len[0]) / a0) : 0) +
          (c[3 * j + 1] ? (w1 * c[3 * j + 1]) / (1 - b1 + (b1 * len[1]) / a1) : 0) +
          (c[3 * j + 2] ? (w2 * c[3 * j + 2]) / (1 - b2 + (b2 * len[2]) / a2) : 0);
        if (tfw <= 0) continue;
        const o = ords[j];
        if (masks[o] === 0) touched.push(o);
        acc[o] += (k * tfw) / (tfw + p.k1);
        masks[o] |= bit || MASK_MORE;
      }
    }
    const docs: SearchDoc[] = new Array(touched.length);
    const scores: number[] = new Array(touched.length);
    const matched: number[] = new Array(touched.length);
    for (let i = 0; i < touched.length; i++) {
      const o = touched[i];
      docs[i] = this.byOrd[o]!;
      scores[i] = acc[o];
      matched[i] = masks[o];
      acc[o] = 0;
      masks[o] = 0;
    }
    return { docs, scores, matched };
  }
}
