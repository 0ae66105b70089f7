/**
 * Locating the repository. One store per repository: local state lives in the
 * *common* git dir, so linked worktrees share it; GIT_DIR / GIT_WORK_TREE are
 * honoured because every lookup goes through `git rev-parse`.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { err } from '../errors.js';
import { git } from './git.js';

export interface Repo {
  /** Directory git commands run from. */
  cwd: string;
  env: NodeJS.ProcessEnv;
  gitDir: string;
  commonDir: string;
  /** Work tree root, or undefined for a bare repository. */
  workTree?: string;
  bare: boolean;
}

/**
 * The common case without a git process: walk up from cwd to a `.git`
 * directory (or a worktree's `.git` file). Anything unusual — GIT_DIR and
 * friends, ceiling directories, a bare repository, a `.git` we cannot read —
 * returns undefined and `git rev-parse` decides, as git itself would.
 */
export function discoverRepoFast(cwd: string, env: NodeJS.ProcessEnv): Repo | undefined {
  if (env.GIT_DIR || env.GIT_WORK_TREE || env.GIT_COMMON_DIR || env.GIT_CEILING_DIRECTORIES) return undefined;
  try {
    let dir = resolve(cwd);
    for (;;) {
      const dotgit = join(dir, '.git');
      const st = statSync(dotgit, { throwIfNoEntry: false });
      if (st?.isDirectory()) {
        if (!existsSync(join(dotgit, 'HEAD')) || existsSync(join(dotgit, 'commondir'))) return undefined;
        return { cwd, env, gitDir: dotgit, commonDir: dotgit, bare: false, workTree: dir };
      }
      if (st?.isFile()) {
        const m = /^gitdir: (.+)$/m.exec(readFileSync(dotgit, 'utf8'));
        if (!m) return undefined;
        const gitDir = resolve(dir, m[1].trim());
        const cd = join(gitDir, 'commondir');
        const commonDir = existsSync(cd) ? resolve(gitDir, readFileSync(cd, 'utf8').trim()) : gitDir;
        if (!existsSync(join(gitDir, 'HEAD'))) return undefined;
        return { cwd, env, gitDir, commonDir, bare: false, workTree: dir };
      }
      if (basename(dir) === '.git') return undefined; // inside a git dir: let git decide
      const parent = dirname(dir);
      if (parent === dir) return undefined;
      dir = parent;
    }
  } catch {
    return undefined;
  }
}

export async function openRepo(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Repo> {
  const fast = discoverRepoFast(cwd, env);
  if (fast) return fast;
  const r = await git(
    [
      'rev-parse',
      '--path-format=absolute',
      '--git-dir',
      '--git-common-dir',
      '--is-bare-repository',
      '--show-toplevel',
    ],
    { cwd, env, allowFail: true },
  );
  const lines = r.stdout.toString('utf8').split('\n');
  if (lines.length < 3 || !lines[0]) {
    throw err(
      'E_NOT_A_REPO',
      `not a git repository: ${cwd}`,
      'run git mem inside a git repository (or run git init)',
    );
  }
  const bare = lines[2] === 'true';
  return {
    cwd,
    env,
    gitDir: lines[0],
    commonDir: lines[1],
    bare,
    workTree: bare || r.code !== 0 ? undefined : lines[3] || undefined,
  };
}

/** `.git/mem/` (in the common dir): caches, counters, locks, events. Never in the ref. */
export function memDir(repo: Repo, ...sub: string[]): string {
  const dir = join(repo.commonDir, 'mem', ...sub);
  mkdirSync(dir, { recursive: true });
  return dir;
}
