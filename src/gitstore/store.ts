/**
 * The store on refs/memory: reads through one `git cat-file --batch`, writes
 * through `git fast-import` (which builds the new trees itself and keeps small
 * writes as loose objects), and moves the ref only by compare-and-swap against
 * the tip the change was built on. The user's HEAD, index and working tree are
 * never read or written.
 */

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { abbreviate, normalizeIdInput } from '../model/id.js';
import {
  idFromPath,
  type MemoryRecord,
  parseRecord,
  RecordParseError,
  type RecordSummary,
  recordPath,
  serializeRecord,
  summarize,
  summaryToJSON,
  tombstonePath,
} from '../model/record.js';
import { stringify } from '../model/yaml.js';
import { mark } from '../trace.js';
import { findInCache, loadCatalogCache, saveCatalogCache } from './catalog-cache.js';
import { configSignature, parseAndCacheConfig, readConfigCache } from './config-cache.js';
import { CatFile, git, gitEnv, gitText, ZERO_OID } from './git.js';
import { editTree, findTreeEntries, isTreeMode, type TreeItem, writeLooseObject } from './loose.js';
import { type CasUpdate, casLooseRefs, readRefFast } from './refs.js';
import { memDir, type Repo } from './repo.js';

export const MEMORY_REF = 'refs/memory';
/** Changes of at most this many paths are written as loose objects from Node; larger ones through fast-import. */
const SMALL_CHANGE = 64;
export const FORMAT_PATH = 'FORMAT';
export const FORMAT_VERSION = 1;
export const SHARED_CONFIG_PATH = 'config.yaml';
export const FORMAT_TEXT = `# git-mem store; see https://www.npmjs.com/package/git-mem\nformat: ${FORMAT_VERSION}\n`;

export interface CatalogEntry extends RecordSummary {
  oid: string;
}
export interface BadRecord {
  path: string;
  oid: string;
  error: string;
}

/** The few fields resolution and cheap filters need, kept unparsed-JSON-free. */
export interface CatalogRow {
  id: string;
  oid: string;
  alias?: string;
  type: string;
  status: string;
  expires?: string;
  tags: string[];
}

/**
 * Summaries of every record at one commit (derived data, cached under
 * .git/mem/). Rows (id, oid, alias, type, status, expiry, tags) are always in
 * memory; each record's full summary is kept as its JSON text and parsed only
 * when `entries` is first read, so resolving an id or printing `list --json`
 * never parses 10k objects.
 */
export class Catalog {
  readonly sortedIds: string[];
  readonly aliases = new Map<string, string>();
  private parsed?: Map<string, CatalogEntry>;
  constructor(
    readonly tip: string | null,
    readonly rows: Map<string, CatalogRow>,
    /** id → the record summary as compact JSON (the `list --json` element) */
    readonly lines: Map<string, string>,
    readonly bad: BadRecord[],
  ) {
    this.sortedIds = [...rows.keys()].sort();
    for (const r of rows.values()) if (r.alias) this.aliases.set(r.alias, r.id);
  }
  static fromEntries(tip: string | null, entries: Iterable<CatalogEntry>, bad: BadRecord[]): Catalog {
    const rows = new Map<string, CatalogRow>();
    const lines = new Map<string, string>();
    for (const e of entries) {
      rows.set(e.id, rowOf(e));
      lines.set(e.id, JSON.stringify(summaryToJSON(e)));
    }
    return new Catalog(tip, rows, lines, bad);
  }
  /** Full summaries (parsed on first use). */
  get entries(): Map<string, CatalogEntry> {
    if (!this.parsed) {
      const m = new Map<string, CatalogEntry>();
      for (const id of this.sortedIds) {
        const j = JSON.parse(this.lines.get(id)!);
        const e: CatalogEntry = { ...j, oid: this.rows.get(id)!.oid };
        if (j.alias == null) delete e.alias;
        if (j.expires == null) delete e.expires;
        m.set(id, e);
      }
      this.parsed = m;
    }
    return this.parsed;
  }
  /** One summary, parsed on its own (cheaper than `entries` when only a few are needed). */
  entry(id: string): CatalogEntry | undefined {
    if (this.parsed) return this.parsed.get(id);
    const line = this.lines.get(id);
    if (line === undefined) return undefined;
    const j = JSON.parse(line);
    const e: CatalogEntry = { ...j, oid: this.rows.get(id)!.oid };
    if (j.alias == null) delete e.alias;
    if (j.expires == null) delete e.expires;
    return e;
  }
  get size(): number {
    return this.rows.size;
  }
  oidOf(id: string): string | undefined {
    return this.rows.get(id)?.oid;
  }
  abbrev(id: string): string {
    return abbreviate(id, this.sortedIds);
  }
  /** Resolves an id, a unique id prefix, or an alias. */
  resolve(input: string): string {
    const s = input.trim();
    if (!s) throw err('E_INVALID_ARG', 'an id, id prefix or alias is required');
    const byAlias = this.aliases.get(s) ?? this.aliases.get(s.toLowerCase());
    if (byAlias) return byAlias;
    const p = normalizeIdInput(s);
    if (/^[0-9A-HJKMNP-TV-Z]+$/.test(p)) {
      const matches = this.prefixMatches(p);
      if (matches.length === 1) return matches[0];
      if (matches.length > 1) {
        const shown = matches.slice(0, 10).map((id) => {
          const title = (JSON.parse(this.lines.get(id) ?? '{}') as { title?: string }).title ?? '';
          return `${this.abbrev(id)} ${title}`;
        });
        throw err(
          'E_AMBIGUOUS',
          `"${s}" is ambiguous: ${matches.length} memories match (${shown.join('; ')})`,
          'type more characters of the id',
          { candidates: matches },
        );
      }
    }
    throw err('E_NOT_FOUND', `no memory matches "${s}"`, 'see git mem list for ids and aliases');
  }
  prefixMatches(prefix: string): string[] {
    const ids = this.sortedIds;
    let lo = 0;
    let hi = ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ids[mid] < prefix) lo = mid + 1;
      else hi = mid;
    }
    const out: string[] = [];
    for (let i = lo; i < ids.length && ids[i].startsWith(prefix); i++) out.push(ids[i]);
    return out;
  }
}

function rowOf(e: CatalogEntry): CatalogRow {
  const r: CatalogRow = { id: e.id, oid: e.oid, type: e.type, status: e.status, tags: e.tags };
  if (e.alias) r.alias = e.alias;
  if (e.expires) r.expires = e.expires;
  return r;
}

export interface TreeEntry {
  mode: string;
  type: string;
  oid: string;
  path: string;
}

type Change =
  | { path: string; content: Buffer }
  | { path: string; oid: string }
  | { path: string; remove: true };

/** A change being built against one base tip. Re-run from scratch if the ref moved meanwhile. */
export class Tx {
  readonly changes = new Map<string, Change>();
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
  /** Adds an existing object (for example an anchored code blob) to the tree. */
  putOid(path: string, oid: string): void {
    this.changes.set(path, { path, oid });
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

/** A compare-and-swap of a ref: to `next` if it is still at `expected` (null: absent). */
export type RefUpdate = CasUpdate;

export interface WriteResult<T> {
  commit: string | null;
  value: T;
  attempts: number;
}

const MAX_ATTEMPTS = 60;

export class Store {
  private cat?: CatFile;
  private catalogMemo = new Map<string, Promise<Catalog>>();
  identity?: Ident;

  constructor(
    readonly repo: Repo,
    readonly ref: string = MEMORY_REF,
  ) {}

  get catFile(): CatFile {
    this.cat ??= new CatFile(this.repo.cwd, this.repo.env, this.repo.commonDir);
    return this.cat;
  }

  close(): void {
    this.cat?.close();
  }

  async tip(): Promise<string | null> {
    const fast = readRefFast(this.repo.commonDir, this.ref);
    if (fast !== undefined) return fast;
    const r = await git(['rev-parse', '-q', '--verify', `${this.ref}^{commit}`], {
      cwd: this.repo.cwd,
      env: this.repo.env,
      allowFail: true,
    });
    return r.code === 0 ? r.stdout.toString().trim() : null;
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
    const blobs = await this.catFile.readMany(entries.map((e) => e.oid));
    const out: MemoryRecord[] = [];
    entries.forEach((e, i) => {
      const b = blobs[i];
      if (!b) return;
      try {
        out.push(parseRecord(b.content.toString('utf8'), recordPath(e.id)));
      } catch {}
    });
    return out;
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
    const cached = useCache ? loadCatalogCache(this.repo, this.ref) : undefined;
    if (cached && cached.tip === commit) return cached;
    let rows: Map<string, CatalogRow>;
    let lines: Map<string, string>;
    let bad: BadRecord[];
    let changed: Array<{ path: string; oid: string | null }>;
    if (cached?.tip && (await this.hasCommit(cached.tip))) {
      rows = new Map(cached.rows);
      lines = new Map(cached.lines);
      bad = cached.bad;
      changed = await this.diffPaths(cached.tip, commit, 'memories');
    } else {
      rows = new Map();
      lines = new Map();
      bad = [];
      changed = (await this.lsTree(commit, 'memories')).map((e) => ({ path: e.path, oid: e.oid }));
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
        const r = parseRecord(blob.content.toString('utf8'), t.path);
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
    const cat = new Catalog(commit, rows, lines, [...badByPath.values()]);
    if (useCache) saveCatalogCache(this.repo, this.ref, cat);
    return cat;
  }

  async hasCommit(oid: string): Promise<boolean> {
    const r = await git(['cat-file', '-e', `${oid}^{commit}`], {
      cwd: this.repo.cwd,
      env: this.repo.env,
      allowFail: true,
    });
    return r.code === 0;
  }

  /** Paths under `prefix` that differ between two commits; oid null = deleted. */
  async diffPaths(
    from: string,
    to: string,
    prefix?: string,
  ): Promise<Array<{ path: string; oid: string | null; status: string }>> {
    const args = ['diff-tree', '-r', '-z', '--no-renames', from, to];
    if (prefix) args.push('--', prefix);
    const r = await git(args, { cwd: this.repo.cwd, env: this.repo.env });
    const parts = r.stdout.toString('utf8').split('\0');
    const out: Array<{ path: string; oid: string | null; status: string }> = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const meta = parts[i];
      if (!meta.startsWith(':')) {
        i--;
        continue;
      }
      const [, , , newOid, status] = meta.slice(1).split(' ');
      out.push({ path: parts[i + 1], oid: status === 'D' ? null : newOid, status });
    }
    return out;
  }

  /** Reads a record by id/prefix/alias at the tip (or at a given commit). */
  async get(input: string, at?: string | null): Promise<{ record: MemoryRecord; catalog?: Catalog }> {
    const commit = at === undefined ? await this.requireTip() : at;
    if (at === undefined && commit) {
      // fast path: one match found in the cache file, no catalog built
      const s = input.trim();
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
   * Every git config entry with its scope, read once per store (one process
   * for identity and mem.* settings), or from the cache of the last listing
   * when none of the files it came from changed (config-cache.ts).
   */
  gitConfig(): Promise<Array<{ scope: string; key: string; value: string }>> {
    if (this.configP) return this.configP;
    const cached = readConfigCache(this.repo);
    if (cached) {
      this.configP = Promise.resolve(cached);
      return this.configP;
    }
    const before = configSignature(this.repo);
    this.configP = git(['config', '-z', '--list', '--show-scope', '--show-origin'], {
      cwd: this.repo.cwd,
      env: this.repo.env,
      allowFail: true,
    }).then((r) =>
      parseAndCacheConfig(this.repo, r.stdout.toString('utf8'), r.code === 0 ? before : undefined),
    );
    return this.configP;
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
   */
  async write<T>(
    build: (tx: Tx) => Promise<{ message: string; value: T } | null>,
    opts: {
      gate?: Promise<unknown>;
      /**
       * Another ref to move in the same transaction as this write (the post-commit hook's
       * git note): asked for again on every attempt, so it can build on that ref's tip.
       */
      alongside?: () => Promise<RefUpdate | null>;
    } = {},
  ): Promise<WriteResult<T | undefined>> {
    const ident = await this.ident();
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const base = await this.tip();
      const tx = new Tx(this, base);
      const res = await build(tx);
      if (!res || tx.changes.size === 0) return { commit: base, value: res?.value, attempts: attempt };
      const commit = await this.commitChanges(base, tx, res.message, ident);
      // test hook: widen the window between writing objects and moving the ref (crash tests)
      const pause = Number(this.repo.env.GIT_MEM_TEST_PAUSE_BEFORE_CAS ?? 0);
      if (pause > 0) {
        writeFileSync(join(memDir(this.repo), 'test-paused'), commit);
        await new Promise((r) => setTimeout(r, pause));
      }
      mark('write: objects written');
      if (opts.gate) await opts.gate;
      const also = opts.alongside ? await opts.alongside() : null;
      if (await this.casRef(commit, base, also ? [also] : [], res.message.split('\n')[0])) {
        mark('write: ref moved');
        return { commit, value: res.value, attempts: attempt };
      }
      const backoff = Math.min(250, 5 * 2 ** Math.min(attempt, 6));
      await new Promise((r) => setTimeout(r, backoff / 2 + Math.random() * backoff));
    }
    throw err(
      'E_CONFLICT_RETRY',
      `refs/memory kept moving; gave up after ${MAX_ATTEMPTS} attempts`,
      'try again',
    );
  }

  /** Writes the objects and the commit with fast-import; returns the new commit id. */
  async commitChanges(
    base: string | null,
    tx: Tx,
    message: string,
    ident: Ident,
    parents: string[] = [],
  ): Promise<string> {
    if (
      tx.changes.size <= SMALL_CHANGE &&
      !this.repo.env.GIT_OBJECT_DIRECTORY &&
      this.repo.env.GIT_MEM_WRITER !== 'fast-import'
    ) {
      return this.commitLoose(base, tx, message, ident, parents);
    }
    const tmpRef = `refs/mem-tmp/${process.pid}-${randomBytes(4).toString('hex')}`;
    const when = `${Math.floor(Date.now() / 1000)} +0000`;
    const chunks: Buffer[] = [];
    const msg = Buffer.from(message.endsWith('\n') ? message : `${message}\n`, 'utf8');
    const who = `${ident.name.replace(/[<>\n]/g, '')} <${ident.email.replace(/[<>\n]/g, '')}>`;
    chunks.push(
      Buffer.from(
        `commit ${tmpRef}\nmark :1\nauthor ${who} ${when}\ncommitter ${who} ${when}\ndata ${msg.length}\n`,
      ),
    );
    chunks.push(msg);
    chunks.push(Buffer.from('\n'));
    if (base) chunks.push(Buffer.from(`from ${base}\n`));
    for (const p of parents) chunks.push(Buffer.from(`merge ${p}\n`));
    const sorted = [...tx.changes.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    for (const c of sorted) {
      const path = quotePath(c.path);
      if ('remove' in c) chunks.push(Buffer.from(`D ${path}\n`));
      else if ('oid' in c) chunks.push(Buffer.from(`M 100644 ${c.oid} ${path}\n`));
      else {
        chunks.push(Buffer.from(`M 100644 inline ${path}\ndata ${c.content.length}\n`));
        chunks.push(c.content);
        chunks.push(Buffer.from('\n'));
      }
    }
    chunks.push(Buffer.from('\nget-mark :1\ndone\n'));
    const out = await runFastImport(this.repo, Buffer.concat(chunks));
    const oid = out.trim().split('\n').pop() ?? '';
    if (!/^[0-9a-f]{40}$/.test(oid))
      throw err('E_GIT', `git fast-import returned no commit (${out.slice(0, 80)})`);
    this.pendingTmpRef = tmpRef;
    return oid;
  }

  /**
   * A small change written as loose objects from this process (see loose.ts):
   * only the trees on the changed paths are read (through cat-file) and
   * spliced (unchanged entries copied as bytes), so the cost barely grows
   * with the store.
   */
  private async commitLoose(
    base: string | null,
    tx: Tx,
    message: string,
    ident: Ident,
    parents: string[],
  ): Promise<string> {
    const objects = join(this.repo.commonDir, 'objects');
    let rootTree: string | null = null;
    if (base) {
      const c = await this.catFile.read(base);
      const m = c && /^tree ([0-9a-f]{40})/.exec(c.content.toString('latin1'));
      if (!m) throw err('E_GIT', `cannot read commit ${base}`);
      rootTree = m[1];
    }
    // nested map of the changes: directory → name → change (or a deeper map)
    type Node = Map<string, Node | Change>;
    const root: Node = new Map();
    for (const c of tx.changes.values()) {
      const parts = c.path.split('/');
      let node = root;
      for (const dir of parts.slice(0, -1)) {
        let next = node.get(dir);
        if (!(next instanceof Map)) {
          next = new Map();
          node.set(dir, next);
        }
        node = next;
      }
      node.set(parts[parts.length - 1], c);
    }
    const build = async (treeOid: string | null, node: Node): Promise<string | null> => {
      let cur: Buffer = Buffer.alloc(0);
      if (treeOid) {
        const t = await this.catFile.read(treeOid);
        if (!t || t.type !== 'tree') throw err('E_GIT', `cannot read tree ${treeOid}`);
        cur = t.content;
      }
      // subtrees are built side by side: their cat-file reads go out together, not one round trip each
      const subs = new Map<string, Promise<string | null>>();
      // the entries of every changed name in one pass: subtrees to descend into, places to splice
      const found = treeOid ? findTreeEntries(cur, node.keys()) : undefined;
      for (const [name, ch] of node) {
        if (!(ch instanceof Map)) continue;
        const prev = found?.get(name);
        const p = build(prev && isTreeMode(prev.mode) ? prev.oid : null, ch);
        p.catch(() => {}); // a failure is thrown where it is awaited, below, not as an unhandled rejection
        subs.set(name, p);
      }
      // only the changed entries are decoded; the rest of the tree is copied as bytes
      const edits = new Map<string, TreeItem | null>();
      for (const [name, ch] of node) {
        if (ch instanceof Map) {
          const sub = await subs.get(name)!;
          edits.set(name, sub ? { mode: '40000', name, oid: sub } : null);
        } else if ('remove' in ch) edits.set(name, null);
        else if ('oid' in ch) edits.set(name, { mode: '100644', name, oid: ch.oid });
        else edits.set(name, { mode: '100644', name, oid: writeLooseObject(objects, 'blob', ch.content) });
      }
      const next = editTree(cur, edits, found);
      return next.length ? writeLooseObject(objects, 'tree', next) : null;
    };
    const tree = (await build(rootTree, root)) ?? writeLooseObject(objects, 'tree', Buffer.alloc(0));
    const when = `${Math.floor(Date.now() / 1000)} +0000`;
    const who = `${ident.name.replace(/[<>\n]/g, '')} <${ident.email.replace(/[<>\n]/g, '')}>`;
    const lines = [`tree ${tree}`];
    if (base) lines.push(`parent ${base}`);
    for (const p of parents) lines.push(`parent ${p}`);
    lines.push(`author ${who} ${when}`, `committer ${who} ${when}`, '');
    const msg = message.endsWith('\n') ? message : `${message}\n`;
    return writeLooseObject(objects, 'commit', Buffer.from(`${lines.join('\n')}\n${msg}`, 'utf8'));
  }

  private pendingTmpRef?: string;
  private lockWaits = 0;

  /** Compare-and-swap of the ref (and of `also`, in one transaction); also drops the temporary ref fast-import wrote. */
  async casRef(
    newOid: string,
    expected: string | null,
    also: readonly RefUpdate[] = [],
    /** the reflog message, for refs git keeps a reflog of (refs/notes/*, or all with core.logAllRefUpdates=always) */
    reason?: string,
  ): Promise<boolean> {
    const tmp = this.pendingTmpRef;
    this.pendingTmpRef = undefined;
    const env = this.repo.env;
    if (!tmp && env.GIT_MEM_REF_WRITER !== 'git') {
      // the files backend's transaction without a git process (refs.ts), reflogs included;
      // git update-ref for everything else
      const cfg = await this.gitConfig();
      const last = (key: string) => cfg.findLast((e) => e.key === key)?.value;
      // a reflog line is git's committer identity (a fixed GIT_COMMITTER_DATE: left to git)
      const ident = env.GIT_COMMITTER_DATE ? undefined : await this.ident();
      const outcome = casLooseRefs(
        {
          commonDir: this.repo.commonDir,
          logAllRefUpdates: last('core.logallrefupdates'),
          hooksPath: last('core.hookspath'),
          workTree: this.repo.workTree,
          bare: this.repo.bare,
        },
        [{ ref: this.ref, next: newOid, expected }, ...also],
        ident && {
          name: env.GIT_COMMITTER_NAME || ident.name,
          email: env.GIT_COMMITTER_EMAIL || ident.email,
          message: reason ?? '',
        },
      );
      if (outcome === 'moved') {
        this.catalogMemo.clear();
        return true;
      }
      if (outcome === 'lost') return false;
      if (outcome === 'locked') return this.lockWait();
    }
    const lines = [`update ${this.ref} ${newOid} ${expected ?? ZERO_OID}`];
    for (const u of also) lines.push(`update ${u.ref} ${u.next} ${u.expected ?? ZERO_OID}`);
    if (tmp) lines.push(`delete ${tmp}`);
    const r = await git(['update-ref', ...(reason ? ['-m', reason] : []), '--stdin'], {
      cwd: this.repo.cwd,
      env: this.repo.env,
      input: `${lines.join('\n')}\n`,
      allowFail: true,
    });
    if (r.code === 0) {
      this.catalogMemo.clear();
      return true;
    }
    if (tmp)
      await git(['update-ref', '-d', tmp], { cwd: this.repo.cwd, env: this.repo.env, allowFail: true });
    if (/\.lock': File exists/.test(r.stderr)) return this.lockWait();
    if (!/but expected|reference already exists|unable to resolve|cannot lock ref/i.test(r.stderr)) {
      const refs = [this.ref, ...also.map((u) => u.ref)].join(' and ');
      throw err('E_GIT', `cannot update ${refs}: ${r.stderr.trim().split('\n').pop()}`);
    }
    return false;
  }

  /**
   * Another writer holds the ref lock right now (for milliseconds): retry. A lock
   * that outlives our retries is most likely left by a crashed process.
   */
  private lockWait(): false {
    this.lockWaits++;
    if (this.lockWaits > 40) {
      throw err(
        'E_GIT',
        `${this.ref}.lock exists and is not going away`,
        `if no git process is running, remove ${join(this.repo.commonDir, `${this.ref}.lock`)}`,
      );
    }
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

function quotePath(p: string): string {
  if (/^[A-Za-z0-9._/-]+$/.test(p)) return p;
  return JSON.stringify(p);
}

export { readRefFast };

/** Runs `git fast-import` on a prepared stream; resolves with what it printed (marks asked for). */
export function runFastImport(repo: Repo, input: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet', '--done'], {
      cwd: repo.cwd,
      env: gitEnv(repo.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const errs: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => errs.push(d));
    child.on('error', (e) => reject(err('E_GIT', `cannot run git fast-import: ${e.message}`)));
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out).toString('utf8'));
      else
        reject(
          err(
            'E_GIT',
            `git fast-import failed: ${Buffer.concat(errs).toString('utf8').trim().split('\n')[0]}`,
          ),
        );
    });
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

/** Abbreviates for display using the catalog when there is one. */
export function shortId(id: string, catalog?: Catalog): string {
  return catalog ? catalog.abbrev(id) : abbreviate(id);
}
