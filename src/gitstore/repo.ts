/**
 * Locating the repository. One store per repository: local state lives in the
 * *common* git dir, so linked worktrees share it; GIT_DIR / GIT_WORK_TREE are
 * honoured because every lookup goes through `git rev-parse`.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
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

export async function openRepo(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Repo> {
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
