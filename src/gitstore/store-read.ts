/**
 * The store's reads: one long-lived `git cat-file --batch` per store answers the tip, blobs,
 * paths of a commit, trees and the commits a revision names; records are parsed once per blob
 * (a long-lived store keeps the last few thousand). The history (log, --at) and merge bases ask
 * git directly. The catalog, the configuration and the writes build on this class
 * (store-catalog.ts, store-config.ts, store-write.ts; `Store` in store.ts is the whole).
 */
import { err } from '../errors.js';
import { type MemoryRecord, parseRecord, RecordParseError, recordPath } from '../model/record.js';
import { CatFile, git, gitText } from './git.js';
import type { Repo } from './repo.js';
import { diffTrees, parseLsTree, type TreeEntry } from './tree.js';

export const MEMORY_REF = 'refs/memory';

export type { TreeEntry } from './tree.js';

/** How many parsed records a long-lived store keeps (by blob id). */
const PARSED_KEEP = 4096;
/** Bytes of git objects a long-lived store's cat-file keeps (trees it diffs, objects it wrote). */
const KEEP_OBJECT_BYTES = 16 << 20;

export class StoreReader {
  protected cat?: CatFile;
  /**
   * A long-lived process (the MCP server): the catalog on disk is rewritten at
   * most every CATALOG_SAVE_MS and when the store closes, not after every
   * write (rewriting it costs tens of milliseconds at 10k memories; the
   * process keeps the catalog in memory anyway). One-shot commands save at once.
   */
  longLived = false;
  private parsed?: Map<string, MemoryRecord>;

  constructor(
    readonly repo: Repo,
    readonly ref: string = MEMORY_REF,
    /** a cat-file started already for this repository's cwd and environment (openRepositoryStore) */
    cat?: CatFile,
  ) {
    this.cat = cat;
  }

  get catFile(): CatFile {
    this.cat ??= new CatFile(this.repo.cwd, this.repo.env);
    // a long-lived store keeps the trees it diffs again and again, and the objects it wrote
    this.cat.keep(this.longLived ? KEEP_OBJECT_BYTES : 0);
    return this.cat;
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
    return parseLsTree(r.stdout);
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
