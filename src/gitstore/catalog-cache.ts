/**
 * On-disk cache of the catalog (record summaries) under .git/mem/cache/,
 * stamped with the memory commit it reflects. Derived data: deleting it is
 * always safe; a stamp that does not match is updated from the tree diff.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memDir, type Repo } from './repo.js';
import type { BadRecord, Catalog, CatalogEntry } from './store.js';

const CACHE_VERSION = 2;

function cacheFile(repo: Repo, ref: string): string {
  return join(memDir(repo, 'cache'), `catalog-${ref.replace(/[^A-Za-z0-9]+/g, '_')}.json`);
}

export function loadCatalogCache(
  repo: Repo,
  ref: string,
): { tip: string; entries: Map<string, CatalogEntry>; bad: BadRecord[] } | undefined {
  try {
    const j = JSON.parse(readFileSync(cacheFile(repo, ref), 'utf8'));
    if (j.v !== CACHE_VERSION || typeof j.tip !== 'string') return undefined;
    const entries = new Map<string, CatalogEntry>();
    for (const e of j.entries as CatalogEntry[]) entries.set(e.id, e);
    return { tip: j.tip, entries, bad: j.bad ?? [] };
  } catch {
    return undefined;
  }
}

export function saveCatalogCache(repo: Repo, ref: string, cat: Catalog): void {
  try {
    const file = cacheFile(repo, ref);
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(
      tmp,
      JSON.stringify({ v: CACHE_VERSION, tip: cat.tip, entries: [...cat.entries.values()], bad: cat.bad }),
    );
    renameSync(tmp, file);
  } catch {
    // a read-only .git is fine: the cache is only an optimisation
  }
}
