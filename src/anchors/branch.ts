/**
 * Which branch the shared record follows. Memories are shared by the whole
 * repository but code differs per branch: a verdict is a fact about one
 * commit, and the record on refs/memory holds each anchor as last confirmed
 * on the default branch. A check of any other commit reports its verdicts
 * and writes nothing shared (the post-commit hook still notes the commit).
 *
 * The default branch: the `default-branch` setting (`git config
 * mem.default-branch`, or `mem.defaultBranch`; also in the shared or global
 * config file), else what the remote's HEAD names (refs/remotes/origin/HEAD),
 * else init.defaultBranch, else main or master, whichever exists.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { resolveConfig } from '../gitstore/config.js';
import { git } from '../gitstore/git.js';
import { memDir } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';

export interface DefaultBranch {
  /** The branch name, e.g. "main". */
  name: string;
  source: 'setting' | 'origin' | 'init' | 'guess';
  /** Its commit: the local branch's, else origin's remote-tracking branch's; null when neither exists. */
  tip: string | null;
}

function branchName(s: string): string {
  return s.trim().replace(/^refs\/heads\//, '');
}

async function commitOf(store: Store, ref: string): Promise<string | null> {
  const o = await store.catFile.read(`${ref}^{commit}`);
  return o?.type === 'commit' ? o.oid : null;
}

async function tipOf(store: Store, name: string): Promise<string | null> {
  return (
    (await commitOf(store, `refs/heads/${name}`)) ?? (await commitOf(store, `refs/remotes/origin/${name}`))
  );
}

/** The branch refs/remotes/origin/HEAD points at (a file in the files backend; git otherwise). */
async function originHead(store: Store): Promise<string | null> {
  const repo = store.repo;
  try {
    const text = readFileSync(join(repo.commonDir, 'refs', 'remotes', 'origin', 'HEAD'), 'utf8');
    const m = /^ref: refs\/remotes\/origin\/(.+)$/m.exec(text);
    return m ? m[1].trim() : null;
  } catch {}
  // no loose file: only another ref backend (reftable) keeps it elsewhere; ask git then
  const storage = (await store.gitConfig()).filter((e) => e.key === 'extensions.refstorage').pop();
  if (storage?.value !== 'reftable') return null;
  const r = await git(['symbolic-ref', '-q', 'refs/remotes/origin/HEAD'], {
    cwd: repo.cwd,
    env: repo.env,
    allowFail: true,
  });
  const m = /^refs\/remotes\/origin\/(.+)$/.exec(r.stdout.toString('utf8').trim());
  return r.code === 0 && m ? m[1] : null;
}

/** The default branch of this repository and its commit. */
export async function defaultBranch(store: Store): Promise<DefaultBranch> {
  const cfg = await resolveConfig(store.repo.env, store);
  const v = cfg.values;
  // `git config mem.defaultBranch` reads back as mem.defaultbranch (git lowercases the variable name)
  const set = v['default-branch'] ?? v.defaultbranch ?? v.defaultBranch;
  if (typeof set === 'string' && branchName(set)) {
    const name = branchName(set);
    return { name, source: 'setting', tip: await tipOf(store, name) };
  }
  const origin = await originHead(store);
  if (origin) {
    const tip = await tipOf(store, origin);
    if (tip) return { name: origin, source: 'origin', tip };
  }
  const init = (await store.gitConfig())
    .filter((e) => e.key === 'init.defaultbranch')
    .pop()
    ?.value?.trim();
  if (init) {
    const tip = await tipOf(store, branchName(init));
    if (tip) return { name: branchName(init), source: 'init', tip };
  }
  for (const name of ['main', 'master']) {
    const tip = await tipOf(store, name);
    if (tip) return { name, source: 'guess', tip };
  }
  return { name: init ? branchName(init) : 'main', source: 'guess', tip: null };
}

export interface SharedTarget {
  branch: DefaultBranch;
  /**
   * Whether verdicts about `target` go into the shared record: it is the
   * default branch's tip, or no default branch exists yet (a repository
   * whose only branch has another name: the record follows what is checked).
   */
  shared: boolean;
}

/** Whether a check of `target` (a commit id) may move or mark the shared record. */
export async function sharedTarget(store: Store, target: string): Promise<SharedTarget> {
  const branch = await defaultBranch(store);
  return { branch, shared: branch.tip === null || branch.tip === target };
}

/** The branch HEAD is on (null: detached, or unknown). */
async function currentBranch(store: Store): Promise<string | null> {
  const repo = store.repo;
  try {
    const m = /^ref: refs\/heads\/(.+)$/m.exec(readFileSync(join(repo.gitDir, 'HEAD'), 'utf8'));
    if (m && m[1].trim() !== '.invalid') return m[1].trim();
    if (!m) return null;
  } catch {}
  const r = await git(['symbolic-ref', '-q', '--short', 'HEAD'], {
    cwd: repo.cwd,
    env: repo.env,
    allowFail: true,
  });
  return r.code === 0 ? r.stdout.toString('utf8').trim() || null : null;
}

/** The file in .git/mem that says the hint of `recordedBranchHint` was given. */
export const BRANCH_HINT_FILE = 'default-branch-hint';

/**
 * Once per clone: when HEAD is on a branch that is not the one the record
 * follows, and nobody chose that branch (no `default-branch` setting), the
 * line that says so and how to make this branch the recorded one. Remembered
 * in .git/mem/default-branch-hint; undefined when there is nothing to say.
 */
export async function recordedBranchHint(store: Store): Promise<string | undefined> {
  let file: string;
  try {
    file = join(memDir(store.repo), BRANCH_HINT_FILE);
  } catch {
    return undefined;
  }
  if (existsSync(file) || !(await store.tip())) return undefined;
  const current = await currentBranch(store);
  if (!current) return undefined;
  const b = await defaultBranch(store);
  // a setting is a choice; no default branch at all: the record follows what is checked
  if (b.source === 'setting' || b.tip === null || b.name === current) return undefined;
  try {
    writeFileSync(file, `${current} ${b.name}\n`);
  } catch {
    return undefined; // not remembered: not said, rather than said at every commit
  }
  return `git-mem: the shared record follows ${b.name}; commits on ${current} record nothing until they reach it. To record on ${current}: git mem config set default-branch ${current} --shared (said once)`;
}
