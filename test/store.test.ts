/**
 * The store's invariants (it never touches what the user owns, one linear
 * commit per change, identity, --at, resolution, ref locks, how refs/memory
 * moves) on template copies with their Store open in-process: each command runs
 * through its run function on that store (runOn, jsonOn; test/support/template.ts).
 * Finding the repository from a directory or git's environment goes through
 * main() in-process, as a command line does; a repository git-mem cannot serve
 * is refused by the binary (test/system/store-bin.test.ts).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli, sh, tmpDir, writerLeftovers } from './helpers.js';
import { type Fresh, fresh, jsonOn, runOn, template } from './support/template.js';

/** A repository with one commit and no store yet (the first write makes it). */
const BARE = template('store-bare', { init: false });
/** Two memories: a scoped rule with an alias, and a decision. */
const TWO = template('store-two', {
  memories: [
    { type: 'rule', title: 'A', body: 'body a', alias: 'x/a', scope: ['src/**'] },
    { type: 'decision', title: 'B', body: 'body b' },
  ],
});
/** Three decisions written one after another: their ids share a time prefix. */
const THREE = template('store-three', {
  memories: [0, 1, 2].map((i) => ({ type: 'decision', title: `T${i}`, body: 'b' })),
});
/** One memory, "Before". */
const ONE = template('store-one', { memories: [{ type: 'decision', title: 'Before', body: 'x' }] });

/** Hash of everything the user owns: HEAD, index, refs other than ours, and the working tree. */
function userState(r: Pick<Fresh, 'dir' | 'git'>): string {
  const h = createHash('sha256');
  const gitDir = join(r.dir, '.git');
  h.update(readFileSync(join(gitDir, 'HEAD')));
  if (existsSync(join(gitDir, 'index'))) h.update(readFileSync(join(gitDir, 'index')));
  h.update(r.git('for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags'));
  const walk = (d: string) => {
    for (const e of readdirSync(d).sort()) {
      if (e === '.git') continue;
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else h.update(p).update(readFileSync(p));
    }
  };
  walk(r.dir);
  return h.digest('hex');
}

const tip = (r: Pick<Fresh, 'git'>) => r.git('rev-parse', '-q', '--verify', 'refs/memory').trim();
const ids = (docs: Array<{ id: string }>) => docs.map((x) => x.id);
const titles = (docs: Array<{ title: string }>) => docs.map((x) => x.title);

describe('store invariants', () => {
  it('never touches HEAD, the index or the working tree, in any command', async () => {
    const r = await fresh(TWO);
    const [id, id2] = r.records.map((x) => x.id);
    r.write('src/a.ts', 'export const a = 1;\n');
    r.git('add', 'src/a.ts'); // staged, uncommitted
    r.write('notes.txt', 'untracked\n');
    const before = userState(r);
    const cmds = [
      ['add', '--title', 'C', '--content', 'body c', '--alias', 'x/c', '--type', 'rule', '--scope', 'src/**'],
      ['init'],
      ['show', id],
      ['list'],
      ['update', id, '--add-tag', 'z', '--title', 'A2'],
      ['history', id],
      ['mv', id, 'x/b'],
      ['supersede', id2, '--by', id],
      ['rules', '--file', 'src/a.ts'],
      ['stats'],
      ['doctor'],
      ['export'],
      ['prune'],
      ['config', 'set', 'context-budget', '3000', '--shared'],
      ['config', 'list'],
      ['rm', id2],
    ];
    for (const c of cmds) {
      const res = await runOn(r, c, { json: false });
      expect(res.exit, `${c.join(' ')}: ${res.code} ${res.stderr}`).toBe(0);
      expect(userState(r), c.join(' ')).toBe(before);
    }
    expect(r.git('status', '--porcelain')).toBe('A  src/a.ts\n?? notes.txt\n');
  });

  it('keeps a linear history with one commit per change and a descriptive message', async () => {
    const r = await fresh(BARE);
    const { id } = await jsonOn(r, ['add', '--title', 'First', '--content', 'one']);
    await jsonOn(r, ['update', id, '--content', 'two']);
    await jsonOn(r, ['rm', id]);
    const log = r.git('log', '--format=%P|%s', 'refs/memory').trim().split('\n');
    expect(log.map((l) => l.split('|')[1])).toEqual([
      `mem: rm ${id.slice(0, 12)} "First"`,
      `mem: update ${id.slice(0, 12)} "First" (body)`,
      `mem: add ${id.slice(0, 12)} "First"`,
    ]);
    expect(log.every((l) => l.split('|')[0].split(' ').filter(Boolean).length <= 1)).toBe(true);
    expect(r.git('cat-file', '-p', 'refs/memory:FORMAT')).toContain('format: 1');
  });

  it('uses a fallback identity when git has no user configured', async () => {
    const r = await fresh(BARE);
    // a global config with no user (the store reads git's configuration at its first write)
    writeFileSync(r.env.GIT_CONFIG_GLOBAL!, '');
    expect(spawnSync('git', ['config', 'user.name'], { cwd: r.dir, env: r.env }).status).toBe(1);
    const { id } = await jsonOn(r, ['add', '--title', 'Anon', '--content', 'x']);
    expect(r.git('log', '-1', '--format=%an <%ae>', 'refs/memory').trim()).toBe(
      'git-mem <git-mem@localhost>',
    );
    expect((await jsonOn(r, ['show', id])).author).toBe('git-mem <git-mem@localhost>');
  });

  it('works from a subdirectory, with GIT_DIR/GIT_WORK_TREE, and in linked worktrees (one shared store)', async () => {
    // end to end through main(): where a command line finds its store is what is under test
    const r = await fresh(BARE);
    r.write('a/b/c.txt', 'x\n');
    const fromSub = await runCli(['add', '--title', 'From subdir', '--content', 'x', '--json'], {
      cwd: join(r.dir, 'a', 'b'),
      env: r.env,
    });
    expect(fromSub.code, fromSub.stderr).toBe(0);
    const { id } = JSON.parse(fromSub.stdout);
    const outside = tmpDir();
    const viaEnv = await runCli(['list', '--json'], {
      cwd: outside,
      env: { ...r.env, GIT_DIR: join(r.dir, '.git'), GIT_WORK_TREE: r.dir },
    });
    expect(viaEnv.code).toBe(0);
    expect(ids(JSON.parse(viaEnv.stdout))).toEqual([id]);
    const wt = join(tmpDir(), 'wt');
    r.git('worktree', 'add', '-q', wt);
    const fromWt = await runCli(['add', '--title', 'From worktree', '--content', 'y', '--json'], {
      cwd: wt,
      env: r.env,
    });
    expect(fromWt.code).toBe(0);
    const all = await jsonOn(r, ['list']);
    expect(titles(all).sort()).toEqual(['From subdir', 'From worktree']);
    expect(existsSync(join(r.dir, '.git', 'mem'))).toBe(true);
    expect(
      readdirSync(join(r.dir, '.git', 'worktrees')).some((w) =>
        existsSync(join(r.dir, '.git', 'worktrees', w, 'mem')),
      ),
    ).toBe(false);
  });

  it('answers --at a memory commit, a code revision or a date', async () => {
    const r = await fresh(BARE);
    // commit dates have one-second resolution: leave a real gap on each side of the code tag
    const { id: a } = await jsonOn(r, ['add', '--title', 'Old fact', '--content', 'v1']);
    const first = tip(r);
    await new Promise((res) => setTimeout(res, 1100));
    r.write('release.txt', 'v1.2\n');
    r.git('add', 'release.txt');
    r.git('commit', '-q', '-m', 'release 1.2');
    r.git('tag', 'v1.2');
    await new Promise((res) => setTimeout(res, 1100));
    await jsonOn(r, ['update', a, '--content', 'v2']);
    await jsonOn(r, ['add', '--title', 'New fact', '--content', 'later']);
    expect((await jsonOn(r, ['list'])).length).toBe(2);
    expect(ids(await jsonOn(r, ['list', '--at', first]))).toEqual([a]);
    expect((await jsonOn(r, ['show', a, '--at', 'v1.2'])).body).toBe('v1\n');
    expect((await jsonOn(r, ['show', a])).body).toBe('v2\n');
    const bad = await runOn(r, ['list', '--at', 'no-such-rev']);
    expect(bad).toMatchObject({ exit: 2, code: 'E_REV' });
    expect(bad.message).toContain('"no-such-rev"');
  });
});

describe('resolution', () => {
  it('resolves unique prefixes (any case) and aliases; ambiguous prefixes list the candidates', async () => {
    const r = await fresh(THREE);
    const all = r.records.map((x) => x.id);
    // ids made together share a time prefix: their longest common prefix is ambiguous
    let n = 0;
    while (all.every((id) => id[n] === all[0][n])) n++;
    const common = all[0].slice(0, n);
    expect(n).toBeGreaterThanOrEqual(6);
    const amb = await runOn(r, ['show', common.toLowerCase()]);
    expect(amb).toMatchObject({ exit: 2, code: 'E_AMBIGUOUS' });
    // the candidates, as data
    expect([...((amb.data?.candidates ?? []) as string[])].sort()).toEqual([...all].sort());
    for (const id of all) expect((await jsonOn(r, ['show', id.slice(0, 16).toLowerCase()])).id).toBe(id);
    await jsonOn(r, ['mv', all[1], 'standards/ts/eslint']);
    expect((await jsonOn(r, ['show', 'standards/ts/eslint'])).id).toBe(all[1]);
    expect(ids(await jsonOn(r, ['list', 'standards/ts/']))).toEqual([all[1]]);
    expect(ids(await jsonOn(r, ['list', 'standards']))).toEqual([all[1]]);
    const missing = await runOn(r, ['show', 'nope/nothing']);
    expect(missing).toMatchObject({ exit: 3, code: 'E_NOT_FOUND' });
    expect(missing.message).toContain('"nope/nothing"');
  });
});

describe('a stale ref lock', () => {
  it('is named exactly (file, age, the command to clear it) at once; the store is untouched', async () => {
    const r = await fresh(ONE);
    const before = tip(r);
    const lock = join(r.dir, '.git', 'refs', 'memory.lock');
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 3 * 60_000);
    utimesSync(lock, old, old);
    const t0 = Date.now();
    const res = await runOn(r, ['add', '--title', 'Blocked', '--content', 'y']);
    expect(Date.now() - t0).toBeLessThan(5_000); // no 9 s of retries behind a lock nobody will remove
    // the file and its age, as data
    expect(res).toMatchObject({ exit: 1, code: 'E_LOCKED', data: { lock: realpathSync(lock) } });
    expect(res.data?.ageMs).toBeGreaterThanOrEqual(3 * 60_000);
    // one line (main prints message and hint on one), and the command that clears it
    expect(`${res.message} ${res.hint}`).not.toContain('\n');
    expect(res.hint).toContain(`rm '${realpathSync(lock)}'`);
    expect(tip(r)).toBe(before);
    expect(writerLeftovers(r)).toEqual([]);
    rmSync(lock);
    expect((await runOn(r, ['add', '--title', 'After', '--content', 'z'])).exit).toBe(0);
    expect(existsSync(lock)).toBe(false);
  }, 60_000);

  it('held briefly by a live writer is waited for, with back-off', async () => {
    const r = await fresh(ONE);
    const lock = join(r.dir, '.git', 'refs', 'memory.lock');
    writeFileSync(lock, '');
    setTimeout(() => rmSync(lock), 300);
    const res = await runOn(r, ['add', '--title', 'Waited', '--content', 'y']);
    expect(res.exit, res.code).toBe(0);
    expect(titles(await jsonOn(r, ['list']))).toEqual(['Before', 'Waited']);
  });
});

describe('finding the repository', () => {
  /** What git itself says from a directory: git dir, common dir, bare, top level (or its refusal). */
  function gitSays(cwd: string, env: NodeJS.ProcessEnv): string[] | 'refused' {
    const r = spawnSync(
      'git',
      [
        'rev-parse',
        '--path-format=absolute',
        '--git-dir',
        '--git-common-dir',
        '--is-bare-repository',
        '--show-toplevel',
      ],
      { cwd, env, encoding: 'utf8' },
    );
    const lines = r.stdout.split('\n');
    if (!lines[0]) return 'refused';
    return [lines[0], lines[1], lines[2], r.status === 0 ? lines[3] : ''];
  }
  async function weSay(cwd: string, env: NodeJS.ProcessEnv): Promise<string[] | 'refused'> {
    const { openRepo, openRepoSync } = await import('../src/gitstore/repo.js');
    let asy: string[] | 'refused';
    let syn: string[] | 'refused';
    try {
      const o = await openRepo(cwd, env);
      asy = [o.gitDir, o.commonDir, String(o.bare), o.workTree ?? ''];
    } catch (e) {
      expect((e as { code?: string }).code).toBe('E_NOT_A_REPO');
      asy = 'refused';
    }
    try {
      const o = openRepoSync(cwd, env);
      syn = [o.gitDir, o.commonDir, String(o.bare), o.workTree ?? ''];
    } catch (e) {
      expect((e as { code?: string }).code).toBe('E_NOT_A_REPO');
      syn = 'refused';
    }
    expect(syn).toEqual(asy);
    return asy;
  }

  it('is git rev-parse: root, subdirectory, linked worktree, bare, GIT_DIR, GIT_WORK_TREE, ceilings, safe.directory', async () => {
    const r = makeRepo({ commit: true });
    r.write('a/b/x.txt', 'x\n');
    const wt = join(tmpDir(), 'wt');
    r.git('worktree', 'add', '-q', wt);
    const bare = makeRepo({ bare: true });
    const outside = tmpDir();
    const cases: Array<[string, string, NodeJS.ProcessEnv]> = [
      ['root', r.dir, r.env],
      ['subdirectory', join(r.dir, 'a', 'b'), r.env],
      ['inside .git', join(r.dir, '.git', 'refs'), r.env],
      ['linked worktree', wt, r.env],
      ['bare', bare.dir, bare.env],
      ['outside any repository', outside, r.env],
      ['GIT_DIR from outside', outside, { ...r.env, GIT_DIR: join(r.dir, '.git') }],
      ['GIT_DIR + GIT_WORK_TREE', outside, { ...r.env, GIT_DIR: join(r.dir, '.git'), GIT_WORK_TREE: r.dir }],
      ['GIT_WORK_TREE elsewhere', join(r.dir, 'a'), { ...r.env, GIT_WORK_TREE: join(r.dir, 'a') }],
      // a ceiling at the repository's root: from below it git does not look up there
      ['ceiling above cwd', join(r.dir, 'a', 'b'), { ...r.env, GIT_CEILING_DIRECTORIES: r.dir }],
      ['ceiling at cwd', join(r.dir, 'a'), { ...r.env, GIT_CEILING_DIRECTORIES: join(r.dir, 'a') }],
      ['ceiling below the root', r.dir, { ...r.env, GIT_CEILING_DIRECTORIES: join(r.dir, 'a') }],
    ];
    const refusedAt: string[] = [];
    for (const [name, cwd, env] of cases) {
      const want = gitSays(cwd, env);
      expect(await weSay(cwd, env), name).toEqual(want);
      if (want === 'refused') refusedAt.push(name);
    }
    // the cases that exercise a refusal really do refuse (else this test could not fail)
    expect(refusedAt).toEqual(['outside any repository', 'ceiling above cwd']);
    // and a command line there says so in one line, as git would (end to end through main())
    const res = await runCli(['list', '--json'], {
      cwd: join(r.dir, 'a', 'b'),
      env: { ...r.env, GIT_CEILING_DIRECTORIES: r.dir },
    });
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stdout).error.code).toBe('E_NOT_A_REPO');
    expect(res.stderr).toMatch(/^git-mem: error: [^\n]*\n$/);
  });

  it("honours git's ownership check (safe.directory) as git does", async () => {
    // a repository owned by another user: as root we can make one; as anyone else, skip (cannot chown)
    if (process.getuid?.() !== 0) return;
    const r = await fresh(ONE);
    const env = { ...r.env };
    delete env.SUDO_UID; // git trusts SUDO_UID's repositories when run as root through sudo
    sh('chown', ['-R', '12345:12345', r.dir], r.dir, env);
    try {
      expect(gitSays(r.dir, env)).toBe('refused');
      expect(await weSay(r.dir, env)).toBe('refused');
      // end to end through main(): a command line there is refused as git refuses it, in one line
      const res = await runCli(['list', '--json'], { cwd: r.dir, env });
      expect(res.code).toBe(1);
      const { error } = JSON.parse(res.stdout);
      expect(error.code).toBe('E_NOT_A_REPO');
      expect(error.message).toContain('dubious ownership'); // git's reason, passed on
      expect(error.hint).toContain('safe.directory'); // the setting that lets it in
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      // marked safe in the global config: both git and git-mem serve it
      sh('git', ['config', '--global', '--add', 'safe.directory', r.dir], r.dir, env);
      expect(gitSays(r.dir, env)).not.toBe('refused');
      expect(await weSay(r.dir, env)).toEqual(gitSays(r.dir, env));
      const served = await runCli(['list', '--json'], { cwd: r.dir, env });
      expect(served.code).toBe(0);
      expect(titles(JSON.parse(served.stdout))).toEqual(['Before']);
    } finally {
      sh('chown', ['-R', '0:0', r.dir], '/', env);
    }
  });
});

describe('identity', () => {
  it('takes the repository-local user over the global one, as git does', async () => {
    const r = await fresh(BARE);
    // before the store's first write, when it reads git's configuration
    r.git('config', 'user.name', 'Local Person');
    r.git('config', 'user.email', 'local@example.com');
    await jsonOn(r, ['add', '--title', 'Who', '--content', 'x']);
    expect(r.git('log', '-1', '--format=%an <%ae>', 'refs/memory').trim()).toBe(
      'Local Person <local@example.com>',
    );
  });
});

describe('moving refs/memory', () => {
  it('moves a packed or loose ref through git, with its reflog and reference-transaction hook', async () => {
    const r = await fresh(BARE);
    await jsonOn(r, ['add', '--title', 'one', '--content', 'a']);
    // packed (as after git gc): the loose file written next overrides it
    r.git('pack-refs', '--all');
    expect(existsSync(join(r.dir, '.git', 'refs', 'memory'))).toBe(false);
    const packed = tip(r);
    await jsonOn(r, ['add', '--title', 'two', '--content', 'b']);
    expect(r.git('rev-parse', `${tip(r)}^`).trim()).toBe(packed);
    expect(readFileSync(join(r.dir, '.git', 'refs', 'memory'), 'utf8')).toBe(`${tip(r)}\n`);
    expect(existsSync(join(r.dir, '.git', 'refs', 'memory.lock'))).toBe(false);

    // a reflog for the ref (core.logAllRefUpdates=always): git writes it
    r.git('config', 'core.logAllRefUpdates', 'always');
    await jsonOn(r, ['add', '--title', 'three', '--content', 'c']);
    const log = r.git('reflog', 'show', '--format=%H', 'refs/memory').trim().split('\n');
    expect(log[0]).toBe(tip(r));
    // the reflog says what the change was
    expect(r.git('reflog', 'show', '-1', '--format=%gs', 'refs/memory')).toMatch(
      /^mem: add [0-9A-Z]{12} "three"/,
    );
    await jsonOn(r, ['add', '--title', 'four', '--content', 'd']);
    expect(r.git('reflog', 'show', '--format=%H', 'refs/memory').trim().split('\n')).toHaveLength(
      log.length + 1,
    );
    r.git('config', '--unset', 'core.logAllRefUpdates');

    // a reference-transaction hook sees every update of the ref
    const seen = join(r.dir, '.git', 'ref-tx.log');
    writeFileSync(
      join(r.dir, '.git', 'hooks', 'reference-transaction'),
      `#!/bin/sh\n[ "$1" = committed ] && cat >> "${seen}"\nexit 0\n`,
      { mode: 0o755 },
    );
    await jsonOn(r, ['add', '--title', 'five', '--content', 'e']);
    expect(readFileSync(seen, 'utf8')).toContain(`${tip(r)} refs/memory`);
    r.git('fsck', '--strict', '--no-dangling');
    expect(titles(await jsonOn(r, ['list']))).toEqual(['one', 'two', 'three', 'four', 'five']);
  });
});

describe('commits and merge bases through the store', () => {
  it('commitOf peels as rev-parse REV^{commit} does; isAncestor and mergeBases agree with git', async () => {
    const { openRepo } = await import('../src/gitstore/repo.js');
    const { Store } = await import('../src/gitstore/store.js');
    const r = makeRepo({ commit: true });
    const base = r.git('rev-parse', 'HEAD').trim();
    r.git('checkout', '-q', '-b', 'side');
    r.git('commit', '-q', '--allow-empty', '-m', 'side');
    const side = r.git('rev-parse', 'HEAD').trim();
    r.git('checkout', '-q', '-');
    r.git('commit', '-q', '--allow-empty', '-m', 'main');
    const main = r.git('rev-parse', 'HEAD').trim();
    r.git('tag', '-a', '-m', 'annotated', 'v1', side);
    r.git('checkout', '-q', '--orphan', 'alone');
    r.git('commit', '-q', '--allow-empty', '-m', 'unrelated');
    const alone = r.git('rev-parse', 'HEAD').trim();
    const store = new Store(await openRepo(r.dir, r.env));
    try {
      expect(await store.commitOf('refs/tags/v1')).toBe(side); // the tag object, peeled
      expect(await store.commitOf(`${main}^{tree}`)).toBeNull(); // a tree names no commit
      expect(await store.commitOf('refs/heads/nothing-here')).toBeNull();
      const rev = (x: string) => r.git('rev-parse', '-q', '--verify', `${x}^{commit}`).trim();
      expect(await store.commitOf('side')).toBe(rev('side'));

      const gitSays = (a: string, b: string) =>
        spawnSync('git', ['merge-base', '--is-ancestor', a, b], { cwd: r.dir, env: r.env }).status === 0;
      for (const [a, b] of [
        [base, main],
        [main, base],
        [side, main],
        [base, side],
        [main, main],
        [alone, main],
        [main, alone],
      ])
        expect(await store.isAncestor(a, b), `${a.slice(0, 7)} in ${b.slice(0, 7)}`).toBe(gitSays(a, b));
      expect(await store.mergeBases(side, main)).toEqual([base]);
      expect(await store.mergeBases(main, side)).toEqual([base]);
      expect(await store.mergeBases(alone, main)).toEqual([]);
      // asked of git once per pair, either way round
      expect(store.mergeBases(main, side)).toBe(store.mergeBases(side, main));
      await expect(store.mergeBases(main, 'f'.repeat(40))).rejects.toMatchObject({ code: 'E_GIT' });
      // a commit this repository does not have is nobody's ancestor (as merge-base --is-ancestor says)
      expect(await store.isAncestor('f'.repeat(40), main)).toBe(false);
      expect(await store.isAncestor(main, 'f'.repeat(40))).toBe(false);
    } finally {
      store.close();
    }
  });
});
