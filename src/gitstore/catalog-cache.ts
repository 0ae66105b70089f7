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

/** Fields of one cached row, as the list filters see them. */
export interface RowFields {
  id: string;
  alias?: string;
  type: string;
  status: string;
  expires?: string;
  tags: string[];
}

/**
 * `list --json` straight from the cache file when it reflects `tip`: each kept
 * row's summary JSON is copied to the output as bytes, without decoding the
 * file or building a catalog (at 10k records that is most of the command).
 * undefined = the cache is missing or stale (use the catalog instead).
 */
export function listJsonFromCache(
  repo: Repo,
  ref: string,
  tip: string,
  keep: (row: RowFields) => boolean,
  /** fields the filter reads; others are left undefined (decoding 10k of them costs milliseconds) */
  need: ReadonlySet<keyof RowFields> = new Set(['id', 'alias', 'type', 'status', 'expires', 'tags']),
): { json: Buffer; bad: number } | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(cacheFile(repo, ref));
  } catch {
    return undefined;
  }
  const nl = buf.indexOf(10);
  let head: { v?: number; tip?: string; n?: number; bad?: unknown[] };
  try {
    head = JSON.parse(buf.toString('utf8', 0, nl));
  } catch {
    return undefined;
  }
  if (head.v !== CACHE_VERSION || head.tip !== tip) return undefined;
  const parts: Buffer[] = [];
  const COMMA = Buffer.from(',\n');
  const all = need.size === 0;
  const [nId, nAlias, nType, nStatus, nExp, nTags] = (
    ['id', 'alias', 'type', 'status', 'expires', 'tags'] as const
  ).map((k) => need.has(k));
  let at = nl + 1;
  let n = 0;
  const t: number[] = new Array(7);
  while (at < buf.length) {
    let end = buf.indexOf(10, at);
    if (end < 0) end = buf.length;
    let p = at;
    for (let k = 0; k < 7; k++) {
      const tab = buf.indexOf(9, p);
      if (tab < 0 || tab > end) return undefined;
      t[k] = tab;
      p = tab + 1;
    }
    n++;
    let ok = all;
    if (!all) {
      const row = { tags: [] as string[] } as unknown as RowFields;
      if (nId) row.id = buf.toString('latin1', at, t[0]);
      if (nType) row.type = buf.toString('utf8', t[2] + 1, t[3]);
      if (nStatus) row.status = buf.toString('utf8', t[3] + 1, t[4]);
      if (nTags && t[6] > t[5] + 1) row.tags = buf.toString('utf8', t[5] + 1, t[6]).split(',');
      if (nAlias && t[2] > t[1] + 1) row.alias = buf.toString('utf8', t[1] + 1, t[2]);
      if (nExp && t[5] > t[4] + 1) row.expires = buf.toString('latin1', t[4] + 1, t[5]);
      ok = keep(row);
    }
    if (ok) {
      if (parts.length) parts.push(COMMA);
      parts.push(buf.subarray(t[6] + 1, end));
    }
    at = end + 1;
  }
  if (n !== head.n) return undefined;
  const json = parts.length
    ? Buffer.concat([Buffer.from('[\n'), ...parts, Buffer.from('\n]\n')])
    : Buffer.from('[]\n');
  return { json, bad: head.bad?.length ?? 0 };
}

/**
 * Resolves an id, unique id prefix or alias straight from the cache file when
 * it reflects `tip`, without building a catalog (what `show` needs at 10k+
 * records). undefined = no single match or no fresh cache: the caller falls
 * back to the catalog, which also owns the ambiguity and not-found messages.
 */
export function findInCache(
  repo: Repo,
  ref: string,
  tip: string,
  alias: string,
  idPrefix: string | undefined,
): { id: string; oid: string } | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(cacheFile(repo, ref));
  } catch {
    return undefined;
  }
  const nl = buf.indexOf(10);
  try {
    const head = JSON.parse(buf.toString('utf8', 0, nl));
    if (head.v !== CACHE_VERSION || head.tip !== tip) return undefined;
  } catch {
    return undefined;
  }
  const aliasBytes = Buffer.from(`\t${alias}\t`);
  // an alias wins over an id prefix (as in Catalog.resolve)
  const ai = buf.indexOf(aliasBytes, nl);
  if (ai >= 0) {
    const lineStart = buf.lastIndexOf(10, ai) + 1;
    const t0 = buf.indexOf(9, lineStart);
    const t1 = buf.indexOf(9, t0 + 1);
    if (t1 === ai)
      return { id: buf.toString('latin1', lineStart, t0), oid: buf.toString('latin1', t0 + 1, t1) };
  }
  if (!idPrefix) return undefined;
  const prefix = Buffer.from(`\n${idPrefix}`, 'latin1');
  const first = buf.indexOf(prefix, nl);
  if (first < 0) return undefined;
  if (buf.indexOf(prefix, first + 1) >= 0) return undefined; // ambiguous
  const start = first + 1;
  const t0 = buf.indexOf(9, start);
  const t1 = buf.indexOf(9, t0 + 1);
  return { id: buf.toString('latin1', start, t0), oid: buf.toString('latin1', t0 + 1, t1) };
}
