/**
 * `git mem hook post-commit`: after each commit, check only the anchors of the
 * files that commit touched, record the verdicts in one memory commit, and
 * write a git note on the code commit under refs/notes/memory (one JSON
 * object per line: id, verdict, reason) so `git log --notes=memory` shows
 * what each commit made stale. Both commits are written side by side by the
 * store's git writer and both refs move in one `git update-ref` transaction:
 * both or neither.
 *
 * It never fails and never blocks the commit: any error goes to
 * .git/mem/logs/post-commit.log and one warning line; the exit code is 0.
 *
 * It has a time budget (`post-commit-budget-ms`, default 1000; 0: none),
 * measured from its start. When judging the touched anchors has taken it, or
 * at the pace so far would take it, the hook stops before anything is
 * written (the memory commit and the note move together or not at all, so
 * nothing partial is left), prints one line naming `git mem check`, logs it
 * and exits 0. `git mem check` later records the same verdicts.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { recordedBranchHint } from '../anchors/branch.js';
import { type AnchorResult, runCheck } from '../anchors/check.js';
import { type RunContext, repositoryStore } from '../commands/context.js';
import { asSecretScan, decideSecrets } from '../commands/secret-policy.js';
import { err } from '../errors.js';
import { parseCommitHeader } from '../gitstore/commit-object.js';
import { resolveConfig } from '../gitstore/config.js';
import { memDir, type Repo } from '../gitstore/repo.js';
import type { NoteAdd, Store } from '../gitstore/store.js';
import { diffTrees } from '../gitstore/tree.js';
import { actorFromEnv } from '../model/provenance.js';
import { mark } from '../trace.js';

export const NOTES_REF = 'refs/notes/memory';

export interface NoteLine {
  id: string;
  verdict: string;
  reason: string;
  path: string;
  lines?: [number, number] | null;
  to?: unknown;
}

/** The default of `post-commit-budget-ms`: the most the hook adds to a commit. */
export const DEFAULT_BUDGET_MS = 1000;

/** The check stopped at its time budget, before anything was written. */
class OverBudget extends Error {
  constructor(
    readonly budgetMs: number,
    readonly done: number,
    readonly total: number,
    readonly elapsedMs: number,
  ) {
    super(`over its ${budgetMs} ms budget after ${elapsedMs} ms (${done} of ${total} anchors judged)`);
  }
}

/** Appends one entry to .git/mem/logs/post-commit.log; the file's path, or '' when it cannot. */
function logLine(repo: Repo, text: string): string {
  try {
    const file = join(memDir(repo, 'logs'), 'post-commit.log');
    appendFileSync(file, `${new Date().toISOString()} post-commit: ${text}\n`);
    return file;
  } catch {
    return '';
  }
}

export async function runPostCommitHook(ctx: RunContext, _args: string[]): Promise<number> {
  const start = performance.now();
  let store: Store;
  try {
    // git's settings are read at every commit (the default branch, for the check and for the
    // hint below): the config read starts beside rev-parse and cat-file, by the same process start
    store = await repositoryStore(ctx, 'config');
  } catch (e) {
    const msg = (e as Error)?.message ?? String(e);
    ctx.io.err(`git-mem: warning: post-commit staleness check failed: ${msg.split('\n')[0]}\n`);
    return 0;
  }
  for (const line of await postCommitHook(store, { env: ctx.env, start })) ctx.io.err(`${line}\n`);
  return 0;
}

/**
 * The post-commit hook's work on an open store, and what it says: the lines to print (none,
 * usually). It never throws: a failure is logged and said in one line. `env` is the hook's
 * environment (the verdicts are by the commit's author, as git gives it to its hooks); `start`,
 * where its time budget runs from. The hook runs it in its own process, or a running query
 * daemon of this work tree runs it for the hook (src/daemon/server.ts, op `post-commit`).
 */
export async function postCommitHook(
  store: Store,
  opts: { env: NodeJS.ProcessEnv; start: number },
): Promise<string[]> {
  const repo = store.repo;
  const lines: string[] = [];
  // who the verdicts are by is this commit's (an agent's commit names the agent, as its other
  // writes do), for this call only: a long-lived store's next write reads its own
  const { identity, actor } = store;
  store.actor = actorFromEnv(opts.env);
  try {
    const summary = await postCommit(store, opts.env, opts.start);
    if (summary) lines.push(summary);
    // on a branch the record does not follow, once: how to make it the recorded one
    const hint = await recordedBranchHint(store).catch(() => undefined);
    if (hint) lines.push(hint);
  } catch (e) {
    if (e instanceof OverBudget) {
      const file = logLine(repo, `skipped: ${e.message}`);
      lines.push(
        `git-mem: post-commit check skipped: ${e.total} anchor${e.total === 1 ? '' : 's'} to judge would take over its ${e.budgetMs} ms budget (post-commit-budget-ms); run git mem check${file ? ` (logged in ${file})` : ''}`,
      );
      return lines;
    }
    const msg = (e as Error)?.message ?? String(e);
    const file = logLine(repo, (e as Error)?.stack ?? msg);
    const where = file ? ` (details in ${file})` : '';
    lines.push(`git-mem: warning: post-commit staleness check failed: ${msg.split('\n')[0]}${where}`);
  } finally {
    store.identity = identity;
    store.actor = actor;
  }
  return lines;
}

/**
 * The hook's budget in ms from the settings (0: none). Where no layer sets
 * it, the default; GIT_MEM_TEST_POST_COMMIT_BUDGET_MS replaces the default
 * for the test suite only (its hooks run on a loaded machine).
 */
async function budgetMs(store: Store): Promise<{ ms: number; allowSecret: boolean }> {
  const t = store.repo.env.GIT_MEM_TEST_POST_COMMIT_BUDGET_MS;
  const test = t ? Number(t) : Number.NaN;
  const fallback = Number.isFinite(test) && test >= 0 ? test : DEFAULT_BUDGET_MS;
  try {
    const res = await resolveConfig(store.repo.env, store);
    // secret-scan warn or off: the check's write keeps what it finds, as add does under that policy
    const allowSecret = decideSecrets(asSecretScan(res.values['secret-scan']), {}).allow;
    if (res.origin['post-commit-budget-ms'] === 'default') return { ms: fallback, allowSecret };
    const v = Number(res.values['post-commit-budget-ms']);
    return { ms: Number.isFinite(v) && v >= 0 ? v : fallback, allowSecret };
  } catch {
    return { ms: fallback, allowSecret: false };
  }
}

/**
 * The check's budget callback: throws OverBudget when the time since `start`
 * is past `ms`, or when the anchors left, at the pace of those judged so far
 * (from the second on: the first pays for warming up), would take it past.
 */
function budgetGuard(ms: number, start: number): (done: number, total: number) => void {
  let first = 0;
  return (done, total) => {
    const now = performance.now();
    if (done <= 1) first = now;
    const pace = done >= 3 ? (now - first) / (done - 1) : 0;
    if (now - start > ms || now - start + pace * (total - done) > ms)
      throw new OverBudget(ms, done, total, Math.round(now - start));
  };
}

/** The hook's work; returns a one-line summary when something went stale, or undefined. */
async function postCommit(store: Store, env: NodeJS.ProcessEnv, start: number): Promise<string | undefined> {
  mark('post-commit: start');
  // read beside the commit and its diff; awaited only when there are anchors to judge
  const budget = budgetMs(store);
  // the memory tip, the new commit and its parent: one round trip of cat-file
  const [tipObj, headObj, parentObj] = await store.catFile.readMany([store.ref, 'HEAD', 'HEAD^']);
  if (!tipObj) return undefined; // no memory store here: nothing to check
  if (tipObj.type !== 'commit')
    throw err('E_GIT', `${store.ref} does not point at a commit`, 'run git mem doctor');
  if (headObj?.type !== 'commit') return undefined;
  const head = headObj.oid;
  const commit = parseCommitHeader(headObj.content);
  let parentTree: string | null = null;
  if (commit.parents[0]) {
    const p = parentObj?.oid === commit.parents[0] ? parentObj : await store.catFile.read(commit.parents[0]);
    if (p?.type !== 'commit') throw err('E_GIT', `cannot read ${commit.parents[0]}, the parent of HEAD`);
    parentTree = parseCommitHeader(p.content).tree;
  }
  mark('post-commit: commit read');
  // the files this commit touched, with their blob ids (the check needs no ls-tree)
  const diff = new Map(
    (await diffTrees(store.catFile, parentTree, commit.tree)).map((c) => [c.path, c.oid] as const),
  );
  mark('post-commit: tree diff');
  if (!diff.size) return undefined;
  const targetBlobs = new Map<string, string>();
  for (const [p, oid] of diff) if (oid) targetBlobs.set(p, oid);
  // the verdicts are by the author git names to its hooks, else the committer: no `git config`
  // process for an identity (the hook's own, also where a daemon runs it)
  if (commit.committer || (env.GIT_AUTHOR_NAME && env.GIT_AUTHOR_EMAIL)) {
    store.identity = {
      name: env.GIT_AUTHOR_NAME || commit.committer?.name || 'git-mem',
      email: env.GIT_AUTHOR_EMAIL || commit.committer?.email || 'git-mem@localhost',
    };
  }
  // the note on the code commit: written and published with the memory commit
  const note = async (results: readonly AnchorResult[]): Promise<NoteAdd | null> => {
    const lines: NoteLine[] = results
      .filter((r) => r.news)
      .map((r) => ({
        id: r.id,
        verdict: r.verdict.status,
        reason: r.verdict.reason,
        path: r.verdict.from.path,
        lines: r.verdict.from.lines ?? null,
        to: r.verdict.to,
      }));
    if (!lines.length) return null;
    return {
      ref: NOTES_REF,
      object: head,
      lines: lines.map((l) => JSON.stringify(l)),
      message: "Notes added by 'git mem hook post-commit'",
    };
  };
  const { ms, allowSecret } = await budget;
  const rep = await runCheck(store, {
    allowSecret,
    target: head,
    paths: [...diff.keys()],
    targetBlobs,
    label: 'mem: post-commit',
    note,
    budget: ms > 0 ? budgetGuard(ms, start) : undefined,
    // a file this commit removed may have been renamed: literal scopes naming it follow it
    scopeFrom: commit.parents[0] && [...diff.values()].some((oid) => !oid) ? commit.parents[0] : null,
  });
  mark('post-commit: checked');
  mark('post-commit: done');
  const lost = (rep.scopes?.lost ?? []).map(
    (l) =>
      `git-mem: this commit leaves the scope ${l.path} of ${l.id.slice(0, 12)} matching no file (git mem update ${l.id.slice(0, 12)} --scope …)`,
  );
  const said = stalenessLine(rep);
  return [...lost, ...(said ? [said] : [])].join('\n') || undefined;
}

/** The hook's one line on the anchors this commit made stale, if any. */
function stalenessLine(rep: Awaited<ReturnType<typeof runCheck>>): string | undefined {
  const stale = rep.changes.filter((c) => c.to === 'stale');
  if (stale.length && rep.branch?.shared === false) {
    const n = stale.length;
    return `git-mem: this commit makes the anchors of ${n} memor${n === 1 ? 'y' : 'ies'} stale (git log --notes=memory); the shared record follows ${rep.branch.name} and changes when this reaches it`;
  }
  if (stale.length) {
    return `git-mem: ${stale.length} memor${stale.length === 1 ? 'y' : 'ies'} went stale with this commit (git mem stale; git log --notes=memory)`;
  }
  return undefined;
}

/**
 * `git mem hook post-merge`: after a merge or a pull (a fast-forward runs no
 * post-commit hook), check the anchors of the files the merge brought in
 * (ORIG_HEAD..HEAD). On the default branch this is where a feature's renames,
 * moves and edits reach the shared record, once; elsewhere it only reports.
 * Never fails the merge, like post-commit.
 */
export async function runPostMergeHook(
  ctx: RunContext,
  _args: string[],
  hook: 'post-merge' | 'post-rewrite' = 'post-merge',
): Promise<number> {
  let repo: Repo | undefined;
  try {
    const store = await repositoryStore(ctx);
    repo = store.repo;
    if (!(await store.tip())) return 0;
    const orig = await store.catFile.read('ORIG_HEAD^{commit}');
    const rep = await runCheck(store, {
      target: 'HEAD',
      ...(orig ? { since: orig.oid } : {}),
      label: `mem: ${hook}`,
    });
    const stale = rep.changes.filter((c) => c.to === 'stale');
    if (stale.length && rep.recorded) {
      ctx.io.err(
        `git-mem: ${stale.length} memor${stale.length === 1 ? 'y' : 'ies'} went stale with this ${hook === 'post-merge' ? 'merge' : 'rebase'} (git mem stale)\n`,
      );
    }
  } catch (e) {
    const msg = (e as Error)?.message ?? String(e);
    let where = '';
    if (repo) {
      try {
        const file = join(memDir(repo, 'logs'), `${hook}.log`);
        appendFileSync(file, `${new Date().toISOString()} ${hook}: ${(e as Error)?.stack ?? msg}\n`);
        where = ` (details in ${file})`;
      } catch {}
    }
    ctx.io.err(`git-mem: warning: ${hook} staleness check failed: ${msg.split('\n')[0]}${where}\n`);
  }
  return 0;
}

/**
 * `git mem hook post-rewrite rebase|amend`: after a rebase (`git pull
 * --rebase` included), whose commits reach the branch without a post-merge,
 * check the anchors of the files changed since the branch was before it
 * (ORIG_HEAD..HEAD), as after a merge. An amend ran post-commit already.
 */
export async function runPostRewriteHook(ctx: RunContext, args: string[]): Promise<number> {
  if (args[0] !== 'rebase') return 0;
  return runPostMergeHook(ctx, args, 'post-rewrite');
}
