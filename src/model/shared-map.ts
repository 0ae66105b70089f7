/**
 * A read-only map whose bulk is shared with the map it was forked from.
 *
 * A long-lived process (the MCP server, the daemon, the UI) builds the catalog
 * of every new tip from the previous one, and a write changes one or two of
 * 10k rows. Copying two 10k-entry maps per write cost ~10 ms on a quiet
 * machine (bench/long-lived.bench.mjs); a fork copies only the changes made
 * since the last fold, and folds them into a new bulk once there are more than
 * FOLD_AT of them. The bulk is never changed after it is shared.
 *
 * Iteration yields the bulk's keys in their order (a changed value in its
 * place), then keys added since, as a copied Map would.
 */
const GONE = Symbol('gone');
const FOLD_AT = 512;

export class SharedMap<K, V> implements ReadonlyMap<K, V> {
  private constructor(
    private bulk: ReadonlyMap<K, V>,
    /** changes since the bulk: a value, or GONE for a deleted key */
    private changes: Map<K, V | typeof GONE>,
    private count: number,
  ) {}

  /** Wraps `m`, which the caller must no longer change. */
  static of<K, V>(m: Map<K, V> = new Map()): SharedMap<K, V> {
    return new SharedMap(m, new Map(), m.size);
  }

  /** A map to change, equal to this one; this one is not affected by changes to it. */
  fork(): SharedMap<K, V> {
    if (this.changes.size > FOLD_AT) return new SharedMap(new Map(this), new Map(), this.count);
    return new SharedMap(this.bulk, new Map(this.changes), this.count);
  }

  get size(): number {
    return this.count;
  }

  get(k: K): V | undefined {
    const c = this.changes.get(k);
    if (c !== undefined) return c === GONE ? undefined : c;
    return this.bulk.get(k);
  }

  has(k: K): boolean {
    const c = this.changes.get(k);
    if (c !== undefined) return c !== GONE;
    return this.bulk.has(k);
  }

  set(k: K, v: V): this {
    if (!this.has(k)) this.count++;
    this.changes.set(k, v);
    return this;
  }

  delete(k: K): boolean {
    if (!this.has(k)) return false;
    this.count--;
    if (this.bulk.has(k)) this.changes.set(k, GONE);
    else this.changes.delete(k);
    return true;
  }

  *entries(): MapIterator<[K, V]> {
    const changes = this.changes;
    if (!changes.size) {
      yield* this.bulk.entries();
      return;
    }
    for (const [k, v] of this.bulk) {
      const c = changes.get(k);
      if (c === undefined) yield [k, v];
      else if (c !== GONE) yield [k, c];
    }
    for (const [k, c] of changes) if (c !== GONE && !this.bulk.has(k)) yield [k, c];
  }

  *keys(): MapIterator<K> {
    for (const [k] of this.entries()) yield k;
  }

  *values(): MapIterator<V> {
    // unchanged since the fork: the bulk's own iterator (no pairs made); else through entries
    if (!this.changes.size) {
      yield* this.bulk.values();
      return;
    }
    for (const [, v] of this.entries()) yield v;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(f: (v: V, k: K, m: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) f.call(thisArg, v, k, this);
  }
}
