/**
 * Judging one anchor: where its text stands in the code judged, as a verdict (fresh, moved,
 * renamed, changed, symbol_removed, symbol_renamed, deleted, ambiguous) with its reason, its
 * confidence and its new place. Pure: no git, no file system. What it looks at — blob contents,
 * the target's blob ids, the renames since a commit, the symbols of a text — comes from a
 * `JudgeSource`: the check's reader over git (src/anchors/judge-git.ts), or the contents a test
 * hands in. The range is mapped through a line diff of the two blobs, the text searched for where
 * the diff touched it, renames and deletions taken from the source's tree diff, symbols found
 * again by qualified name, then by body hash.
 */
import type { Anchor } from '../model/record.js';
import { diffLines } from './diff.js';
import type { TreeChange } from './gitio.js';
import {
  ambiguityConfidence,
  contextScore,
  distinctiveContext,
  findCandidates,
  relocate,
} from './relocate.js';
import { findSymbol, languageOf, type SymbolDef, sameLanguageFamily } from './symbols.js';
import {
  indentLanguage,
  informationOf,
  MIN_INFORMATION,
  rawSyntax,
  splitLines,
  squeezeWhitespace,
} from './text.js';
import {
  type BaseState,
  baseOf,
  type Current,
  type FullAnchor,
  isComplete,
  type Loc,
  locString,
  STALE_VERDICTS,
  type Verdict,
  type VerdictStatus,
} from './types.js';

/** How many other files a history changed are searched for a text that left its own. */
const CROSS_FILE_CAP = 300;

/** The outcome for one anchor before it is turned into a Verdict. */
export interface Outcome {
  status: VerdictStatus;
  reason: string;
  confidence: number;
  to: Loc | null;
  /** New last-known-intact state (moves, renames). */
  current?: Current;
  /** The completed anchor (imports). */
  completed?: FullAnchor;
  /** Target blob at the base path ("" = absent) the verdict was given at. */
  blob?: string;
  /** For `ambiguous`: the equally good places. */
  candidates?: Loc[];
}

/**
 * What judging reads, already read or read on demand (the same contents every time it asks). The
 * arrays of lines are the same array for the same key each time (relocate keeps its work per array).
 */
export interface JudgeSource {
  /** The code commit judged; null for the working tree. */
  readonly target: string | null;
  /** Judging the working tree: files are named by path (`wt:<path>`), not by blob id. */
  readonly worktree: boolean;
  /** Blob id in the target of each anchored path (a path absent: no file there). */
  readonly tblobs: ReadonlyMap<string, string>;
  /** A blob's lines (null: missing or binary). */
  blobLines(oid: string): Promise<string[] | null>;
  /** The lines of a file of the target: its blob's, or the working tree file's (null: none or binary). */
  targetLines(path: string, oid: string | undefined): Promise<string[] | null>;
  /** Whether a target file's whitespace-free text holds `squeezed` (a cheap filter before reading lines). */
  mayHold(path: string, oid: string | undefined, squeezed: Buffer): Promise<boolean>;
  /** The changes, renames followed, from `commit` to the target (none without a commit). */
  renames(commit: string | null): Promise<TreeChange[]>;
  /** The symbols defined in a text of a language; `key` names the text (a blob id or `wt:<path>`). */
  symbols(lang: string, key: string, lines: readonly string[]): Promise<SymbolDef[]>;
  /** Reads these blobs ahead in one batch (a hint: judging asks for them one by one next). */
  prefetch(oids: readonly string[]): Promise<void>;
  /** Completes an anchor without its blob and hash from the target's committed content (throws what it cannot). */
  complete(raw: Anchor): Promise<FullAnchor>;
}

/** Judges anchors against one target through one source. */
export class Judge {
  constructor(readonly src: JudgeSource) {}

  async judge(raw: Anchor): Promise<Outcome> {
    if (!isComplete(raw)) {
      // an anchor without its blob and hash (imported as given, or a teammate's) is completed from
      // the checked commit's committed content only, never from the working tree or a revision
      // the record names: what it cannot be completed from is reported, and nothing is read
      if (!this.src.target)
        return {
          status: 'changed',
          reason: 'the anchor is incomplete (no blob or hash): a check of a commit completes it',
          confidence: 0.5,
          to: null,
        };
      try {
        const done = await this.src.complete(raw);
        return {
          status: 'fresh',
          reason: `anchor completed at ${String(done.commit ?? 'worktree').slice(0, 12)}`,
          confidence: 1,
          to: loc(done.path, done.lines),
          completed: done,
        };
      } catch (e) {
        const msg = (e as Error).message;
        return {
          status: /no file|no symbol|no definition/.test(msg) ? 'deleted' : 'changed',
          reason: `cannot complete the anchor: ${msg}`,
          confidence: 0.6,
          to: null,
        };
      }
    }
    const a = raw as FullAnchor;
    const base = baseOf(a)!;
    const tb = this.src.tblobs.get(base.path);
    if (tb !== undefined && tb === base.blob) {
      return {
        status: 'fresh',
        reason: 'same blob (code restored)',
        confidence: 1,
        to: loc(base.path, base.lines),
      };
    }
    const blobLines = await this.src.blobLines(base.blob);
    // the anchored blob may be gone (a shallow clone): fall back to the stored text
    const oldLines = blobLines ?? (a.text !== undefined ? splitLines(a.text) : null);
    const oldRange: [number, number] | undefined = blobLines
      ? base.lines
      : a.lines && oldLines
        ? [1, oldLines.length]
        : undefined;
    if (!oldLines)
      return {
        status: 'changed',
        reason: 'the anchored blob is missing and no text was stored',
        confidence: 0.5,
        to: null,
      };
    if (tb !== undefined) {
      const newLines = await this.src.targetLines(base.path, tb);
      if (!newLines)
        return {
          status: 'changed',
          reason: `${base.path} is no longer a text file`,
          confidence: 0.9,
          to: { path: base.path },
        };
      return this.inFile(a, base, oldLines, oldRange, base.path, newLines, tb, false);
    }
    // the path is gone at the target: renamed (git's -M) or deleted
    const changes = await this.src.renames(base.commit);
    const ren = changes.find((c) => c.status === 'R' && c.oldPath === base.path);
    if (ren) {
      const newOid = this.src.worktree ? undefined : ren.newOid;
      if (newOid && newOid === base.blob) {
        return {
          status: 'renamed',
          reason: `file renamed to ${ren.newPath} (identical)`,
          confidence: 1,
          to: loc(ren.newPath, base.lines),
          current: this.current(ren.newPath, base.lines, newOid),
        };
      }
      const newLines = await this.src.targetLines(ren.newPath, newOid);
      if (newLines)
        return this.inFile(a, base, oldLines, oldRange, ren.newPath, newLines, newOid, true, ren.score);
    }
    const elsewhere = await this.searchElsewhere(a, base, oldLines, oldRange, changes, new Set([base.path]));
    if (elsewhere) {
      return {
        ...elsewhere,
        status:
          elsewhere.status === 'symbol_renamed' || elsewhere.status === 'ambiguous'
            ? elsewhere.status
            : 'renamed',
        reason: `${base.path} is gone; ${elsewhere.reason}`,
      };
    }
    return {
      status: 'deleted',
      reason: `${base.path} was deleted and the anchored text is found nowhere${base.commit ? '' : ' (no anchor commit to follow renames)'}`,
      confidence: 0.95,
      to: null,
    };
  }

  /** Verdict when the file (same path or followed rename) exists in the target. */
  private async inFile(
    a: FullAnchor,
    base: BaseState,
    oldLines: string[],
    oldRange: [number, number] | undefined,
    newPath: string,
    newLines: string[],
    newOid: string | undefined,
    renamed: boolean,
    score?: number,
  ): Promise<Outcome> {
    const renamedNote = renamed
      ? `file renamed to ${newPath}${score !== undefined ? ` (${score}% similar)` : ''}; `
      : '';
    const lang = a.sym ? languageOf(newPath) : undefined;
    if (a.sym && lang) {
      const defs = await this.src.symbols(lang, newOid ?? `wt:${newPath}`, newLines);
      const o = symbolInFile(a, defs, base, newPath, renamed);
      if (o.status !== 'symbol_removed') {
        return {
          ...o,
          reason: renamedNote + o.reason,
          current:
            o.status === 'moved' || o.status === 'renamed'
              ? this.current(newPath, o.to?.lines, newOid)
              : undefined,
        };
      }
      const changes = await this.src.renames(base.commit);
      const elsewhere = await this.searchElsewhere(
        a,
        base,
        oldLines,
        oldRange,
        changes,
        new Set([base.path, newPath]),
      );
      if (elsewhere) return { ...elsewhere, reason: renamedNote + elsewhere.reason };
      return { ...o, reason: renamedNote + o.reason };
    }
    const [start, end] = oldRange ?? [1, oldLines.length];
    const d = diffLines(oldLines, newLines);
    const r = relocate({
      oldLines,
      newLines,
      start,
      end,
      hash: a.hash!,
      wshash: a.wshash,
      before: a.before,
      after: a.after,
      diff: d,
      indent: !!(indentLanguage(base.path) || indentLanguage(newPath)),
      raw: rawSyntax(base.path) ?? rawSyntax(newPath),
    });
    const range: [number, number] | undefined = oldRange || a.lines ? [r.start, r.end] : undefined;
    if (r.kind === 'ambiguous') {
      return {
        status: 'ambiguous',
        reason: renamedNote + r.reason,
        confidence: r.confidence,
        to: null,
        candidates: (r.candidates ?? []).map((c) => loc(newPath, a.lines ? [c.start, c.end] : undefined)),
      };
    }
    if (r.kind !== 'lost') {
      const same = !renamed && r.start === start && r.end === end;
      const status: VerdictStatus = renamed ? 'renamed' : same ? 'fresh' : 'moved';
      return {
        status,
        reason: renamedNote + r.reason,
        confidence: r.confidence * (renamed && score !== undefined ? Math.max(0.8, score / 100) : 1),
        to: loc(newPath, range),
        // only a new place is worth a write; an unchanged range keeps its base
        current: status === 'fresh' ? undefined : this.current(newPath, range, newOid),
      };
    }
    // not in this file: moved to another file changed by the same history?
    const changes = await this.src.renames(base.commit);
    const elsewhere = await this.searchElsewhere(
      a,
      base,
      oldLines,
      oldRange,
      changes,
      new Set([base.path, newPath]),
    );
    if (elsewhere) return { ...elsewhere, reason: renamedNote + elsewhere.reason };
    const mapped = range ? newLines.slice(range[0] - 1, range[1]) : newLines;
    const what = a.lines
      ? `anchored lines edited (now ${locString(loc(newPath, range))}, ${linesDiffer(oldLines.slice(start - 1, end), mapped)})`
      : `file content changed (${linesDiffer(oldLines.slice(start - 1, end), mapped)})`;
    return {
      status: 'changed',
      reason: renamedNote + what,
      confidence: r.confidence,
      to: loc(newPath, range),
    };
  }

  /** Looks for the anchored text (or symbol) in the other files a history changed. */
  private async searchElsewhere(
    a: FullAnchor,
    base: BaseState,
    oldLines: string[],
    oldRange: [number, number] | undefined,
    changes: TreeChange[],
    exclude: Set<string>,
  ): Promise<Outcome | null> {
    const [start, end] = oldRange ?? [1, oldLines.length];
    const needle = oldLines.slice(start - 1, end);
    const squeezed = squeezeWhitespace(needle.join(''));
    const cands = changes.filter((c) => c.status !== 'D' && !exclude.has(c.newPath)).slice(0, CROSS_FILE_CAP);
    const sym = a.sym;
    const lang = sym ? (languageOf(base.path) ?? sym.lang) : undefined;
    const weak = informationOf(needle) < MIN_INFORMATION;
    // one batch for every candidate file (later anchors find them read)
    if (!this.src.worktree)
      await this.src.prefetch(cands.map((c) => c.newOid).filter((o) => o && !/^0+$/.test(o)));
    const hits: Array<{
      path: string;
      oid: string | undefined;
      f: { start: number; end: number };
      ctx: number;
      hit: number;
      added: boolean;
    }> = [];
    for (const c of cands) {
      const newOid = this.src.worktree ? undefined : c.newOid;
      const newLang = sym && lang ? languageOf(c.newPath) : undefined;
      if (sym && lang && newLang && sameLanguageFamily(lang, newLang)) {
        const lines = await this.src.targetLines(c.newPath, newOid);
        if (!lines) continue;
        const defs = await this.src.symbols(newLang, newOid ?? `wt:${c.newPath}`, lines);
        const hit = defs.find((d) => d.qualified === sym.qualified && d.bodyHash === sym.body_hash);
        if (hit) {
          const r: [number, number] = [hit.start, hit.end];
          return {
            status: 'moved',
            reason: `symbol ${sym.qualified} found in ${c.newPath}:${hit.start}-${hit.end}`,
            confidence: 0.9,
            to: loc(c.newPath, r),
            current: this.current(c.newPath, r, newOid),
          };
        }
        continue;
      }
      if (a.sym) continue;
      if (squeezed.length && !(await this.src.mayHold(c.newPath, newOid, squeezed))) continue;
      const lines = await this.src.targetLines(c.newPath, newOid);
      if (!lines) continue;
      const indent = !!(indentLanguage(base.path) || indentLanguage(c.newPath));
      const raw = rawSyntax(base.path) ?? rawSyntax(c.newPath);
      let found = findCandidates(lines, needle, a.hash!, a.wshash, indent, raw);
      if (!found.length) continue;
      if (c.status !== 'A' && c.oldOid && !/^0+$/.test(c.oldOid)) {
        // the text must be new in that file, not a copy that was already there
        const old = await this.src.blobLines(c.oldOid);
        if (old && findCandidates(old, needle, a.hash!, a.wshash, indent, raw).length >= found.length)
          continue;
      }
      // in another file, a text that cannot identify itself (a lone `"""`, a run of braces) is
      // only found where its own surroundings came along
      if (weak) found = found.filter((f) => distinctiveContext(lines, f, a.before, a.after).hit >= 2);
      for (const f of found) {
        hits.push({
          path: c.newPath,
          oid: newOid,
          f,
          ctx: contextScore(lines, f, a.before, a.after),
          hit: distinctiveContext(lines, f, a.before, a.after).hit,
          added: c.status === 'A',
        });
      }
    }
    if (!hits.length) return null;
    hits.sort((x, y) => y.hit - x.hit || y.ctx - x.ctx);
    const best = hits[0];
    const tied = hits.filter((h) => h.hit === best.hit && h.ctx === best.ctx);
    if (tied.length > 1) {
      const places = tied.map((h) => loc(h.path, a.lines ? [h.f.start, h.f.end] : undefined));
      return {
        status: 'ambiguous',
        reason: `the anchored text is at ${places.length} places in other files that its context does not tell apart (${places.map(locString).join(', ')})`,
        confidence: ambiguityConfidence(places.length),
        to: null,
        candidates: places,
      };
    }
    const r: [number, number] = [best.f.start, best.f.end];
    return {
      status: 'moved',
      reason: `text found in ${best.path}:${best.f.start}-${best.f.end}${best.added ? ' (a new file)' : ''}`,
      confidence: hits.length === 1 ? 0.9 : 0.7,
      to: loc(best.path, a.lines ? r : undefined),
      current: this.current(best.path, a.lines ? r : undefined, best.oid),
    };
  }

  private current(
    path: string,
    lines: [number, number] | undefined,
    blob: string | undefined,
  ): Current | undefined {
    if (!this.src.target || !blob) return undefined;
    return { path, ...(lines ? { lines } : {}), blob, commit: this.src.target };
  }
}

/** Symbol verdict within one file: by qualified name, then by body hash (a rename). Pure. */
function symbolInFile(
  a: FullAnchor,
  defs: readonly SymbolDef[],
  base: BaseState,
  newPath: string,
  renamed: boolean,
): Outcome {
  const sym = a.sym!;
  const named = findSymbol(defs, sym.qualified).filter(
    (d) => d.qualified === sym.qualified || d.name === sym.name,
  );
  // a type and its impl blocks (Rust), a class and its constructor share a name: keep to the kind anchored
  const ofKind = named.filter((d) => sameKind(d.kind, sym.kind));
  const hits = ofKind.length ? ofKind : named;
  const prefer = base.lines?.[0] ?? 0;
  const byDist = (x: SymbolDef, y: SymbolDef) => Math.abs(x.start - prefer) - Math.abs(y.start - prefer);
  const same = hits.filter((d) => d.bodyHash === sym.body_hash).sort(byDist);
  if (same.length) {
    const d = same[0];
    const r: [number, number] = [d.start, d.end];
    const inPlace = !renamed && base.lines && base.lines[0] === d.start && base.lines[1] === d.end;
    return {
      status: renamed ? 'renamed' : inPlace ? 'fresh' : 'moved',
      reason: inPlace
        ? `symbol ${sym.qualified} unchanged`
        : `symbol ${sym.qualified} found at lines ${d.start}-${d.end}`,
      confidence: same.length === 1 ? 0.98 : 0.8,
      to: loc(newPath, r),
    };
  }
  if (hits.length) {
    const d = [...hits].sort(byDist)[0];
    return {
      status: 'changed',
      reason: `symbol ${sym.qualified} edited`,
      confidence: 0.95,
      to: loc(newPath, [d.start, d.end]),
    };
  }
  const renamedTo = defs
    .filter((d) => d.bodyHash === sym.body_hash && sameKind(d.kind, sym.kind))
    .sort(byDist);
  if (renamedTo.length) {
    const d = renamedTo[0];
    return {
      status: 'symbol_renamed',
      reason: `symbol ${sym.qualified} renamed to ${d.qualified}`,
      confidence: renamedTo.length === 1 ? 0.9 : 0.7,
      to: { ...loc(newPath, [d.start, d.end]), symbol: d.qualified },
    };
  }
  return {
    status: 'symbol_removed',
    reason: `symbol ${sym.qualified} no longer defined in ${newPath}`,
    confidence: 0.9,
    to: null,
  };
}

/** Kinds that are the same for a verdict: a function that became a method (or was stored as one by an older version). */
function sameKind(a: string, b: string): boolean {
  const f = (k: string) => (k === 'method' ? 'function' : k);
  return f(a) === f(b);
}

/**
 * How much of a changed anchor's text differs, in words a "changed" verdict can stand next
 * to: the share of its old lines (spaces at either end aside) found nowhere in the new ones.
 */
export function linesDiffer(before: readonly string[], after: readonly string[]): string {
  const pool = new Map<string, number>();
  for (const l of after) pool.set(l.trim(), (pool.get(l.trim()) ?? 0) + 1);
  let gone = 0;
  for (const l of before) {
    const n = pool.get(l.trim()) ?? 0;
    if (n > 0) pool.set(l.trim(), n - 1);
    else gone++;
  }
  const added = [...pool.values()].reduce((x, y) => x + y, 0);
  if (!gone && !added) return 'the same lines, reordered or re-indented';
  if (!gone) return `${added} line${added === 1 ? '' : 's'} added`;
  const pct = Math.max(1, Math.round((gone / Math.max(1, before.length)) * 100));
  return `${pct}% of the lines differ`;
}

/** The verdict a record keeps for an outcome: from where the anchor was last known, to where it is. */
export function verdictOf(o: Outcome, before: FullAnchor, commit: string, now: string): Verdict {
  const base = isComplete(before) ? baseOf(before) : null;
  const v: Verdict = {
    status: o.status,
    reason: o.reason,
    confidence: round(o.confidence),
    from: base ? loc(base.path, base.lines) : loc(before.path, before.lines),
    to: o.to,
    commit,
    checked: now,
  };
  if (o.blob !== undefined && STALE_VERDICTS.has(o.status) && commit !== 'worktree') v.blob = o.blob;
  if (o.candidates?.length) v.candidates = o.candidates;
  return v;
}

export function loc(path: string, lines?: [number, number]): Loc {
  return lines ? { path, lines: [lines[0], lines[1]] } : { path };
}

const round = (x: number) => Math.round(x * 100) / 100;
