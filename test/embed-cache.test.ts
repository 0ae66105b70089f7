/** The vector cache: binary Float32 storage per lineage, keyed by content hash. */
import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contentHash, type EmbeddingLineage, lineageKey, VectorCache } from '../src/search/embed/index.js';
import { KEY_BYTES } from '../src/search/embed/vector-cache.js';
import { thrown, tmpDir } from './helpers.js';

const L: EmbeddingLineage = {
  provider: 'local',
  model: 'tiny@fp32',
  dimension: 4,
  normalize: true,
  version: 'abc',
};
const vec = (...xs: number[]) => Float32Array.from(xs);

describe('lineageKey', () => {
  it('differs when any part of the lineage differs', () => {
    const keys = new Set(
      [
        L,
        { ...L, provider: 'ollama' },
        { ...L, model: 'other' },
        { ...L, dimension: 8 },
        { ...L, normalize: false },
        { ...L, version: 'abd' },
      ].map(lineageKey),
    );
    expect(keys.size).toBe(6);
    expect(lineageKey(L)).toBe('local|tiny@fp32|4|l2|abc');
  });
});

describe('VectorCache', () => {
  it('stores, reloads and returns vectors exactly, in compact binary form', () => {
    const dir = tmpDir('gm-vc-');
    const c = new VectorCache(dir, L);
    const h1 = contentHash('one');
    const h2 = contentHash('two');
    expect(h1).toMatch(/^[0-9a-f]{32}$/);
    c.put(h1, [0.1, 0.2, 0.3, 0.4]);
    c.put(h2, vec(1, 0, 0, 0));
    expect(c.get(h1)).toEqual(vec(0.1, 0.2, 0.3, 0.4));
    c.flush();
    const files = readdirSync(dir).filter((f) => f.endsWith('.vec'));
    expect(files).toHaveLength(1);
    const bytes = statSync(join(dir, files[0])).size;
    const raw = readFileSync(join(dir, files[0]));
    const headerLen = raw.indexOf(Buffer.from(h1, 'latin1'));
    // header, then exactly 2 fixed-size records: key slot + 4 float32 each (no JSON of numbers)
    expect(bytes).toBe(headerLen + 2 * (KEY_BYTES + 4 * 4));
    expect(raw.subarray(headerLen).toString('latin1')).not.toContain('0.1');
    const r = new VectorCache(dir, L);
    expect(r.size).toBe(2);
    expect(r.get(h1)).toEqual(vec(0.1, 0.2, 0.3, 0.4));
    expect(r.get(h2)).toEqual(vec(1, 0, 0, 0));
    expect(r.get(contentHash('three'))).toBeUndefined();
    const m = r.many([h2, 'nope', h1]);
    expect([...m.keys()]).toEqual([h2, h1]);
    expect(r.missing([h1, 'x1', 'x2', 'x1'])).toEqual(['x1', 'x2']);
  });

  it('keeps lineages apart and can drop the others', () => {
    const dir = tmpDir('gm-vc-');
    const a = new VectorCache(dir, L);
    a.put('k', [1, 2, 3, 4]);
    a.flush();
    const other: EmbeddingLineage = { ...L, model: 'bigger', dimension: 3 };
    const b = new VectorCache(dir, other);
    expect(b.get('k')).toBeUndefined();
    expect(b.size).toBe(0);
    b.put('k', [9, 9, 9]);
    b.flush();
    expect(new VectorCache(dir, L).get('k')).toEqual(vec(1, 2, 3, 4));
    expect(
      VectorCache.list(dir)
        .map((x) => [x.key, x.count])
        .sort(),
    ).toEqual([
      [lineageKey(other), 1],
      [lineageKey(L), 1],
    ]);
    expect(b.dropOtherLineages()).toEqual([lineageKey(L)]);
    expect(VectorCache.list(dir).map((x) => x.key)).toEqual([lineageKey(other)]);
    expect(new VectorCache(dir, L).size).toBe(0);
  });

  it('rejects vectors of the wrong dimension, non-finite numbers and bad keys', () => {
    const c = new VectorCache(tmpDir('gm-vc-'), L);
    expect(thrown(() => c.put('k', [1, 2, 3]))).toMatchObject({
      code: 'E_INVALID_ARG',
      data: { dimension: 3, expected: 4 },
    });
    expect(thrown(() => c.put('k', [1, 2, Number.NaN, 4]))).toMatchObject({
      code: 'E_INVALID_ARG',
      data: { index: 2 },
    });
    expect(thrown(() => c.put('bad key', [1, 2, 3, 4]))).toMatchObject({
      code: 'E_INVALID_ARG',
      data: { key: 'bad key' },
    });
    expect(thrown(() => c.put('x'.repeat(65), [1, 2, 3, 4]))).toMatchObject({ code: 'E_INVALID_ARG' });
    expect(thrown(() => new VectorCache(tmpDir('gm-vc-'), { ...L, dimension: 0 }))).toMatchObject({
      code: 'E_INVALID_ARG',
      data: { dimension: 0 },
    });
    expect(c.size).toBe(0);
  });

  it('survives a torn tail: readers ignore it, the next write cuts it off', () => {
    const dir = tmpDir('gm-vc-');
    const c = new VectorCache(dir, L);
    c.put('a', [1, 1, 1, 1]);
    c.flush();
    const file = c.file;
    const good = statSync(file).size;
    appendFileSync(file, Buffer.from('b\0\0\0garbage-from-a-crash'));
    const r = new VectorCache(dir, L);
    expect(r.size).toBe(1);
    r.put('c', [2, 2, 2, 2]);
    r.flush();
    expect(statSync(file).size).toBe(good + KEY_BYTES + 16);
    const again = new VectorCache(dir, L);
    expect(again.get('a')).toEqual(vec(1, 1, 1, 1));
    expect(again.get('c')).toEqual(vec(2, 2, 2, 2));
    expect(again.size).toBe(2);
  });

  it('starts afresh over an unreadable file', () => {
    const dir = tmpDir('gm-vc-');
    const c = new VectorCache(dir, L);
    writeFileSync(c.file, 'not a vector file at all');
    const r = new VectorCache(dir, L);
    expect(r.size).toBe(0);
    r.put('a', [1, 2, 3, 4]);
    r.flush();
    expect(new VectorCache(dir, L).get('a')).toEqual(vec(1, 2, 3, 4));
  });

  it('lets the latest write of a key win and compacts duplicates and dropped keys away', () => {
    const dir = tmpDir('gm-vc-');
    const c = new VectorCache(dir, L);
    c.put('a', [1, 0, 0, 0]);
    c.put('b', [0, 1, 0, 0]);
    c.flush();
    const c2 = new VectorCache(dir, L);
    c2.put('a', [0, 0, 0, 1]);
    c2.put('b', [0, 1, 0, 0]); // unchanged: not written again
    c2.flush();
    const r = new VectorCache(dir, L);
    expect(r.get('a')).toEqual(vec(0, 0, 0, 1));
    expect(r.garbage).toBe(1);
    expect(r.compact(new Set(['a']))).toBe(1);
    expect(r.garbage).toBe(0);
    const after = new VectorCache(dir, L);
    expect(after.size).toBe(1);
    expect(after.get('a')).toEqual(vec(0, 0, 0, 1));
    expect(after.get('b')).toBeUndefined();
  });

  it('keeps concurrent appends from two handles', () => {
    const dir = tmpDir('gm-vc-');
    const x = new VectorCache(dir, L);
    const y = new VectorCache(dir, L);
    x.put('x', [1, 2, 3, 4]);
    y.put('y', [4, 3, 2, 1]);
    x.flush();
    y.flush();
    const r = new VectorCache(dir, L);
    expect(r.get('x')).toEqual(vec(1, 2, 3, 4));
    expect(r.get('y')).toEqual(vec(4, 3, 2, 1));
    expect(readdirSync(dir).filter((f) => f.endsWith('.lock'))).toEqual([]);
  });
});
