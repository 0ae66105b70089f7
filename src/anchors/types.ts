/**
 * The anchor as stored in a record's frontmatter. The original fields (path,
 * lines, symbol, commit, blob, hashes, text, context, sym) are written once
 * when the anchor is made and never overwritten; a check writes only
 * `current` (where the text is now) and `verdict` (what the last check found).
 */
import { err } from '../errors.js';
import { isRepoPath } from '../model/paths.js';
import type { Anchor, MemoryRecord } from '../model/record.js';

/**
 * A full object id (SHA-1: SHA-256 repositories are refused). An anchor's `commit` and `blob`
 * arrive from other clones: they are used only when they are ids, never as revisions git would
 * resolve (`stash@{0}`, a branch, `HEAD~1`, `rev:path`).
 */
export function isOid(x: unknown): x is string {
  return typeof x === 'string' && /^[0-9a-f]{40}$/.test(x);
}

/** Every verdict a check gives, in the order reports list them: the one list (check's counts and the SARIF rules derive theirs). */
export const VERDICTS = [
  'fresh',
  'moved',
  'renamed',
  'changed',
  'symbol_removed',
  'symbol_renamed',
  'deleted',
  'ambiguous',
] as const;
export type VerdictStatus = (typeof VERDICTS)[number];
/** Verdicts that make a memory stale. */
const STALE_VERDICT_LIST = [
  'changed',
  'symbol_removed',
  'symbol_renamed',
  'deleted',
] as const satisfies readonly VerdictStatus[];
export type StaleVerdict = (typeof STALE_VERDICT_LIST)[number];
export const STALE_VERDICTS: ReadonlySet<string> = new Set(STALE_VERDICT_LIST);

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
  /**
   * For `ambiguous`: the places that hold the anchored text equally well. The anchor stays where
   * it was last known (nothing is moved on a guess) and the memory is not made stale by it.
   */
  candidates?: Loc[];
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

/**
 * Where a check starts from. What a record says is used only in the shapes git-mem writes: a
 * `current` whose path leaves the repository or whose blob is no object id is ignored (the
 * anchor is judged from where it was made), and a commit that is no object id is none.
 */
export function baseOf(a: FullAnchor): BaseState | null {
  const c = a.current;
  if (c && isOid(c.blob) && isRepoPath(c.path)) {
    return {
      path: c.path,
      lines: c.lines,
      blob: c.blob,
      commit: isOid(c.commit) ? c.commit : null,
      detached: false,
    };
  }
  if (!isOid(a.blob) || !isRepoPath(a.path)) return null;
  return {
    path: a.path,
    lines: a.lines,
    blob: a.blob,
    commit: isOid(a.commit) ? a.commit : null,
    detached: !!a.worktree,
  };
}

/**
 * Whether an anchor has been completed: a repository path, the blob's id and the hash. Anything
 * less (a record imported as given, or a teammate's that lacks them) is completed by a check
 * from committed content only, or reported.
 */
export function isComplete(a: Anchor): a is FullAnchor {
  return isOid(a.blob) && typeof a.hash === 'string' && isRepoPath(a.path);
}

export function locString(l: Loc | null | undefined): string {
  if (!l) return '(nowhere)';
  return l.lines ? `${l.path}:${l.lines[0]}-${l.lines[1]}` : l.path;
}

// ---------------------------------------------------------------- stale reasons

/** Why a memory is stale: one anchor's stale verdict. */
export interface StaleReason {
  /** Where the anchored code was last known intact; null for a line not written by a check. */
  anchor: Loc | null;
  /** null for a line not written by a check. */
  verdict: StaleVerdict | null;
  reason: string;
}

/**
 * The frontmatter key a check writes when it makes a memory stale: a list of
 * strings, one per stale anchor, `<path>[:<start>-<end>]: <verdict>: <reason>`.
 */
export const STALE_REASONS_KEY = 'stale_reasons';

/** One reason as one line (the on-disk form, and what every view of staleness shows). */
export function staleReasonText(s: StaleReason): string {
  return s.verdict ? `${locString(s.anchor)}: ${s.verdict}: ${s.reason}` : s.reason;
}

const REASON_LINE = new RegExp(`^([\\s\\S]*?): (${STALE_VERDICT_LIST.join('|')}): ([\\s\\S]*)$`);

/** Reads one on-disk line back; a line a check did not write is kept whole as the reason. */
export function parseStaleReason(line: string): StaleReason {
  const m = REASON_LINE.exec(line);
  if (!m) return { anchor: null, verdict: null, reason: line };
  const at = /^([\s\S]+):([1-9]\d*)-([1-9]\d*)$/.exec(m[1]);
  const anchor: Loc | null =
    m[1] === locString(null)
      ? null
      : at
        ? { path: at[1], lines: [Number(at[2]), Number(at[3])] }
        : { path: m[1] };
  return { anchor, verdict: m[2] as StaleVerdict, reason: m[3] };
}

/** The stale verdicts of some anchors, in anchor order. */
export function staleReasonsOfAnchors(anchors: readonly Anchor[]): StaleReason[] {
  const out: StaleReason[] = [];
  for (const a of anchors as FullAnchor[]) {
    const v = a.verdict;
    if (v && STALE_VERDICTS.has(v.status))
      out.push({ anchor: v.from ?? null, verdict: v.status as StaleVerdict, reason: v.reason });
  }
  return out;
}

/**
 * Why a memory is stale: the reasons the check that made it stale recorded,
 * else (a record without them) the stale verdicts of its anchors. The one
 * reader for everything that shows staleness.
 */
export function staleReasons(r: Pick<MemoryRecord, 'anchors' | 'extra'>): StaleReason[] {
  const recorded = r.extra[STALE_REASONS_KEY];
  if (Array.isArray(recorded))
    return recorded.filter((x) => typeof x === 'string' && x).map((x) => parseStaleReason(x as string));
  return staleReasonsOfAnchors(r.anchors);
}

/** The frontmatter patch that records reasons (undefined or none: removes the key). */
export function staleReasonsField(reasons: readonly StaleReason[] | undefined): Record<string, unknown> {
  return { [STALE_REASONS_KEY]: reasons?.length ? reasons.map(staleReasonText) : undefined };
}

/** Parses PATH[:START[-END]] into a bare anchor spec (AnchorPreparer completes it). */
function parseAnchorSpec(spec: string): Anchor {
  const m = /^(.+?)(?::(\d+)(?:-(\d+))?)?$/.exec(spec.trim());
  if (!m?.[1])
    throw err('E_INVALID_ARG', `invalid --anchor "${spec}"`, 'use PATH, PATH:LINE or PATH:START-END');
  const a: Anchor = { path: m[1] };
  if (m[2]) {
    const start = Number(m[2]);
    const end = m[3] ? Number(m[3]) : start;
    if (start < 1 || end < start)
      throw err(
        'E_INVALID_ARG',
        `invalid line range in --anchor "${spec}"`,
        'lines start at 1 and END ≥ START',
      );
    a.lines = [start, end];
  }
  return a;
}

/** Bare anchor specs from PATH[:START[-END]] and [PATH#]NAME strings (--anchor, --symbol). */
export function parseAnchorSpecs(anchors: readonly string[] = [], symbols: readonly string[] = []): Anchor[] {
  const out = anchors.map(String).map(parseAnchorSpec);
  for (const s of symbols.map(String)) out.push(parseSymbolSpec(s));
  return out;
}

/**
 * `[PATH#]NAME`, where NAME may hold a `#` of its own (Ruby's `Rack::Request#params`): the path is
 * what precedes the first `#` that follows a file extension; a bare `Request#params` or
 * `Rack::Request#params` is a name; else the last `#` splits, as paths may hold one.
 */
function parseSymbolSpec(s: string): Anchor {
  for (let i = s.indexOf('#'); i > 0; i = s.indexOf('#', i + 1)) {
    if (/\.[A-Za-z0-9+]+$/.test(s.slice(0, i))) return { path: s.slice(0, i), symbol: s.slice(i + 1) };
  }
  const hash = s.lastIndexOf('#');
  if (hash <= 0 || /^[A-Z]\w*(::[A-Z]\w*)*$/.test(s.slice(0, hash))) return { path: '', symbol: s };
  return { path: s.slice(0, hash), symbol: s.slice(hash + 1) };
}
