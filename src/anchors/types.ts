/**
 * The anchor as stored in a record's frontmatter. The original fields (path,
 * lines, symbol, commit, blob, hashes, text, context, sym) are written once
 * when the anchor is made and never overwritten; a check writes only
 * `current` (where the text is now) and `verdict` (what the last check found).
 */
import type { Anchor } from '../model/record.js';

export const VERDICTS = [
  'fresh',
  'moved',
  'renamed',
  'changed',
  'symbol_removed',
  'symbol_renamed',
  'deleted',
] as const;
export type VerdictStatus = (typeof VERDICTS)[number];
/** Verdicts that make a memory stale. */
export const STALE_VERDICTS: ReadonlySet<string> = new Set([
  'changed',
  'symbol_removed',
  'symbol_renamed',
  'deleted',
]);

export interface Loc {
  path: string;
  lines?: [number, number];
  /** For symbol verdicts: the symbol's (new) qualified name. */
  symbol?: string;
}

export interface SymbolInfo {
  lang: string;
  kind: string;
  name: string;
  qualified: string;
  body_hash: string;
}

export interface Current {
  path: string;
  lines?: [number, number];
  blob: string;
  commit: string;
}

export interface Verdict {
  status: VerdictStatus;
  reason: string;
  confidence: number;
  from: Loc;
  to: Loc | null;
  /** The code commit checked against ("worktree" for --worktree). */
  commit: string;
  checked: string;
  /** Blob at the anchor's base path when a stale verdict was given ("" = no file): unchanged → still stale, no need to look again. */
  blob?: string;
}

export interface FullAnchor extends Anchor {
  path: string;
  lines?: [number, number];
  symbol?: string;
  commit?: string | null;
  blob?: string;
  hash?: string;
  wshash?: string;
  text?: string;
  truncated?: boolean;
  before?: string[];
  after?: string[];
  /** Anchored content was not committed (its blob was written into the object store). */
  worktree?: boolean;
  sym?: SymbolInfo;
  current?: Current;
  verdict?: Verdict;
}

/** The state a check starts from: the last place the text was known intact. */
export interface BaseState {
  path: string;
  lines?: [number, number];
  blob: string;
  commit: string | null;
  /** The base blob is not the file of `commit` at `path` (uncommitted anchor). */
  detached: boolean;
}

export function baseOf(a: FullAnchor): BaseState | null {
  if (a.current?.blob && a.current.path) {
    return {
      path: a.current.path,
      lines: a.current.lines,
      blob: a.current.blob,
      commit: a.current.commit ?? null,
      detached: false,
    };
  }
  if (!a.blob) return null;
  return { path: a.path, lines: a.lines, blob: a.blob, commit: a.commit ?? null, detached: !!a.worktree };
}

/** Whether an anchor has been completed (blob and hashes present). */
export function isComplete(a: Anchor): a is FullAnchor {
  return typeof a.blob === 'string' && typeof a.hash === 'string';
}

export function locString(l: Loc | null | undefined): string {
  if (!l) return '(nowhere)';
  return l.lines ? `${l.path}:${l.lines[0]}-${l.lines[1]}` : l.path;
}
