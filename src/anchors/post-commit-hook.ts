/**
 * `git mem hook post-commit`: after each commit, check only the anchors of the
 * files that commit touched, record the verdicts in one memory commit, and
 * write a git note on the code commit under refs/notes/memory (one JSON
 * object per line: id, verdict, reason) so `git log --notes=memory` shows
 * what each commit made stale.
 *
 * It never fails and never blocks the commit: any error goes to
 * .git/mem/logs/post-commit.log and one warning line; the exit code is 0.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Ctx } from '../cli/context.js';
import { err } from '../errors.js';
import { git } from '../gitstore/git.js';
import { memDir, openRepo, type Repo } from '../gitstore/repo.js';
import { type Ident, Store } from '../gitstore/store.js';

export const NOTES_REF = 'refs/notes/memory';

export interface NoteLine {
  id: string;
  verdict: string;
  reason: string;
  path: string;
  lines?: [number, number] | null;
  to?: unknown;
}

export async function runPostCommitHook(ctx: Ctx, _args: string[]): Promise<number> {
  let repo: Repo | undefined;
  try {
    repo = await openRepo(ctx.cwd, ctx.env);
    const store = new Store(repo);
    ctx.stores.push(store);
    const summary = await postCommit(store);
    if (summary) ctx.io.err(`${summary}\n`);
  } catch (e) {
    const msg = (e as Error)?.message ?? String(e);
    let where = '';
    if (repo) {
      try {
        const file = join(memDir(repo, 'logs'), 'post-commit.log');
        appendFileSync(file, `${new Date().toISOString()} post-commit: ${(e as Error)?.stack ?? msg}\n`);
        where = ` (details in ${file})`;
      } catch {}
    }
    ctx.io.err(`git-mem: warning: post-commit staleness check failed: ${msg.split('\n')[0]}${where}\n`);
  }
  return 0;
}

/** The hook's work; returns a one-line summary when something went stale, or undefined. */
export async function postCommit(store: Store): Promise<string | undefined> {
  const repo = store.repo;
  const tip = await store.tip();
  if (!tip) {
    const exists = await git(['rev-parse', '-q', '--verify', store.ref], {
      cwd: repo.cwd,
      env: repo.env,
      allowFail: true,
    });
    if (exists.code === 0)
      throw err('E_GIT', `${store.ref} does not point at a commit`, 'run git mem doctor');
    return undefined; // no memory store here: nothing to check
  }
  const tipObj = await store.catFile.read(tip);
  if (tipObj?.type !== 'commit')
    throw err('E_GIT', `${store.ref} does not point at a commit`, 'run git mem doctor');
  const { revParseVia, touchedPaths } = await import('./gitio.js');
  const head = await revParseVia(store, 'HEAD');
  if (!head) return undefined;
  const parent = await revParseVia(store, 'HEAD^');
  const touched = await touchedPaths(repo, parent, head);
  if (!touched.length) return undefined;
  const { runCheck } = await import('./check.js');
  const rep = await runCheck(store, { target: head, paths: touched, label: 'mem: post-commit' });
  const lines: NoteLine[] = rep.results
    .filter((r) => r.news)
    .map((r) => ({
      id: r.id,
      verdict: r.verdict.status,
      reason: r.verdict.reason,
      path: r.verdict.from.path,
      lines: r.verdict.from.lines ?? null,
      to: r.verdict.to,
    }));
  if (lines.length)
    await addNote(
      repo,
      head,
      lines.map((l) => JSON.stringify(l)),
      await store.ident(),
    );
  const stale = rep.changes.filter((c) => c.to === 'stale');
  if (stale.length) {
    return `git-mem: ${stale.length} memor${stale.length === 1 ? 'y' : 'ies'} went stale with this commit (git mem stale; git log --notes=memory)`;
  }
  return undefined;
}

/** Adds lines to the commit's note (keeping lines already there, no duplicates). */
export async function addNote(repo: Repo, commit: string, lines: string[], ident: Ident): Promise<void> {
  const env = {
    ...repo.env,
    GIT_AUTHOR_NAME: repo.env.GIT_AUTHOR_NAME || ident.name,
    GIT_AUTHOR_EMAIL: repo.env.GIT_AUTHOR_EMAIL || ident.email,
    GIT_COMMITTER_NAME: repo.env.GIT_COMMITTER_NAME || ident.name,
    GIT_COMMITTER_EMAIL: repo.env.GIT_COMMITTER_EMAIL || ident.email,
  };
  // a new commit has no note yet: try a plain add first (one process), merge with an existing note otherwise
  const first = await git(['notes', `--ref=${NOTES_REF}`, 'add', '-F', '-', commit], {
    cwd: repo.cwd,
    env,
    input: `${lines.join('\n')}\n`,
    allowFail: true,
  });
  if (first.code === 0) return;
  const prev = await git(['notes', `--ref=${NOTES_REF}`, 'show', commit], {
    cwd: repo.cwd,
    env,
    allowFail: true,
  });
  const have = prev.code === 0 ? prev.stdout.toString('utf8').split('\n').filter(Boolean) : [];
  const all = [...new Set([...have, ...lines])];
  if (all.length === have.length) return;
  await git(['notes', `--ref=${NOTES_REF}`, 'add', '-f', '-F', '-', commit], {
    cwd: repo.cwd,
    env,
    input: `${all.join('\n')}\n`,
  });
}
