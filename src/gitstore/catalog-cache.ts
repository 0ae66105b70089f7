/**
 * On-disk cache of the catalog under .git/mem/cache/, stamped with the memory
 * commit it reflects. Derived data: deleting it is always safe; a stamp that
 * does not match is updated from the tree diff.
 *
 * Format (one file, line-oriented so a 10k catalog loads without parsing 10k
 * JSON objects):
 *  - a JSON header line {v, tip, n, bad, rows, exp}: `rows` is the byte length
 *    of the row section, `exp` the earliest expiry (ms since the epoch; null
 *    when nothing expires, 0 when some expiry is unreadable);
 *  - the row section: one line per record sorted by id: id, oid, alias, type,
 *    status, expires, tags (comma-joined), tab-separated;
 *  - the summary section: the summary JSON of each record in the same order,
 *    joined with ",\n" — exactly the body of `list --json`'s array, so an
 *    unfiltered listing is one slice of the file (JSON text never holds a raw
 *    newline or tab, so neither section can be mistaken for the other).
 */
import {
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Catalog, type CatalogRow, SCOPE_MARK } from './catalog.js';
import { memDir, type Repo } from './repo.js';

// 5: a moved anchor's path is where it is now (anchorPathNow); 6: a flagged record's summary says so
// (conflict); 7: the header says where the summaries with a scope are (scoped)
const CACHE_VERSION = 7;

interface Head {
  v?: number;
  tip?: string;
  n?: number;
  bad?: unknown[];
  rows?: number;
  exp?: number | null;
  /** the summaries holding SCOPE_MARK: each line's [start, end) in the summary section */
  scoped?: Array<[number, number]>;
}

function cacheFile(repo: Repo, ref: string): string {
  return join(memDir(repo, 'cache'), `catalog-${ref.replace(/[^A-Za-z0-9]+/g, '_')}.tsv`);
}

/** Deletes the cached catalog of a ref (a team store removed: src/commands/stores.ts). */
export function dropCatalogCache(repo: Repo, ref: string): void {
  rmSync(cacheFile(repo, ref), { force: true });
}

/** The cache file split into its parts, or undefined when missing, of another version or torn. */
function readCache(
  repo: Repo,
  ref: string,
  rowsOnly = false,
): { buf: Buffer; head: Head & { rows: number; n: number }; rowsAt: number; jsonAt: number } | undefined {
  let buf: Buffer;
  try {
    buf = rowsOnly ? readRows(cacheFile(repo, ref)) : readFileSync(cacheFile(repo, ref));
  } catch {
    return undefined;
  }
  return parseHead(buf, buf.length, rowsOnly);
}

/**
 * The header and the row section only (a quarter of the file at 10k records):
 * what resolving an id or alias needs. Falls back to the whole file when the
 * header is unusually long.
 */
function readRows(file: string): Buffer {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const first = Buffer.allocUnsafe(Math.min(size, 64 * 1024));
    const got = readSync(fd, first, 0, first.length, 0);
    const nl = first.subarray(0, got).indexOf(10);
    let rows = -1;
    try {
      rows = nl < 0 ? -1 : Number(JSON.parse(first.toString('utf8', 0, nl)).rows);
    } catch {}
    if (!Number.isInteger(rows) || rows < 0 || nl + 1 + rows > size) return readFileSync(file);
    const end = nl + 1 + rows;
    if (end <= got) return first.subarray(0, end);
    const buf = Buffer.allocUnsafe(end);
    first.copy(buf, 0, 0, got);
    readSync(fd, buf, got, end - got, got);
    return buf;
  } finally {
    closeSync(fd);
  }
}

function parseHead(
  buf: Buffer,
  size: number,
  rowsOnly: boolean,
): { buf: Buffer; head: Head & { rows: number; n: number }; rowsAt: number; jsonAt: number } | undefined {
  const nl = buf.indexOf(10);
  if (nl < 0) return undefined;
  let head: Head;
  try {
    head = JSON.parse(buf.toString('utf8', 0, nl));
  } catch {
    return undefined;
  }
  if (head.v !== CACHE_VERSION || typeof head.tip !== 'string') return undefined;
  if (typeof head.rows !== 'number' || typeof head.n !== 'number') return undefined;
  const rowsAt = nl + 1;
  const jsonAt = rowsAt + head.rows;
  // the file ends with the summary section's newline (a torn write does not); the row section with its own
  if (jsonAt > size || (head.n > 0 && buf[(rowsOnly ? jsonAt : size) - 1] !== 10)) return undefined;
  return { buf, head: head as Head & { rows: number; n: number }, rowsAt, jsonAt };
}

export function loadCatalogCache(repo: Repo, ref: string): Catalog | undefined {
  const c = readCache(repo, ref);
  if (!c) return undefined;
  try {
    const rowsText = c.buf.toString('utf8', c.rowsAt, c.jsonAt);
    const jsonText = c.buf.toString('utf8', c.jsonAt);
    const rows = new Map<string, CatalogRow>();
    const lines = new Map<string, string>();
    let at = 0;
    let j = 0;
    while (at < rowsText.length) {
      let end = rowsText.indexOf('\n', at);
      if (end < 0) end = rowsText.length;
      const f = rowsText.slice(at, end).split('\t');
      if (f.length !== 7) return undefined;
      const jEnd = jsonText.indexOf('\n', j);
      if (jEnd < 0) return undefined;
      // each summary but the last ends with a comma before its newline
      const line = jsonText.slice(j, jsonText[jEnd - 1] === ',' ? jEnd - 1 : jEnd);
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
      lines.set(f[0], line);
      at = end + 1;
      j = jEnd + 1;
    }
    if (rows.size !== c.head.n) return undefined;
    return new Catalog(
      c.head.tip!,
      rows,
      lines,
      (c.head.bad ?? []) as ConstructorParameters<typeof Catalog>[3],
    );
  } catch {
    return undefined;
  }
}

export function saveCatalogCache(repo: Repo, ref: string, cat: Catalog): void {
  try {
    const file = cacheFile(repo, ref);
    const tmp = `${file}.${process.pid}.tmp`;
    const rows: string[] = [];
    const json: string[] = [];
    let exp: number | null = null;
    const unsafe = /[\t\n\r]/;
    for (const id of cat.sortedIds) {
      const r = cat.rows.get(id)!;
      const line = cat.lines.get(id) ?? '';
      // a field that would break the line format (from a record written elsewhere): skip caching
      if (
        unsafe.test(r.alias ?? '') ||
        unsafe.test(r.type) ||
        unsafe.test(r.status) ||
        unsafe.test(r.expires ?? '') ||
        unsafe.test(line) ||
        r.tags.some((t) => unsafe.test(t) || t.includes(','))
      )
        return;
      if (r.expires) {
        const t = Date.parse(r.expires);
        exp = Number.isNaN(t) ? 0 : Math.min(exp ?? t, t);
      }
      rows.push(
        `${id}\t${r.oid}\t${r.alias ?? ''}\t${r.type}\t${r.status}\t${r.expires ?? ''}\t${r.tags.join(',')}\n`,
      );
      json.push(line);
    }
    const rowText = rows.join('');
    const summaries = Buffer.from(json.length ? `${json.join(',\n')}\n` : '');
    const head = {
      v: CACHE_VERSION,
      tip: cat.tip,
      n: cat.size,
      bad: cat.bad,
      rows: Buffer.byteLength(rowText),
      exp,
      scoped: linesHolding(summaries, SCOPE_KEY),
    };
    writeFileSync(tmp, Buffer.concat([Buffer.from(`${JSON.stringify(head)}\n${rowText}`), summaries]));
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
 * When nothing is filtered out (no filter but expiry, and nothing expired
 * yet) the output is the summary section itself, one slice of the file.
 * undefined = the cache is missing or stale (use the catalog instead).
 */
export function listJsonFromCache(
  repo: Repo,
  ref: string,
  tip: string,
  keep: (row: RowFields) => boolean,
  /** fields the filter reads; others are left undefined (decoding 10k of them costs milliseconds) */
  need: ReadonlySet<keyof RowFields> = new Set(['id', 'alias', 'type', 'status', 'expires', 'tags']),
  now = Date.now(),
): { json: Buffer; bad: number } | undefined {
  const c = readCache(repo, ref);
  if (!c || c.head.tip !== tip) return undefined;
  const { buf, head, rowsAt, jsonAt } = c;
  const bad = head.bad?.length ?? 0;
  if (head.n === 0) return { json: Buffer.from('[]\n'), bad };
  const onlyExpiry = [...need].every((k) => k === 'expires');
  if (onlyExpiry && (!need.has('expires') || head.exp === null || (head.exp ?? 0) > now)) {
    return { json: Buffer.concat([Buffer.from('[\n'), buf.subarray(jsonAt), Buffer.from(']\n')]), bad };
  }
  const parts: Buffer[] = [];
  const COMMA = Buffer.from(',\n');
  const [nId, nAlias, nType, nStatus, nExp, nTags] = (
    ['id', 'alias', 'type', 'status', 'expires', 'tags'] as const
  ).map((k) => need.has(k));
  let at = rowsAt;
  let j = jsonAt;
  let n = 0;
  const t: number[] = new Array(6);
  while (at < jsonAt) {
    const end = buf.indexOf(10, at);
    if (end < 0 || end >= jsonAt) return undefined;
    let p = at;
    for (let k = 0; k < 6; k++) {
      const tab = buf.indexOf(9, p);
      if (tab < 0 || tab > end) return undefined;
      t[k] = tab;
      p = tab + 1;
    }
    const jEnd = buf.indexOf(10, j);
    if (jEnd < 0) return undefined;
    n++;
    const row = { tags: [] as string[] } as unknown as RowFields;
    if (nId) row.id = buf.toString('latin1', at, t[0]);
    if (nType) row.type = buf.toString('utf8', t[2] + 1, t[3]);
    if (nStatus) row.status = buf.toString('utf8', t[3] + 1, t[4]);
    if (nTags && end > t[5] + 1) row.tags = buf.toString('utf8', t[5] + 1, end).split(',');
    if (nAlias && t[2] > t[1] + 1) row.alias = buf.toString('utf8', t[1] + 1, t[2]);
    if (nExp && t[5] > t[4] + 1) row.expires = buf.toString('latin1', t[4] + 1, t[5]);
    if (keep(row)) {
      if (parts.length) parts.push(COMMA);
      parts.push(buf.subarray(j, buf[jEnd - 1] === 44 ? jEnd - 1 : jEnd));
    }
    at = end + 1;
    j = jEnd + 1;
  }
  if (n !== head.n) return undefined;
  const json = parts.length
    ? Buffer.concat([Buffer.from('[\n'), ...parts, Buffer.from('\n]\n')])
    : Buffer.from('[]\n');
  return { json, bad };
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
  const c = readCache(repo, ref, true);
  if (!c || c.head.tip !== tip) return undefined;
  const { buf } = c;
  const nl = c.rowsAt - 1; // the header's newline: every row, the first too, follows a newline
  const aliasBytes = Buffer.from(`\t${alias}\t`);
  // an alias wins over an id prefix (as in Catalog.resolve); an empty one, or one holding a tab
  // or a newline, is no alias but would match the row's columns (an empty alias column for '')
  const ai = !alias || /[\t\n\r]/.test(alias) ? -1 : buf.indexOf(aliasBytes, nl);
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

/** A summary that names a scope: what judging literal scopes reads (src/anchors/scopes.ts). */
export interface ScopedSummary {
  id: string;
  title: string;
  scope: string[];
}

const SCOPE_KEY = Buffer.from(SCOPE_MARK);

/** The [start, end) of each line of `buf` that holds `key`, in order. */
function linesHolding(buf: Buffer, key: Buffer): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let at = buf.indexOf(key); at >= 0; ) {
    const start = buf.lastIndexOf(10, at) + 1;
    let end = buf.indexOf(10, at);
    if (end < 0) end = buf.length;
    out.push([start, end]);
    at = buf.indexOf(key, end);
  }
  return out;
}

/**
 * The summaries with a scope (Catalog.scoped) straight from the cache file when it reflects
 * `tip`, in id order: its header says where the lines holding SCOPE_MARK are (a compact summary
 * without it has no scope), and only those are read and parsed, not the 3.6 MB of the other
 * summaries at 10k records. A check asks at every run, and building the catalog for the few
 * scoped summaries cost ~75 ms there. undefined = no fresh cache: the caller uses the catalog.
 */
export function scopedFromCache(repo: Repo, ref: string, tip: string): ScopedSummary[] | undefined {
  let fd: number;
  try {
    fd = openSync(cacheFile(repo, ref), 'r');
  } catch {
    return undefined;
  }
  try {
    const size = fstatSync(fd).size;
    // the header line: within the first 64 KiB but for a store with thousands of scoped records
    let first = Buffer.allocUnsafe(Math.min(size, 64 * 1024));
    let got = readSync(fd, first, 0, first.length, 0);
    let nl = first.subarray(0, got).indexOf(10);
    if (nl < 0 && got < size) {
      first = readFileSync(cacheFile(repo, ref));
      got = first.length;
      nl = first.indexOf(10);
    }
    if (nl < 0) return undefined;
    const head = JSON.parse(first.toString('utf8', 0, nl)) as Head;
    if (head.v !== CACHE_VERSION || head.tip !== tip || typeof head.rows !== 'number') return undefined;
    if (!Array.isArray(head.scoped)) return undefined;
    // a whole file ends with the summary section's newline (a torn write does not)
    const last = Buffer.alloc(1);
    if (head.n && (readSync(fd, last, 0, 1, size - 1) !== 1 || last[0] !== 10)) return undefined;
    const jsonAt = nl + 1 + head.rows;
    const out: ScopedSummary[] = [];
    for (const [start, end] of head.scoped) {
      const line = Buffer.allocUnsafe(end - start);
      if (readSync(fd, line, 0, line.length, jsonAt + start) !== line.length) return undefined;
      const j = JSON.parse(
        line.toString('utf8', 0, line[line.length - 1] === 44 ? line.length - 1 : line.length),
      );
      if (Array.isArray(j.scope) && j.scope.length) out.push({ id: j.id, title: j.title, scope: j.scope });
    }
    return out;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
