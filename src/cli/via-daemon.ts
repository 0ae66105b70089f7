/**
 * One-shot commands run by a running daemon. A `git mem add`, `check` or git
 * hook started from a shell spends most of its time starting things: node's
 * module loading, seven to nine git processes, a cold catalog and index. When
 * a daemon serves this repository (`git mem daemon start`, or one started on
 * demand), bin/git-mem.js sends it the command line before loading the CLI
 * (op `run`); the daemon runs the same main() with the same arguments, working
 * directory and environment, on its warm store, and hands back the exit code,
 * stdout and stderr. Same code, another process.
 *
 * With no daemon running, a store whose index is large (or GIT_MEM_DAEMON=on)
 * gets one started in the background, as a search starts one: this command runs
 * here, the next ones go to it. So does a repository with a memory store whose
 * git hooks run git-mem (post-commit, post-merge), whatever its size: a hook
 * runs at every commit, where a one-shot process spends most of its time
 * starting (node, its modules, nine git processes). Not in an automated run
 * (CI set), which commits once and goes; the daemon exits after 10 idle minutes.
 *
 * The daemon refuses (and the client runs the command itself, as without a
 * daemon) whenever its process could differ from the client's: another
 * worktree, another environment where git or git-mem read it (envKey), another
 * build, or a command that wants the client's stdin. Any other failure to get
 * an answer does the same. GIT_MEM_DAEMON=off keeps every command in process.
 *
 * The daemon's side is src/cli/daemon-run.ts. This side is deliberately light
 * (node built-ins, the repository finder, the wire) and built as one file
 * (dist/via-daemon.js): bin/git-mem.js loads it before the CLI for command lines
 * that name add, check or hook (but the agent hook's). A client stopped while it waits (Ctrl-C) stops waiting;
 * the command it sent still runs to its end in the daemon.
 */
import { existsSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { isatty } from 'node:tty';
import { git } from '../gitstore/git.js';
import { openRepo, type Repo } from '../gitstore/repo.js';
import {
  buildId,
  COMMAND_ONLY,
  daemonLikely,
  launchDaemon,
  olderBuild,
  type StoreAt,
  stopDaemon,
} from '../search/daemon-client.js';
import { ask, DEFAULT_SOCKET, daemonMode } from '../search/daemon-wire.js';
import { mark } from '../trace.js';

/** What a client sends with op `run`. */
export interface RunRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /** the client's repository, as git's finder told it */
  gitDir: string;
  workTree: string | null;
  isTTY: boolean;
  stdinIsTTY: boolean;
  /** the client's build (a daemon of another build refuses) */
  build: string;
}

/** What the daemon answers for a command it ran: its exit code, and what it wrote, in order (1: stdout, 2: stderr). */
export interface RunResult {
  code: number;
  output: Array<[1 | 2, string]>;
}

/** How long a client waits for the daemon to run its command (queued behind others) before running it itself. */
const RUN_WAIT_MS = 120_000;

/**
 * Whether a command line may run in the daemon: `add` (not to a team store, which syncs
 * with a remote and may ask for credentials), `check`, and the git hooks that re-anchor
 * (post-commit, post-merge). Help and version stay here.
 */
export function runsInDaemon(argv: string[]): boolean {
  if (argv.some((a) => a === '--help' || a === '-h' || a === '--version')) return false;
  const at = argv.findIndex((a) => !a.startsWith('-'));
  if (at < 0) return false;
  const name = argv[at];
  if (name === 'add') return !argv.some((a) => a === '--store' || a.startsWith('--store='));
  if (name === 'check') return true;
  return isGitHook(argv, at);
}

/** `hook post-commit` or `hook post-merge`: what git's hooks run at every commit and merge. */
function isGitHook(argv: string[], at = argv.findIndex((a) => !a.startsWith('-'))): boolean {
  return at >= 0 && argv[at] === 'hook' && (argv[at + 1] === 'post-commit' || argv[at + 1] === 'post-merge');
}

/**
 * Whether this command starts a daemon for the next ones when none runs: a large store's, or a git
 * hook's in a repository that has a memory store (hooks committed with husky run in every clone,
 * also where git-mem is not used).
 */
async function startsDaemon(argv: string[], at: StoreAt, env: NodeJS.ProcessEnv): Promise<boolean> {
  if (daemonLikely(at, env)) return true;
  if (daemonMode(env) === 'off' || !isGitHook(argv) || env.CI) return false;
  const r = await git(['rev-parse', '--verify', '--quiet', `${at.ref}^{commit}`], {
    cwd: at.repo.cwd,
    env: at.repo.env,
    allowFail: true,
  });
  return r.code === 0;
}

/**
 * Variables that may differ between the daemon and a client. Identities (git gives a
 * post-commit hook the commit's author and date): the daemon runs each command with
 * the client's whole environment (daemon-run.ts), and git-mem reads them per command,
 * the git processes it keeps running never. Then what a git hook's process has and a
 * shell's does not, which changes nothing git-mem's store reads or writes (the index
 * git-mem never uses, the editor, the prefix of a hook, git's own helpers); git-mem's
 * own switches of the daemon and the trace; the command a hook starts git-mem with.
 */
const IGNORED = new Set([
  ...COMMAND_ONLY,
  'GIT_EXEC_PATH',
  'GIT_MEM_TRACE',
  'GIT_MEM_DAEMON',
  'GIT_MEM_DAEMON_IDLE_MS',
  'GIT_MEM_NO_FAST_HOOK',
  // how a git hook starts git-mem (src/hooks/git-hooks.ts): the client is running already
  'GIT_MEM_CMD',
]);
/** Outside GIT_*: where git finds its global configuration. */
const READ = ['HOME', 'XDG_CONFIG_HOME'];

/**
 * The part of an environment the daemon's running git processes and caches depend on
 * (where git finds the repository and its configuration, git-mem's settings): a daemon
 * runs a client's command only when both give the same key.
 */
export function envKey(env: NodeJS.ProcessEnv): string {
  const keys = Object.keys(env)
    .filter((k) => (k.startsWith('GIT_') && !IGNORED.has(k)) || READ.includes(k))
    .sort();
  return JSON.stringify(keys.map((k) => [k, env[k]]));
}

/**
 * Runs the command in a running daemon: its exit code, once its output is written.
 * Else the command is this process's to run (no daemon, a refusal, no answer), with the
 * repository found for it when one was (main() then asks git for it no second time).
 */
export async function runViaDaemon(argv: string[]): Promise<{ code: number } | { repo?: Repo }> {
  const env = process.env;
  if (daemonMode(env) === 'off' || !runsInDaemon(argv)) return {};
  let repo: Repo;
  try {
    repo = await openRepo(process.cwd(), env);
  } catch {
    return {}; // the CLI says what is wrong
  }
  const sock = join(repo.commonDir, ...DEFAULT_SOCKET);
  const at = { repo, ref: 'refs/memory' };
  if (!existsSync(sock)) {
    // as for a search (daemon-client.ts): a store big enough, or GIT_MEM_DAEMON=on, gets a daemon,
    // started now for the next commands and not waited for (it takes seconds to load a large index);
    // so does a repository whose git hooks run git-mem
    if ((await startsDaemon(argv, at, env)) && launchDaemon(at, env))
      mark('via daemon: one started for the next commands');
    return { repo };
  }
  const q: RunRequest = {
    argv,
    cwd: process.cwd(),
    env: Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined)),
    gitDir: repo.gitDir,
    workTree: repo.workTree ?? null,
    // isatty: asking process.stdin would make node open a stream on it
    isTTY: isatty(1),
    stdinIsTTY: isatty(0),
    build: buildId(),
  };
  let r: Partial<RunResult> | undefined;
  try {
    const reply = await ask(sock, { op: 'run', q }, RUN_WAIT_MS);
    if (!reply.ok) {
      mark(`via daemon: refused (${reply.error?.code})`);
      // a daemon of an earlier build (git-mem was upgraded) refuses every command, and each refusal
      // keeps it from idling out: one was wanted here (it runs), so one of this build replaces it
      if (olderBuild(reply.build) && (await stopDaemon(at))) {
        if (launchDaemon(at, env)) mark('via daemon: one of this build started for the next commands');
      }
      return { repo };
    }
    r = reply.result as Partial<RunResult>;
  } catch (e) {
    mark(`via daemon: ${(e as Error).message}`);
    // a daemon that died without removing its socket: gone, so the next command may start one
    if ((e as NodeJS.ErrnoException).code === 'ECONNREFUSED')
      try {
        unlinkSync(sock);
      } catch {}
    return { repo };
  }
  const output = r?.output;
  if (
    typeof r?.code !== 'number' ||
    !Array.isArray(output) ||
    !output.every((c) => Array.isArray(c) && (c[0] === 1 || c[0] === 2) && typeof c[1] === 'string')
  )
    return { repo };
  mark('via daemon: answered');
  // as the command wrote them: a note on stderr before the line on stdout stays before it
  for (const [fd, text] of output) (fd === 1 ? process.stdout : process.stderr).write(text);
  return { code: r.code };
}
