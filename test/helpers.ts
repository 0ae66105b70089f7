/**
 * Test helpers: real git repositories in temp dirs, an isolated HOME and
 * global config per test, and the CLI run in-process (fast) or as a real
 * process (for signals, concurrency and the bin wrapper). No git mocks.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';
import { bufferIO } from '../src/cli/context.js';
import { main } from '../src/cli/main.js';
import { atFileEnd } from './support/per-file.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = join(ROOT, 'bin', 'git-mem.js');

/** best effort: a daemon sent SIGTERM by daemonPids, or a checkpoint an agent hook left running in
 * the background, may still be writing its last files into one (ENOTEMPTY): retried for 2 s, then
 * left in the temp folder rather than failing the tests that ran */
function removeDir(d: string): void {
  if (process.env.KEEP_TMP) return;
  try {
    rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  } catch {}
}

/** What fn throws (for asserting its code and data, not its wording); fails the test when it returns. */
export function thrown(fn: () => unknown): { code?: string; data?: Record<string, unknown>; name?: string } {
  try {
    fn();
  } catch (e) {
    return e as { code?: string; data?: Record<string, unknown> };
  }
  throw new Error('expected a throw, and it returned');
}

/** A scratch folder, removed when the test file ends (test/support/per-file.ts). */
export function tmpDir(prefix = 'gm-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  atFileEnd(() => removeDir(d));
  return d;
}

/**
 * A folder with `git-mem` (this checkout's launcher), first on every test's
 * PATH: as after `npm install -g git-mem`, installed git hooks and `git mem`
 * find it there (hook scripts hold no path of the machine).
 */
let binDir: string | undefined;
export function gitMemBinDir(): string {
  if (!binDir) {
    // kept for the worker's life: later files of a shared worker use it too
    const d = mkdtempSync(join(tmpdir(), 'gm-bin-'));
    symlinkSync(BIN, join(d, 'git-mem'));
    process.once('exit', () => removeDir(d));
    binDir = d;
  }
  return binDir;
}

/** An environment isolated from the machine: its own HOME, global git config and git-mem home. */
export function isolatedEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const home = tmpDir('gm-home-');
  const gitconfig = join(home, '.gitconfig');
  writeFileSync(
    gitconfig,
    '[user]\n\tname = Test User\n\temail = test@example.com\n[init]\n\tdefaultBranch = main\n',
  );
  const env: NodeJS.ProcessEnv = {
    PATH: `${gitMemBinDir()}${delimiter}${process.env.PATH ?? ''}`,
    HOME: home,
    GIT_CONFIG_GLOBAL: gitconfig,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_MEM_HOME: join(home, '.config', 'git-mem'),
    LANG: 'C',
    // no time budget for the post-commit hook unless a test sets one: on a loaded machine the
    // default (1 s) would skip the checks the hook tests are about
    GIT_MEM_TEST_POST_COMMIT_BUDGET_MS: '0',
    // an automated run, as the suite's own
    CI: 'true',
    ...extra,
  };
  return env;
}

export function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, input?: string): string {
  return execFileSync(cmd, args, { cwd, env, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'pipe'] });
}

/** JSON read back from a process or a request: the tests assert its shape. */
// biome-ignore lint/suspicious/noExplicitAny: untyped JSON, checked by the assertions that read it
export type Json = any;

export interface TestRepo {
  dir: string;
  env: NodeJS.ProcessEnv;
  git: (...args: string[]) => string;
  /** Runs `git mem …` in-process. */
  mem: (
    args: string[],
    opts?: { stdin?: string; cwd?: string; env?: NodeJS.ProcessEnv },
  ) => Promise<CliResult>;
  /** Runs `git mem …` in-process and parses --json output; throws on a non-zero exit. */
  memJson: <T = Json>(args: string[], opts?: { stdin?: string; cwd?: string }) => Promise<T>;
  write: (path: string, content: string) => void;
  commitAll: (msg?: string) => string;
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The refusal a command run with `--json` printed: its code and the data it names
 * (`{"error":{"code":…}}` on stdout), for assertions on codes, not on wording.
 */
export function errorOf(r: CliResult): { code: string; [k: string]: unknown } {
  return JSON.parse(r.stdout).error;
}

export async function runCli(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string },
): Promise<CliResult> {
  const io = bufferIO(opts.stdin);
  const code = await main(args, io, { cwd: opts.cwd, env: opts.env });
  return { code, stdout: io.stdout, stderr: io.stderr };
}

/** Runs the real binary (needs `npm run build`, which `npm test` does first). */
export function runBin(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string },
): CliResult {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: opts.cwd,
    env: opts.env,
    input: opts.stdin ?? '',
    encoding: 'utf8',
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export function runBinAsync(
  args: string[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string },
): Promise<CliResult> {
  return new Promise((res) => {
    const c = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: opts.env });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (code) => res({ code: code ?? -1, stdout, stderr }));
    c.stdin.end(opts.stdin ?? '');
  });
}

/**
 * The pids of daemons a test file starts (push them as they start), each sent
 * SIGTERM once the file's tests are done, whatever they left running.
 */
export function daemonPids(): number[] {
  const pids: number[] = [];
  afterAll(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {}
    }
  });
  return pids;
}

export function makeRepo(opts: { bare?: boolean; commit?: boolean; env?: NodeJS.ProcessEnv } = {}): TestRepo {
  const dir = tmpDir('gm-repo-');
  const env = opts.env ?? isolatedEnv();
  sh('git', ['init', '-q', ...(opts.bare ? ['--bare'] : []), dir], dir, env);
  const repo: TestRepo = {
    dir,
    env,
    git: (...args) => sh('git', args, dir, env),
    mem: (args, o = {}) => runCli(args, { cwd: o.cwd ?? dir, env: o.env ?? env, stdin: o.stdin }),
    memJson: async (args, o = {}) => {
      const r = await runCli([...args, '--json'], { cwd: o.cwd ?? dir, env, stdin: o.stdin });
      if (r.code !== 0) throw new Error(`git mem ${args.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
      return JSON.parse(r.stdout);
    },
    write: (path, content) => {
      const p = join(dir, path);
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, content);
    },
    commitAll: (msg = 'commit') => {
      sh('git', ['add', '-A'], dir, env);
      sh('git', ['commit', '-q', '-m', msg], dir, env);
      return sh('git', ['rev-parse', 'HEAD'], dir, env).trim();
    },
  };
  if (opts.commit) {
    repo.write('README.md', '# test\n');
    repo.commitAll('initial');
  }
  return repo;
}

/** A small deterministic generator (mulberry32), so a failure of a randomised test reproduces. */
export function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a write leaves behind only when it went wrong: the git writer's temp files (.git/mem/tmp/w-*). */
export function writerLeftovers(r: Pick<TestRepo, 'git'>): string[] {
  const common = r.git('rev-parse', '--path-format=absolute', '--git-common-dir').trim();
  const dir = join(common, 'mem', 'tmp');
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith('w-')) : [];
}

/** Waits for `fn` to give something other than undefined (polling every 100 ms), or fails after `ms`. */
export async function until<T>(fn: () => Promise<T | undefined> | T | undefined, ms = 45_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 100));
  }
}
