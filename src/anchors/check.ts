/**
 * Checking anchors against a code commit (or the working tree) and recording
 * the verdicts in one memory commit.
 *
 * Cheap when nothing changed: the blob at the anchor's path in the target is
 * compared with the anchored blob (one `ls-tree`, no file read). Precise when
 * something did: the range is mapped through a line diff of the two blobs
 * (read through `cat-file --batch`), the text searched for where the diff
 * touched it, renames and deletions taken from one whole-tree `diff-tree -M`
 * per anchor commit (shared by every anchor made at that commit), symbols
 * found again by qualified name, then by body hash.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import type { NoteAdd, Store } from '../gitstore/store.js';
import { applyPatch } from '../model/patch.js';
import { isRepoPath } from '../model/paths.js';
import {
  type Anchor,
  anchorPathNow,
  type MemoryRecord,
  recordPath,
  serializeRecord,
} from '../model/record.js';
import { anchorPathProblem, anchorProblem } from '../model/schema.js';
import { mark } from '../trace.js';
import { sharedTarget } from './branch.js';
import { diffLines } from './diff.js';
import {
  readBlobs,
  renameDiff,
  revParseVia,
  type TreeChange,
  touchedPaths,
  treeBlobs,
  worktreeBlobs,
} from './gitio.js';
import { anchorIndex, type IndexedAnchor, saveIndex } from './index-cache.js';
import { AnchorPreparer, anchorBlobPath, checkedBlobPath } from './prepare.js';
import { cacheRecord, loadRecords } from './record-cache.js';
import {
  ambiguityConfidence,
  contextScore,
  distinctiveContext,
  findCandidates,
  relocate,
} from './relocate.js';
import { judgeScopes, moveScopes, putScopeMoves, type ScopeReport } from './scopes.js';
import { extractSymbols, findSymbol, languageOf, type SymbolDef, sameLanguageFamily } from './symbols.js';
import {
  blobId,
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
  isOid,
  type Loc,
  locString,
  STALE_REASONS_KEY,
  STALE_VERDICTS,
  staleReasonsField,
  staleReasonsOfAnchors,
  staleReasonText,
  type Verdict,
  type VerdictStatus,
} from './types.js';

/** Where an anchor stands, from the anchor index alone (the fast paths read no record). */
function whereIndexed(a: IndexedAnchor): Loc {
  const m = a.l ? /^(\d+)-(\d+)$/.exec(a.l) : null;
  return m ? { path: a.p, lines: [Number(m[1]), Number(m[2])] } : { path: a.p };
}

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

const CROSS_FILE_CAP = 300;

interface Work {
  id: string;
  index: number;
}

/** The outcome for one anchor before it is turned into a Verdict. */
interface Outcome {
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

export async function runCheck(store: Store, opts: CheckOptions = {}): Promise<CheckReport> {
  const repo = store.repo;
  if (!repo.workTree && opts.worktree)
    throw err('E_INVALID_ARG', '--worktree needs a work tree', 'run inside a checkout');
  const now = (opts.now ?? new Date()).toISOString();
  const tip = await store.tip();
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
  const targetName = target ?? 'worktree';
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
  // literal scopes: followed through the renames since scopeFrom; those that match no file reported
  let scopes: ScopeReport | undefined;
  if (tip && target && (scopeFrom || !opts.paths)) {
    scopes = await judgeScopes(store, tip, target, scopeFrom);
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
    if (!scopes.moved.length && !scopes.lost.length) scopes = undefined;
  }
  const scopeMoves = scopes?.moved ?? [];
  // only the anchors of the paths asked for are parsed from the index
  const idx = await anchorIndex(store, tip, pathFilter);
  mark('check: index read');
  const idFilter = opts.ids ? new Set(opts.ids) : undefined;
  // titles of fast-path results come from the catalog; skipped for large --all runs (not printed)
  let cat: Awaited<ReturnType<Store['catalogAt']>> | undefined;
  const title = (id: string) => cat?.entry(id)?.title ?? '';

  // 1. select anchors and look up the target blob of every anchored path
  const selected: Array<{
    id: string;
    index: number;
    p: string;
    b: string | null;
    stale: boolean;
    incomplete: boolean;
    a: IndexedAnchor;
  }> = [];
  const oids = new Map<string, string>();
  const invalid: InvalidAnchor[] = [];
  for (const a of idx.entries) {
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
  if (!selected.length) {
    // no anchor to judge: renamed scopes are still recorded, on the default branch
    let memoryCommit = tip;
    let written = 0;
    let branch: CheckReport['branch'];
    if (scopeMoves.length && target && !opts.dryRun) {
      const st = await sharedTarget(store, target);
      branch = { name: st.branch.name, shared: st.shared };
      if (st.shared) {
        const res = await store.write(
          async (tx) => {
            const n = await putScopeMoves(tx, scopeMoves, new Map());
            if (!n) return null;
            return {
              message: `${opts.label ?? 'mem: check'} ${targetName.slice(0, 12)}: ${n} record${n === 1 ? '' : 's'} updated (0 went stale, ${n} scope${n === 1 ? '' : 's'} followed a rename)`,
              value: n,
            };
          },
          { allowSecret: opts.allowSecret },
        );
        memoryCommit = res.commit;
        written = res.value ?? 0;
      }
    }
    return {
      target: targetName,
      memoryCommit,
      recorded: memoryCommit !== tip,
      checked: 0,
      results: [],
      changes: [],
      written,
      invalid,
      ...(branch ? { branch } : {}),
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
  // a path a record names that leaves the repository is looked up nowhere (its anchor is judged alone)
  const paths = [...new Set(selected.map((s) => s.p))].filter(isRepoPath);
  const tblobs = opts.worktree
    ? await worktreeBlobs(repo, paths)
    : opts.targetBlobs && !opts.since
      ? opts.targetBlobs
      : await treeBlobs(repo, target!, !pathFilter && paths.length > 2000 ? undefined : paths);

  mark('check: target blobs');
  if (opts.titles) cat = await store.catalogAt(tip);
  const results: AnchorResult[] = [];
  const work: Work[] = [];
  for (const s of selected) {
    if (!s.incomplete && !s.stale && tblobs.get(s.p) === s.b) {
      // fast path: same blob, the text is where it was; nothing to read, nothing to write
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
    } else if (!opts.worktree && s.stale && s.a.sb !== undefined && (tblobs.get(s.p) ?? '') === s.a.sb) {
      // stale and the file is as it was when judged stale: still stale, nothing to read or write
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

  if (work.length) opts.budget?.(0, work.length);
  // anchors to judge mostly end in a write (a record moved or stale, a note): the writer's git
  // processes start now, their start-up beside the reading and judging instead of after it
  if (work.length && (record || (branch && opts.note))) store.prepareWrite();
  // 2. the anchors that need reading: load their records
  const workIds = [...new Set(work.map((w) => w.id))];
  // records parsed here are cached as JSON at the end, except those this check rewrites
  const parsed: Array<{ id: string; oid: string; json: string }> = [];
  const records = await loadRecords(
    store,
    workIds.map((id) => ({ id, oid: oids.get(id)! })),
    parsed,
  );

  mark('check: records read');
  // the whole anchor as the record holds it (where it was made, where a check last saw it, its lines)
  for (let i = work.length - 1; i >= 0; i--) {
    const w = work[i];
    const a = records.get(w.id)?.anchors[w.index];
    const bad = a ? anchorProblem(a) : null;
    if (!bad || !a) continue;
    invalid.push({ id: w.id, index: w.index, path: String(anchorPathNow(a)), problem: bad });
    work.splice(i, 1);
  }
  invalid.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : x.index - y.index));
  const ctx = new CheckContext(store, target, opts.worktree ? repo.workTree! : null, tblobs);
  // the blobs the verdicts compare (anchored and current), read in one pipelined batch
  const wanted: string[] = [];
  const bases = new Set<string>();
  for (const w of work) {
    const a = records.get(w.id)?.anchors[w.index];
    const b = a && isComplete(a) ? baseOf(a as FullAnchor) : null;
    if (!b) continue;
    wanted.push(b.blob);
    const t = tblobs.get(b.path);
    if (t && !opts.worktree) wanted.push(t);
    if (t !== b.blob && b.commit) bases.add(b.commit);
  }
  // git works out, beside the reading and judging, what judging asks of it later: the renames
  // since each base commit (for anchors whose file changed) and which bases the target contains
  ctx.startDiffs(bases);
  const newerP = record && target ? confirmedElsewhere(store, target, work, records) : undefined;
  newerP?.catch(() => {});
  await ctx.prefetch(wanted);
  const outcomes = new Map<string, Map<number, Outcome>>();
  for (const [i, w] of work.entries()) {
    opts.budget?.(i, work.length);
    const rec = records.get(w.id);
    const a = rec?.anchors[w.index];
    if (!rec || !a) continue;
    const o = await ctx.judge(a);
    if (!opts.worktree && isComplete(a)) {
      const b = baseOf(a as FullAnchor);
      if (b) o.blob = tblobs.get(b.path) ?? '';
    }
    if (!outcomes.has(w.id)) outcomes.set(w.id, new Map());
    outcomes.get(w.id)!.set(w.index, o);
  }

  mark('check: judged');
  // the record may be newer than the target: an anchor confirmed at a commit the target does not
  // contain is judged and reported, never recorded (it would move the record back)
  const newer = (await newerP) ?? new Set<string>();
  // 3. apply to records (pure), collect results
  const updated = new Map<string, MemoryRecord>();
  const changes: StatusChange[] = [];
  const newBlobs = new Set<string>();
  // where the moved anchors' code was kept in the ref: text already there is no new exposure to
  // the secret scan of the write (Store.assertNoNewSecrets)
  const fromPaths = new Set<string>();
  for (const [id, byIndex] of outcomes) {
    const rec = records.get(id)!;
    const next = applyOutcomes(rec, byIndex, targetName, now, !opts.worktree);
    const kept = newer.size ? new Map([...byIndex].filter(([i]) => !newer.has(`${id}:${i}`))) : byIndex;
    const written = kept === byIndex ? next : applyOutcomes(rec, kept, targetName, now, !opts.worktree);
    next.record.anchors.forEach((a, i) => {
      const o = byIndex.get(i);
      if (!o) return;
      const fa = a as FullAnchor;
      results.push({
        id,
        title: rec.title,
        index: i,
        anchor: fa,
        verdict: verdictOf(o, rec.anchors[i] as FullAnchor, targetName, now),
        stale: STALE_VERDICTS.has(o.status),
        news: next.newVerdicts.has(i),
        ...(newer.has(`${id}:${i}`) ? { newer: true } : {}),
      });
      if (o.completed?.blob) newBlobs.add(o.completed.blob);
      if (o.current?.blob && !opts.worktree) newBlobs.add(o.current.blob);
      const was = rec.anchors[i] as FullAnchor;
      if (was.blob) {
        fromPaths.add(anchorBlobPath(was.blob));
        if (was.commit) fromPaths.add(checkedBlobPath(was.commit, was.blob));
      }
      // where an earlier check moved it: kept under the commit that check judged
      if (was.current?.blob) {
        fromPaths.add(anchorBlobPath(was.current.blob));
        fromPaths.add(checkedBlobPath(was.current.commit, was.current.blob));
      }
    });
    if (written.changed) {
      updated.set(id, written.record);
      if (written.record.status !== rec.status) {
        changes.push({
          id,
          title: rec.title,
          from: rec.status,
          to: written.record.status,
          reasons: staleReasonsOfAnchors(written.record.anchors).map(staleReasonText),
        });
      }
    }
  }
  results.sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : x.index - y.index));
  // a record written for its anchors carries its renamed scopes in the same write
  if (record)
    for (const [id, rec] of updated) {
      const moved = moveScopes(rec, scopeMoves);
      if (moved) updated.set(id, moved);
    }
  // records changed for their scopes alone: the index cache is not told about them
  let scopeOnly = 0;

  // 4. record
  let memoryCommit: string | null = tip;
  let recorded = false;
  if (!record && branch && opts.note) {
    // another branch: the commit's verdicts go into its note only
    opts.budget?.(work.length, work.length);
    const n = await opts.note(results);
    if (n) await store.addNote(n);
    mark('check: noted');
  }
  if ((updated.size || scopeMoves.length) && record) {
    opts.budget?.(work.length, work.length);
    const label = opts.label ?? 'mem: check';
    // records, counted as the post-commit hook and `check` count them: those that went stale with
    // this check (not every anchor found stale, nor memories stale already), and those whose
    // anchors moved
    const staleN = changes.filter((c) => c.to === 'stale').length;
    const movedN = new Set(
      results
        .filter((r) => updated.has(r.id) && (r.verdict.status === 'moved' || r.verdict.status === 'renamed'))
        .map((r) => r.id),
    ).size;
    // each record is serialised once: for the write and for the index entry of its new blob
    const texts = new Map<string, string>();
    const res = await store.write(
      async (tx) => {
        let n = 0;
        for (const [id, rec] of updated) {
          let merged: MemoryRecord | null = rec;
          if (tx.base !== tip) {
            // lost a race: re-apply onto the record as it is now (skip it if it was removed meanwhile)
            let cur: MemoryRecord;
            try {
              cur = await tx.get(id);
            } catch {
              continue;
            }
            merged = rebase(cur, rec);
          }
          if (!merged) continue;
          let text = merged === rec ? texts.get(id) : undefined;
          if (text === undefined) {
            text = serializeRecord(merged);
            if (merged === rec) texts.set(id, text);
          }
          tx.put(recordPath(id), text);
          n++;
        }
        scopeOnly = await putScopeMoves(tx, scopeMoves, updated);
        n += scopeOnly;
        for (const b of newBlobs) tx.putOid(target ? checkedBlobPath(target, b) : anchorBlobPath(b), b);
        for (const p of fromPaths) tx.seen.add(p);
        if (!n) return null;
        return {
          message: `${label} ${targetName.slice(0, 12)}: ${n} record${n === 1 ? '' : 's'} updated (${staleN} went stale, ${movedN} moved)`,
          value: n,
        };
      },
      { allowSecret: opts.allowSecret, ...(opts.note ? { note: () => opts.note!(results) } : {}) },
    );
    mark('check: recorded');
    memoryCommit = res.commit;
    recorded = res.commit !== tip;
    if (recorded && res.attempts === 1 && res.commit && !scopeOnly) {
      // keep the anchor index warm: we know exactly what changed
      const changed = new Map<
        string,
        { before: MemoryRecord; beforeOid: string; after: MemoryRecord; afterOid: string }
      >();
      for (const [id, rec] of updated) {
        const oid = blobId(texts.get(id) ?? serializeRecord(rec));
        changed.set(id, { before: records.get(id)!, beforeOid: oids.get(id)!, after: rec, afterOid: oid });
      }
      saveIndex(store, res.commit, idx, changed);
      mark('check: index saved');
    }
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
 * The anchors (`id:index`) of `work` whose base — where the record last
 * confirmed them — is a commit `target` does not contain: one ancestry
 * question per distinct commit (anchors share a few). An anchor without a
 * commit (made on uncommitted code) is taken as contained.
 */
async function confirmedElsewhere(
  store: Store,
  target: string,
  work: readonly Work[],
  records: ReadonlyMap<string, MemoryRecord>,
): Promise<Set<string>> {
  const byCommit = new Map<string, string[]>();
  for (const w of work) {
    const a = records.get(w.id)?.anchors[w.index];
    const c = a && isComplete(a) ? baseOf(a as FullAnchor)?.commit : null;
    if (!c || c === target) continue;
    const keys = byCommit.get(c) ?? [];
    keys.push(`${w.id}:${w.index}`);
    byCommit.set(c, keys);
  }
  const out = new Set<string>();
  const answers = await Promise.all([...byCommit.keys()].map((c) => store.isAncestor(c, target)));
  [...byCommit.values()].forEach((keys, i) => {
    if (!answers[i]) for (const k of keys) out.add(k);
  });
  return out;
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
  const ctx = new CheckContext(store, target, null, tblobs);
  const wanted: string[] = [];
  for (const b of bases) {
    if (!b) continue;
    wanted.push(b.blob);
    const t = tblobs.get(b.path);
    if (t) wanted.push(t);
  }
  await ctx.prefetch(wanted);
  const at = now.toISOString();
  const out: Verdict[] = [];
  for (const a of anchors) out.push(verdictOf(await ctx.judge(a), a, target, at));
  return out;
}

/** Re-applies our anchor updates onto a record that changed meanwhile (lost race); null when they no longer fit. */
function rebase(cur: MemoryRecord, ours: MemoryRecord): MemoryRecord | null {
  if (cur.anchors.length !== ours.anchors.length) return null;
  for (let i = 0; i < cur.anchors.length; i++) {
    const a = cur.anchors[i];
    const b = ours.anchors[i];
    if (a.path !== b.path || (a.hash && a.hash !== b.hash) || (a.blob && a.blob !== b.blob)) return null;
  }
  const out = structuredClone(cur);
  applyPatch(
    out,
    {
      anchors: ours.anchors,
      status: ours.status,
      extra: { [STALE_REASONS_KEY]: ours.extra[STALE_REASONS_KEY] },
    },
    new Date().toISOString(),
  );
  return out;
}

function verdictOf(o: Outcome, before: FullAnchor, commit: string, now: string): Verdict {
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

function loc(path: string, lines?: [number, number]): Loc {
  return lines ? { path, lines: [lines[0], lines[1]] } : { path };
}

const round = (x: number) => Math.round(x * 100) / 100;

/**
 * Writes outcomes into a copy of the record: completed anchors, new current
 * locations, verdicts (only when they change what a reader should know), and
 * the status: stale while any anchor is stale, active again once all are fine.
 */
function applyOutcomes(
  rec: MemoryRecord,
  byIndex: Map<number, Outcome>,
  commit: string,
  now: string,
  persistLocation: boolean,
): { record: MemoryRecord; changed: boolean; newVerdicts: Set<number> } {
  const anchors: Anchor[] = rec.anchors.map((a) => ({ ...a }));
  const newVerdicts = new Set<number>();
  let touched = false;
  for (const [i, o] of byIndex) {
    const before = rec.anchors[i] as FullAnchor;
    let a = anchors[i] as FullAnchor;
    if (o.completed) {
      a = { ...o.completed };
      anchors[i] = a;
      touched = true;
    }
    if (o.current && persistLocation) {
      const prev = before.current;
      if (
        !prev ||
        prev.path !== o.current.path ||
        JSON.stringify(prev.lines) !== JSON.stringify(o.current.lines) ||
        prev.blob !== o.current.blob
      ) {
        a.current = o.current;
        touched = true;
      }
    }
    const prevV = before.verdict;
    const nowStale = STALE_VERDICTS.has(o.status);
    const prevStale = !!prevV && STALE_VERDICTS.has(prevV.status);
    const locChanged = !!o.current && a.current === o.current;
    const needVerdict =
      locChanged ||
      !!o.completed ||
      (nowStale &&
        (!prevV ||
          prevV.status !== o.status ||
          prevV.reason !== o.reason ||
          JSON.stringify(prevV.to) !== JSON.stringify(o.to))) ||
      (!nowStale && prevStale) ||
      (o.status === 'ambiguous' &&
        (prevV?.status !== 'ambiguous' || JSON.stringify(prevV.candidates) !== JSON.stringify(o.candidates)));
    if (needVerdict) {
      newVerdicts.add(i);
      a.verdict = verdictOf(o, before, commit, now);
      touched = true;
    }
  }
  if (!touched) return { record: rec, changed: false, newVerdicts };
  const next = structuredClone(rec);
  const reasons = staleReasonsOfAnchors(anchors);
  let status = rec.status;
  let extra: Record<string, unknown> = {};
  if (reasons.length) {
    if (rec.status === 'active') status = 'stale';
    if (status === 'stale') extra = staleReasonsField(reasons);
  } else if (rec.status === 'stale' && rec.extra[STALE_REASONS_KEY] !== undefined) {
    status = 'active';
    extra = staleReasonsField(undefined);
  }
  applyPatch(next, { anchors, status, extra }, now);
  return { record: next, changed: true, newVerdicts };
}

/** Per-run state: target blobs, cached blob contents, one rename diff per anchor commit. */
class CheckContext {
  private texts = new Map<string, string | null>();
  private contents = new Map<string, string[] | null>();
  private squeezed = new Map<string, Buffer | null>();
  private diffs = new Map<string, Promise<TreeChange[]>>();
  private symbolCache = new Map<string, Promise<SymbolDef[]>>();
  private preparer?: AnchorPreparer;

  constructor(
    readonly store: Store,
    readonly target: string | null,
    readonly worktreeRoot: string | null,
    readonly tblobs: Map<string, string>,
  ) {}

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

  private blobLines(oid: string): Promise<string[] | null> {
    return this.lines(oid, oid);
  }

  /** Lines of a file in the target (working tree files are read from disk). */
  private targetLines(path: string, oid: string | undefined): Promise<string[] | null> {
    if (this.worktreeRoot) return this.lines(`wt:${path}`, undefined);
    return oid ? this.blobLines(oid) : Promise.resolve(null);
  }

  /**
   * Whether a file of the target can hold a text at all: every match, exact or re-wrapped, differs
   * from it in whitespace only, so its whitespace-free form is in the file's. One substring search
   * per file instead of normalising every line of every file a history changed.
   */
  private async mayHold(path: string, oid: string | undefined, squeezed: Buffer): Promise<boolean> {
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
    for (const c of commits) this.diff(c).catch(() => {});
  }

  private diff(commit: string | null): Promise<TreeChange[]> {
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

  private symbols(lang: string, key: string, lines: readonly string[]): Promise<SymbolDef[]> {
    let p = this.symbolCache.get(key);
    if (!p) {
      p = extractSymbols(lang, lines.join('\n')).catch(() => []);
      this.symbolCache.set(key, p);
    }
    return p;
  }

  private current(
    path: string,
    lines: [number, number] | undefined,
    blob: string | undefined,
  ): Current | undefined {
    if (!this.target || !blob) return undefined;
    return { path, ...(lines ? { lines } : {}), blob, commit: this.target };
  }

  async judge(raw: Anchor): Promise<Outcome> {
    if (!isComplete(raw)) {
      // an anchor without its blob and hash (imported as given, or a teammate's) is completed from
      // the checked commit's committed content only, never from the working tree or a revision
      // the record names: what it cannot be completed from is reported, and nothing is read
      if (!this.target)
        return {
          status: 'changed',
          reason: 'the anchor is incomplete (no blob or hash): a check of a commit completes it',
          confidence: 0.5,
          to: null,
        };
      this.preparer ??= new AnchorPreparer(this.store, {
        cwd: this.store.repo.workTree ?? this.store.repo.cwd,
        repoRelative: true,
        committed: this.target,
      });
      try {
        const done = await this.preparer.complete(raw);
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
    const tb = this.tblobs.get(base.path);
    if (tb !== undefined && tb === base.blob) {
      return {
        status: 'fresh',
        reason: 'same blob (code restored)',
        confidence: 1,
        to: loc(base.path, base.lines),
      };
    }
    const blobLines = await this.blobLines(base.blob);
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
      const newLines = await this.targetLines(base.path, tb);
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
    const changes = await this.diff(base.commit);
    const ren = changes.find((c) => c.status === 'R' && c.oldPath === base.path);
    if (ren) {
      const newOid = this.worktreeRoot ? undefined : ren.newOid;
      if (newOid && newOid === base.blob) {
        return {
          status: 'renamed',
          reason: `file renamed to ${ren.newPath} (identical)`,
          confidence: 1,
          to: loc(ren.newPath, base.lines),
          current: this.current(ren.newPath, base.lines, newOid),
        };
      }
      const newLines = await this.targetLines(ren.newPath, newOid);
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
      const defs = await this.symbols(lang, newOid ?? `wt:${newPath}`, newLines);
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
      const changes = await this.diff(base.commit);
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
    const changes = await this.diff(base.commit);
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
    if (!this.worktreeRoot)
      await this.prefetch(cands.map((c) => c.newOid).filter((o) => o && !/^0+$/.test(o)));
    const hits: Array<{
      path: string;
      oid: string | undefined;
      f: { start: number; end: number };
      ctx: number;
      hit: number;
      added: boolean;
    }> = [];
    for (const c of cands) {
      const newOid = this.worktreeRoot ? undefined : c.newOid;
      const newLang = sym && lang ? languageOf(c.newPath) : undefined;
      if (sym && lang && newLang && sameLanguageFamily(lang, newLang)) {
        const lines = await this.targetLines(c.newPath, newOid);
        if (!lines) continue;
        const defs = await this.symbols(newLang, newOid ?? `wt:${c.newPath}`, lines);
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
      if (squeezed.length && !(await this.mayHold(c.newPath, newOid, squeezed))) continue;
      const lines = await this.targetLines(c.newPath, newOid);
      if (!lines) continue;
      const indent = !!(indentLanguage(base.path) || indentLanguage(c.newPath));
      const raw = rawSyntax(base.path) ?? rawSyntax(c.newPath);
      let found = findCandidates(lines, needle, a.hash!, a.wshash, indent, raw);
      if (!found.length) continue;
      if (c.status !== 'A' && c.oldOid && !/^0+$/.test(c.oldOid)) {
        // the text must be new in that file, not a copy that was already there
        const old = await this.blobLines(c.oldOid);
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
