/**
 * Completing anchor specs (`--anchor PATH[:START[-END]]`, `--symbol [PATH#]NAME`,
 * or anchors stored as given by an import) into full anchors: repository-relative
 * path, the blob and commit the text was anchored at, both hashes, the text
 * (≤ 4 KiB), 3 lines of context, and symbol information. Uncommitted content
 * is written as a blob; every anchored blob is kept reachable from the memory
 * commit under anchors/<xx>/<blob>.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { git } from '../gitstore/git.js';
import type { Repo } from '../gitstore/repo.js';
import type { Store, Tx } from '../gitstore/store.js';
import { anchorPathProblem, insideRoot } from '../model/paths.js';
import type { Anchor } from '../model/record.js';
import { revParseVia, writeBlob } from './gitio.js';
import { findCandidates } from './relocate.js';
import {
  extractSymbols,
  findSymbol,
  languageOf,
  normalizeSymbolName,
  preferredSymbols,
  type SymbolDef,
} from './symbols.js';
import {
  blobId,
  CONTEXT_LINES,
  capText,
  contextOf,
  distinctiveLine,
  hashLines,
  indentLanguage,
  informationOf,
  MIN_INFORMATION,
  splitLines,
  wsHash,
} from './text.js';
import { type FullAnchor, isOid } from './types.js';

export function anchorBlobPath(blob: string): string {
  return `anchors/${blob.slice(0, 2)}/${blob}`;
}

/**
 * Where a check keeps the blobs its anchors moved to (or were completed at) in
 * the code commit it checked: one tree per commit, `anchors/<xx>/<commit>/<blob>`.
 * The post-commit hook's ten blobs then cost three tree objects (that tree, its
 * fan-out and anchors/) instead of eleven (ten fan-outs and anchors/), and tree
 * objects are most of what the hook writes.
 */
export function checkedBlobPath(commit: string, blob: string): string {
  return `anchors/${commit.slice(0, 2)}/${commit}/${blob}`;
}

/** Normalises a user path to a repository-relative one; refuses escapes. */
function normalizeAnchorPath(root: string, cwd: string, p: string): string {
  const raw = p.trim().replace(/\\/g, '/');
  if (!raw) throw err('E_ANCHOR', 'an anchor needs a path', 'use --anchor PATH[:START[-END]]');
  if (raw.includes('\0')) throw err('E_ANCHOR', 'invalid anchor path');
  const out = insideRoot(root, cwd, raw);
  if (!out) {
    throw err(
      'E_ANCHOR',
      `anchor path "${p}" is outside the repository`,
      'anchor files inside this repository',
    );
  }
  if (out === '.git' || out.startsWith('.git/')) throw err('E_ANCHOR', `cannot anchor to "${p}" inside .git`);
  // a file of a submodule (or any repository nested in this one) is not this repository's code:
  // its history is another's, so every check would call it deleted
  const parts = out.split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    if (existsSync(join(root, dir, '.git')))
      throw err(
        'E_ANCHOR',
        `anchor path "${p}" is inside ${dir}, another repository (a submodule?)`,
        `anchor it from there: cd ${dir} && git mem add …`,
      );
  }
  return out;
}

export interface PrepareOptions {
  /** Directory relative paths are resolved from (the user's cwd). */
  cwd: string;
  /** Paths are already repository-relative (imports). */
  repoRelative?: boolean;
  /**
   * The anchors come from a record (a check completing one, a re-anchor to where a check found
   * the code), not from the person's own command: only this commit's tree is read, and a blob
   * the anchor names by its id. The working tree is never read; a `commit` field must be the id
   * of this commit or of one in its history; a path must stay inside the repository.
   */
  committed?: string;
}

interface Source {
  content: Buffer;
  blob: string;
  commit: string | null;
  worktree: boolean;
}

export class AnchorPreparer {
  readonly notes: string[] = [];
  private head?: Promise<string | null>;
  private readonly parsed = new Map<string, Promise<SymbolDef[]>>();
  /** The content of each blob anchored, by id: the write's secret scan reads it from here, not from git. */
  private readonly contents = new Map<string, Buffer>();
  constructor(
    readonly store: Store,
    readonly opts: PrepareOptions,
  ) {}

  get repo(): Repo {
    return this.store.repo;
  }

  private root(): string {
    if (!this.repo.workTree)
      throw err('E_ANCHOR', 'anchors need a work tree', 'run git mem add inside a checkout (not --global)');
    return this.repo.workTree;
  }

  /** Definitions per blob: an add with several symbols of one file parses it once. */
  private symbolsOf(lang: string, blob: string, text: string): Promise<SymbolDef[]> {
    const key = `${lang}:${blob}`;
    let p = this.parsed.get(key);
    if (!p) {
      p = extractSymbols(lang, text);
      this.parsed.set(key, p);
    }
    return p;
  }

  private headCommit(): Promise<string | null> {
    this.head ??= revParseVia(this.store, 'HEAD');
    return this.head;
  }

  /**
   * The content of an anchor a record names, from committed content only (options.committed):
   * the blob the anchor names by id, else the file at the commit it names (the checked commit or
   * one in its history), else the file at the checked commit. A `commit` or `blob` that is no
   * object id, a commit outside that history, or a blob that is not the named commit's file is
   * refused: such an anchor is reported, never completed from what only this clone has.
   */
  private async committedSource(
    path: string,
    at: string,
    pinned: { commit?: unknown; blob?: unknown },
  ): Promise<Source> {
    const fix = 're-anchor it from your own checkout: git mem reanchor ID --anchor PATH[:START-END]';
    const shown = (x: unknown) => JSON.stringify(String(x).slice(0, 60));
    let commit: string | null = null;
    if (pinned.commit !== undefined && pinned.commit !== null) {
      const c = pinned.commit;
      const ok =
        isOid(c) &&
        (c === at ||
          ((await this.store.catFile.read(c))?.type === 'commit' && (await this.store.isAncestor(c, at))));
      if (!ok)
        throw err(
          'E_ANCHOR',
          `the anchor of ${path} names commit ${shown(c)}, which is not ${at.slice(0, 12)} or in its history`,
          fix,
        );
      commit = c as string;
    }
    const o = await this.store.catFile.read(`${commit ?? at}:${path}`);
    const file = o?.type === 'blob' ? o : null;
    if (pinned.blob !== undefined && pinned.blob !== null) {
      const b = pinned.blob;
      if (!isOid(b))
        throw err('E_ANCHOR', `the anchor of ${path} names blob ${shown(b)}, which is no object id`, fix);
      if (commit && file?.oid !== b)
        throw err(
          'E_ANCHOR',
          `the anchor of ${path} names blob ${b.slice(0, 12)}, which is not ${path} at ${commit.slice(0, 12)}`,
          fix,
        );
      const blob = file?.oid === b ? file : await this.store.catFile.read(b);
      if (blob?.type !== 'blob')
        throw err('E_ANCHOR', `anchor blob ${b.slice(0, 12)} for ${path} is not in this repository`, fix);
      return {
        content: blob.content,
        blob: b,
        commit: commit ?? (file?.oid === b ? at : null),
        worktree: false,
      };
    }
    if (!file) throw err('E_ANCHOR', `no file "${path}" at ${(commit ?? at).slice(0, 12)}`, fix);
    return { content: file.content, blob: file.oid, commit: commit ?? at, worktree: false };
  }

  /** The file content to anchor: the working tree when it differs from HEAD (then written as a blob), else HEAD's blob. */
  private async source(path: string, pinned?: { commit?: string | null; blob?: string }): Promise<Source> {
    // only ids are read, never names git resolves (a branch, `stash@{0}`, `rev:path`)
    if (isOid(pinned?.blob)) {
      const b = await this.store.readBlob(pinned.blob);
      if (!b)
        throw err(
          'E_ANCHOR',
          `anchor blob ${pinned.blob.slice(0, 12)} for ${path} is not in this repository`,
          'fetch it or drop the blob field',
        );
      return {
        content: b,
        blob: pinned.blob,
        commit: isOid(pinned.commit) ? pinned.commit : await this.headCommit(),
        worktree: false,
      };
    }
    if (isOid(pinned?.commit)) {
      const o = await this.store.catFile.read(`${pinned.commit}:${path}`);
      if (o && o.type === 'blob')
        return { content: o.content, blob: o.oid, commit: pinned.commit, worktree: false };
    }
    const head = await this.headCommit();
    const atHead = head ? await this.store.catFile.read(`${head}:${path}`) : null;
    const file = join(this.root(), path);
    let disk: Buffer | undefined;
    if (existsSync(file)) {
      if (!statSync(file).isFile()) throw err('E_ANCHOR', `anchor path "${path}" is not a file`);
      disk = readFileSync(file);
    }
    if (disk === undefined) {
      if (atHead && atHead.type === 'blob')
        return { content: atHead.content, blob: atHead.oid, commit: head, worktree: false };
      throw err(
        'E_ANCHOR',
        `no file "${path}" in the working tree or at HEAD`,
        'check the path (relative to the current directory)',
      );
    }
    const id = blobId(disk);
    if (atHead && atHead.type === 'blob' && atHead.oid === id)
      return { content: disk, blob: id, commit: head, worktree: false };
    const written = await writeBlob(this.repo, disk);
    this.notes.push(
      `anchored uncommitted content of ${path} (blob ${written.slice(0, 12)} written; commit it so others can follow the anchor)`,
    );
    return { content: disk, blob: written, commit: head, worktree: true };
  }

  async prepare(tx: Tx | null, specs: readonly Anchor[]): Promise<FullAnchor[]> {
    const out: FullAnchor[] = [];
    for (const spec of specs) {
      const a = await this.complete(spec);
      if (tx)
        tx.putOid(anchorBlobPath(a.blob!), a.blob!, { label: a.path, content: this.contents.get(a.blob!) });
      out.push(a);
    }
    return out;
  }

  /** Completes one spec. Fields already present (from an import) are kept. */
  async complete(spec: Anchor): Promise<FullAnchor> {
    const at = this.opts.committed;
    let path: string;
    if (at !== undefined) {
      // a path a record names is looked up in a commit's tree, nowhere else
      const problem = anchorPathProblem(spec.path);
      if (problem)
        throw err('E_ANCHOR', problem, 'anchor it again from your own checkout: --anchor PATH[:START[-END]]');
      path = spec.path;
    } else {
      const root = this.root();
      path = spec.path
        ? this.opts.repoRelative
          ? normalizeAnchorPath(root, root, spec.path)
          : normalizeAnchorPath(root, this.opts.cwd, spec.path)
        : '';
    }
    const symbolName = typeof spec.symbol === 'string' && spec.symbol ? spec.symbol : undefined;
    let symDef: SymbolDef | undefined;
    let lang: string | undefined;
    if (!path) {
      if (!symbolName) throw err('E_ANCHOR', 'an anchor needs a path or a symbol');
      const found = await this.findSymbolAnywhere(symbolName);
      path = found.path;
      symDef = found.def;
      lang = found.lang;
    }
    const src =
      at !== undefined
        ? await this.committedSource(path, at, { commit: spec.commit, blob: spec.blob })
        : await this.source(path, {
            commit: spec.commit as string | undefined,
            blob: spec.blob as string | undefined,
          });
    this.contents.set(src.blob, src.content);
    if (src.content.includes(0))
      throw err('E_ANCHOR', `cannot anchor "${path}": it is a binary file`, 'anchor text files only');
    const text = src.content.toString('utf8');
    const lines = splitLines(text);
    let range: [number, number] | undefined = Array.isArray(spec.lines)
      ? [Number(spec.lines[0]), Number(spec.lines[1])]
      : undefined;
    const full: FullAnchor = { path, commit: src.commit, blob: src.blob };
    if (symbolName) {
      lang ??= languageOf(path);
      if (!symDef && lang) {
        const defs = await this.symbolsOf(lang, src.blob, text);
        const hits = preferredSymbols(findSymbol(defs, symbolName).map((def) => ({ def })));
        if (!hits.length)
          throw err(
            'E_ANCHOR',
            `no symbol "${symbolName}" in ${path}`,
            'check the name (Class.method for members) or anchor lines instead',
          );
        if (hits.length > 1) {
          const names = new Set(hits.map((h) => h.def.qualified));
          throw err(
            'E_ANCHOR',
            `symbol "${symbolName}" is ambiguous in ${path}: ${hits.map((h) => `${h.def.qualified} (line ${h.def.start})`).join(', ')}`,
            names.size === hits.length
              ? 'use the qualified name, e.g. Class.method'
              : 'they share a name: anchor the lines of one instead, --anchor PATH:START-END',
          );
        }
        symDef = hits[0].def;
      }
      if (symDef && lang) {
        range = [symDef.start, symDef.end];
        full.symbol = symbolName;
        full.sym = {
          lang,
          kind: symDef.kind,
          name: symDef.name,
          qualified: symDef.qualified,
          body_hash: symDef.bodyHash,
        };
      } else {
        // no grammar for this language: a line anchor on the definition and its block (its body
        // must be in the range, or an edit of the body would leave the memory fresh)
        const line = fallbackDefinitionLine(lines, symbolName);
        if (!line)
          throw err(
            'E_ANCHOR',
            `no grammar for ${path} and no single definition of "${symbolName}" found`,
            'anchor lines instead: --anchor PATH:START-END',
          );
        range = definitionBlock(lines, line);
        full.symbol = symbolName;
        this.notes.push(
          `no symbol grammar for ${path}: "${symbolName}" anchored as lines ${range[0]}-${range[1]}`,
        );
      }
    }
    if (range) {
      if (!Number.isInteger(range[0]) || !Number.isInteger(range[1]) || range[0] < 1 || range[1] < range[0]) {
        throw err(
          'E_ANCHOR',
          `invalid line range ${range[0]}-${range[1]} for ${path}`,
          'lines start at 1 and END ≥ START',
        );
      }
      if (range[1] > lines.length) {
        throw err(
          'E_ANCHOR',
          `line range ${range[0]}-${range[1]} is outside ${path} (${lines.length} lines)`,
          `use lines between 1 and ${lines.length}`,
        );
      }
      full.lines = range;
    }
    const [s, e] = range ?? [1, lines.length];
    const anchored = lines.slice(s - 1, e);
    full.hash = hashLines(anchored);
    full.wshash = wsHash(anchored);
    const capped = capText(anchored);
    full.text = capped.text;
    if (capped.truncated) full.truncated = true;
    if (range) {
      const ctx = contextOf(lines, s, e);
      full.before = ctx.before;
      full.after = ctx.after;
      if (!full.sym) this.fingerprint(full, lines, s, e, anchored);
    }
    if (src.worktree) full.worktree = true;
    // keep any other fields the spec carried (imports), original fields win
    for (const [k, v] of Object.entries(spec)) if (!(k in full) && v !== undefined) full[k] = v;
    return full;
  }

  /**
   * An anchor whose text cannot tell it apart (mostly punctuation or keywords, or a text the file
   * holds more than once) keeps enough of its surroundings to be found again: its context is
   * widened until each side holds distinctive lines, and the person is told.
   */
  private fingerprint(full: FullAnchor, lines: readonly string[], s: number, e: number, anchored: string[]) {
    const weak = informationOf(anchored) < MIN_INFORMATION;
    const copies = weak
      ? 0
      : findCandidates(lines, anchored, full.hash!, undefined, !!indentLanguage(full.path)).length;
    if (!weak && copies < 2) return;
    const ctx = widenedContext(lines, s, e);
    full.before = ctx.before;
    full.after = ctx.after;
    const shown = anchored
      .map((l) => l.trim())
      .join(' ')
      .slice(0, 40);
    const why = weak
      ? `is mostly punctuation or keywords ("${shown}")`
      : `occurs ${copies} times in the file`;
    this.notes.push(
      `warning: the text of ${full.path}:${s}-${e} ${why}; kept with ${ctx.before.length}+${ctx.after.length} lines around it to find it again (a wider range is safer)`,
    );
  }

  private async findSymbolAnywhere(name: string): Promise<{ path: string; def: SymbolDef; lang: string }> {
    const simple = normalizeSymbolName(name).split('.').pop()!;
    const r = await git(['grep', '-l', '-z', '-w', '-F', '-e', simple], {
      cwd: this.root(),
      env: this.repo.env,
      allowFail: true,
    });
    const files = r.stdout
      .toString('utf8')
      .split('\0')
      .filter((f) => f && languageOf(f))
      .slice(0, 300);
    let hits: Array<{ path: string; def: SymbolDef; lang: string }> = [];
    for (const f of files) {
      const lang = languageOf(f)!;
      let text: string;
      try {
        text = readFileSync(join(this.root(), f), 'utf8');
      } catch {
        continue;
      }
      for (const def of findSymbol(await extractSymbols(lang, text), name)) hits.push({ path: f, def, lang });
    }
    hits = preferredSymbols(hits);
    if (!hits.length)
      throw err(
        'E_ANCHOR',
        `no definition of symbol "${name}" found in tracked files`,
        'give the file: --symbol PATH#NAME',
      );
    if (hits.length > 1) {
      const list = hits.slice(0, 8).map((h) => `${h.path}#${h.def.qualified}`);
      if (hits.length > 8) list.push(`and ${hits.length - 8} more`);
      throw err(
        'E_ANCHOR',
        `symbol "${name}" is defined in several places: ${list.join(', ')}`,
        'give the file: --symbol PATH#NAME',
      );
    }
    return hits[0];
  }
}

/** Most lines of context kept on each side of a weak anchor. */
const WIDE_CONTEXT = 12;

/** Context lines on each side, extended past CONTEXT_LINES until 2 distinctive lines (or WIDE_CONTEXT) are in. */
function widenedContext(lines: readonly string[], start: number, end: number) {
  const wide = (from: number, step: 1 | -1) => {
    let n = 0;
    let seen = 0;
    for (let i = from; i >= 0 && i < lines.length && n < WIDE_CONTEXT; i += step) {
      n++;
      if (distinctiveLine(lines[i])) seen++;
      if (n >= CONTEXT_LINES && seen >= 2) break;
    }
    return n;
  };
  return contextOfSides(lines, start, end, wide(start - 2, -1), wide(end, 1));
}

function contextOfSides(lines: readonly string[], start: number, end: number, nb: number, na: number) {
  return { before: lines.slice(Math.max(0, start - 1 - nb), start - 1), after: lines.slice(end, end + na) };
}

/**
 * The lines of the definition starting at `line` (1-based), without a grammar: to the brace that
 * closes the first one opened within its first lines (`{` on the line or a following one, as PHP,
 * C#, Kotlin, Swift write it), else the lines indented deeper than it (Python-like blocks), else
 * the line alone (a declaration ending in `;`). Braces in strings and comments are counted too: a
 * block read too long makes a memory stale sooner, never fresh wrongly.
 */
export function definitionBlock(lines: readonly string[], line: number): [number, number] {
  const MAX = 5000;
  for (let i = line - 1; i < Math.min(lines.length, line + 4); i++) {
    const open = lines[i].indexOf('{');
    if (open < 0) {
      if (/;\s*$/.test(lines[i])) return [line, i + 1];
      continue;
    }
    let depth = 0;
    for (let j = i; j < Math.min(lines.length, i + MAX); j++) {
      for (const ch of j === i ? lines[j].slice(open) : lines[j]) {
        if (ch === '{') depth++;
        else if (ch === '}' && --depth === 0) return [line, j + 1];
      }
    }
    return [line, Math.min(lines.length, i + MAX)];
  }
  const indent = (l: string) => l.length - l.trimStart().length;
  const own = indent(lines[line - 1]);
  let end = line;
  for (let j = line; j < Math.min(lines.length, line + MAX); j++) {
    if (!lines[j].trim()) continue;
    if (indent(lines[j]) <= own) break;
    end = j + 1;
  }
  return [line, end];
}

function fallbackDefinitionLine(lines: readonly string[], name: string): number | undefined {
  const n = name
    .split('.')
    .pop()!
    .replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(
    `\\b(def|function|func|fn|class|struct|interface|type|const|let|var|sub|proc|module|object|trait|enum|local function)\\s+${n}\\b`,
  );
  const hits: number[] = [];
  lines.forEach((l, i) => {
    if (re.test(l)) hits.push(i + 1);
  });
  return hits.length === 1 ? hits[0] : undefined;
}
