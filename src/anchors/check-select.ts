/**
 * Selecting what a check judges: the target commit, the paths and ids asked for, the literal
 * scopes followed through renames, the anchors of the anchor index (a path outside the
 * repository reported, not checked), the target blob of every anchored path, and the anchors
 * answered from the index alone (same blob: fresh; stale and unchanged since: still stale).
 * What is left needs judging: its records are read here.
 */
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { isRepoPath } from '../model/paths.js';
import { anchorPathNow, type MemoryRecord } from '../model/record.js';
import { anchorPathProblem, anchorProblem } from '../model/schema.js';
import type { AnchorResult, CheckOptions, InvalidAnchor } from './check-types.js';
import { revParseVia, touchedPaths, treeBlobs, worktreeBlobs } from './gitio.js';
import type { IndexEntry, IndexedAnchor } from './index-cache.js';
import { loadRecords } from './record-cache.js';
import { judgeScopes, type ScopeReport } from './scopes.js';
import type { Loc, VerdictStatus } from './types.js';

/** What a check was asked to look at. */
export interface CheckScope {
  /** The code commit judged; null for the working tree. */
  target: string | null;
  /** The target's id, or "worktree". */
  targetName: string;
  /** Only anchors of these paths (asked for, or changed since `since`). */
  pathFilter?: Set<string>;
  /** The commit from which literal scope entries are followed through renames. */
  scopeFrom: string | null;
}

/** An anchor of the index the check selected. */
export interface Selected {
  id: string;
  index: number;
  /** Base path and blob. */
  p: string;
  b: string | null;
  stale: boolean;
  incomplete: boolean;
  a: IndexedAnchor;
}

/** An anchor that needs its record read and judging. */
export interface Work {
  id: string;
  index: number;
}

/** Resolves the target and the paths a check looks at; throws E_REV for a revision git cannot resolve. */
export async function resolveScope(store: Store, opts: CheckOptions): Promise<CheckScope> {
  const repo = store.repo;
  let target: string | null = null;
  if (!opts.worktree) {
    const rev = opts.target ?? 'HEAD';
    target = await revParseVia(store, rev);
    if (!target)
      throw err(
        'E_REV',
        `cannot resolve "${rev}" to a commit`,
        rev === 'HEAD' ? 'make a first commit' : 'pass a commit, branch or tag',
      );
  }
  let pathFilter: Set<string> | undefined = opts.paths ? new Set(opts.paths) : undefined;
  let scopeFrom = opts.scopeFrom ?? null;
  if (opts.since) {
    const from = await revParseVia(store, opts.since);
    if (!from) throw err('E_REV', `cannot resolve --since "${opts.since}"`, 'pass a commit, branch or tag');
    if (opts.scopeFrom === undefined) scopeFrom = from;
    const head = target ?? (await revParseVia(store, 'HEAD'));
    const touched = head ? await touchedPaths(repo, from, head) : [];
    if (opts.worktree) touched.push(...(await worktreeBlobs(repo)).keys());
    pathFilter = new Set([...(pathFilter ?? []), ...touched]);
  }
  return { target, targetName: target ?? 'worktree', pathFilter, scopeFrom };
}

/** Literal scopes: followed through the renames since scopeFrom; those that match no file reported. */
export async function literalScopes(
  store: Store,
  tip: string | null,
  scope: CheckScope,
  opts: CheckOptions,
): Promise<ScopeReport | undefined> {
  const { target, scopeFrom } = scope;
  if (!(tip && target && (scopeFrom || !opts.paths))) return undefined;
  let scopes = await judgeScopes(store, tip, target, scopeFrom);
  if (opts.ids) {
    const want = new Set(opts.ids);
    scopes = {
      moved: scopes.moved.filter((m) => want.has(m.id)),
      lost: scopes.lost.filter((m) => want.has(m.id)),
    };
  }
  // a check of some paths (the post-commit hook) reports only the scopes those paths lost
  if (opts.paths) {
    const asked = opts.paths;
    scopes.lost = scopes.lost.filter((l) => asked.some((p) => p === l.path || p.startsWith(`${l.path}/`)));
  }
  return scopes.moved.length || scopes.lost.length ? scopes : undefined;
}

/** The index's anchors of the ids and paths asked for; those whose path leaves the repository are `invalid`. */
export function selectAnchors(
  entries: readonly IndexEntry[],
  ids: readonly string[] | undefined,
  pathFilter: ReadonlySet<string> | undefined,
): { selected: Selected[]; oids: Map<string, string>; invalid: InvalidAnchor[] } {
  const idFilter = ids ? new Set(ids) : undefined;
  const selected: Selected[] = [];
  const oids = new Map<string, string>();
  const invalid: InvalidAnchor[] = [];
  for (const a of entries) {
    if (idFilter && !idFilter.has(a.id)) continue;
    if (pathFilter && !pathFilter.has(a.p)) continue;
    // a path outside the repository is never handed to git or the file system: reported, not checked
    const bad = anchorPathProblem(a.p);
    if (bad) {
      invalid.push({ id: a.id, index: a.n, path: a.p, problem: bad });
      continue;
    }
    oids.set(a.id, a.oid);
    selected.push({ id: a.id, index: a.n, p: a.p, b: a.b, stale: !!a.s, incomplete: !!a.i || !a.b, a });
  }
  return { selected, oids, invalid };
}

/** The blob id in the target (or the working tree) of every path the selected anchors name. */
export async function targetBlobsOf(
  store: Store,
  opts: CheckOptions,
  scope: CheckScope,
  selected: readonly Selected[],
): Promise<Map<string, string>> {
  // a path a record names that leaves the repository is looked up nowhere (its anchor is judged alone)
  const paths = [...new Set(selected.map((s) => s.p))].filter(isRepoPath);
  if (opts.worktree) return worktreeBlobs(store.repo, paths);
  if (opts.targetBlobs && !opts.since) return opts.targetBlobs;
  return treeBlobs(store.repo, scope.target!, !scope.pathFilter && paths.length > 2000 ? undefined : paths);
}

/** Where an anchor stands, from the anchor index alone (the fast paths read no record). */
function whereIndexed(a: IndexedAnchor): Loc {
  const m = a.l ? /^(\d+)-(\d+)$/.exec(a.l) : null;
  return m ? { path: a.p, lines: [Number(m[1]), Number(m[2])] } : { path: a.p };
}

/**
 * The anchors answered from the index alone, and those that need judging: the same blob is
 * fresh (the text is where it was), a stale anchor whose file is as it was when judged stale is
 * still stale; nothing to read, nothing to write.
 */
export function answerFromIndex(
  selected: readonly Selected[],
  tblobs: ReadonlyMap<string, string>,
  worktree: boolean,
  targetName: string,
  now: string,
  title: (id: string) => string,
): { results: AnchorResult[]; work: Work[] } {
  const results: AnchorResult[] = [];
  const work: Work[] = [];
  for (const s of selected) {
    if (!s.incomplete && !s.stale && tblobs.get(s.p) === s.b) {
      const at = whereIndexed(s.a);
      results.push({
        id: s.id,
        title: title(s.id),
        index: s.index,
        anchor: { ...at, ...(s.a.y ? { symbol: s.a.y } : {}) },
        verdict: {
          status: 'fresh',
          reason: 'same blob',
          confidence: 1,
          from: at,
          to: at,
          commit: targetName,
          checked: now,
        },
        stale: false,
      });
    } else if (!worktree && s.stale && s.a.sb !== undefined && (tblobs.get(s.p) ?? '') === s.a.sb) {
      const at = whereIndexed(s.a);
      results.push({
        id: s.id,
        title: title(s.id),
        index: s.index,
        anchor: { ...at, ...(s.a.y ? { symbol: s.a.y } : {}) },
        verdict: {
          status: (s.a.v ?? 'changed') as VerdictStatus,
          reason: `${s.a.r ?? 'stale'} (unchanged since the last check)`,
          confidence: 1,
          from: at,
          to: null,
          commit: targetName,
          checked: now,
        },
        stale: true,
      });
    } else work.push({ id: s.id, index: s.index });
  }
  return { results, work };
}

/**
 * Reads the records of the anchors to judge (the whole anchor as the record holds it: where it
 * was made, where a check last saw it, its lines). An anchor that breaks the record limits leaves
 * `work` for `invalid`. `parsed`: the records parsed here, to cache once the check is done.
 */
export async function readWork(
  store: Store,
  work: Work[],
  oids: ReadonlyMap<string, string>,
  invalid: InvalidAnchor[],
  parsed: Array<{ id: string; oid: string; json: string }>,
): Promise<Map<string, MemoryRecord>> {
  const workIds = [...new Set(work.map((w) => w.id))];
  const records = await loadRecords(
    store,
    workIds.map((id) => ({ id, oid: oids.get(id)! })),
    parsed,
  );
  for (let i = work.length - 1; i >= 0; i--) {
    const w = work[i];
    const a = records.get(w.id)?.anchors[w.index];
    const bad = a ? anchorProblem(a) : null;
    if (!bad || !a) continue;
    invalid.push({ id: w.id, index: w.index, path: String(anchorPathNow(a)), problem: bad });
    work.splice(i, 1);
  }
  invalid.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : x.index - y.index));
  return records;
}
