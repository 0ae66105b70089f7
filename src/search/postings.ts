/**
 * Term → documents with per-field counts, as flat number arrays indexed by a
 * document ordinal, for long-lived processes: scoring a word that occurs in
 * most records is a tight loop over numbers (no Map per document, no string
 * keys, no property lookups on thousands of differently shaped objects).
 * A removed or replaced document leaves a tombstone that queries skip; the
 * lists are rebuilt when tombstones pile up. Pure.
 */
import type { SearchDoc } from './docs.js';

interface List {
  ords: number[];
  /** three counts per entry: title, body, tags */
  c: number[];
}

export class Postings {
  private lists = new Map<string, List>();
  private byOrd: Array<SearchDoc | null> = [];
  private ordOf = new Map<string, number>();
  private dead = 0;
  private acc = new Float64Array(0);

  constructor(docs: Iterable<SearchDoc>) {
    for (const d of docs) this.add(d);
  }

  add(d: SearchDoc): void {
    if (this.ordOf.has(d.id)) this.remove(d.id);
    const ord = this.byOrd.length;
    this.byOrd.push(d);
    this.ordOf.set(d.id, ord);
    const seen = new Map<string, [number, number, number]>();
    for (let f = 0; f < 3; f++) {
      const tf = d.tf[f];
      for (const t in tf) {
        let c = seen.get(t);
        if (!c) {
          c = [0, 0, 0];
          seen.set(t, c);
        }
        c[f] = tf[t];
      }
    }
    for (const [t, c] of seen) {
      let l = this.lists.get(t);
      if (!l) {
        l = { ords: [], c: [] };
        this.lists.set(t, l);
      }
      l.ords.push(ord);
      l.c.push(c[0], c[1], c[2]);
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
      for (const o of l.ords) {
        const d = this.byOrd[o];
        if (d) seen.add(d);
      }
    }
    return [...seen];
  }

  /**
   * BM25F of every document containing a term (weights per term, idf given):
   * the documents and their scores, in parallel arrays.
   */
  score(
    terms: readonly string[],
    idf: readonly number[],
    avg: readonly number[],
    p: { k1: number; w: readonly number[]; b: readonly number[] },
    qw?: readonly number[],
  ): { docs: SearchDoc[]; scores: number[] } {
    if (this.acc.length < this.byOrd.length) this.acc = new Float64Array(this.byOrd.length * 2);
    const acc = this.acc;
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
      const { ords, c } = l;
      for (let j = 0; j < ords.length; j++) {
        const d = this.byOrd[ords[j]];
        if (!d) continue;
        const len = d.len;
        const tfw =
          (c[3 * j] ? (w0 * c[3 * j]) / (1 - b0 + (b0 * len[0]) / a0) : 0) +
          (c[3 * j + 1] ? (w1 * c[3 * j + 1]) / (1 - b1 + (b1 * len[1]) / a1) : 0) +
          (c[3 * j + 2] ? (w2 * c[3 * j + 2]) / (1 - b2 + (b2 * len[2]) / a2) : 0);
        if (tfw <= 0) continue;
        const o = ords[j];
        if (acc[o] === 0) touched.push(o);
        acc[o] += (k * tfw) / (tfw + p.k1);
      }
    }
    const docs: SearchDoc[] = new Array(touched.length);
    const scores: number[] = new Array(touched.length);
    for (let i = 0; i < touched.length; i++) {
      const o = touched[i];
      docs[i] = this.byOrd[o]!;
      scores[i] = acc[o];
      acc[o] = 0;
    }
    return { docs, scores };
  }
}
