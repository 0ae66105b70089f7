/**
 * Checking anchors against a code commit (or the working tree) and recording the verdicts in one
 * memory commit, in three steps:
 *
 * 1. selecting (src/anchors/check-select.ts): the target, the anchors of the anchor index asked
 *    for, the target blob of every anchored path; the same blob is fresh with no file read;
 * 2. judging (src/anchors/judge.ts, pure, over src/anchors/judge-git.ts's reads): the range
 *    mapped through a line diff of the two blobs, renames and deletions from one whole-tree
 *    `diff-tree -M` per anchor commit, symbols found again by qualified name, then by body hash;
 * 3. recording (src/anchors/check-record.ts): the verdicts applied to their records, one memory
 *    commit (and the post-commit hook's note beside it), only on the default branch's tip.
 */
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import type { MemoryRecord } from '../model/record.js';
import { mark } from '../trace.js';
import { sharedTarget } from './branch.js';
import {
  applyVerdicts,
  confirmedElsewhere,
  noteOnly,
  recordScopeMoves,
  recordVerdicts,
} from './check-record.js';
import {
  answerFromIndex,
  literalScopes,
  readWork,
  resolveScope,
  selectAnchors,
  targetBlobsOf,
  type Work,
} from './check-select.js';
import type { CheckOptions, CheckReport } from './check-types.js';
import { treeBlobs } from './gitio.js';
import { anchorIndex } from './index-cache.js';
import { Judge, type Outcome, verdictOf } from './judge.js';
import { GitJudgeSource } from './judge-git.js';
import { cacheRecord } from './record-cache.js';
import { baseOf, type FullAnchor, isComplete, type Verdict } from './types.js';

export type {
  AnchorResult,
  CheckOptions,
  CheckReport,
  InvalidAnchor,
  StatusChange,
} from './check-types.js';
export { linesDiffer } from './judge.js';

export async function runCheck(store: Store, opts: CheckOptions = {}): Promise<CheckReport> {
  const repo = store.repo;
  if (!repo.workTree && opts.worktree)
    throw err('E_INVALID_ARG', '--worktree needs a work tree', 'run inside a checkout');
  const now = (opts.now ?? new Date()).toISOString();
  const tip = await store.tip();
  // 1. select
  const scope = await resolveScope(store, opts);
  const { target, targetName } = scope;
  const scopes = await literalScopes(store, tip, scope, opts);
  const scopeMoves = scopes?.moved ?? [];
  // only the anchors of the paths asked for are parsed from the index
  const idx = await anchorIndex(store, tip, scope.pathFilter);
  mark('check: index read');
  const { selected, oids, invalid } = selectAnchors(idx.entries, opts.ids, scope.pathFilter);
  // anchors of files a commit changed (targetBlobs: the post-commit hook's) are judged and their
  // verdicts mostly written: the writers, and the config read the default branch needs, start
  // now, by one process start, beside the reading below
  if (selected.length && opts.targetBlobs && target && !opts.dryRun && !opts.worktree) store.prepareWrite();
  if (!selected.length) {
    const r = await recordScopeMoves(store, opts, tip, target, targetName, scopeMoves);
    return {
      target: targetName,
      memoryCommit: r.memoryCommit,
      recorded: r.memoryCommit !== tip,
      checked: 0,
      results: [],
      changes: [],
      written: r.written,
      invalid,
      ...(r.branch ? { branch: r.branch } : {}),
      ...(scopes ? { scopes } : {}),
    };
  }
  // the shared record holds the anchors as last confirmed on the default branch: a check of
  // another commit reports its verdicts and moves or marks nothing shared
  let branch: CheckReport['branch'];
  if (target && !opts.dryRun) {
    const st = await sharedTarget(store, target);
    branch = { name: st.branch.name, shared: st.shared };
    mark('check: default branch');
  }
  const record = !opts.dryRun && !opts.worktree && branch?.shared !== false;
  const tblobs = await targetBlobsOf(store, opts, scope, selected);
  mark('check: target blobs');
  // titles of fast-path results come from the catalog; skipped for large --all runs (not printed)
  const cat = opts.titles ? await store.catalogAt(tip) : undefined;
  const title = (id: string) => cat?.entry(id)?.title ?? '';
  const { results, work } = answerFromIndex(selected, tblobs, !!opts.worktree, targetName, now, title);

  if (work.length) opts.budget?.(0, work.length);
  // anchors to judge mostly end in a write (a record moved or stale, a note): the writer's git
  // processes start now, their start-up beside the reading and judging instead of after it
  if (work.length && (record || (branch && opts.note))) store.prepareWrite();
  // the anchors that need reading: their records, parsed here and cached as JSON at the end,
  // except those this check rewrites
  const parsed: Array<{ id: string; oid: string; json: string }> = [];
  const records = await readWork(store, work, oids, invalid, parsed);
  mark('check: records read');

  // 2. judge
  const src = new GitJudgeSource(store, target, opts.worktree ? repo.workTree! : null, tblobs);
  // the record may be newer than the target: an anchor confirmed at a commit the target does not
  // contain is judged and reported, never recorded (it would move the record back)
  const newerP = record && target ? confirmedElsewhere(store, target, work, records) : undefined;
  newerP?.catch(() => {});
  const outcomes = await judgeWork(src, work, records, opts);
  mark('check: judged');
  const newer = (await newerP) ?? new Set<string>();

  // 3. apply to records (pure), collect results; record
  const applied = applyVerdicts(records, outcomes, newer, targetName, now, !!opts.worktree, results);
  const { updated, changes } = applied;
  let memoryCommit: string | null = tip;
  let recorded = false;
  if (!record && branch && opts.note) {
    // another branch: the commit's verdicts go into its note only
    opts.budget?.(work.length, work.length);
    await noteOnly(store, opts.note, results);
    mark('check: noted');
  }
  if ((updated.size || scopeMoves.length) && record) {
    opts.budget?.(work.length, work.length);
    ({ memoryCommit, recorded } = await recordVerdicts(store, opts, {
      tip,
      target,
      targetName,
      applied,
      scopeMoves,
      records,
      oids,
      idx,
    }));
  }
  for (const p of parsed) if (!(recorded && updated.has(p.id))) cacheRecord(store, p.oid, p.json);
  return {
    target: targetName,
    memoryCommit,
    recorded,
    checked: results.length,
    results,
    changes,
    written: recorded ? updated.size : 0,
    ...(branch ? { branch } : {}),
    ...(newer.size ? { newer: newer.size } : {}),
    invalid,
    ...(scopes ? { scopes } : {}),
  };
}

/**
 * Judges the anchors of `work`: the blobs the verdicts compare (anchored and current) read in one
 * pipelined batch first, and git working out beside the judging what it asks later (the renames
 * since each base commit, for anchors whose file changed). `opts.budget` may stop it before any.
 */
async function judgeWork(
  src: GitJudgeSource,
  work: readonly Work[],
  records: ReadonlyMap<string, MemoryRecord>,
  opts: CheckOptions,
): Promise<Map<string, Map<number, Outcome>>> {
  const wanted: string[] = [];
  const bases = new Set<string>();
  for (const w of work) {
    const a = records.get(w.id)?.anchors[w.index];
    const b = a && isComplete(a) ? baseOf(a as FullAnchor) : null;
    if (!b) continue;
    wanted.push(b.blob);
    const t = src.tblobs.get(b.path);
    if (t && !opts.worktree) wanted.push(t);
    if (t !== b.blob && b.commit) bases.add(b.commit);
  }
  src.startDiffs(bases);
  await src.prefetch(wanted);
  const judge = new Judge(src);
  const outcomes = new Map<string, Map<number, Outcome>>();
  for (const [i, w] of work.entries()) {
    opts.budget?.(i, work.length);
    const rec = records.get(w.id);
    const a = rec?.anchors[w.index];
    if (!rec || !a) continue;
    const o = await judge.judge(a);
    if (!opts.worktree && isComplete(a)) {
      const b = baseOf(a as FullAnchor);
      if (b) o.blob = src.tblobs.get(b.path) ?? '';
    }
    if (!outcomes.has(w.id)) outcomes.set(w.id, new Map());
    outcomes.get(w.id)!.set(w.index, o);
  }
  return outcomes;
}

/**
 * Verdicts of complete anchors against a code commit, each judged from its
 * base (`current` when set, else where it was made). Records nothing: for
 * callers that place anchors themselves (`git mem ci` judges them from the
 * merge base).
 */
export async function judgeAnchors(
  store: Store,
  target: string,
  anchors: readonly FullAnchor[],
  now = new Date(),
): Promise<Verdict[]> {
  const bases = anchors.map((a) => baseOf(a));
  const paths = [...new Set(bases.flatMap((b) => (b ? [b.path] : [])))];
  const tblobs = await treeBlobs(store.repo, target, paths);
  const src = new GitJudgeSource(store, target, null, tblobs);
  const wanted: string[] = [];
  for (const b of bases) {
    if (!b) continue;
    wanted.push(b.blob);
    const t = tblobs.get(b.path);
    if (t) wanted.push(t);
  }
  await src.prefetch(wanted);
  const judge = new Judge(src);
  const at = now.toISOString();
  const out: Verdict[] = [];
  for (const a of anchors) out.push(verdictOf(await judge.judge(a), a, target, at));
  return out;
}
