/**
 * What judging reads, read from git: the check's `JudgeSource` (src/anchors/judge.ts). Blob
 * contents through the store's `cat-file --batch` (a batch ahead of judging, then one by one,
 * each read once per run), working-tree files for `--worktree`, the renames since each anchor
 * commit from one whole-tree `diff-tree -M` (shared by every anchor made at that commit), the
 * symbols of each text parsed once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Store } from '../gitstore/store.js';
import type { Anchor } from '../model/record.js';
import { readBlobs, renameDiff, type TreeChange } from './gitio.js';
import type { JudgeSource } from './judge.js';
import { AnchorPreparer } from './prepare.js';
import { extractSymbols, type SymbolDef } from './symbols.js';
import { splitLines, squeezeWhitespace } from './text.js';
import { type FullAnchor, isOid } from './types.js';

/** The judge's source over git for one check (see the top of this file). */
export class GitJudgeSource implements JudgeSource {
  private texts = new Map<string, string | null>();
  private contents = new Map<string, string[] | null>();
  private squeezed = new Map<string, Buffer | null>();
  private diffs = new Map<string, Promise<TreeChange[]>>();
  private symbolCache = new Map<string, Promise<SymbolDef[]>>();
  private preparer?: AnchorPreparer;

  readonly worktree: boolean;

  constructor(
    readonly store: Store,
    readonly target: string | null,
    readonly worktreeRoot: string | null,
    readonly tblobs: Map<string, string>,
  ) {
    this.worktree = worktreeRoot !== null;
  }

  /** Reads blobs into the cache in one batch (the judging that follows reads them one by one). */
  async prefetch(oids: readonly string[]): Promise<void> {
    const todo = [...new Set(oids)].filter((o) => !this.texts.has(o));
    if (!todo.length) return;
    const m = await readBlobs(this.store, todo);
    for (const oid of todo) {
      const b = m.get(oid);
      this.texts.set(oid, b && !b.includes(0) ? b.toString('utf8') : null);
    }
  }

  /** A blob's or working-tree file's text (null: missing or binary), read once per run. */
  private async text(key: string, oid: string | undefined): Promise<string | null> {
    if (this.texts.has(key)) return this.texts.get(key)!;
    let v: string | null = null;
    if (oid) {
      const b = (await readBlobs(this.store, [oid])).get(oid);
      v = b && !b.includes(0) ? b.toString('utf8') : null;
    } else if (this.worktreeRoot) {
      try {
        const b = readFileSync(join(this.worktreeRoot, key.slice(3)));
        v = b.includes(0) ? null : b.toString('utf8');
      } catch {}
    }
    this.texts.set(key, v);
    return v;
  }

  /** Its lines, split once (the same array every time: relocate keeps its work per array). */
  private async lines(key: string, oid: string | undefined): Promise<string[] | null> {
    if (this.contents.has(key)) return this.contents.get(key)!;
    const t = await this.text(key, oid);
    const v = t === null ? null : splitLines(t);
    this.contents.set(key, v);
    return v;
  }

  blobLines(oid: string): Promise<string[] | null> {
    return this.lines(oid, oid);
  }

  /** Lines of a file in the target (working tree files are read from disk). */
  targetLines(path: string, oid: string | undefined): Promise<string[] | null> {
    if (this.worktreeRoot) return this.lines(`wt:${path}`, undefined);
    return oid ? this.blobLines(oid) : Promise.resolve(null);
  }

  /**
   * Whether a file of the target can hold a text at all: every match, exact or re-wrapped, differs
   * from it in whitespace only, so its whitespace-free form is in the file's. One substring search
   * per file instead of normalising every line of every file a history changed.
   */
  async mayHold(path: string, oid: string | undefined, squeezed: Buffer): Promise<boolean> {
    const key = this.worktreeRoot ? `wt:${path}` : oid;
    if (!key) return false;
    let sq = this.squeezed.get(key);
    if (sq === undefined) {
      const t = await this.text(key, this.worktreeRoot ? undefined : oid);
      sq = t === null ? null : squeezeWhitespace(t);
      this.squeezed.set(key, sq);
    }
    return !!sq?.includes(squeezed);
  }

  /** Starts the rename diffs from these commits now (judging asks for them as it needs them). */
  startDiffs(commits: Iterable<string>): void {
    for (const c of commits) this.renames(c).catch(() => {});
  }

  renames(commit: string | null): Promise<TreeChange[]> {
    if (!isOid(commit)) return Promise.resolve([]);
    let p = this.diffs.get(commit);
    if (!p) {
      p = (async () => {
        if (commit === this.target) return [];
        if (!(await this.store.catFile.read(`${commit}^{commit}`))) return [];
        return renameDiff(this.store.repo, commit, this.target);
      })();
      this.diffs.set(commit, p);
    }
    return p;
  }

  symbols(lang: string, key: string, lines: readonly string[]): Promise<SymbolDef[]> {
    let p = this.symbolCache.get(key);
    if (!p) {
      p = extractSymbols(lang, lines.join('\n')).catch(() => []);
      this.symbolCache.set(key, p);
    }
    return p;
  }

  complete(raw: Anchor): Promise<FullAnchor> {
    this.preparer ??= new AnchorPreparer(this.store, {
      cwd: this.store.repo.workTree ?? this.store.repo.cwd,
      repoRelative: true,
      committed: this.target ?? undefined,
    });
    return this.preparer.complete(raw);
  }
}
