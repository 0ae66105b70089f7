/**
 * The package as users get it: `npm pack` (whose prepack builds), the tarball
 * installed into a temp prefix, and `git-mem` / `git mem` run from there as
 * real processes. Used by installed.test.ts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { isolatedEnv, ROOT, tmpDir } from './helpers.js';

export interface Installed {
  /** <prefix>/bin/git-mem, the link npm made */
  bin: string;
  binDir: string;
  /** the installed package folder */
  pkgDir: string;
  tarball: string;
  /** how long pack + install took */
  ms: number;
  /** 'npm': npm install --offline; 'unpacked': npm's cache lacked the dependencies (see below) */
  via: 'npm' | 'unpacked';
}

/** A file of an earlier build in dist/ when `npm pack` runs. */
export const STALE_CHUNK = 'chunk-EARLIER0.js';

const PACKAGE_FILES = [
  'package.json',
  '.npmrc',
  'bin',
  'src',
  'web',
  'scripts',
  'docs',
  'README.md',
  'tsconfig.json',
];

/**
 * Packs the package and installs the tarball globally into a temp prefix, offline.
 * The pack runs in a copy of the sources so its build (prepack) never replaces the
 * dist/ that other test files are running at the same time.
 */
export function installPackage(): Installed {
  const t0 = Date.now();
  const dir = tmpDir('gm-pack-');
  const stage = join(dir, 'src-copy');
  mkdirSync(stage);
  for (const f of PACKAGE_FILES)
    if (existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(stage, f), { recursive: true });
  symlinkSync(join(ROOT, 'node_modules'), join(stage, 'node_modules'));
  // a chunk an earlier build left (a build keeps them 15 minutes for processes still running): not packed
  mkdirSync(join(stage, 'dist'), { recursive: true });
  writeFileSync(join(stage, 'dist', STALE_CHUNK), 'export const stale = 1;\n');
  const env = { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip', npm_config_update_notifier: 'false' };
  execFileSync('npm', ['pack', '--pack-destination', dir], { cwd: stage, env, stdio: 'pipe' });
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error(`npm pack left no tarball in ${dir}`);
  const tarball = join(dir, tgz);
  const prefix = join(dir, 'prefix');
  const pkgDir = join(prefix, 'lib', 'node_modules', 'git-mem');
  let via: Installed['via'] = 'npm';
  try {
    execFileSync(
      'npm',
      ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball],
      { cwd: dir, env, stdio: 'pipe' },
    );
  } catch (e) {
    // CI runs `npm ci` first, so npm's cache holds every dependency. A machine whose
    // node_modules did not come through that cache gets the layout npm would have
    // made: the tarball unpacked into lib/node_modules, the repository's dependencies,
    // the bin link. Any other install failure is a failure.
    const stderr = String((e as { stderr?: Buffer }).stderr ?? '');
    if (!/ENOTCACHED/.test(stderr)) throw new Error(`npm install of the tarball failed:\n${stderr}`);
    via = 'unpacked';
    mkdirSync(pkgDir, { recursive: true });
    execFileSync('tar', ['xzf', tarball, '-C', pkgDir, '--strip-components=1']);
    symlinkSync(join(ROOT, 'node_modules'), join(pkgDir, 'node_modules'));
    mkdirSync(join(prefix, 'bin'), { recursive: true });
    symlinkSync(
      join('..', 'lib', 'node_modules', 'git-mem', 'bin', 'git-mem.js'),
      join(prefix, 'bin', 'git-mem'),
    );
    // and the manual page link npm makes from package.json "man"
    mkdirSync(join(prefix, 'share', 'man', 'man1'), { recursive: true });
    symlinkSync(
      join('..', '..', '..', 'lib', 'node_modules', 'git-mem', 'man', 'man1', 'git-mem.1'),
      join(prefix, 'share', 'man', 'man1', 'git-mem.1'),
    );
  }
  const binDir = join(prefix, 'bin');
  const bin = join(binDir, 'git-mem');
  if (!existsSync(bin)) throw new Error(`the install made no ${bin}`);
  return { bin, binDir, pkgDir, tarball, ms: Date.now() - t0, via };
}

/** An isolated environment whose PATH finds the installed git-mem first (so `git mem` is it). */
export function installedEnv(inst: Installed, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = isolatedEnv(extra);
  env.PATH = `${inst.binDir}${delimiter}${env.PATH ?? ''}`;
  return env;
}

export interface ProcResult {
  cmd: string;
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
  timedOut: boolean;
}

/**
 * Runs a program to its end, or kills its process group after `timeoutMs`
 * (a command that never exits is a finding, not a hung suite).
 */
export function runProc(
  file: string,
  args: string[],
  o: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string; timeoutMs?: number },
): Promise<ProcResult> {
  const t0 = Date.now();
  const cmd = [file.endsWith('/git-mem') ? 'git-mem' : file, ...args].join(' ');
  return new Promise((res) => {
    const c = spawn(file, args, { cwd: o.cwd, env: o.env, detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        if (c.pid) process.kill(-c.pid, 'SIGKILL');
      } catch {}
    }, o.timeoutMs ?? 30_000);
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('error', (e) => (stderr += String(e)));
    c.on('close', (code) => {
      clearTimeout(timer);
      res({ cmd, code, stdout, stderr, ms: Date.now() - t0, timedOut });
    });
    c.stdin.on('error', () => {});
    c.stdin.end(o.stdin ?? '');
  });
}

/** A user's view of a failure: what ran, how it ended, what it printed. */
export function describeRun(r: ProcResult): string {
  const end = r.timedOut ? `did not exit within ${r.ms} ms` : `exit ${r.code} in ${r.ms} ms`;
  return `${r.cmd} → ${end}\nstderr: ${r.stderr.slice(0, 1500)}\nstdout: ${r.stdout.slice(0, 500)}`;
}

/** Parses a command's --json stdout, or undefined. */
export function jsonOf<T = { id?: string }>(r: ProcResult): T | undefined {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    return undefined;
  }
}
