/**
 * Locating the repository: one finder, and it is git's. `git rev-parse`
 * answers, so GIT_DIR, GIT_WORK_TREE, GIT_CEILING_DIRECTORIES, linked
 * worktrees and safe.directory mean exactly what they mean to git. One store
 * per repository: local state lives in the *common* git dir, so linked
 * worktrees share it. A repository git-mem cannot serve (another object
 * format than SHA-1) is refused here, in one line, before anything is written.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { type GitProcess, git, gitEnv, output } from './git.js';

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

export const REV_PARSE = [
  'rev-parse',
  '--path-format=absolute',
  '--git-dir',
  '--git-common-dir',
  '--is-bare-repository',
  '--show-object-format',
  // last: it fails (after the answers above) where there is no work tree
  '--show-toplevel',
];

/** The Repo from rev-parse's answer to REV_PARSE, or a one-line refusal. */
function fromRevParse(
  cwd: string,
  env: NodeJS.ProcessEnv,
  code: number,
  stdout: string,
  stderr: string,
): Repo {
  const lines = stdout.split('\n');
  if (lines.length < 5 || !lines[0] || !lines[3]) {
    const why = stderr.trim().split('\n')[0] ?? '';
    // git's own reason when it is not the usual one (dubious ownership, a bad GIT_DIR)
    const dubious = /dubious ownership/.test(stderr);
    throw err(
      'E_NOT_A_REPO',
      dubious
        ? `git refuses this repository: ${why.replace(/^fatal: /, '')}`
        : `not a git repository: ${cwd}`,
      dubious
        ? 'if you trust it, mark it safe: git config --global --add safe.directory <path> (see git help config)'
        : 'run git mem inside a git repository (or run git init)',
    );
  }
  const format = lines[3];
  if (format !== 'sha1') {
    throw err(
      'E_UNSUPPORTED_REPO',
      `git-mem cannot serve this repository: it uses ${format} object ids, and git-mem supports only sha1`,
      'nothing was written; use git-mem in a sha1 repository',
    );
  }
  const bare = lines[2] === 'true';
  const workTree = bare || code !== 0 ? undefined : lines[4] || undefined;
  return { cwd, env, gitDir: lines[0], commonDir: lines[1], bare, workTree };
}

export async function openRepo(cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<Repo> {
  const r = await git(REV_PARSE, { cwd, env, allowFail: true });
  return fromRevParse(cwd, env, r.code, r.stdout.toString('utf8'), r.stderr);
}

/**
 * The same finder's answer from a rev-parse of REV_PARSE started with other processes
 * (startGits, its stderr its own): its exit code is not read, and need not be, since only
 * --show-toplevel, asked last, fails after answering, and then it prints no work tree.
 */
export async function repoFromRevParse(
  proc: GitProcess,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Repo> {
  const r = await output(proc, 'rev-parse');
  const stdout = r.stdout.toString('utf8');
  return fromRevParse(cwd, env, stdout.split('\n')[4] ? 0 : 128, stdout, r.stderr);
}

/**
 * The same finder for the few callers that cannot await (the agent hook's
 * path before the CLI): the same rev-parse, run synchronously.
 */
export function openRepoSync(cwd: string, env: NodeJS.ProcessEnv = process.env): Repo {
  const r = spawnSync('git', REV_PARSE, { cwd, env: gitEnv(env), encoding: 'utf8' });
  if (r.error) throw err('E_GIT', `cannot run git: ${r.error.message}`, 'install git and put it on PATH');
  return fromRevParse(cwd, env, r.status ?? 128, r.stdout ?? '', r.stderr ?? '');
}

/**
 * `.git/mem/` (in the common dir): caches, counters, locks, events. Never in the ref.
 * Made when missing, as far as it can be: on a read-only `.git` the path is returned all the
 * same, so a reader finds no cache there and reads the ref, and a write to it fails where it
 * writes (the CLI reports that as E_IO, src/errors.ts asGitMemError).
 */
export function memDir(repo: Repo, ...sub: string[]): string {
  const dir = join(repo.commonDir, 'mem', ...sub);
  try {
    mkdirSync(dir, { recursive: true });
  } catch {}
  return dir;
}

/**
 * A folder of `.git/mem/` a write needs: made, or the file system's own refusal thrown
 * (EROFS, EACCES, ENOSPC: node's recursive mkdir says ENOENT whatever the cause, so on a
 * failure each level is made by itself, which names the real one).
 */
export function memDirForWrite(repo: Repo, ...sub: string[]): string {
  const dir = join(repo.commonDir, 'mem', ...sub);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (e) {
    let p = repo.commonDir;
    for (const part of ['mem', ...sub]) {
      p = join(p, part);
      if (!existsSync(p)) mkdirSync(p);
    }
    throw e;
  }
  return dir;
}

/**
 * The marker a crash test waits for (.git/mem/<name>: where a test pause stopped, and what it
 * holds), whole when it appears: written aside, then renamed (a test reading it half-written
 * checked the lock of a ref named "").
 */
export function writeTestMarker(repo: Repo, name: string, content: string): void {
  const file = join(memDir(repo), name);
  writeFileSync(`${file}.${process.pid}.tmp`, content);
  renameSync(`${file}.${process.pid}.tmp`, file);
}
