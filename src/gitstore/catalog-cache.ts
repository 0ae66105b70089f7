/**
 * On-disk cache of the catalog under .git/mem/cache/, stamped with the memory
 * commit it reflects. Derived data: deleting it is always safe; a stamp that
 * does not match is updated from the tree diff.
 *
 * Format (one file, line-oriented so a 10k catalog loads without parsing 10k
 * JSON objects): a JSON header line {v, tip, n, bad}, then one line per record
 * sorted by id: id, oid, alias, type, status, expires, tags (comma-joined),
 * then the summary JSON — tab-separated (JSON text never holds a raw tab).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memDir, type Repo } from './repo.js';
import { Catalog, type CatalogRow } from './store.js';

const CACHE_VERSION = 3;

function cacheFile(repo: Repo, ref: string): string {
  return join(memDir(repo, 'cache'), `catalog-${ref.replace(/[^A-Za-z0-9]+/g, '_')}.tsv`);
}

export function loadCatalogCache(repo: Repo, ref: string): Catalog | undefined {
  let text: string;
  try {
    text = readFileSync(cacheFile(repo, ref), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const nl = text.indexOf('\n');
    const head = JSON.parse(text.slice(0, nl));
    if (head.v !== CACHE_VERSION || typeof head.tip !== 'string') return undefined;
    const rows = new Map<string, CatalogRow>();
    const lines = new Map<string, string>();
    let at = nl + 1;
    while (at < text.length) {
      let end = text.indexOf('\n', at);
      if (end < 0) end = text.length;
      const f: string[] = [];
      let p = at;
      for (let k = 0; k < 7; k++) {
        const t = text.indexOf('\t', p);
        if (t < 0 || t > end) return undefined;
        f.push(text.slice(p, t));
        p = t + 1;
      }
      const row: CatalogRow = {
        id: f[0],
        oid: f[1],
        type: f[3],
        status: f[4],
        tags: f[6] ? f[6].split(',') : [],
      };
      if (f[2]) row.alias = f[2];
      if (f[5]) row.expires = f[5];
      rows.set(f[0], row);
      lines.set(f[0], text.slice(p, end));
      at = end + 1;
    }
    if (rows.size !== head.n) return undefined;
    return new Catalog(head.tip, rows, lines, head.bad ?? []);
  } catch {
    return undefined;
  }
}

export function saveCatalogCache(repo: Repo, ref: string, cat: Catalog): void {
  try {
    const file = cacheFile(repo, ref);
    const tmp = `${file}.${process.pid}.tmp`;
    const out: string[] = [JSON.stringify({ v: CACHE_VERSION, tip: cat.tip, n: cat.size, bad: cat.bad })];
    const unsafe = /[\t\n\r]/;
    for (const id of cat.sortedIds) {
      const r = cat.rows.get(id)!;
      // a field that would break the line format (from a record written elsewhere): skip caching
      if (
        unsafe.test(r.alias ?? '') ||
        unsafe.test(r.type) ||
        unsafe.test(r.status) ||
        r.tags.some((t) => unsafe.test(t) || t.includes(','))
      )
        return;
      out.push(
        `${id}\t${r.oid}\t${r.alias ?? ''}\t${r.type}\t${r.status}\t${r.expires ?? ''}\t${r.tags.join(',')}\t${cat.lines.get(id)}`,
      );
    }
    writeFileSync(tmp, `${out.join('\n')}\n`);
    renameSync(tmp, file);
  } catch {
    // a read-only .git is fine: the cache is only an optimisation
  }
}
