import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { objectId, treeObject } from '../src/gitstore/tree.js';
import { BIN, makeRepo, rng, sh, type TestRepo, tmpDir } from './helpers.js';

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
  return {
    code: res.status,
    signal: res.signal,
    stdout: res.stdout,
    stderr: res.stderr,
    ms: Date.now() - t0,
  };
}

const state = (r: TestRepo) => r.git('for-each-ref', '--format=%(refname) %(objectname)');

/** What a refusal is: its error's code and data, and what its message names where no data field holds it. */
interface Refusal {
  error: Record<string, unknown>;
  names?: string;
}

const REFUSED: Array<[string, string[], Refusal]> = [
  [
    'an unknown type',
    ['add', '--type', 'bogus', '--title', 'x', '--content', 'y'],
    { error: { code: 'E_INVALID_ARG' }, names: '"bogus"' },
  ],
  [
    'a confidence out of range',
    ['add', '--confidence', '7', '--title', 'x', '--content', 'y'],
    { error: { code: 'E_INVALID_ARG', field: 'confidence' } },
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
    { error: { code: 'E_SECRET', field: 'body' } },
  ],
  [
    'an anchor to no file',
    ['add', '--title', 'x', '--content', 'y', '--anchor', 'no/such/file.ts:1'],
    { error: { code: 'E_ANCHOR' }, names: 'no/such/file.ts' },
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
      for (const [what, args, refusal] of REFUSED) {
        const res = runBinBounded([...args, '--json'], repo);
        expect(res.signal, `${what}: still running after ${res.ms} ms`).toBeNull();
        expect(res.code, what).not.toBe(0);
        const error = JSON.parse(res.stdout).error;
        expect(error, what).toMatchObject(refusal.error);
        if (refusal.names) expect(error.message, what).toContain(refusal.names);
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

describe('object ids named before git answers', () => {
  // The writer names each new blob and tree itself (objectId, treeObject), so a change's objects go to
  // git side by side; git's answer is checked against the name. This is that check, over shapes git
  // orders in its own way: prefixes, a folder beside a file of the name it would have with a suffix,
  // bytes past ASCII, and every mode.
  it('agree with git mktree and git hash-object on trees and blobs of every shape', () => {
    const r = makeRepo();
    const rand = rng(11);
    const names = [
      'a',
      'a.b',
      'a-b',
      'a0',
      'ab',
      'a_b',
      'b',
      'é',
      'z',
      'Ω.md',
      '日本',
      '😀',
      'ﬀ',
      '\u{10000}x',
    ];
    const modes = ['100644', '100755', '120000', '040000', '160000'];
    const batch: string[] = [];
    const computed: string[] = [];
    for (let t = 0; t < 40; t++) {
      const picked = names.filter(() => rand() < 0.5);
      const entries = picked.map((name) => ({
        name,
        mode: modes[Math.floor(rand() * modes.length)],
        oid: createHash('sha1').update(`${t}${name}`).digest('hex'),
      }));
      const type = (m: string) => (m === '040000' ? 'tree' : m === '160000' ? 'commit' : 'blob');
      batch.push(`${entries.map((e) => `${e.mode} ${type(e.mode)} ${e.oid}\t${e.name}\0`).join('')}\0`);
      computed.push(objectId('tree', treeObject(entries)));
    }
    const fromGit = sh('git', ['mktree', '-z', '--missing', '--batch'], r.dir, r.env, batch.join(''))
      .trim()
      .split('\n');
    expect(fromGit).toEqual(computed);
    const blob = Buffer.from('line one\r\nline two\r\n\u00e9\0 binary\n');
    const file = join(tmpDir(), 'blob');
    writeFileSync(file, blob);
    expect(sh('git', ['hash-object', '--no-filters', file], r.dir, r.env).trim()).toBe(
      objectId('blob', blob),
    );
  });

  it('keep a record byte for byte where git would convert line endings (core.autocrlf)', async () => {
    const r = makeRepo({ commit: true });
    r.git('config', 'core.autocrlf', 'true');
    expect((await r.mem(['init'])).code).toBe(0);
    const body = 'first line\r\nsecond line\r\n';
    const add = await r.mem(['add', '--title', 'crlf body', '--json', '--content', body]);
    expect(add.code, add.stderr).toBe(0);
    const id = JSON.parse(add.stdout).id as string;
    const shown = JSON.parse((await r.mem(['show', id, '--json'])).stdout);
    expect(shown.body).toContain('first line\r\nsecond line');
    r.git('fsck', '--strict', '--no-dangling');
  });
});

describe('git processes started together (startGits: one process start for several)', () => {
  it('answer as each alone: the arguments as given, all output however late it is read, a refusal in its own stderr', async () => {
    const { output, startGits } = await import('../src/gitstore/git.js');
    const r = makeRepo({ commit: true });
    const alone = (args: string[], input = '') =>
      spawnSync('git', args, { cwd: r.dir, env: r.env, input, encoding: 'utf8' });
    const odd = 'it\'s a "quoted" $HOME `name` \\ ;&|<>\nline two';
    const [refused, config, quoted, reader] = startGits(
      [
        { args: ['rev-parse', '--verify', 'refs/heads/no-such'], stderr: true },
        { args: ['config', '-z', '--list', '--show-scope'] },
        { args: ['rev-parse', '--sq-quote', odd] },
        { args: ['cat-file', '--batch'] },
      ],
      r.dir,
      r.env,
    );
    // an argument of every character sh treats specially reaches git as given
    expect((await output(quoted, 'rev-parse')).stdout.toString()).toBe(
      alone(['rev-parse', '--sq-quote', odd]).stdout,
    );
    // read only once the others have ended (the shell too, were it not waiting for them)
    await new Promise((done) => setTimeout(done, 500));
    expect((await output(config, 'config')).stdout.toString()).toBe(
      alone(['config', '-z', '--list', '--show-scope']).stdout,
    );
    const no = await output(refused, 'rev-parse');
    expect(no.stderr).toBe(alone(['rev-parse', '--verify', 'refs/heads/no-such']).stderr);
    expect(no.stderr).toMatch(/fatal|needed a single revision/);
    // a long-lived one answers request after request
    reader.stdin.write('HEAD\n');
    const head = await new Promise<string>((done) =>
      reader.stdout.once('data', (d: Buffer) => done(d.toString())),
    );
    expect(head.split(' ')[0]).toBe(r.git('rev-parse', 'HEAD').trim());
    reader.stdin.end();
    await new Promise((done) => reader.on('close', done));
  });
});
