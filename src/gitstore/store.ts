/**
 * The store on refs/memory: reads through one `git cat-file --batch` (the tip
 * too), writes objects through git's hash-object (writer.ts, git
 * processes that live as long as the Store), and moves the ref only by one
 * `git update-ref --stdin` transaction, compare-and-swap against the tip the
 * change was built on. git writes every object, ref, lock and reflog. The
 * user's HEAD, index and working tree are never read or written.
 */

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { normalizeIdInput } from '../model/id.js';
import { actorFromEnv, memTrailers, type Provenance, withTrailers } from '../model/provenance.js';
import {
  idFromPath,
  idOfStorePath,
  type MemoryRecord,
  parseRecord,
  RecordParseError,
  recordPath,
  serializeRecord,
  summarize,
  summaryToJSON,
  tombstonePath,
} from '../model/record.js';
import { SharedMap } from '../model/shared-map.js';
import { stringify } from '../model/yaml.js';
import { type SecretFinding, scanSecrets } from '../safety/secrets.js';
import { mark } from '../trace.js';
import { type BadRecord, Catalog, type CatalogEntry, type CatalogRow, rowOf } from './catalog.js';
import { findInCache, loadCatalogCache, saveCatalogCache } from './catalog-cache.js';
import { CatFile, git, gitText } from './git.js';
import { memDir, type Repo, writeTestMarker } from './repo.js';
import { diffTrees, parseTree } from './tree.js';
import {
  applyToTree,
  type CommitSpec,
  GitWriter,
  type PathChange,
  type RefUpdate,
  type TreeWrite,
} from './writer.js';

export type { RefUpdate };

const MEMORY_REF = 'refs/memory';
export const FORMAT_PATH = 'FORMAT';
export const FORMAT_VERSION = 1;
export const SHARED_CONFIG_PATH = 'config.yaml';
export const FORMAT_TEXT = `# git-mem store; see https://www.npmjs.com/package/git-mem\nformat: ${FORMAT_VERSION}\n`;

export interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  path: string;
}

/** A change to one path of the store's tree. */
export type Change =
  | { path: string; content: Buffer }
  | { path: string; oid: string }
  | { path: string; remove: true };

/** A NoteAdd made concrete against the notes ref's tip: the note's whole text and where it goes. */
type PendingNote = NoteAdd & { expected: string | null; path: string; text: string };

/** A change being built against one base tip. Re-run from scratch if the ref moved meanwhile. */
export class Tx {
  readonly changes = new Map<string, Change>();
  /** What a path written by putOid holds, for the secret scan's message (an anchored file's name). */
  readonly labels = new Map<string, string>();
  /** The content of blobs put by id, when the caller has it (the secret scan then reads nothing back). */
  readonly contents = new Map<string, Buffer>();
  /**
   * Write what looks like a secret anyway (a person's --allow-secret, or secret-scan off or warn,
   * decided while the change is built). Store.write's `allowSecret` does the same from outside.
   */
  allowSecret = false;
  /**
   * Paths of the base tree whose text counts as already in the ref for the secret scan, beside
   * the paths the change touches (a check: the blob an anchor moves from). Read from the base
   * tree itself, so naming a path that is not there adds nothing.
   */
  readonly seen = new Set<string>();
  private catalogP?: Promise<Catalog>;
  constructor(
    readonly store: Store,
    readonly base: string | null,
  ) {}
  catalog(): Promise<Catalog> {
    this.catalogP ??= this.store.catalogAt(this.base);
    return this.catalogP;
  }
  async get(id: string): Promise<MemoryRecord> {
    return this.store.readRecord(this.base, id);
  }
  putRecord(r: MemoryRecord): void {
    this.put(recordPath(r.id), serializeRecord(r));
  }
  put(path: string, content: string | Buffer): void {
    this.changes.set(path, {
      path,
      content: typeof content === 'string' ? Buffer.from(content, 'utf8') : content,
    });
  }
  /**
   * Adds an existing object (for example an anchored code blob) to the tree. `label` names what it
   * is in a refusal (the anchored file); `content`, when the caller holds it, spares the secret
   * scan reading the blob back.
   */
  putOid(path: string, oid: string, opts: { label?: string; content?: Buffer } = {}): void {
    this.changes.set(path, { path, oid });
    if (opts.label) this.labels.set(path, opts.label);
    if (opts.content) this.contents.set(oid, opts.content);
  }
  remove(path: string): void {
    this.changes.set(path, { path, remove: true });
  }
  removeRecord(id: string, tombstone: Record<string, unknown>): void {
    this.remove(recordPath(id));
    this.put(tombstonePath(id), stringify(tombstone));
  }
}

export interface Ident {
  name: string;
  email: string;
}

/**
 * Lines to add to the git note of `object` on a notes ref, written with a store
 * write and published in the same ref transaction (the post-commit hook's
 * verdicts). Lines already there are kept, none is duplicated; a note already
 * there stays where it is (at any fan-out git chose), a new one goes at the
 * fan-out the notes tree already uses.
 */
export interface NoteAdd {
  ref: string;
  object: string;
  lines: readonly string[];
  message: string;
}

/** A lock git found on a ref: one that old was left by a process that died. */
const STALE_LOCK_MS = 2000;

export interface WriteResult<T> {
  commit: string | null;
  value: T;
  attempts: number;
}

const MAX_ATTEMPTS = 60;
/** How long a long-lived store waits before it rewrites the catalog cache on disk. */
const CATALOG_SAVE_MS = 5000;
/** How many parsed records a long-lived store keeps (by blob id). */
const PARSED_KEEP = 4096;
/** Bytes of git objects a long-lived store's cat-file keeps (trees it diffs, objects it wrote). */
const KEEP_OBJECT_BYTES = 16 << 20;

export class Store {
  private cat?: CatFile;
  private gitWriter?: GitWriter;
  /**
   * The reflog message of every ref update, when set: a long-lived process (the
   * MCP server, the daemon) keeps one `git update-ref` running, and git takes
   * the message when it starts. Unset, each change's subject is its message.
   */
  reflogMessage?: string;
  /**
   * A long-lived process (the MCP server): the catalog on disk is rewritten at
   * most every CATALOG_SAVE_MS and when the store closes, not after every
   * write (rewriting it costs tens of milliseconds at 10k memories; the
   * process keeps the catalog in memory anyway). One-shot commands save at once.
   */
  longLived = false;
  private catalogMemo = new Map<string, Promise<Catalog>>();
  /** The catalog of the tip built last: the base the next tip's catalog is updated from. */
  private latest?: Catalog;
  private saveTimer?: NodeJS.Timeout;
  private parsed?: Map<string, MemoryRecord>;
  identity?: Ident;
  /**
   * Who is writing: a person, or an agent (its name, session, model). New
   * records keep it (`by`); every commit names it in its trailers. Set by the
   * MCP server and the agent hooks; otherwise read from the environment.
   */
  actor?: Provenance;
  /**
   * Set on a read-only copy of another repository's memory (a team store
   * registered without --writable, src/commands/stores.ts): write() throws
   * the error it returns. Sync still moves the ref (by casRef) to what it fetched.
   */
  readOnly?: () => Error;

  constructor(
    readonly repo: Repo,
    readonly ref: string = MEMORY_REF,
  ) {}

  get catFile(): CatFile {
    this.cat ??= new CatFile(this.repo.cwd, this.repo.env);
    // a long-lived store keeps the trees it diffs again and again, and the objects it wrote
    this.cat.keep(this.longLived ? KEEP_OBJECT_BYTES : 0);
    return this.cat;
  }

  get writer(): GitWriter {
    this.gitWriter ??= new GitWriter(this.repo, this.reflogMessage, (name, o) =>
      this.catFile.remember(name, o),
    );
    return this.gitWriter;
  }

  close(): void {
    this.flushCatalog();
    this.cat?.close();
    this.gitWriter?.close();
  }

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

  /** The commit the ref points at (read through the running cat-file: no process of its own). */
  async tip(): Promise<string | null> {
    return this.refTip(this.ref);
  }

  /** A ref's commit; null when there is no such ref, an error when it names something else. */
  async refTip(ref: string): Promise<string | null> {
    const o = await this.catFile.read(ref);
    if (!o) return null;
    if (o.type !== 'commit') {
      // which repository: the personal store's or a team store's ref breaks commands run anywhere
      const where = this.repo.workTree ?? this.repo.gitDir;
      throw err(
        'E_GIT',
        `${ref} in ${where} does not point at a commit (${o.type} ${o.oid.slice(0, 12)})`,
        `point it at its last commit: git --git-dir=${this.repo.gitDir} update-ref ${ref} COMMIT (git mem doctor${this.repo.workTree ? '' : ' --global'} names it when it knows it)`,
        { ref, repo: where },
      );
    }
    return o.oid;
  }

  async requireTip(): Promise<string> {
    const t = await this.tip();
    if (!t) throw err('E_NOT_INITIALIZED', 'no memory store in this repository yet', 'run git mem init');
    return t;
  }

  async readBlob(oid: string): Promise<Buffer | null> {
    const o = await this.catFile.read(oid);
    return o ? o.content : null;
  }

  async readPath(commit: string | null, path: string): Promise<Buffer | null> {
    if (!commit) return null;
    const o = await this.catFile.read(`${commit}:${path}`);
    return o && o.type === 'blob' ? o.content : null;
  }

  async lsTree(commit: string, path?: string, recursive = true): Promise<TreeEntry[]> {
    const args = ['ls-tree', '-z', ...(recursive ? ['-r'] : []), commit];
    if (path) args.push('--', path);
    const r = await git(args, { cwd: this.repo.cwd, env: this.repo.env });
    const out: TreeEntry[] = [];
    for (const line of r.stdout.toString('utf8').split('\0')) {
      if (!line) continue;
      const tab = line.indexOf('\t');
      const [mode, type, oid] = line.slice(0, tab).split(' ');
      out.push({ mode, type, oid, path: line.slice(tab + 1) });
    }
    return out;
  }

  /** Parses a record; throws E_INVALID_RECORD naming the path on a malformed file. */
  parse(text: string, path: string, commit?: string | null): MemoryRecord {
    try {
      return parseRecord(text, path);
    } catch (e) {
      if (e instanceof RecordParseError) {
        throw err(
          'E_INVALID_RECORD',
          `malformed record ${path}${commit ? ` at ${commit.slice(0, 12)}` : ''}: ${e.message}`,
          'run git mem doctor',
          { path, commit },
        );
      }
      throw e;
    }
  }

  async readRecord(commit: string | null, id: string): Promise<MemoryRecord> {
    const path = recordPath(id);
    const buf = await this.readPath(commit, path);
    if (!buf) throw err('E_NOT_FOUND', `no memory ${id}`, 'see git mem list');
    return this.parse(buf.toString('utf8'), path, commit);
  }

  /** Full records of catalog entries in one pipelined read; a record that does not parse is skipped. */
  async readRecords(entries: ReadonlyArray<{ id: string; oid: string }>): Promise<MemoryRecord[]> {
    const got = await this.recordsOfBlobs(entries.map((e) => ({ oid: e.oid, path: recordPath(e.id) })));
    return got.filter((r): r is MemoryRecord => r !== undefined);
  }

  /**
   * The records in these blobs, in order (undefined: missing or not a record). What a long-lived
   * store parsed before is not asked of git again: only the others go to cat-file, in one batch.
   */
  async recordsOfBlobs(
    blobs: ReadonlyArray<{ oid: string; path?: string }>,
  ): Promise<Array<MemoryRecord | undefined>> {
    const out: Array<MemoryRecord | undefined> = blobs.map((b) => this.cachedRecord(b.oid));
    const todo = blobs.map((_b, i) => i).filter((i) => out[i] === undefined);
    if (!todo.length) return out;
    const read = await this.catFile.readMany(todo.map((i) => blobs[i].oid));
    todo.forEach((i, j) => {
      const b = read[j];
      if (!b) return;
      try {
        out[i] = this.parseBlob(b.oid, b.content, blobs[i].path);
      } catch {}
    });
    return out;
  }

  /** A copy of the record parsed from blob `oid` before, if this long-lived store still keeps it. */
  private cachedRecord(oid: string): MemoryRecord | undefined {
    const r = this.parsed?.get(oid);
    if (!r) return undefined;
    this.parsed!.delete(oid); // most recently used goes last
    this.parsed!.set(oid, r);
    return structuredClone(r);
  }

  /**
   * The record in blob `oid`, parsed once per store: the catalog, the anchor
   * index and a check each need the same records, and a parse costs far more
   * than a copy. The last few thousand are kept (a blob never changes). The
   * record is shared: callers that may change it take `parseBlob`'s copy.
   */
  recordOf(oid: string, content: Buffer, path?: string): MemoryRecord {
    this.parsed ??= new Map();
    let r = this.parsed.get(oid);
    if (r)
      this.parsed.delete(oid); // most recently used goes last
    else r = parseRecord(content.toString('utf8'), path);
    this.parsed.set(oid, r);
    if (this.parsed.size > PARSED_KEEP) this.parsed.delete(this.parsed.keys().next().value!);
    return r;
  }

  /** The record in blob `oid` if this store has parsed it already (recordOf), without reading the blob. */
  parsedRecord(oid: string): MemoryRecord | undefined {
    return this.parsed?.get(oid);
  }

  /**
   * The record in blob `oid`, for a caller that may change it: a copy of the one
   * parsed before (recordOf), else a fresh parse, kept only by a long-lived store.
   */
  parseBlob(oid: string, content: Buffer, path?: string): MemoryRecord {
    if (!this.longLived && !this.parsed?.has(oid)) return parseRecord(content.toString('utf8'), path);
    return structuredClone(this.recordOf(oid, content, path));
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
    const cat = new Catalog(commit, rows, lines, [...badByPath.values()], ids);
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

  /** Whether a commit exists (asked of the running cat-file). */
  async hasCommit(oid: string): Promise<boolean> {
    return (await this.commitOf(oid)) !== null;
  }

  /**
   * The commit a revision names (a ref, an id, a tag peeled: what `git rev-parse
   * REV^{commit}` prints), asked of the running cat-file instead of a process of
   * its own; null when it names no commit here.
   */
  async commitOf(rev: string): Promise<string | null> {
    const o = await this.catFile.read(`${rev}^{commit}`);
    return o?.type === 'commit' ? o.oid : null;
  }

  private bases = new Map<string, Promise<string[]>>();

  /**
   * The merge bases of two commits (`git merge-base --all`, sorted; [] when
   * they share no history), asked of git once per pair: a sync asks whether
   * either side contains the other, checks what comes in against the bases
   * and merges from them.
   */
  mergeBases(a: string, b: string): Promise<string[]> {
    const key = a < b ? `${a} ${b}` : `${b} ${a}`;
    const had = this.bases.get(key);
    if (had) return had;
    const p = git(['merge-base', '--all', a, b], {
      cwd: this.repo.cwd,
      env: this.repo.env,
      allowFail: true,
    }).then((r) => {
      if (r.code !== 0 && r.code !== 1)
        throw err('E_GIT', `git merge-base failed: ${r.stderr.trim().split('\n').pop()}`);
      return r.stdout.toString('utf8').split('\n').filter(Boolean).sort();
    });
    // ids name the same commits forever; anything else (a ref) is asked again
    if (/^[0-9a-f]{40,64}$/.test(a) && /^[0-9a-f]{40,64}$/.test(b)) {
      if (this.bases.size >= 256) this.bases.clear();
      this.bases.set(key, p);
      p.catch(() => this.bases.delete(key));
    }
    return p;
  }

  /** Whether commit `a` is `b` or an ancestor of it (then `a` is their one merge base); false when either is unknown here. */
  async isAncestor(a: string, b: string): Promise<boolean> {
    if (a === b) return true;
    // a commit this repository does not have (a teammate's, not fetched yet) is no ancestor
    return (await this.mergeBases(a, b).catch(() => [] as string[])).includes(a);
  }

  /**
   * Files under `prefix` that differ between two commits (what `git diff-tree
   * -r --no-renames` names); oid null = deleted. Walked through the running
   * cat-file (tree.ts), no process of its own.
   */
  async diffPaths(
    from: string,
    to: string,
    prefix?: string,
  ): Promise<Array<{ path: string; oid: string | null; status: string }>> {
    const [a, b] = await this.catFile.readMany([`${from}^{tree}`, `${to}^{tree}`]);
    for (const [o, rev] of [
      [a, from],
      [b, to],
    ] as const)
      if (o?.type !== 'tree') throw err('E_GIT', `cannot diff: ${rev} is not a commit here`);
    const at = (t: string) => (prefix ? `${t}:${prefix.replace(/\/+$/, '')}` : t);
    const changes = await diffTrees(
      this.catFile,
      at(a!.oid),
      at(b!.oid),
      prefix ? `${prefix.replace(/\/+$/, '')}/` : '',
    );
    return changes.map((c) => ({
      path: c.path,
      oid: c.oid,
      status: c.oid === null ? 'D' : c.old === null ? 'A' : 'M',
    }));
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

  private configP?: Promise<Array<{ scope: string; key: string; value: string }>>;

  /**
   * Forgets what was read of git's configuration and the environment (the identity,
   * signing, the actor): a long-lived store that runs command after command, each with
   * its client's environment (the daemon, src/cli/daemon-run.ts), reads them afresh for
   * each, as a new process would.
   */
  forgetSettings(): void {
    this.configP = undefined;
    this.signP = undefined;
    this.identity = undefined;
    this.actor = undefined;
  }

  /** Every git config entry with its scope, in git's order: one `git config --list` per store. */
  gitConfig(): Promise<Array<{ scope: string; key: string; value: string }>> {
    this.configP ??= git(['config', '-z', '--list', '--show-scope'], {
      cwd: this.repo.cwd,
      env: this.repo.env,
      allowFail: true,
    }).then((r) => {
      // scope NUL key LF value NUL (a key alone: a boolean true)
      const parts = r.stdout.toString('utf8').split('\0');
      const out: Array<{ scope: string; key: string; value: string }> = [];
      for (let i = 0; i + 1 < parts.length; i += 2) {
        const kv = parts[i + 1];
        const nl = kv.indexOf('\n');
        out.push({
          scope: parts[i],
          key: nl < 0 ? kv : kv.slice(0, nl),
          value: nl < 0 ? 'true' : kv.slice(nl + 1),
        });
      }
      return out;
    });
    return this.configP;
  }

  /** The actor, as set or as the environment says (src/model/provenance.ts actorFromEnv). */
  writerActor(): Provenance {
    this.actor ??= actorFromEnv(this.repo.env);
    return this.actor;
  }

  private signP?: Promise<boolean>;

  /** Whether commits are signed here, as git decides for `git commit`: `commit.gpgsign` (the last value wins). */
  signsCommits(): Promise<boolean> {
    // git reads its own config (every file, include, and -c): a guess at its files could miss a signer
    this.signP ??= this.gitConfig().then((all) => {
      let v = 'false';
      for (const e of all) if (e.key === 'commit.gpgsign') v = e.value;
      return /^(true|yes|on|1)$/i.test(v.trim());
    });
    return this.signP;
  }

  /**
   * Starts what a write will need, side by side, before it needs it: the
   * writer's git processes (and the ref update's, when its reflog message is
   * known) and the `git config` read for the identity and signing (their
   * memos answer when the write asks).
   */
  prepareWrite(message?: string): void {
    this.writer.warm(message);
    this.ident().catch(() => {});
    this.signsCommits().catch(() => {});
  }

  async ident(): Promise<Ident> {
    if (this.identity) return this.identity;
    const env = this.repo.env;
    let name = env.GIT_AUTHOR_NAME;
    let email = env.GIT_AUTHOR_EMAIL;
    if (!name || !email) {
      // as in git, the last value wins (system < global < local < worktree)
      let cname: string | undefined;
      let cemail: string | undefined;
      for (const e of await this.gitConfig()) {
        if (e.key === 'user.name') cname = e.value;
        if (e.key === 'user.email') cemail = e.value;
      }
      name ||= cname;
      email ||= cemail;
    }
    // CI runners and agent sandboxes often have no identity: never fail a write over it.
    this.identity = { name: name || 'git-mem', email: email || 'git-mem@localhost' };
    return this.identity;
  }

  /**
   * Applies one change as one commit. `build` is called with a transaction on
   * the current tip and returns the commit message (or null for "nothing to
   * do"). If another writer moved the ref first, the change is rebuilt on the
   * new tip: no write is ever lost, and the history stays linear.
   *
   * `gate`, when given, is awaited after the objects are written and before
   * the ref moves: a check that runs meanwhile (add's duplicate check) can
   * still stop the change by rejecting, and the store stays as it was (the
   * unreferenced objects are git's usual garbage, pruned by gc).
   *
   * `note`, when given, is asked for on every attempt: lines for a git note
   * written beside the memory commit and published in the same ref
   * transaction as the memory commit (both refs move, or neither).
   */
  async write<T>(
    build: (tx: Tx) => Promise<{ message: string; value: T } | null>,
    opts: {
      gate?: Promise<unknown>;
      note?: () => Promise<NoteAdd | null>;
      /** write what looks like a secret anyway (a person's --allow-secret; see assertNoNewSecrets) */
      allowSecret?: boolean;
    } = {},
  ): Promise<WriteResult<T | undefined>> {
    if (this.readOnly) throw this.readOnly();
    this.prepareWrite();
    const ident = await this.ident();
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      this.writer.warm();
      const base = await this.tip();
      mark('write: tip read');
      const tx = new Tx(this, base);
      const res = await build(tx);
      mark('write: change built');
      if (res) this.writer.warm(res.message.split('\n')[0]);
      if (!res || tx.changes.size === 0) return { commit: base, value: res?.value, attempts: attempt };
      const allow = opts.allowSecret || tx.allowSecret;
      // the scan runs while git writes the objects; only the ref waits for it (like the gate): a
      // refused change leaves at most unreferenced objects, git's usual garbage
      const scan = allow ? undefined : this.assertNoNewSecrets(tx).then(() => mark('write: scan done'));
      scan?.catch(() => {});
      const note = opts.note ? await this.noteCommit(await opts.note()) : null;
      if (note && !allow) assertNoteClean(note);
      const [commit, noteCommit] = await this.commitChanges(
        base,
        tx.changes.values(),
        res.message,
        ident,
        [],
        note,
      );
      mark('write: objects written');
      await scan;
      mark('write: scanned');
      if (opts.gate) await opts.gate;
      const also: RefUpdate[] =
        note && noteCommit ? [{ ref: note.ref, next: noteCommit, expected: note.expected }] : [];
      if (await this.casRef(commit, base, also, res.message.split('\n')[0])) {
        mark('write: ref moved');
        return { commit, value: res.value, attempts: attempt };
      }
      await backoff(attempt);
    }
    throw err(
      'E_CONFLICT_RETRY',
      `${this.ref} kept moving; gave up after ${MAX_ATTEMPTS} attempts`,
      'try again',
    );
  }

  /** Blob ids the secret scan found clean (a blob never changes): a retry or a long-lived process does not scan them again. */
  private cleanBlobs = new Set<string>();

  /**
   * The one check every change git-mem itself makes to the ref passes (records, tombstones,
   * anchored file content under anchors/, config.yaml): each blob it puts is scanned whole, and a
   * likely secret that is not already in the ref at a path this change touches (the record an
   * update rewrites, the record a removal leaves a tombstone for) refuses the change with
   * E_SECRET before any object is written. What a merge carries in from a remote is not written
   * through here (commitChanges), so a sync never re-judges a teammate's text.
   */
  async assertNoNewSecrets(tx: Tx): Promise<void> {
    const puts: Array<{ path: string; oid?: string; content?: Buffer }> = [];
    for (const c of tx.changes.values()) {
      if ('content' in c) puts.push({ path: c.path, content: c.content });
      else if ('oid' in c && !this.cleanBlobs.has(c.oid))
        puts.push({ path: c.path, oid: c.oid, content: tx.contents.get(c.oid) });
    }
    const unread = puts.filter((p) => !p.content);
    if (unread.length) {
      const got = await this.catFile.readMany(unread.map((p) => p.oid!));
      unread.forEach((p, i) => {
        const o = got[i];
        if (o?.type !== 'blob')
          throw err('E_GIT', `cannot read ${p.oid} to write it at ${p.path}`, 'run git fsck');
        p.content = o.content;
      });
    }
    const found: Array<{ path: string; text: string; findings: SecretFinding[] }> = [];
    for (const p of puts) {
      const text = p.content!.toString('utf8');
      const findings = scanSecrets(text);
      if (findings.length) found.push({ path: p.path, text, findings });
      else if (p.oid) {
        if (this.cleanBlobs.size >= 65536) this.cleanBlobs.clear();
        this.cleanBlobs.add(p.oid);
      }
    }
    if (!found.length) return;
    // what the ref holds already at the paths this change replaces or removes is no new exposure
    const touched = tx.base ? [...new Set([...tx.changes.keys(), ...tx.seen])] : [];
    const old = touched.length
      ? (await this.catFile.readMany(touched.map((p) => `${tx.base}:${p}`)))
          .filter((o) => o?.type === 'blob')
          .map((o) => o!.content.toString('utf8'))
      : [];
    for (const { path, text, findings } of found) {
      const f = findings.find((x) => !old.some((o) => o.includes(text.slice(x.start, x.end))));
      if (!f) continue;
      const label = tx.labels.get(path);
      const where = label ? `${label} (written whole to ${path})` : path;
      throw err(
        'E_SECRET',
        `refusing to write a likely secret into ${this.ref}: ${f.kind} in ${where} at line ${f.line}, column ${f.column} (${f.preview})`,
        'remove it, or pass --allow-secret if it is not a secret',
        { kind: f.kind, path, ...(label ? { file: label } : {}), line: f.line, column: f.column },
      );
    }
  }

  /**
   * What a NoteAdd writes on the notes ref's tip as it is now: the note's whole
   * new text (the lines there already, then the new ones), or null when the
   * note already says all of it.
   */
  private async noteCommit(add: NoteAdd | null): Promise<PendingNote | null> {
    if (!add?.lines.length) return null;
    const expected = await this.refTip(add.ref);
    let have: string[] = [];
    const o = add.object;
    let path = o;
    if (expected) {
      // the note of `object` at any fan-out git uses (none, 2/38, 2/2/36)
      const paths = [o, `${o.slice(0, 2)}/${o.slice(2)}`, `${o.slice(0, 2)}/${o.slice(2, 4)}/${o.slice(4)}`];
      const blobs = await this.catFile.readMany([
        ...paths.map((p) => `${expected}:${p}`),
        `${expected}^{tree}`,
      ]);
      const at = blobs.findIndex((b, i) => i < paths.length && b?.type === 'blob');
      if (at >= 0) {
        path = paths[at];
        have = blobs[at]!.content.toString('utf8').split('\n').filter(Boolean);
      } else {
        // a new note goes where its neighbours are: under two-hex folders once git fanned the tree out
        const root = blobs[paths.length];
        if (
          root?.type === 'tree' &&
          parseTree(root.content).some((e) => e.tree && /^[0-9a-f]{2}$/.test(e.name))
        )
          path = paths[1];
      }
    }
    const there = new Set(have);
    const fresh = [...new Set(add.lines)].filter((l) => !there.has(l));
    if (!fresh.length) return null;
    return { ...add, expected, path, text: `${[...have, ...fresh].join('\n')}\n` };
  }

  /**
   * Writes the objects and the commit on `base` (and a notes commit, when
   * given); returns the new commit ids. No ref is written: the commits are
   * published by casRef. `parents` are further parents after `base` (a merge).
   */
  async commitChanges(
    base: string | null,
    changes: Iterable<Change>,
    message: string,
    ident: Ident,
    parents: string[] = [],
    note: PendingNote | null = null,
    when: Date = new Date(),
  ): Promise<[string, string | undefined]> {
    const who = `${ident.name.replace(/[<>\n]/g, '')} <${ident.email.replace(/[<>\n]/g, '')}>`;
    const byPath = new Map<string, PathChange>();
    for (const c of changes) byPath.set(c.path, c);
    // provenance: the operation, the ids it touched and the agent, as trailers (src/model/provenance.ts)
    const ids = [...byPath.keys()].map(idOfStorePath).filter((id): id is string => !!id);
    const full = withTrailers(message, memTrailers(message.split('\n')[0], ids, this.writerActor()));
    const sign = await this.signsCommits();
    const memoryCommit = applyToTree(this.catFile, this.writer, base, byPath).then((t) =>
      this.commitTree(t, { parents: base ? [base, ...parents] : parents, who, when, message: full, sign }),
    );
    const noteCommit = note ? this.noteCommitObject(note, who, when, sign) : undefined;
    return Promise.all([memoryCommit, noteCommit]);
  }

  private noteCommitObject(note: PendingNote, who: string, when: Date, sign = false): Promise<string> {
    return applyToTree(
      this.catFile,
      this.writer,
      note.expected,
      new Map([[note.path, { content: Buffer.from(note.text, 'utf8') }]]),
    ).then((t) =>
      this.commitTree(t, {
        parents: note.expected ? [note.expected] : [],
        who,
        when,
        message: note.message,
        sign,
      }),
    );
  }

  /** The commit of a tree being written: sent beside the tree's objects, its id once git has all of them. */
  private async commitTree(t: TreeWrite, spec: Omit<CommitSpec, 'tree'>): Promise<string> {
    // a signed commit is made by git commit-tree, which needs its tree written first
    if (spec.sign) return t.written.then(() => this.writer.commit({ tree: t.tree, ...spec }));
    const [commit] = await Promise.all([this.writer.commit({ tree: t.tree, ...spec }), t.written]);
    const tree = this.catFile.cached(t.tree);
    if (tree) this.catFile.remember(`${commit}^{tree}`, tree);
    return commit;
  }

  /**
   * Adds note lines on their own, without a memory commit (the post-commit
   * hook on a branch other than the default one: the commit's verdicts are
   * noted, the shared record is left alone). Retried like a write when
   * another writer moved the notes ref first; null when the note said it all.
   */
  async addNote(add: NoteAdd): Promise<string | null> {
    if (!add.lines.length) return null;
    assertNoteClean(add);
    // the note's blob, tree and commit, then the ref: the git processes start side by side now
    // instead of one after another as each object is asked for
    this.prepareWrite(add.message);
    const ident = await this.ident();
    const who = `${ident.name.replace(/[<>\n]/g, '')} <${ident.email.replace(/[<>\n]/g, '')}>`;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const note = await this.noteCommit(add);
      if (!note) return null;
      const commit = await this.noteCommitObject(note, who, new Date(), await this.signsCommits());
      const r = await this.writer.updateRefs(
        [{ ref: note.ref, next: commit, expected: note.expected }],
        note.message,
      );
      if (r === true) return commit;
      const lock = /Unable to create '([^']+\.lock)': File exists/.exec(r.stderr);
      if (lock) await this.lockWait(lock[1]);
      else if (!/but expected|reference already exists|unable to resolve|cannot lock ref/i.test(r.stderr))
        throw err('E_GIT', `cannot update ${note.ref}: ${r.stderr.trim().split('\n').pop()}`);
      else await backoff(attempt);
    }
    throw err(
      'E_CONFLICT_RETRY',
      `${add.ref} kept moving; gave up after ${MAX_ATTEMPTS} attempts`,
      'try again',
    );
  }

  /**
   * Compare-and-swap of the ref (and of `also`) in one `git update-ref --stdin`
   * transaction: every ref moves, or none does. False when another writer
   * moved one of them first; E_LOCKED, naming the lock file, its age and how to
   * clear it, when a lock stays in the way.
   */
  async casRef(
    newOid: string,
    expected: string | null,
    also: readonly RefUpdate[] = [],
    /** the reflog message, for refs git keeps a reflog of (refs/notes/*, or all with core.logAllRefUpdates=always) */
    reason?: string,
  ): Promise<boolean> {
    // test hook: widen the window between writing objects and moving the ref (crash tests: add, the
    // post-commit hook, sync's merge)
    const pause = Number(this.repo.env.GIT_MEM_TEST_PAUSE_BEFORE_CAS ?? 0);
    if (pause > 0) {
      writeTestMarker(this.repo, 'test-paused', newOid);
      // until the time is up, or a test that did its part meanwhile says so (a fixed window alone
      // is outrun by a loaded machine)
      const release = join(memDir(this.repo), 'test-release');
      const end = Date.now() + pause;
      while (Date.now() < end && !existsSync(release)) await new Promise((r) => setTimeout(r, 20));
    }
    const updates = [{ ref: this.ref, next: newOid, expected }, ...also];
    const r = await this.writer.updateRefs(updates, reason);
    if (r === true) {
      this.catalogMemo.clear();
      this.lockWaits = 0;
      return true;
    }
    const lock = /Unable to create '([^']+\.lock)': File exists/.exec(r.stderr);
    if (lock) return this.lockWait(lock[1]);
    if (!/but expected|reference already exists|unable to resolve|cannot lock ref/i.test(r.stderr)) {
      const refs = updates.map((u) => u.ref).join(' and ');
      throw err('E_GIT', `cannot update ${refs}: ${r.stderr.trim().split('\n').pop()}`);
    }
    return false;
  }

  private lockWaits = 0;

  /**
   * git found a lock on a ref. One held by a live process is gone within
   * milliseconds: back off and try again. One older than STALE_LOCK_MS, or one
   * that outlives the retries, was left by a process that died: say which file,
   * how old, and how to clear it.
   */
  private async lockWait(file: string): Promise<false> {
    this.lockWaits++;
    let age: number | undefined;
    try {
      age = Date.now() - statSync(file).mtimeMs;
    } catch {
      return false; // gone already: the next attempt goes through
    }
    if (age >= STALE_LOCK_MS || this.lockWaits > 8) {
      const base = [this.repo.commonDir, this.repo.gitDir].find((d) => file.startsWith(`${d}/`));
      const ref = (base ? file.slice(base.length + 1) : file).replace(/\.lock$/, '');
      throw err(
        'E_LOCKED',
        `${ref} is locked by ${file}, left ${describeAge(age)} ago by a git process that did not finish`,
        `if no git or git-mem process is running, remove it: rm '${file}'`,
        { lock: file, ageMs: Math.round(age) },
      );
    }
    await backoff(this.lockWaits);
    return false;
  }

  /** Commits of the store, newest first, optionally limited to one path. */
  async log(
    path?: string,
    rev?: string,
  ): Promise<Array<{ commit: string; author: string; email: string; date: string; subject: string }>> {
    const args = ['log', '-z', '--format=%H%x1f%an%x1f%ae%x1f%aI%x1f%s', rev ?? this.ref];
    if (path) args.push('--', path);
    const r = await git(args, { cwd: this.repo.cwd, env: this.repo.env, allowFail: true });
    if (r.code !== 0) return [];
    return r.stdout
      .toString('utf8')
      .split('\0')
      .filter(Boolean)
      .map((l) => {
        const [commit, author, email, date, subject] = l.replace(/^\n/, '').split('\x1f');
        return { commit, author, email, date, subject };
      });
  }

  /** The memory commit at or before a revision of the code or a date. */
  async resolveAt(at: string): Promise<string> {
    const tip = await this.requireTip();
    const opts = { cwd: this.repo.cwd, env: this.repo.env, allowFail: true };
    // a commit of the memory history itself
    const direct = await git(['rev-parse', '-q', '--verify', `${at}^{commit}`], opts);
    let date: string | undefined;
    if (direct.code === 0) {
      const oid = direct.stdout.toString().trim();
      const anc = await git(['merge-base', '--is-ancestor', oid, tip], opts);
      if (anc.code === 0) return oid;
      date = (await gitText(['show', '-s', '--format=%cI', oid], { ...opts, allowFail: false })).trim();
    } else if (!Number.isNaN(Date.parse(at)) || /ago|yesterday|now/.test(at)) {
      date = at;
    } else {
      throw err(
        'E_REV',
        `cannot resolve --at "${at}"`,
        'pass a commit, tag, branch or date (2026-01-31, "2 weeks ago")',
      );
    }
    const r = await git(['rev-list', '-1', `--before=${date}`, tip], opts);
    const oid = r.stdout.toString().trim();
    if (!oid)
      throw err(
        'E_REV',
        `the memory store has no commit at or before ${at}`,
        'pick a later revision or date',
      );
    return oid;
  }
}

/** The lines a note adds pass the secret scan (E_SECRET); notes are pushed beside the memory ref. */
function assertNoteClean(add: NoteAdd): void {
  const f = scanSecrets(add.lines.join('\n'))[0];
  if (!f) return;
  throw err(
    'E_SECRET',
    `refusing to write a likely secret into ${add.ref}: ${f.kind} in the note of ${add.object.slice(0, 12)} at line ${f.line}, column ${f.column} (${f.preview})`,
    'remove it from what the note records',
    { kind: f.kind, ref: add.ref, line: f.line, column: f.column },
  );
}

/** Waits a little longer after each failed attempt (with jitter, so racing writers spread out). */
function backoff(attempt: number): Promise<void> {
  const ms = Math.min(250, 5 * 2 ** Math.min(attempt, 6));
  return new Promise((r) => setTimeout(r, ms / 2 + Math.random() * ms));
}

function describeAge(ms: number): string {
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} days`;
}
