/** The types of a check: its options, what it found per anchor, its report. */
import type { NoteAdd } from '../gitstore/store.js';
import type { ScopeReport } from './scopes.js';
import type { FullAnchor, Verdict } from './types.js';

export interface CheckOptions {
  /** Code revision to check against (default HEAD). */
  target?: string;
  /** Check against the working tree (reports only; nothing is recorded). */
  worktree?: boolean;
  /** Only anchors of files changed between this revision and the target. */
  since?: string;
  /** Only anchors of these repository paths. */
  paths?: readonly string[];
  /** Only these record ids. */
  ids?: readonly string[];
  dryRun?: boolean;
  now?: Date;
  /** Commit message subject prefix (default "mem: check"). */
  label?: string;
  /** Fill the titles of fast-path results from the catalog (costs a catalog load). */
  titles?: boolean;
  /**
   * Blob ids in the target of every path of `paths` (a path missing: not a file there), when the
   * caller knows them (the post-commit hook's tree diff): saves an ls-tree. Not with `since`.
   */
  targetBlobs?: Map<string, string>;
  /**
   * A git note written and published with the recorded verdicts (the
   * post-commit hook's), built from the verdicts; asked for on every attempt.
   * Where the verdicts are not recorded (a commit that is not the default
   * branch's tip), the note is written alone.
   */
  note?: (results: readonly AnchorResult[]) => Promise<NoteAdd | null>;
  /**
   * Called before the anchors that need reading are read, before each is
   * judged and before anything is written (`done` of `total` judged): it
   * throws to stop the check there, with nothing written (the post-commit
   * hook's time budget).
   */
  budget?: (done: number, total: number) => void;
  /**
   * Record code that looks like it holds a secret anyway (secret-scan warn or off). Otherwise a
   * likely secret new to the ref in what the check would record refuses the write (E_SECRET).
   */
  allowSecret?: boolean;
  /**
   * The commit from which the renames of literal scope entries are followed to the target
   * (src/anchors/scopes.ts); default: the `since` commit. null or absent without `since`: none
   * are followed (literal scopes that match no file are still reported, unless `paths` is given).
   */
  scopeFrom?: string | null;
}

export interface AnchorResult {
  /** The verdict is news: a new location, a new stale verdict or reason, or a restoration (what gets recorded). */
  news?: boolean;
  id: string;
  title: string;
  index: number;
  /** The anchor after the check (completed, relocated). */
  anchor: FullAnchor;
  verdict: Verdict;
  stale: boolean;
  /**
   * The shared record confirmed this anchor at a commit the checked one does
   * not contain (a local default branch behind its remote, or an anchor made
   * on a branch not merged here): the verdict is reported, not recorded, so an
   * out-of-date checkout never moves the record back.
   */
  newer?: boolean;
}

/**
 * An anchor a check left alone: a path that leaves the repository, lines that are not a range
 * (a record written by hand or by another tool, taken in before the sync boundary refused such
 * records). Reported with its record; every other anchor is checked.
 */
export interface InvalidAnchor {
  id: string;
  index: number;
  path: string;
  problem: string;
}

export interface StatusChange {
  id: string;
  title: string;
  from: string;
  to: string;
  reasons: string[];
}

export interface CheckReport {
  /** The code commit checked, or "worktree". */
  target: string;
  memoryCommit: string | null;
  recorded: boolean;
  checked: number;
  results: AnchorResult[];
  changes: StatusChange[];
  written: number;
  /**
   * The branch the shared record follows, and whether this check's target is
   * its tip (only then are verdicts recorded); absent for dry runs, the
   * working tree and checks that selected no anchor.
   */
  branch?: { name: string; shared: boolean };
  /** Anchors whose verdicts were not recorded because the record is newer than the target (AnchorResult.newer). */
  newer?: number;
  /** Anchors not checked: their path or lines break the record limits (git mem doctor names them). */
  invalid: InvalidAnchor[];
  /** Literal scope entries the judged commits renamed (moved; recorded with the verdicts), or that match no file (lost). */
  scopes?: ScopeReport;
}
