/**
 * `git mem ci`: the memories whose anchors a commit range (a pull request)
 * touches, checked against the head. Reports only: CI never writes to
 * refs/memory (a person or the post-commit hook records verdicts).
 *
 * What a pull request does to an anchor is judged from where the anchor
 * stands at the merge base of --base and --head, whatever the record says:
 * the record follows the default branch and may have been confirmed at
 * another commit (a later one of the base branch; or, written by an older
 * git-mem, a commit of the feature branch itself). So, two steps:
 *
 *   1. every anchor is checked against the merge base (nothing recorded):
 *      where its text is there, or that it was stale already (then the pull
 *      request did not do it, and it is not reported);
 *   2. the anchors whose file at the merge base the range changed are judged
 *      from that place against the head.
 */
import { err } from '../errors.js';
import { git } from '../gitstore/git.js';
import type { Store } from '../gitstore/store.js';
import { judgeAnchors, runCheck } from './check.js';
import type { CiItem, CiReport } from './ci-format.js';
import { shouldFail } from './ci-format.js';
import { revParse, treeBlobs } from './gitio.js';
import { baseOf, type FullAnchor, isComplete, STALE_VERDICTS } from './types.js';

export interface CiOptions {
  base: string;
  head?: string;
  failOn?: CiReport['failOn'];
}

export async function runCi(store: Store, opts: CiOptions): Promise<CiReport> {
  const repo = store.repo;
  const base = await revParse(repo, opts.base);
  if (!base)
    throw err(
      'E_REV',
      `cannot resolve --base "${opts.base}"`,
      'fetch the base branch first (actions/checkout with fetch-depth: 0)',
    );
  const headRev = opts.head ?? 'HEAD';
  const head = await revParse(repo, headRev);
  if (!head) throw err('E_REV', `cannot resolve --head "${headRev}"`, 'pass a commit, branch or tag');
  // the files the range changed, from the merge base like a pull request diff (both sides of renames)
  const mb = await git(['merge-base', base, head], { cwd: repo.cwd, env: repo.env, allowFail: true });
  const from = mb.code === 0 ? mb.stdout.toString().trim() : base;
  const r = await git(['diff-tree', '-r', '-z', '--name-only', '--no-renames', from, head], {
    cwd: repo.cwd,
    env: repo.env,
  });
  const touched = new Set(r.stdout.toString('utf8').split('\0').filter(Boolean));
  const failOn = opts.failOn ?? 'stale';
  const tip = await store.tip();
  if (!touched.size || !tip) return { base, head, items: [], failOn, failed: false };

  // 1. every anchor at the merge base
  const atBase = await runCheck(store, { target: from, dryRun: true, titles: true });
  // an anchor stale at the merge base already: the pull request did not do it
  const cands = atBase.results.filter((x) => !x.stale);
  const records = new Map<string, Awaited<ReturnType<Store['readRecord']>>>();
  const anchors: FullAnchor[] = [];
  const meta: Array<{ id: string; title: string; index: number }> = [];
  const placed: Array<{ x: (typeof cands)[number]; a: FullAnchor }> = [];
  for (const x of cands) {
    let rec = records.get(x.id);
    if (!rec) {
      rec = await store.readRecord(tip, x.id);
      records.set(x.id, rec);
    }
    const a = rec.anchors[x.index];
    if (!a || !isComplete(a)) continue;
    // where the text is at the merge base: the check's new place, else where the record has it
    const at = x.verdict.to ?? baseOf(a as FullAnchor)!;
    if (!touched.has(at.path)) continue;
    placed.push({ x, a: a as FullAnchor });
  }
  // anchors that moved between the record's commit and the merge base start from their place there
  const mbBlobs = await treeBlobs(repo, from, [
    ...new Set(placed.map((p) => p.x.verdict.to?.path ?? p.a.path)),
  ]);
  for (const { x, a } of placed) {
    const b = baseOf(a)!;
    const to = x.verdict.to;
    const blob = to ? mbBlobs.get(to.path) : undefined;
    const anchor: FullAnchor =
      to && blob && (blob !== b.blob || to.path !== b.path) && x.verdict.status !== 'ambiguous'
        ? { ...a, current: { path: to.path, ...(to.lines ? { lines: to.lines } : {}), blob, commit: from } }
        : a;
    anchors.push(anchor);
    meta.push({ id: x.id, title: x.title || records.get(x.id)!.title, index: x.index });
  }

  // 2. from there against the head
  const verdicts = await judgeAnchors(store, head, anchors);
  const cat = await store.catalog();
  const items: CiItem[] = verdicts.map((v, i) => ({
    id: meta[i].id,
    title: meta[i].title,
    type: cat.entries.get(meta[i].id)?.type,
    anchor: meta[i].index,
    status: v.status,
    reason: v.reason,
    confidence: v.confidence,
    from: v.from,
    to: v.to,
    stale: STALE_VERDICTS.has(v.status),
  }));
  const invalid = atBase.invalid.map((x) => ({
    id: x.id,
    anchor: x.index,
    path: x.path,
    problem: x.problem,
  }));
  return { base, head, items, failOn, failed: shouldFail(items, failOn), invalid };
}
