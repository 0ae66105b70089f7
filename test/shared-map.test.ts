/**
 * SharedMap (the catalog's rows and summaries in a long-lived process) agrees
 * with a copied Map under random changes, across forks and folds, and a fork
 * never changes the map it came from.
 */
import { describe, expect, it } from 'vitest';
import { SharedMap } from '../src/model/shared-map.js';
import { rng } from './helpers.js';

describe('SharedMap', () => {
  it('agrees with a copied Map through 3,000 random changes and 300 forks, folds included', () => {
    const rand = rng(7);
    // 2,000 keys: a fork's changes pass the fold threshold (512) several times
    const key = () => `k${Math.floor(rand() * 2000)}`;
    let shared = SharedMap.of(new Map([['k0', 0]]));
    let plain = new Map([['k0', 0]]);
    const snapshots: Array<{ shared: SharedMap<string, number>; plain: Map<string, number> }> = [];
    for (let i = 0; i < 3000; i++) {
      const k = key();
      if (rand() < 0.3) expect(shared.delete(k)).toBe(plain.delete(k));
      else {
        shared.set(k, i);
        plain.set(k, i);
      }
      if (i % 10 === 9) {
        snapshots.push({ shared, plain });
        shared = shared.fork();
        plain = new Map(plain);
      }
    }
    snapshots.push({ shared, plain });
    for (const s of snapshots) {
      expect(s.shared.size).toBe(s.plain.size);
      expect(new Map(s.shared)).toEqual(s.plain);
      expect([...s.shared.values()].sort()).toEqual([...s.plain.values()].sort());
      expect([...s.shared.keys()].sort()).toEqual([...s.plain.keys()].sort());
      const probe = Array.from({ length: 2000 }, (_, j) => `k${j}`);
      expect(probe.map((k) => [s.shared.has(k), s.shared.get(k)])).toEqual(
        probe.map((k) => [s.plain.has(k), s.plain.get(k)]),
      );
    }
  });

  it('keeps the order of a copied Map for keys changed in place, added keys last', () => {
    const base = SharedMap.of(
      new Map([
        ['a', 1],
        ['b', 2],
        ['c', 3],
      ]),
    );
    const f = base.fork();
    f.set('b', 20);
    f.set('d', 4);
    f.delete('a');
    expect([...f]).toEqual([
      ['b', 20],
      ['c', 3],
      ['d', 4],
    ]);
    expect([...base]).toEqual([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    const g = f.fork();
    g.delete('d');
    expect([...g.keys()]).toEqual(['b', 'c']);
    expect(f.has('d')).toBe(true);
  });
});
