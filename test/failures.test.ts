/**
 * Ordinary failures (issue #28 item 9): a read-only `.git`, a full disk, a directory where a
 * file was named, a date past the year 9999, input that never ends or is not UTF-8, an empty
 * id. Each is one line with a stable code and its exit code, never "internal error" and a
 * stack, and the store is left as it was; commands that only read work on a read-only
 * repository. In-process runs where they can; real processes for what needs one: a device
 * that never ends (memory growth), a read-only mount and a full file system (as root, in a
 * mount namespace of their own: root writes through any file mode).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { asGitMemError } from '../src/errors.js';
import { parseDateInput } from '../src/model/record.js';
import { BIN, type CliResult, type Json, makeRepo, type TestRepo, thrown, tmpDir } from './helpers.js';
import { tipOf } from './sync-helpers.js';

/** The error a --json run printed: its code, and that stderr is one line without a stack. */
function failure(r: CliResult): { code: string; exit: number } {
  expect(r.stderr, r.stderr).not.toMatch(/internal error|\n\s+at /);
  expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).toMatch(/^git-mem: error: /);
  return { code: (JSON.parse(r.stdout.trim().split('\n').pop()!) as Json).error.code, exit: r.code };
}

let r: TestRepo;
beforeAll(async () => {
  r = makeRepo({ commit: true });
  r.env.GIT_MEM_DAEMON = 'off';
  await r.memJson(['add', '--title', 'Use pnpm', '--content', 'pnpm workspaces at the root']);
  await r.memJson(['add', '--title', 'Tabs', '--content', 'indent with tabs']);
}, 60_000);

describe('the reporter', () => {
  it('says an operating system refusal as E_IO naming the path, and a bug as a bug', () => {
    const fsError = (code: string, syscall: string, path?: string) =>
      Object.assign(new Error(`${code}: ${syscall}`), { code, syscall, path, errno: -1 });
    for (const code of ['EACCES', 'EROFS', 'ENOSPC', 'EDQUOT', 'EISDIR', 'ENOTDIR', 'ENOENT']) {
      const e = asGitMemError(fsError(code, 'open', '/x/y'));
      expect(e?.code, code).toBe('E_IO');
      expect(e?.exitCode).toBe(1);
      expect(e?.toLine()).toMatch(/"\/x\/y"/);
      expect(e?.hint).toBeTruthy();
    }
    expect(asGitMemError(fsError('ENOSPC', 'write'))?.code).toBe('E_IO');
    expect(asGitMemError(fsError('ENOENT', 'spawn git', 'git'))?.hint).toMatch(/PATH/);
    // no system call named: not the file system's (a bug, reported as one)
    expect(asGitMemError(Object.assign(new Error('x'), { code: 'ENOENT' }))).toBeUndefined();
    expect(asGitMemError(new TypeError('x is undefined'))).toBeUndefined();
    expect(asGitMemError(fsError('ECONNRESET', 'read'))).toBeUndefined();
  });

  it('export --out DIR is one line with E_IO, exit 1', async () => {
    const dir = join(r.dir, 'out');
    mkdirSync(dir, { recursive: true });
    const res = await r.mem(['export', '--out', dir, '--json']);
    expect(failure(res)).toEqual({ code: 'E_IO', exit: 1 });
    // the system's refusal and the path it refused, as data
    expect(JSON.parse(res.stdout.trim().split('\n').pop()!).error).toMatchObject({
      errno: 'EISDIR',
      path: dir,
    });
    const missing = await r.mem(['export', '--out', join(r.dir, 'no', 'such', 'dir', 'x.jsonl'), '--json']);
    expect(failure(missing)).toEqual({ code: 'E_IO', exit: 1 });
  });
});

describe('dates', () => {
  it('a date past 9999-12-31 is E_INVALID_ARG naming the range, not a RangeError', async () => {
    const tip = tipOf(r);
    for (const expires of ['99999999999d', '999999999999999999999999y', '+275760-09-13T00:00:00Z']) {
      const res = await r.mem([
        'add',
        '--title',
        'far',
        '--content',
        'far away',
        '--expires',
        expires,
        '--json',
      ]);
      expect(failure(res), expires).toEqual({ code: 'E_INVALID_ARG', exit: 2 });
      expect(res.stderr).toMatch(/9999-12-31/);
    }
    expect(tipOf(r)).toBe(tip);
    expect(thrown(() => parseDateInput('99999999999d'))).toMatchObject({ code: 'E_INVALID_ARG' });
    expect(parseDateInput('9999-12-31')).toBe('9999-12-31T00:00:00.000Z');
    expect(parseDateInput('30d', new Date(0))).toBe('1970-01-31T00:00:00.000Z');
  });
});

describe('ids', () => {
  it('an empty or blank id is E_INVALID_ARG every time, also once the catalog cache exists', async () => {
    // the first read writes the cache; its rows' empty alias column matched '' before
    await r.memJson(['list']);
    for (const ref of ['', ' ', '', '\t', '']) {
      const res = await r.mem(['show', ref, '--json']);
      expect(failure(res), JSON.stringify(ref)).toEqual({ code: 'E_INVALID_ARG', exit: 2 });
    }
  });
});

describe('content read from a file or stdin', () => {
  it('text that is not UTF-8 is refused (E_BINARY), never stored with replacement characters', async () => {
    const tip = tipOf(r);
    writeFileSync(join(r.dir, 'latin1.txt'), Buffer.from('caf\xe9 au lait\n', 'latin1'));
    const res = await r.mem(['add', '--title', 'coffee', '--file', 'latin1.txt', '--json']);
    expect(failure(res)).toEqual({ code: 'E_BINARY', exit: 2 });
    writeFileSync(
      join(r.dir, 'bad.jsonl'),
      Buffer.from('{"type":"decision","title":"caf\xe9","body":"x"}\n', 'latin1'),
    );
    const imp = await r.mem(['import', 'bad.jsonl', '--json']);
    expect(failure(imp)).toEqual({ code: 'E_BINARY', exit: 2 });
    expect(tipOf(r)).toBe(tip);
    // UTF-8 is taken as it is
    writeFileSync(join(r.dir, 'utf8.txt'), 'café au lait\n');
    const { id } = await r.memJson(['add', '--title', 'coffee', '--file', 'utf8.txt']);
    expect(JSON.stringify(await r.memJson(['show', id]))).toMatch(/café au lait/);
  });

  /** Runs the binary and tells its peak memory (the child reports its own, on exit). */
  function measured(args: string[], stdin?: string) {
    const report =
      "process.on('exit',()=>process.stderr.write('\\nMAXRSS '+process.resourceUsage().maxRSS+'\\n'))";
    const started = Date.now();
    const res = spawnSync(
      'sh',
      [
        '-c',
        `exec "$@"${stdin ? ` < ${stdin}` : ''}`,
        'sh',
        process.execPath,
        '--import',
        `data:text/javascript,${encodeURIComponent(report)}`,
        BIN,
        ...args,
      ],
      { cwd: r.dir, env: r.env, encoding: 'utf8', timeout: 120_000 },
    );
    const rss = Number(/MAXRSS (\d+)/.exec(res.stderr)?.[1] ?? Number.NaN) / 1024; // MiB
    const stderr = res.stderr.replace(/\nMAXRSS \d+\n$/, '\n');
    return { code: res.status ?? -1, stdout: res.stdout, stderr, ms: Date.now() - started, rss };
  }

  it('a file or stdin that never ends (/dev/zero) is read only to its bound: E_TOO_LARGE, fast, small', () => {
    const tip = tipOf(r);
    for (const [args, stdin] of [
      [['add', '--title', 'zero', '--file', '/dev/zero', '--json'], undefined],
      [['add', '--title', 'zero', '--json'], '/dev/zero'],
    ] as Array<[string[], string | undefined]>) {
      const res = measured(args, stdin);
      expect(failure(res), args.join(' ')).toEqual({ code: 'E_TOO_LARGE', exit: 2 });
      expect(res.ms, args.join(' ')).toBeLessThan(20_000);
      expect(res.rss, args.join(' ')).toBeLessThan(250);
    }
    // an import's bound is 256 MiB of JSON lines: read to there, no further (it grew to 6 GB)
    for (const [args, stdin] of [
      [['import', '/dev/zero', '--json'], undefined],
      [['import', '-', '--json'], '/dev/zero'],
    ] as Array<[string[], string | undefined]>) {
      const res = measured(args, stdin);
      expect(failure(res), args.join(' ')).toEqual({ code: 'E_TOO_LARGE', exit: 2 });
      expect(res.ms, args.join(' ')).toBeLessThan(60_000);
      expect(res.rss, args.join(' ')).toBeLessThan(700);
    }
    expect(tipOf(r)).toBe(tip);
  }, 240_000);
});

// ------------------------------------------------------------------ read-only and full file systems

const root = process.getuid?.() === 0;
/** As root, a mount namespace of its own can bind a folder read-only or mount a small tmpfs. */
const canMount =
  root &&
  (() => {
    const d = tmpDir('gm-mnt-');
    return (
      spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs "$1"', 'sh', d]).status === 0
    );
  })();

/** `git mem …` (a real process) with the repository's `.git` read-only. */
function readOnly(repo: TestRepo, args: string[]): CliResult {
  const gitDir = join(repo.dir, '.git');
  if (root) {
    const res = spawnSync(
      'unshare',
      [
        '-m',
        'sh',
        '-c',
        'mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" && shift && exec "$@"',
        'sh',
        gitDir,
        process.execPath,
        BIN,
        ...args,
      ],
      { cwd: repo.dir, env: repo.env, encoding: 'utf8' },
    );
    return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
  }
  spawnSync('chmod', ['-R', 'a-w', gitDir]);
  try {
    const res = spawnSync(process.execPath, [BIN, ...args], {
      cwd: repo.dir,
      env: repo.env,
      encoding: 'utf8',
    });
    return { code: res.status ?? -1, stdout: res.stdout, stderr: res.stderr };
  } finally {
    spawnSync('chmod', ['-R', 'u+w', gitDir]);
  }
}

describe.skipIf(root && !canMount)('a read-only repository', () => {
  it('reads (list, show, search, context, stale) and refuses writes with one line, E_IO', async () => {
    const ro = makeRepo({ commit: true });
    ro.env.GIT_MEM_DAEMON = 'off';
    const { id } = await ro.memJson([
      'add',
      '--title',
      'Use pnpm',
      '--content',
      'pnpm workspaces',
      '--scope',
      'src/**',
    ]);
    expect(id).toMatch(/^[0-9A-Z]{26}$/);
    const tip = tipOf(ro);
    // no caches at all: every reader would make .git/mem/… first
    rmSync(join(ro.dir, '.git', 'mem'), { recursive: true, force: true });
    for (const args of [
      ['list'],
      ['show', id.slice(0, 12)],
      ['search', 'pnpm'],
      ['context', '--json'],
      ['context', '--file', 'src/a.ts', '-q', 'pnpm'],
      ['stale'],
      ['stats'],
    ]) {
      const res = readOnly(ro, args);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
      expect(res.stderr, args.join(' ')).not.toMatch(/internal error|\n\s+at /);
    }
    expect(readOnly(ro, ['search', 'pnpm', '--json']).stdout).toMatch(/Use pnpm/);
    for (const args of [
      ['add', '--title', 'more', '--content', 'more text', '--json'],
      ['rm', id.slice(0, 12), '--json'],
    ]) {
      const res = readOnly(ro, args);
      expect(failure(res), args.join(' ')).toEqual({ code: 'E_IO', exit: 1 });
      expect(res.stderr, args.join(' ')).toMatch(/read-only|permission denied/);
    }
    // the caches present but stale (another write since): still read, still one line for a write
    await ro.memJson(['list']);
    await ro.memJson(['search', 'pnpm']);
    await ro.memJson(['add', '--title', 'Tabs', '--content', 'indent with tabs']);
    const newTip = tipOf(ro);
    expect(readOnly(ro, ['search', 'tabs', '--json']).stdout).toMatch(/Tabs/);
    expect(readOnly(ro, ['list', '--json']).stdout).toMatch(/Tabs/);
    const res = readOnly(ro, ['add', '--title', 'more', '--content', 'more text', '--json']);
    expect(failure(res)).toEqual({ code: 'E_IO', exit: 1 });
    expect(tipOf(ro)).toBe(newTip);
    expect(tip).not.toBe(newTip);
  }, 120_000);
});

describe.skipIf(!canMount)('a full disk', () => {
  it('a write that finds no space is one line with E_IO, and the store is as it was', async () => {
    const full = makeRepo({ commit: true });
    full.env.GIT_MEM_DAEMON = 'off';
    await full.memJson(['add', '--title', 'Use pnpm', '--content', 'pnpm workspaces']);
    const mnt = tmpDir('gm-full-');
    // a 4 MiB file system holding a copy of the repository, filled up; then the command, then
    // the ref as it is after it (the namespace, and the mount, end with the script)
    const script = [
      'set -e',
      'mount -t tmpfs -o size=4m tmpfs "$1"',
      'cp -a "$2" "$1/r"',
      'cd "$1/r"',
      'git rev-parse refs/memory >&2',
      'dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null || true',
      'set +e',
      '"$3" "$4" add --title big --content "some more text" --json',
      'echo "exit $?"',
      'git rev-parse refs/memory',
      'ls .git/mem/tmp 2>/dev/null | grep "^w-" || true',
    ].join('\n');
    const res = spawnSync('unshare', ['-m', 'sh', '-c', script, 'sh', mnt, full.dir, process.execPath, BIN], {
      env: full.env,
      encoding: 'utf8',
    });
    const [json, exit, after, ...leftovers] = res.stdout.trim().split('\n');
    const [before, ...errLines] = res.stderr.trim().split('\n');
    expect(exit, res.stderr).toBe('exit 1');
    expect(failure({ code: 1, stdout: json, stderr: `${errLines.join('\n')}\n` })).toEqual({
      code: 'E_IO',
      exit: 1,
    });
    expect(errLines.join('\n')).toMatch(/no space left/);
    expect(after).toBe(before);
    expect(leftovers).toEqual([]);
    chmodSync(mnt, 0o700);
  }, 120_000);
});
