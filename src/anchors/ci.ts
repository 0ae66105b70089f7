/**
 * `git mem ci`: the memories whose anchors a commit range (a pull request)
 * touches, checked against the head. Reports only: CI never writes to
 * refs/memory (a person or the post-commit hook records verdicts).
 */
import { err } from '../errors.js';
import { git } from '../gitstore/git.js';
import type { Store } from '../gitstore/store.js';
import { runCheck } from './check.js';
import type { CiItem, CiReport } from './ci-format.js';
import { shouldFail } from './ci-format.js';
import { revParse } from './gitio.js';

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
  const touched = r.stdout.toString('utf8').split('\0').filter(Boolean);
  const failOn = opts.failOn ?? 'stale';
  if (!touched.length || !(await store.tip())) return { base, head, items: [], failOn, failed: false };
  const rep = await runCheck(store, { target: head, paths: touched, dryRun: true, titles: true });
  const cat = await store.catalog();
  const items: CiItem[] = rep.results.map((x) => ({
    id: x.id,
    title: x.title,
    type: cat.entries.get(x.id)?.type,
    anchor: x.index,
    status: x.verdict.status,
    reason: x.verdict.reason,
    confidence: x.verdict.confidence,
    from: x.verdict.from,
    to: x.verdict.to,
    stale: x.stale,
  }));
  return { base, head, items, failOn, failed: shouldFail(items, failOn) };
}
