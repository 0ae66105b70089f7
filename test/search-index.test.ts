/**
 * The in-memory index (src/search/engine.ts): whole-token matching, exact
 * enum filters, a snapshot without bodies, packed term counts, and the
 * postings of long-lived processes answering like the one-shot scan.
 */
import { describe, expect, it } from 'vitest';
import { newId } from '../src/model/id.js';
import { newRecord } from '../src/model/record.js';
import { TermCounts } from '../src/search/docs.js';
import { dot, unit } from '../src/search/embed/vector-math.js';
import { SearchIndex } from '../src/search/engine.js';
import { bm25f, DEFAULT_PARAMS, rank } from '../src/search/rank.js';

function rec(title: string, body: string, extra: Partial<Parameters<typeof newRecord>[0]> = {}) {
  return newRecord({
    id: newId(),
    type: 'known_fix',
    title,
    body,
    now: '2026-01-01T00:00:00.000Z',
    ...extra,
  });
}

const sorted = (xs: string[]) => [...xs].sort();

describe('index: matching and filters', () => {
  it('matches whole (stemmed) tokens, never prefixes, with or without postings', () => {
    const idx = SearchIndex.create();
    idx.put(rec('Poolside settings', 'unrelated'));
    const pool = rec('Pool sizing', 'the pool has ten connections');
    idx.put(pool);
    const t = rec('Tests are flaky', 'retrying tests');
    idx.put(t);
    for (const withPostings of [false, true]) {
      if (withPostings) idx.ensurePostings();
      expect(idx.hasPostings).toBe(withPostings);
      expect(idx.textCandidates('pool')).toEqual([pool.id]);
      expect(idx.textCandidates('test')).toEqual([t.id]);
    }
  });

  it('filters are exact: a type is not a token, a folder never matches a sibling', () => {
    const idx = SearchIndex.create();
    const a = rec('Cache warmup', 'redis cache', { type: 'known_fix' });
    const b = rec('Cache policy', 'redis cache', { type: 'decision' });
    const c = rec('Pool', 'pool', { anchors: [{ path: 'packages/db/src/pool.ts' }] });
    const d = rec('Pool web', 'pool', { anchors: [{ path: 'packages/dbx/src/pool.ts' }] });
    for (const r of [a, b, c, d]) idx.put(r);
    for (const withPostings of [false, true]) {
      if (withPostings) idx.ensurePostings();
      expect(idx.textCandidates('redis', { type: { in: ['decision'] } })).toEqual([b.id]);
      expect(idx.anchoredUnder(['packages/db'])).toEqual([c.id]);
    }
  });
});

describe('index: packed term counts', () => {
  it('keeps counts per field, sorted terms, and counts past 255', () => {
    const tc = TermCounts.of([['pool', 'size'], ['pool', 'pool', 'conn'], ['db']]);
    expect(tc.t).toEqual(['conn', 'db', 'pool', 'size']);
    expect(tc.get(0, 'pool')).toBe(1);
    expect(tc.get(1, 'pool')).toBe(2);
    expect(tc.get(2, 'pool')).toBe(0);
    expect(tc.get(1, 'nothing')).toBe(0);
    expect(tc.keys(0)).toEqual(['pool', 'size']);
    expect(tc.c).toBeInstanceOf(Uint8Array);
    const big = TermCounts.of([[], Array(300).fill('word'), []]);
    expect(big.get(1, 'word')).toBe(300);
    expect(big.c).toBeInstanceOf(Uint16Array);
  });
});

describe('index: snapshot data', () => {
  it('holds no bodies, restores the same answers and statistics, and removes without the old body', () => {
    const idx = SearchIndex.create();
    const rs = [
      rec('Pool exhaustion', 'the pg pool runs out of connections under load', {
        anchors: [{ path: 'packages/db/src/pool.ts' }],
      }),
      rec('Retry policy', 'retries use exponential backoff with jitter', {
        confidence: 0.5,
        type: 'decision',
      }),
      rec('Null confidence', 'numbers and nulls survive', { tags: ['db', 'json'] }),
    ];
    for (const r of rs) idx.put(r);
    const text = JSON.stringify(idx.data());
    expect(text).not.toContain('exponential backoff'); // bodies stay in git
    const again = SearchIndex.fromData(JSON.parse(text));
    for (const q of ['pool', 'backoff jitter', 'json', 'connections'])
      expect(again.textCandidates(q)).toEqual(idx.textCandidates(q));
    expect(again.anchoredUnder(['packages/db'])).toEqual([rs[0].id]);
    expect(again.docs.get(rs[1].id)!.confidence).toBe(0.5);
    expect(again.stats()).toEqual(idx.stats());
    again.ensurePostings();
    again.remove(rs[1].id);
    expect(again.textCandidates('backoff')).toEqual([]);
    expect(again.size).toBe(2);
    expect(again.stats().df.get('backoff')).toBeUndefined();
  });
});

describe('index: postings answer like the scan', () => {
  it('same candidates and BM25F scores, through puts, replacements and removals (tombstones, compaction)', () => {
    const words = ['shared', 'rare', 'pool', 'retry', 'cache', 'flaky', 'deploy', 'token'];
    const scan = SearchIndex.create();
    const post = SearchIndex.create();
    post.ensurePostings();
    const ids: string[] = [];
    for (let i = 0; i < 1300; i++) {
      const body = `${words[i % 8]} ${words[(i * 3) % 8]} shared note ${i % 2 ? 'words' : 'rare'}`;
      const r = rec(`Common note ${words[i % 5]}`, body, { type: i % 3 ? 'decision' : 'known_fix' });
      scan.put(r);
      post.put(r);
      ids.push(r.id);
    }
    // replace and remove enough to leave (and then compact) tombstones
    for (let i = 0; i < 1100; i++) {
      if (i % 2) {
        scan.remove(ids[i]);
        post.remove(ids[i]);
      } else {
        const r = rec(`Edited ${i}`, `pool retry edited ${words[i % 8]}`, { type: 'decision' });
        Object.assign(r, { id: ids[i] });
        scan.put(r);
        post.put(r);
      }
    }
    expect(post.size).toBe(scan.size);
    expect(post.stats()).toEqual(scan.stats());
    const qs: Array<[string, Record<string, unknown>]> = [
      ['shared', {}],
      ['rare pool', {}],
      ['edited retry', { type: { in: ['decision'] } }],
      ['nothing here', {}],
    ];
    for (const [q, where] of qs) {
      expect(sorted(post.textCandidates(q, where, 100000))).toEqual(
        sorted(scan.textCandidates(q, where, 100000)),
      );
      // cut to a limit, both keep the same best (a duplicate check asks for 30, a search for about 300)
      for (const k of [5, 30, 300, 100000])
        expect(post.textCandidates(q, where, k)).toEqual(scan.textCandidates(q, where, k));
    }
    // the scan's scores are the postings', to the last bit, with the same bits per term
    const asMap = (t: ReturnType<SearchIndex['textScores']>) =>
      new Map(t.docs.map((d, i) => [d.id, [t.scores[i], t.matched[i]]]));
    for (const q of [
      ['rare', 'pool'],
      ['shared', 'edited', 'nothing'],
    ])
      expect(asMap(scan.textScores(q, DEFAULT_PARAMS))).toEqual(asMap(post.textScores(q, DEFAULT_PARAMS)));
    expect(sorted(post.termCandidates(['pool', 'flaki']))).toEqual(
      sorted(scan.termCandidates(['pool', 'flaki'])),
    );
    // a limit keeps the best by BM25F
    const top = post.textCandidates('rare pool', {}, 5);
    expect(top.length).toBe(5);
    const stats = scan.stats();
    const score = (id: string) => bm25f(scan.docs.get(id)!, ['rare', 'pool'], stats, DEFAULT_PARAMS).score;
    const best = Math.min(...top.map(score));
    for (const id of scan.textCandidates('rare pool'))
      if (!top.includes(id)) expect(score(id)).toBeLessThanOrEqual(best);
    // postings scores are the scan's BM25F
    const sc = post.textScores(['rare', 'pool'], DEFAULT_PARAMS);
    for (let i = 0; i < sc.docs.length; i += 37) expect(sc.scores[i]).toBe(score(sc.docs[i].id));
  });
});

describe('index: vectors', () => {
  it('Float32 unit vectors, exact cosine, own RRF (a weight of 0 means 0, no hidden similarity cut)', () => {
    const v = unit(new Float32Array([3, 4, 0]));
    expect(v).toBeInstanceOf(Float32Array);
    expect(dot(v, unit([3, 4, 0]))).toBeCloseTo(1, 6);
    expect(dot(v, unit([0, 0, 1]))).toBeCloseTo(0, 6);
    const idx = SearchIndex.create();
    const a = rec('alpha pool', 'pool');
    const b = rec('beta pool', 'pool pool pool');
    idx.put(a);
    idx.put(b);
    const cands = [idx.docs.get(a.id)!, idx.docs.get(b.id)!];
    const vec = new Map([
      [a.id, 0.6],
      [b.id, 0.1],
    ]);
    const textOnly = rank(
      cands,
      idx.stats(),
      { qterms: ['pool'], now: 0, vector: vec },
      { ...DEFAULT_PARAMS, wVec: 0 },
    );
    const plain = rank(cands, idx.stats(), { qterms: ['pool'], now: 0 }, DEFAULT_PARAMS);
    expect(textOnly.map((r) => r.doc.id)).toEqual(plain.map((r) => r.doc.id));
    const vecOnly = rank(
      cands,
      idx.stats(),
      { qterms: ['zzz'], now: 0, vector: vec },
      { ...DEFAULT_PARAMS, wText: 0 },
    );
    expect(vecOnly[0].doc.id).toBe(a.id);
    expect(vecOnly[0].why.join(' ')).toContain('vector 0.60');
  });
});
