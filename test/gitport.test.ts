import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, makeRepo, sh, type TestRepo, tmpDir } from './helpers.js';

// The built CLI as users run it, against repositories whose objects git packed.

/** Runs bin/git-mem.js; a process that does not exit within `ms` is killed and reported as such. */
function runBinBounded(args: string[], r: { dir: string; env: NodeJS.ProcessEnv }, ms = 20_000) {
  const t0 = Date.now();
  const res = spawnSync(process.execPath, [BIN, ...args], {
    cwd: r.dir,
    env: r.env,
    input: '',
    encoding: 'utf8',
    timeout: ms,
    killSignal: 'SIGKILL',
  });
  return { code: res.status, signal: res.signal, stderr: res.stderr, ms: Date.now() - t0 };
}

const state = (r: TestRepo) => r.git('for-each-ref', '--format=%(refname) %(objectname)');

const REFUSED: Array<[string, string[], RegExp]> = [
  ['an unknown type', ['add', '--type', 'bogus', '--title', 'x', '--content', 'y'], /unknown type "bogus"/],
  [
    'a confidence out of range',
    ['add', '--confidence', '7', '--title', 'x', '--content', 'y'],
    /confidence 7/,
  ],
  [
    'a secret',
    [
      'add',
      '--title',
      'creds',
      '--content',
      'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    ],
    /secret/i,
  ],
  [
    'an anchor to no file',
    ['add', '--title', 'x', '--content', 'y', '--anchor', 'no/such/file.ts:1'],
    /no\/such/,
  ],
];

describe('refused input with packed objects (after git gc, and in a clone)', () => {
  it('exits promptly, non-zero, in one line, and leaves every ref as it was', () => {
    const r = makeRepo({ commit: true });
    for (let i = 0; i < 3; i++) {
      const res = runBinBounded(['add', '--title', `kept ${i}`, '--content', `body ${i}`], r);
      expect(res.code, res.stderr).toBe(0);
    }
    r.git('gc', '-q');
    expect(r.git('count-objects', '-v')).toMatch(/^count: 0$/m); // every object is packed
    const clone = join(tmpDir(), 'clone');
    sh('git', ['clone', '-q', r.dir, clone], r.dir, r.env);
    sh('git', ['fetch', '-q', 'origin', 'refs/memory:refs/memory'], clone, r.env);
    const c: TestRepo = { ...r, dir: clone, git: (...a: string[]) => sh('git', a, clone, r.env) };
    for (const repo of [r, c]) {
      const before = state(repo);
      for (const [what, args, says] of REFUSED) {
        const res = runBinBounded(args, repo);
        expect(res.signal, `${what}: still running after ${res.ms} ms`).toBeNull();
        expect(res.code, what).not.toBe(0);
        expect(res.stderr, what).toMatch(says);
        expect(res.stderr.trim().split('\n'), what).toHaveLength(1);
        expect(res.stderr, what).not.toContain('internal error');
      }
      expect(state(repo)).toBe(before);
      // and the store still serves: a good add goes through
      expect(runBinBounded(['add', '--title', 'after', '--content', 'fine'], repo).code).toBe(0);
      repo.git('fsck', '--strict', '--no-dangling');
    }
  }, 240_000);
});

describe('core.fsync', () => {
  it('is honoured by an add: git writes the objects and refs, so git makes the fsyncs', () => {
    const strace = spawnSync('strace', ['-V'], { encoding: 'utf8' });
    if (strace.status !== 0) return; // no strace on this machine: nothing to observe the calls with
    const r = makeRepo({ commit: true });
    expect(runBinBounded(['init'], r).code).toBe(0);
    const fsyncs = (title: string) => {
      const log = join(tmpDir(), 'strace.txt');
      const res = spawnSync(
        'strace',
        [
          '-f',
          '-qq',
          '-e',
          'trace=fsync,fdatasync',
          '-o',
          log,
          process.execPath,
          BIN,
          'add',
          '--title',
          title,
          '--content',
          title,
        ],
        { cwd: r.dir, env: r.env, encoding: 'utf8', timeout: 60_000 },
      );
      expect(res.status, res.stderr).toBe(0);
      return sh('cat', [log], r.dir, r.env)
        .split('\n')
        .filter((l) => /\bf(data)?sync\(/.test(l)).length;
    };
    const without = fsyncs('without fsync config');
    r.git('config', 'core.fsync', 'all');
    const withAll = fsyncs('with core.fsync all');
    expect(withAll).toBeGreaterThan(without);
    expect(withAll).toBeGreaterThanOrEqual(3); // at least the objects, the ref and the reflog or pack
  }, 120_000);
});
