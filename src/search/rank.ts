/**
 * Ranking (pure): BM25F over title, body and tags; vector similarity when
 * present, fused with the text ranking by reciprocal rank fusion; then the
 * priors of seed 000/004: proximity of anchors and scopes to the file in
 * hand, type priority, confidence, recency and local usage. Every score
 * carries a short "why" so an agent (or a person) can see what counted.
 */
import micromatch from '../model/glob.js';
import type { SearchDoc } from './docs.js';
import { MASK_MORE, MASK_TERMS, type TextScores } from './postings.js';
import { normalizePath, packageOf, pathWords } from './text.js';

export interface CorpusStats {
  n: number;
  /** documents containing a term in any field */
  df: Map<string, number>;
  /** average field lengths: title, body, tags */
  avg: [number, number, number];
}

export interface RankParams {
  k1: number;
  /** field weights and length normalisation: title, body, tags */
  w: [number, number, number];
  b: [number, number, number];
  /** RRF constant and weights of the text and vector lists */
  rrfK: number;
  wText: number;
  wVec: number;
  /** additive weights (scores are in 0..1 before these) */
  wFile: number;
  wPathWords: number;
  wType: number;
  wConf: number;
  wRecent: number;
  wUsage: number;
  /** added for a memory someone confirmed still holds (`git mem verify`): above an unverified one of equal relevance */
  wVerified: number;
  /**
   * multipliers for stale memories, pending proposals and session summaries: a curated memory
   * (active, not a session) ranks above a summary or a proposal of equal relevance, and above
   * one that only repeats the query's words more often (a summary's prompts and commands do)
   */
  stale: number;
  pending: number;
  session: number;
  /** candidates fully scored at most (the rest are cut by text score first) */
  preK: number;
  /** pseudo-relevance feedback: expand the query with the top terms of the best documents (0 = off) */
  prfDocs: number;
  prfTerms: number;
  prfWeight: number;
}

export const DEFAULT_PARAMS: RankParams = {
  k1: 1.2,
  w: [2.5, 1, 1.5],
  b: [0.3, 0.75, 0.3],
  rrfK: 60,
  wText: 1,
  wVec: 1,
  wFile: 0.45,
  wPathWords: 0.12,
  wType: 0.04,
  wConf: 0.03,
  wRecent: 0.02,
  wUsage: 0.03,
  wVerified: 0.02,
  stale: 0.6,
  pending: 0.7,
  session: 0.4,
  preK: 300,
  prfDocs: 3,
  prfTerms: 8,
  prfWeight: 0.3,
};

/**
 * Expansion terms (pseudo-relevance feedback, RM-style): terms weighted by
 * their share in the best documents times their idf, excluding the query's.
 */
export function expansionTerms(
  top: SearchDoc[],
  qterms: readonly string[],
  stats: CorpusStats,
  n: number,
): string[] {
  const q = new Set(qterms);
  const w = new Map<string, number>();
  for (const d of top) {
    const len = d.len[0] + d.len[1] + d.len[2] || 1;
    const { t: ts, c } = d.tf;
    for (let f = 0; f < 3; f++) {
      for (let i = 0; i < ts.length; i++) {
        const n = c[3 * i + f];
        if (!n) continue;
        const t = ts[i];
        if (q.has(t) || t.length < 3 || /^\d+$/.test(t)) continue;
        const df = stats.df.get(t) ?? 0;
        if (df < 2) continue; // a word no other memory has cannot find anything new
        const idf = Math.log(1 + (stats.n - df + 0.5) / (df + 0.5));
        w.set(t, (w.get(t) ?? 0) + (n / len) * idf);
      }
    }
  }
  return [...w]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([t]) => t);
}

/** Type priority (seed 004: constraints first, then decisions and known fixes). */
const TYPE_PRIORITY: Record<string, number> = {
  constraint: 1,
  rule: 1,
  security: 0.8,
  known_fix: 0.7,
  decision: 0.6,
  convention: 0.6,
  failed_attempt: 0.5,
  architecture: 0.5,
  environment: 0.4,
  dependency: 0.4,
  preference: 0.3,
  strategy: 0.4,
  session: 0.2,
};

export function bm25f(
  doc: SearchDoc,
  qterms: readonly string[],
  stats: CorpusStats,
  p: RankParams,
  qw?: readonly number[],
): { score: number; matched: string[]; mask: number } {
  let score = 0;
  let mask = 0;
  const matched: string[] = [];
  for (let i = 0; i < qterms.length; i++) {
    const t = qterms[i];
    const at = doc.tf.indexOf(t);
    if (at < 0) continue;
    let tfw = 0;
    for (let f = 0; f < 3; f++) {
      const tf = doc.tf.c[3 * at + f];
      if (!tf) continue;
      const avg = stats.avg[f] || 1;
      tfw += (p.w[f] * tf) / (1 - p.b[f] + (p.b[f] * doc.len[f]) / avg);
    }
    if (tfw <= 0) continue;
    const df = stats.df.get(t) ?? 0;
    const idf = Math.log(1 + (stats.n - df + 0.5) / (df + 0.5));
    // the operations of Postings.score, in its order: the same bits whichever computes it
    const k = (qw ? qw[i] : 1) * idf * (p.k1 + 1);
    score += (k * tfw) / (tfw + p.k1);
    matched.push(t);
    mask |= i < MASK_TERMS ? 1 << i : MASK_MORE;
  }
  return { score, matched, mask };
}

/**
 * bm25f of every document that matches a query term, as Postings.score answers for the same
 * terms (the same documents, scores to the last bit, bits per term): what a one-shot process,
 * which builds no postings, scores its candidates by.
 */
export function scanScores(
  docs: Iterable<SearchDoc>,
  qterms: readonly string[],
  stats: CorpusStats,
  p: RankParams,
  qw?: readonly number[],
): TextScores {
  const out: TextScores = { docs: [], scores: [], matched: [] };
  for (const d of docs) {
    const r = bm25f(d, qterms, stats, p, qw);
    if (!r.mask) continue;
    out.docs.push(d);
    out.scores.push(r.score);
    out.matched.push(r.mask);
  }
  return out;
}

export interface FileMatch {
  score: number;
  why?: string;
}

/** Proximity of a memory to the file being edited: anchor on the file, its folder, its package; scope globs. */
export function fileProximity(doc: SearchDoc, file: string | undefined): FileMatch {
  if (!file) return { score: 0 };
  const f = normalizePath(file);
  let best: FileMatch = { score: 0 };
  const consider = (score: number, why: string) => {
    if (score > best.score) best = { score, why };
  };
  const dir = f.includes('/') ? f.slice(0, f.lastIndexOf('/')) : '';
  const pkg = packageOf(f);
  for (const a of doc.paths) {
    if (a === f) consider(1, `anchored to ${a}`);
    else if (f.startsWith(`${a}/`)) consider(0.8, `anchored to ${a}/`);
    else {
      const adir = a.includes('/') ? a.slice(0, a.lastIndexOf('/')) : '';
      if (dir && adir === dir) consider(0.6, `anchored in ${dir}/`);
      else if (dir && (adir.startsWith(`${dir}/`) || dir.startsWith(`${adir}/`)) && adir)
        consider(0.5, `anchored near ${a}`);
      else if (pkg && packageOf(a) === pkg) consider(0.35, `anchored in ${pkg}`);
    }
  }
  for (const g of doc.scope) {
    if (
      micromatch.isMatch(f, g, { dot: true }) ||
      micromatch.isMatch(f, `${g.replace(/\/$/, '')}/**`, { dot: true })
    ) {
      consider(0.7, `scope ${g}`);
      break;
    }
  }
  return best;
}

export interface RankInput {
  qterms: string[];
  file?: string;
  now: number;
  usage?: ReadonlyMap<string, number>;
  /** cosine similarity per candidate, when vectors of a matching lineage exist */
  vector?: Map<string, number>;
  /** weight of each query term (default 1; expansion terms weigh less) */
  qweights?: number[];
  /**
   * BM25F scores and matched terms the index's postings computed for these qterms (and
   * qweights): taken as they are instead of scoring those documents again
   */
  text?: ReadonlyMap<SearchDoc, TextMatch>;
}

/** A document's BM25F score and the query terms it matched (Postings.score: a bit per term). */
export interface TextMatch {
  score: number;
  matched: number;
}

/** bm25f's answer from the postings' score and bits; undefined past the terms the bits cover. */
function fromPostings(
  m: TextMatch,
  qterms: readonly string[],
): { score: number; matched: string[] } | undefined {
  if (qterms.length > MASK_TERMS) return undefined;
  const matched: string[] = [];
  for (let i = 0; i < qterms.length; i++) if (m.matched & (1 << i)) matched.push(qterms[i]);
  return { score: m.score, matched };
}

/** The best text matches by their BM25F (textScores), filters first, then the cut to about `preK` (ties kept). */
export function bestTextMatches(
  scored: TextScores,
  allowed: (d: SearchDoc) => boolean,
  preK: number,
): Map<SearchDoc, TextMatch> {
  const at: number[] = [];
  const scores: number[] = [];
  for (let i = 0; i < scored.docs.length; i++) {
    if (!allowed(scored.docs[i])) continue;
    at.push(i);
    scores.push(scored.scores[i]);
  }
  const min = at.length > preK ? kthLargest(scores, preK) : Number.NEGATIVE_INFINITY;
  const out = new Map<SearchDoc, TextMatch>();
  for (let k = 0; k < at.length; k++) {
    const i = at[k];
    if (scores[k] >= min) out.set(scored.docs[i], { score: scored.scores[i], matched: scored.matched[i] });
  }
  return out;
}

/** The k-th largest value (quickselect on a copy). */
export function kthLargest(xs: readonly number[], k: number): number {
  const a = Float64Array.from(xs);
  let lo = 0;
  let hi = a.length - 1;
  const want = k - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] > pivot) i++;
      while (a[j] < pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (want <= j) hi = j;
    else if (want >= i) lo = i;
    else break;
  }
  return a[want];
}

export interface Ranked {
  doc: SearchDoc;
  score: number;
  why: string[];
}

const DAY = 864e5;

/** Ranks candidates. Text and vector lists are fused by RRF; priors are added on top. */
export function rank(
  cands: SearchDoc[],
  stats: CorpusStats,
  input: RankInput,
  p: RankParams = DEFAULT_PARAMS,
): Ranked[] {
  // a large candidate set is cut to the best text matches plus whatever the file or vectors vouch for
  const given = input.text;
  const text = new Map<string, { score: number; matched: string[] }>();
  if (cands.length > p.preK) {
    const scores = new Float64Array(cands.length);
    for (let i = 0; i < cands.length; i++) {
      const d = cands[i];
      if (given) scores[i] = given.get(d)?.score ?? 0;
      else {
        const r = bm25f(d, input.qterms, stats, p, input.qweights);
        text.set(d.id, r);
        scores[i] = r.score;
      }
    }
    const order = Array.from(scores.keys()).sort((a, b) => scores[b] - scores[a]);
    const keep = new Set<SearchDoc>();
    for (const i of order.slice(0, p.preK)) keep.add(cands[i]);
    for (const d of cands) {
      if (keep.has(d)) continue;
      if (input.vector?.has(d.id) || (input.file && fileProximity(d, input.file).score > 0)) keep.add(d);
    }
    cands = [...keep];
  }
  for (const d of cands) {
    if (text.has(d.id)) continue;
    const g = given?.get(d);
    text.set(d.id, (g && fromPostings(g, input.qterms)) ?? bm25f(d, input.qterms, stats, p, input.qweights));
  }
  // rank lists
  const byText = cands
    .filter((d) => text.get(d.id)!.score > 0)
    .sort((a, b) => text.get(b.id)!.score - text.get(a.id)!.score);
  const textRank = new Map(byText.map((d, i) => [d.id, i]));
  const maxText = byText.length ? text.get(byText[0].id)!.score : 1;
  let vecRank: Map<string, number> | undefined;
  if (input.vector?.size) {
    const byVec = cands
      .filter((d) => input.vector!.has(d.id))
      .sort((a, b) => input.vector!.get(b.id)! - input.vector!.get(a.id)!);
    vecRank = new Map(byVec.map((d, i) => [d.id, i]));
  }
  const fileWords = input.file ? new Set(pathWords(input.file)) : undefined;
  const out: Ranked[] = [];
  for (const d of cands) {
    const why: string[] = [];
    const t = text.get(d.id)!;
    let base: number;
    if (vecRank) {
      // reciprocal rank fusion, normalised so the best possible document scores 1
      const tr = textRank.get(d.id);
      const vr = vecRank.get(d.id);
      const norm = p.wText / (p.rrfK + 1) + p.wVec / (p.rrfK + 1);
      base =
        ((tr === undefined ? 0 : p.wText / (p.rrfK + 1 + tr)) +
          (vr === undefined ? 0 : p.wVec / (p.rrfK + 1 + vr))) /
        norm;
      if (vr !== undefined) why.push(`vector ${input.vector!.get(d.id)!.toFixed(2)}`);
    } else {
      base = t.score / maxText;
    }
    if (t.matched.length) why.push(`text: ${t.matched.slice(0, 6).join(' ')}`);
    let score = base;
    const prox = fileProximity(d, input.file);
    if (prox.score > 0) {
      score += p.wFile * prox.score;
      why.push(prox.why!);
    }
    if (fileWords?.size) {
      const hit = d.tags.filter((g) => fileWords.has(g));
      if (hit.length) {
        score += p.wPathWords;
        if (!prox.score) why.push(`tag ${hit[0]} matches the file's path`);
      }
    }
    score += p.wType * (TYPE_PRIORITY[d.type] ?? 0.3);
    score += p.wConf * d.confidence;
    const age = (input.now - Date.parse(d.updated || d.created)) / DAY;
    if (Number.isFinite(age)) score += p.wRecent * Math.exp(-Math.max(0, age) / 90);
    const uses = input.usage?.get(d.id) ?? 0;
    if (uses > 0) {
      score += p.wUsage * Math.min(1, Math.log1p(uses) / Math.log(20));
      why.push(`used ${uses}×`);
    }
    if (d.verified) {
      score += p.wVerified;
      why.push('verified');
    }
    if (d.type === 'session') {
      score *= p.session;
      why.push('session summary');
    }
    if (d.status === 'stale') {
      score *= p.stale;
      why.push('stale');
    } else if (d.status === 'pending') {
      score *= p.pending;
      why.push('pending review');
    } else if (d.status === 'superseded' || d.superseded) {
      score *= p.stale * 0.5;
      why.push('superseded');
    } else if (d.status === 'archived') {
      score *= p.stale * 0.5;
      why.push('archived');
    }
    out.push({ doc: d, score, why });
  }
  return out.sort((a, b) => b.score - a.score || (a.doc.id < b.doc.id ? -1 : 1));
}

/** Whether a memory takes part in search by default. */
export function searchable(d: SearchDoc, includeRetired: boolean, now: number): boolean {
  if (d.expires && Date.parse(d.expires) <= now) return false;
  if (!includeRetired && (d.status === 'superseded' || d.status === 'archived' || d.superseded)) return false;
  return true;
}
