/**
 * The store's catalog: the summary of every record at a commit, updated from the last one built
 * (in this process, else the cache on disk in .git/mem) by the records that changed, memoised per
 * commit and saved (a long-lived store saves at most every few seconds), and the lookup of a
 * record by id, prefix or alias through it.
 */
import { err } from '../errors.js';
import { normalizeIdInput } from '../model/id.js';
import {
  idFromPath,
  type MemoryRecord,
  RecordParseError,
  recordPath,
  summarize,
  summaryToJSON,
} from '../model/record.js';
import { SharedMap } from '../model/shared-map.js';
import { type BadRecord, Catalog, type CatalogEntry, type CatalogRow, rowOf } from './catalog.js';
import {
  findInCache,
  loadCatalogCache,
  type ScopedSummary,
  saveCatalogCache,
  scopedFromCache,
} from './catalog-cache.js';
import { StoreReader } from './store-read.js';
import { diffTrees } from './tree.js';

/** How long a long-lived store waits before it rewrites the catalog cache on disk. */
const CATALOG_SAVE_MS = 5000;

export class StoreCatalog extends StoreReader {
  /** Catalogs by commit, built once (cleared when the ref moves). */
  protected catalogMemo = new Map<string, Promise<Catalog>>();
  /** The catalog of the tip built last: the base the next tip's catalog is updated from. */
  private latest?: Catalog;
  private saveTimer?: NodeJS.Timeout;

  /** Writes a deferred catalog save now (a long-lived process's close). */
  flushCatalog(): void {
    if (!this.saveTimer) return;
    clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    if (this.latest) saveCatalogCache(this.repo, this.ref, this.latest);
  }

  private saveCatalog(cat: Catalog): void {
    if (!this.longLived) {
      saveCatalogCache(this.repo, this.ref, cat);
      return;
    }
    this.saveTimer ??= setTimeout(() => {
      this.saveTimer = undefined;
      if (this.latest) saveCatalogCache(this.repo, this.ref, this.latest);
    }, CATALOG_SAVE_MS);
    this.saveTimer.unref();
  }

  /**
   * The summaries with a scope at `commit` (Catalog.scoped): from the catalog this process has
   * or is building for it, else, in a one-shot process, straight from the cache file when that
   * is at `commit` (no catalog built for a few summaries: scopedFromCache), else from the
   * catalog built now.
   */
  async scopedAt(commit: string): Promise<readonly ScopedSummary[]> {
    if (!this.longLived && !this.catalogMemo.has(commit)) {
      const fromFile = scopedFromCache(this.repo, this.ref, commit);
      if (fromFile) return fromFile;
    }
    return (await this.catalogAt(commit)).scoped;
  }

  /** The catalog at the current tip (cached on disk, updated incrementally). */
  async catalog(): Promise<Catalog> {
    return this.catalogAt(await this.tip(), true);
  }

  async catalogAt(commit: string | null, useCache = commit !== null): Promise<Catalog> {
    const key = commit ?? '';
    let p = this.catalogMemo.get(key);
    if (!p) {
      p = this.buildCatalog(commit, useCache);
      this.catalogMemo.set(key, p);
      p.catch(() => this.catalogMemo.delete(key));
    }
    return p;
  }

  private async buildCatalog(commit: string | null, useCache: boolean): Promise<Catalog> {
    if (!commit) return new Catalog(null, new Map(), new Map(), []);
    // the tip's catalog: updated from the one this process built last, else from the one on disk
    const cached = useCache ? (this.latest ?? loadCatalogCache(this.repo, this.ref)) : undefined;
    if (cached && cached.tip === commit) return this.remember(cached);
    let rows: SharedMap<string, CatalogRow>;
    let lines: SharedMap<string, string>;
    let bad: BadRecord[];
    let changed: Array<{ path: string; oid: string | null }>;
    let from: Catalog | undefined;
    if (cached?.tip && (await this.hasCommit(cached.tip))) {
      from = cached;
      // the base's maps are shared, not copied: a write changes a few of 10k rows
      rows = cached.rows.fork();
      lines = cached.lines.fork();
      bad = cached.bad;
      changed = await this.diffPaths(cached.tip, commit, 'memories');
    } else {
      rows = SharedMap.of();
      lines = SharedMap.of();
      bad = [];
      // every record, walked through the running cat-file (no ls-tree process), in path order
      changed = (await diffTrees(this.catFile, null, `${commit}:memories`, 'memories/'))
        .map((c) => ({ path: c.path, oid: c.oid }))
        .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
    }
    const toRead: Array<{ path: string; oid: string; id: string }> = [];
    const badByPath = new Map(bad.map((b) => [b.path, b]));
    for (const c of changed) {
      const id = idFromPath(c.path);
      badByPath.delete(c.path);
      if (!id) continue;
      if (c.oid === null) {
        rows.delete(id);
        lines.delete(id);
      } else toRead.push({ path: c.path, oid: c.oid, id });
    }
    const blobs = await this.catFile.readMany(toRead.map((t) => t.oid));
    toRead.forEach((t, i) => {
      const blob = blobs[i];
      try {
        if (!blob) throw new RecordParseError('blob missing');
        const r = this.recordOf(t.oid, blob.content, t.path);
        if (r.id !== t.id) throw new RecordParseError(`id ${r.id} does not match its path`);
        const e: CatalogEntry = { ...summarize(r), oid: t.oid };
        rows.set(t.id, rowOf(e));
        lines.set(t.id, JSON.stringify(summaryToJSON(e)));
      } catch (e) {
        rows.delete(t.id);
        lines.delete(t.id);
        badByPath.set(t.path, { path: t.path, oid: t.oid, error: (e as Error).message });
      }
    });
    // a few changed: the base's sorted ids with those put in or taken out, instead of sorting them all
    const ids =
      from && changed.length < 1000
        ? from.sortedWith(
            toRead.map((t) => t.id).filter((id) => rows.has(id)),
            changed.map((c) => idFromPath(c.path)).filter((id): id is string => !!id && !rows.has(id)),
          )
        : undefined;
    const cat = new Catalog(
      commit,
      rows,
      lines,
      [...badByPath.values()],
      ids,
      from && {
        catalog: from,
        changed: changed.map((c) => idFromPath(c.path)).filter((id): id is string => !!id),
      },
    );
    if (useCache) {
      this.remember(cat);
      this.saveCatalog(cat);
    }
    return cat;
  }

  private remember(cat: Catalog): Catalog {
    this.latest = cat;
    return cat;
  }

  /** Reads a record by id/prefix/alias at the tip (or at a given commit). */
  async get(input: string, at?: string | null): Promise<{ record: MemoryRecord; catalog?: Catalog }> {
    // nothing names no memory, whatever the cache holds (an empty alias column matched '')
    const s = input.trim();
    if (!s) throw err('E_INVALID_ARG', 'an id, id prefix or alias is required');
    const commit = at === undefined ? await this.requireTip() : at;
    if (at === undefined && commit) {
      // fast path: one match found in the cache file, no catalog built
      const p = normalizeIdInput(s);
      const hit = findInCache(
        this.repo,
        this.ref,
        commit,
        s,
        /^[0-9A-HJKMNP-TV-Z]{4,26}$/.test(p) ? p : undefined,
      );
      if (hit) {
        const blob = await this.readBlob(hit.oid);
        if (blob) return { record: this.parse(blob.toString('utf8'), recordPath(hit.id), commit) };
      }
    }
    const catalog = await this.catalogAt(commit, at === undefined);
    const id = catalog.resolve(input);
    const oid = catalog.oidOf(id)!;
    const blob = await this.readBlob(oid);
    if (!blob) throw err('E_NOT_FOUND', `object ${oid} for ${id} is missing`, 'run git mem doctor');
    return { record: this.parse(blob.toString('utf8'), recordPath(id), commit), catalog };
  }
}
