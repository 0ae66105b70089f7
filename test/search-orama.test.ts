/**
 * Orama traps (issue 4), each pinned twice: the raw library still behaves
 * this way (so the workaround is still needed; if a test here fails after an
 * upgrade, revisit the workaround), and our index does not fall into it.
 */
import { create, insert, search } from '@orama/orama';
import { describe, expect, it } from 'vitest';
import { newId } from '../src/model/id.js';
import { newRecord } from '../src/model/record.js';
import { dot, ORAMA_MAX_DF, SCHEMA, SearchIndex, TOKEN_END, unit } from '../src/search/engine.js';
import { DEFAULT_PARAMS, rank } from '../src/search/rank.js';

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

describe('Orama trap: full-text search matches prefixes', () => {
  it('raw Orama finds "testing" for "test"; our index matches whole (stemmed) tokens only', async () => {
    const db = create({ schema: { title: 'string' } as const });
    insert(db, { id: 'a', title: 'testing the pool' });
    expect((await search(db, { term: 'test' })).hits.map((h) => h.id)).toEqual(['a']);

    const idx = await SearchIndex.create();
    idx.put(rec('Poolside settings', 'unrelated'));
    const pool = rec('Pool sizing', 'the pool has ten connections');
    idx.put(pool);
    // "pool" must not match "poolside" by prefix; it matches the record about the pool
    expect(idx.textCandidates('pool')).toEqual([pool.id]);
    // stemming still joins word forms
    const t = rec('Tests are flaky', 'retrying tests');
    idx.put(t);
    expect(idx.textCandidates('test')).toContain(t.id);
    expect(TOKEN_END).toBe('\u0003');
  });
});

describe('Orama trap: `where` on a string field matches any token', () => {
  it('raw Orama matches "known fix" for where kind = "fix"; our filters are enums and match exactly', async () => {
    const db = create({ schema: { kind: 'string' } as const });
    insert(db, { id: 'a', kind: 'known fix' });
    insert(db, { id: 'b', kind: 'fix' });
    expect((await search(db, { term: '', where: { kind: 'fix' } })).hits.map((h) => h.id).sort()).toEqual([
      'a',
      'b',
    ]);

    expect(SCHEMA.type).toBe('enum');
    expect(SCHEMA.status).toBe('enum');
    expect(SCHEMA.paths).toBe('enum[]');
    const idx = await SearchIndex.create();
    const a = rec('Cache warmup', 'redis cache', { type: 'known_fix' });
    const b = rec('Cache policy', 'redis cache', { type: 'decision' });
    idx.put(a);
    idx.put(b);
    expect(idx.textCandidates('redis', { type: { in: ['decision'] } })).toEqual([b.id]);
    // anchored paths are an enum of the path and its folders: a folder never matches a sibling by token
    const c = rec('Pool', 'pool', { anchors: [{ path: 'packages/db/src/pool.ts' }] });
    const d = rec('Pool web', 'pool', { anchors: [{ path: 'packages/dbx/src/pool.ts' }] });
    idx.put(c);
    idx.put(d);
    expect(idx.anchoredUnder(['packages/db'])).toEqual([c.id]);
  });
});

describe('Orama trap: vectors', () => {
  it('raw Orama nulls the caller’s vectors after a vector search, and cuts matches under 0.8 similarity by default', async () => {
    const db = create({ schema: { title: 'string', v: 'vector[3]' } as const });
    const docs = [
      { id: 'a', title: 'a', v: [1, 0, 0] },
      { id: 'b', title: 'b', v: [0.6, 0.8, 0] },
    ];
    for (const x of docs) insert(db, x);
    const r = await search(db, { mode: 'vector', vector: { value: [1, 0, 0], property: 'v' } });
    expect(r.hits.map((h) => h.id)).toEqual(['a']); // b (0.6) cut by the default threshold
    expect(docs[0].v).toBeNull(); // the caller's object was modified
    const all = await search(db, {
      mode: 'vector',
      vector: { value: [1, 0, 0], property: 'v' },
      similarity: 0,
    });
    expect(all.hits.map((h) => h.id)).toEqual(['a', 'b']);
  });

  it('raw Orama rejects Float32Array and turns hybrid weight 0 into 0.5', async () => {
    const db = create({ schema: { title: 'string', v: 'vector[3]' } as const });
    expect(() =>
      insert(db, { id: 'x', title: 'x', v: new Float32Array([1, 0, 0]) as unknown as number[] }),
    ).toThrow();
    insert(db, { id: 'a', title: 'pool', v: [1, 0, 0] });
    insert(db, { id: 'b', title: 'pool', v: [0, 1, 0] });
    const h = await search(db, {
      mode: 'hybrid',
      term: 'pool',
      vector: { value: [0, 1, 0], property: 'v' },
      similarity: 0,
      hybridWeights: { text: 1, vector: 0 },
    });
    // the vector still decides (b is the vector match), exactly as with weights 0.5 and 0.5
    expect(h.hits[0].id).toBe('b');
    const half = await search(db, {
      mode: 'hybrid',
      term: 'pool',
      vector: { value: [0, 1, 0], property: 'v' },
      similarity: 0,
      hybridWeights: { text: 0.5, vector: 0.5 },
    });
    expect(h.hits.map((x) => [x.id, x.score])).toEqual(half.hits.map((x) => [x.id, x.score]));
  });

  it('our vectors never enter Orama: Float32 table, exact cosine, own RRF (a weight of 0 means 0)', async () => {
    expect(Object.values(SCHEMA).some((t) => String(t).startsWith('vector'))).toBe(false);
    const v = unit(new Float32Array([3, 4, 0]));
    expect(v).toBeInstanceOf(Float32Array);
    expect(dot(v, unit([3, 4, 0]))).toBeCloseTo(1, 6);
    expect(dot(v, unit([0, 0, 1]))).toBeCloseTo(0, 6);
    // similarity 0.6 still counts (no hidden 0.8 cut), and weight 0 for vectors really ignores them
    const idx = await SearchIndex.create();
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

describe('Orama trap: persistence', () => {
  it('our compact export (raw save minus bodies and Orama frequencies) restores the same search, and removals still work', async () => {
    const idx = await SearchIndex.create();
    const rs = [
      rec('Pool exhaustion', 'the pg pool runs out of connections under load', {
        anchors: [{ path: 'packages/db/src/pool.ts' }],
      }),
      rec('Retry policy', 'retries use exponential backoff with jitter', { confidence: 0.5 }),
      rec('Null confidence', 'numbers and nulls survive', { tags: ['db', 'json'] }),
    ];
    for (const r of rs) idx.put(r);
    const raw = await idx.saveRaw();
    const text = JSON.stringify(raw);
    expect(text).not.toContain('exponential backoff'); // bodies stay in git
    const again = await SearchIndex.restore(
      JSON.parse(text),
      JSON.parse(JSON.stringify([...idx.docs.values()])),
    );
    for (const q of ['pool', 'backoff jitter', 'json', 'connections'])
      expect(again.textCandidates(q)).toEqual(idx.textCandidates(q));
    expect(again.anchoredUnder(['packages/db'])).toEqual([rs[0].id]);
    expect(again.docs.get(rs[1].id)!.confidence).toBe(0.5);
    // a removal after restore needs the old body (from git) so its tokens leave the index
    again.remove(rs[1].id, rs[1].body);
    expect(again.textCandidates('backoff')).toEqual([]);
    expect(again.size).toBe(2);
    expect(again.stats().df.get('backoff')).toBeUndefined();
  });
});

describe('lazy Orama', () => {
  it('a one-shot index scans term statistics with the same answers as Orama, and queued changes reach Orama when it loads', async () => {
    const idx = await SearchIndex.create();
    const rs = [
      rec('Pool exhaustion', 'the pg pool runs out of connections', {
        anchors: [{ path: 'packages/db/src/pool.ts' }],
        type: 'known_fix',
      }),
      rec('Retry policy', 'retries use exponential backoff', { type: 'decision' }),
      rec('Pool sizing', 'ten connections per pod', { type: 'decision', tags: ['db'] }),
    ];
    for (const r of rs) idx.put(r);
    const raw = JSON.parse(JSON.stringify(await idx.saveRaw()));
    const lazy = SearchIndex.fromData(JSON.parse(JSON.stringify(idx.data())), () => raw);
    expect(lazy.oramaLoaded).toBe(false);
    const qs: Array<[string, Record<string, unknown>]> = [
      ['pool', {}],
      ['connections backoff', {}],
      ['pool', { type: { in: ['decision'] } }],
      ['nothing', {}],
    ];
    for (const [q, where] of qs)
      expect(lazy.textCandidates(q, where).sort()).toEqual(idx.textCandidates(q, where).sort());
    expect(lazy.anchoredUnder(['packages/db'])).toEqual(idx.anchoredUnder(['packages/db']));
    expect(lazy.stats()).toEqual(idx.stats());
    // changes while Orama is not loaded are queued, then applied
    const added = rec('Websocket reconnect', 'jitter on reconnect');
    lazy.put(added);
    lazy.remove(rs[1].id, rs[1].body);
    expect(lazy.textCandidates('jitter')).toEqual([added.id]);
    expect(lazy.storedBody(added.id)).toBe('jitter on reconnect');
    await lazy.ensureOrama();
    expect(lazy.oramaLoaded).toBe(true);
    expect(lazy.textCandidates('jitter')).toEqual([added.id]);
    expect(lazy.textCandidates('backoff')).toEqual([]);
    // no saved Orama data: it is built from the bodies (read from git in the store)
    const bodies = new Map(rs.map((r) => [r.id, r.body]));
    const rebuilt = SearchIndex.fromData(idx.data(), undefined, async () => bodies);
    await rebuilt.ensureOrama();
    expect(rebuilt.textCandidates('connections').sort()).toEqual(idx.textCandidates('connections').sort());
  });
});

describe('Orama trap: a common word is quadratic to look up', () => {
  it("raw Orama merges a word's documents with Array.includes; words in many memories go through our postings", async () => {
    const { readFileSync } = await import('node:fs');
    const { createRequire } = await import('node:module');
    const radix = createRequire(import.meta.url)
      .resolve('@orama/orama')
      .replace(/index\.js$/, 'trees/radix.js');
    expect(readFileSync(radix, 'utf8')).toContain('docs.includes(docID)');
    const idx = await SearchIndex.create();
    const n = ORAMA_MAX_DF + 20;
    const ids: string[] = [];
    for (let i = 0; i < n; i++)
      ids.push(idx.put(rec(`Common note ${i}`, i % 2 ? 'shared words' : 'shared rare')).id);
    expect(idx.selective(['share'])).toBe(false);
    expect(idx.selective(['rare'])).toBe(true);
    await idx.ensureOrama();
    expect(idx.hasPostings).toBe(true);
    expect(idx.textCandidates('shared').sort()).toEqual([...ids].sort());
    expect(idx.textCandidates('rare').length).toBe(Math.ceil(n / 2));
  });
});
