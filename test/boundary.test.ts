/**
 * The trust boundary beyond sync: export --dir, import, rules export and the
 * merge driver write only inside their target and refuse what the validator
 * refuses; doctor reports paths outside the store layout; a stale
 * refs/memory.lock and a remote that cannot lock its ref are named in git's
 * and the file system's own terms. Plus the validator's pure checks.
 * The export, doctor, import and rules cases copy template stores
 * (test/support/template.ts) and run the commands on their open store; their
 * refusals are asserted by code and the path they name.
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { confinedPath } from '../src/merge/confine.js';
import type { ProblemKind } from '../src/merge/problems.js';
import {
  anchorPathProblem,
  blobProblem,
  collisionProblems,
  nameProblem,
  pathProblem,
} from '../src/merge/validate.js';
import { newId } from '../src/model/id.js';
import { recordPath } from '../src/model/record.js';
import { errorOf, makeRepo, type TestRepo, thrown, tmpDir } from './helpers.js';
import { plumber, recordText, type Spec } from './hostile-helpers.js';
import { type Fresh, fresh, template } from './support/template.js';
import { bareRemote, clone } from './sync-helpers.js';

/** a store holding one memory, "fine" */
const FINE = template('boundary-fine', { commands: [['add', '--title', 'fine', '--content', 'fine\n']] });
/** a store holding one memory ("one", ids[0]) exported as files under mem/ */
const EXPORTED = template('boundary-exported', {
  commands: [
    ['add', '--title', 'one', '--content', 'one\n'],
    ['export', '--dir', 'mem'],
  ],
});
/** a first commit, no store yet */
const NO_STORE = template('no-store', { init: false });

const refsOf = (r: Pick<TestRepo, 'git'>) => r.git('for-each-ref', '--format=%(objectname) %(refname)');

/** A store with one record, then `spec` laid over it straight into refs/memory (a poisoned clone). */
async function poisoned(spec: Spec): Promise<Fresh> {
  const r = await fresh(FINE);
  const p = plumber(r.dir, r.env);
  const tip = r.git('rev-parse', 'refs/memory').trim();
  r.git('update-ref', 'refs/memory', p.commitOver(tip, spec), tip);
  return r;
}

/** Every file under `dir` (relative paths), links included, not followed. */
function listAll(dir: string, sub = ''): string[] {
  if (!existsSync(join(dir, sub))) return [];
  return readdirSync(join(dir, sub), { withFileTypes: true }).flatMap((d) => {
    const rel = sub ? `${sub}/${d.name}` : d.name;
    return d.isDirectory() ? [rel, ...listAll(dir, rel)] : [rel];
  });
}

describe('export --dir of a poisoned store', () => {
  it('refuses memories/../../.git/hooks/post-commit; no file outside the target, .git/hooks untouched', async () => {
    const r = await poisoned({
      memories: {
        tree: {
          '..': {
            tree: {
              '..': {
                tree: {
                  '.git': {
                    tree: {
                      hooks: {
                        tree: { 'post-commit': { blob: '#!/bin/sh\ntouch pwned\n', mode: '100755' } },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    });
    const hooks = listAll(join(r.dir, '.git', 'hooks'));
    const top = listAll(r.dir).filter((f) => !f.startsWith('.git/'));
    const before = refsOf(r);
    const res = await r.mem(['export', '--dir', '.mem']);
    expect(res).toMatchObject({
      code: 2,
      error: 'E_INVALID_RECORD',
      data: { path: 'memories/..', problem: 'dot-name' },
    });
    expect(existsSync(join(r.dir, '.git', 'hooks', 'post-commit'))).toBe(false);
    expect(listAll(join(r.dir, '.git', 'hooks'))).toEqual(hooks);
    expect(listAll(r.dir).filter((f) => !f.startsWith('.git/'))).toEqual(top);
    expect(refsOf(r)).toBe(before);
    // doctor names it
    const doc = await r.mem(['doctor', '--json']);
    expect(doc.code).toBe(1);
    const tree = doc.json.findings.filter((f: { check: string }) => f.check === 'tree');
    expect(tree).toHaveLength(1);
    expect(tree[0]).toMatchObject({ level: 'error', path: 'memories/..', problem: 'dot-name' });
  });

  it('never writes through a symlinked folder inside the target', async () => {
    const r = await fresh(NO_STORE);
    const one = await r.memJson(['add', '--title', 'one', '--content', 'one\n']);
    const outside = tmpDir('gm-outside-');
    mkdirSync(join(r.dir, '.mem'));
    symlinkSync(outside, join(r.dir, '.mem', 'memories'));
    const res = await r.mem(['export', '--dir', '.mem']);
    expect(res).toMatchObject({ code: 1, error: 'E_IO' });
    // names the record it would have written (data) and the link in the way
    expect(res.data).toMatchObject({ path: recordPath(one.id) });
    expect(res.message).toContain('memories');
    expect(readdirSync(outside)).toEqual([]);
    // a symlinked record file in place is refused too, its target untouched
    const r2 = await fresh(NO_STORE);
    const two = await r2.memJson(['add', '--title', 'two', '--content', 'two\n']);
    const victim = join(outside, 'victim.txt');
    writeFileSync(victim, 'keep\n');
    const f = join(r2.dir, '.mem', recordPath(two.id));
    mkdirSync(join(f, '..'), { recursive: true });
    symlinkSync(victim, f);
    expect(await r2.mem(['export', '--dir', '.mem'])).toMatchObject({ code: 1, error: 'E_IO' });
    expect(readdirSync(outside)).toEqual(['victim.txt']);
    expect(one.id).toBeTruthy();
  });
});

describe('doctor', () => {
  it('reports junk under memories/ and where it came from', async () => {
    const id = newId();
    const r = await poisoned({
      memories: {
        tree: { 'README.md': { blob: 'hi\n' }, [id.slice(-2)]: { tree: { 'notes.txt': { blob: 'x\n' } } } },
      },
    });
    const doc = await r.mem(['doctor', '--json']);
    expect(doc.code).toBe(1);
    const found = doc.json.findings.filter((f: { check: string; level: string }) => f.check === 'tree');
    const xx = id.slice(-2);
    // the same check a sync of this store would be refused by (docs/sync.md)
    expect(found.map((f: { path: string; problem: string }) => [f.path, f.problem]).sort()).toEqual(
      [
        ['memories/README.md', 'layout'],
        [`memories/${xx}/notes.txt`, 'layout'],
      ].sort(),
    );
    expect(
      found.every(
        (f: { level: string; fix: string }) => f.level === 'error' && /added by commit \w{12}/.test(f.fix),
      ),
    ).toBe(true);
    // a clean store says so
    const clean = await fresh(FINE);
    const ok = (await clean.mem(['doctor', '--json'])).json;
    expect(ok.findings).toContainEqual({
      level: 'ok',
      check: 'tree',
      message: 'every path fits the store layout',
    });
  });
});

describe('import', () => {
  async function exported(): Promise<{ r: Fresh; id: string; dir: string }> {
    const r = await fresh(EXPORTED);
    return { r, id: r.ids[0], dir: join(r.dir, 'mem') };
  }

  it('--dir refuses links, anchors outside the repository, an unknown format and junk; the store unchanged', async () => {
    const { r, id, dir } = await exported();
    const before = refsOf(r);
    const added = newId();
    const put = (rel: string, text: string) => {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), text);
    };
    // each refusal: its code and the path it names (in the folder given)
    const tries: Array<[() => void, string, string, () => void]> = [
      [
        () => {
          mkdirSync(join(dir, recordPath(added), '..'), { recursive: true });
          symlinkSync('/etc/hostname', join(dir, recordPath(added)));
        },
        'E_INVALID_RECORD',
        recordPath(added),
        () => rmSync(join(dir, recordPath(added))),
      ],
      [
        () => put(recordPath(added), recordText(added, 'x', 'y\n', 'anchors:\n  - path: ../../etc/passwd')),
        'E_INVALID_RECORD',
        recordPath(added),
        () => rmSync(join(dir, recordPath(added))),
      ],
      [() => put('FORMAT', 'format: 99\n'), 'E_INVALID_RECORD', 'FORMAT', () => put('FORMAT', 'format: 1\n')],
      [
        () => put('memories/notes.txt', 'x\n'),
        'E_INVALID_RECORD',
        'memories/notes.txt',
        () => rmSync(join(dir, 'memories/notes.txt')),
      ],
      [
        () => put(recordPath(added), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0xff]).toString('latin1')),
        'E_INVALID_RECORD',
        recordPath(added),
        () => rmSync(join(dir, recordPath(added))),
      ],
    ];
    for (const [make, code, path, undo] of tries) {
      make();
      const res = await r.mem(['import', '--dir', 'mem']);
      expect(res, path).toMatchObject({ code: 2, error: code });
      expect(res.message, code).toContain(path);
      expect(refsOf(r)).toBe(before);
      undo();
    }
    expect(id).toBeTruthy();
  });

  it('--dir refuses a likely secret in a tombstone, the shared settings or the attic, as rm --reason does', async () => {
    const { r, dir } = await exported();
    const before = refsOf(r);
    const token = 'ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
    const gone = newId();
    // each file, and the line and kind the refusal names
    const files: Array<[string, string, string[]]> = [
      [
        `tombstones/${gone.slice(-2)}/${gone}.yaml`,
        `id: ${gone}\ndeleted: "2026-01-01T00:00:00.000Z"\nreason: "token ${token}"\n`,
        ['GitHub token', `tombstones/${gone.slice(-2)}/${gone}.yaml`, 'line 3'],
      ],
      [
        'config.yaml',
        'aws_secret_access_key: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n',
        ['config.yaml', 'line 1'],
      ],
    ];
    for (const [rel, text, named] of files) {
      mkdirSync(join(dir, rel, '..'), { recursive: true });
      writeFileSync(join(dir, rel), text);
      const res = await r.mem(['import', '--dir', 'mem']);
      expect(res, rel).toMatchObject({ code: 2, error: 'E_SECRET' });
      for (const n of named) expect(res.message, rel).toContain(n);
      expect(refsOf(r)).toBe(before);
      rmSync(join(dir, rel));
    }
    // not a secret after all: --allow-secret takes it, as for a record
    const [rel, text] = files[0];
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
    expect((await r.mem(['import', '--dir', 'mem', '--allow-secret'])).code).toBe(0);
    expect(r.git('show', `refs/memory:${rel}`)).toContain(token);
  });

  it('JSON lines with an anchor outside the repository are refused', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['init']);
    const before = refsOf(r);
    const line = JSON.stringify({ title: 't', body: 'b', anchors: [{ path: '../../../etc/passwd' }] });
    // named by its line in the file (blank lines count), not by a record number or an id made for it
    const res = await r.mem(['import', '-'], { stdin: `\n\n${line}\n` });
    expect(res).toMatchObject({ code: 2, error: 'E_ANCHOR' });
    for (const named of ['line 3', '../../../etc/passwd']) expect(res.message).toContain(named);
    expect(refsOf(r)).toBe(before);
  });
});

describe('rules export and the merge driver', () => {
  it('rules export refuses a symlinked .cursor folder and writes nothing outside', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['add', '--type', 'rule', '--title', 'Use pnpm', '--content', 'pnpm only\n']);
    const outside = tmpDir('gm-outside-');
    symlinkSync(outside, join(r.dir, '.cursor'));
    const res = await r.mem(['rules', 'export', '--to', 'cursor']);
    expect(res).toMatchObject({ code: 1, error: 'E_IO' });
    // names the file it would have written (data) and the link in the way
    expect(res.data).toMatchObject({ path: '.cursor/rules' });
    expect(res.message).toContain('.cursor');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('the merge driver refuses a hostile other side and leaves %A as it was', async () => {
    const r = makeRepo({ commit: true });
    const id = newId();
    const dir = tmpDir('gm-drv-');
    const ours = recordText(id, 'ours', 'ours\n');
    writeFileSync(join(dir, 'base'), recordText(id, 'base', 'base\n'));
    writeFileSync(join(dir, 'ours'), ours);
    writeFileSync(join(dir, 'theirs'), recordText(id, 'theirs', 'x\n', 'anchors:\n  - path: /etc/passwd'));
    const res = await r.mem([
      'merge-driver',
      join(dir, 'base'),
      join(dir, 'ours'),
      join(dir, 'theirs'),
      `mem/${recordPath(id)}`,
      '--json',
    ]);
    // any non-zero exit is a conflict to git; E_MERGE's is 4
    expect(res.code).toBe(4);
    expect(errorOf(res)).toMatchObject({ code: 'E_MERGE', path: `mem/${recordPath(id)}`, side: 'theirs' });
    expect(errorOf(res).message).toContain('/etc/passwd');
    expect(readFileSync(join(dir, 'ours'), 'utf8')).toBe(ours);
    // a hostile %P never leads a write outside the work tree
    writeFileSync(join(dir, 'theirs'), recordText(id, 'theirs', 'x\n'));
    const res2 = await r.mem([
      'merge-driver',
      join(dir, 'base'),
      join(dir, 'ours'),
      join(dir, 'theirs'),
      `../../.git/memories/${id.slice(-2)}/${id}.md`,
      '--json',
    ]);
    expect(res2.code).toBe(4);
    expect(errorOf(res2)).toMatchObject({ code: 'E_MERGE', side: 'theirs', problem: 'dot-name' });
    expect(readFileSync(join(dir, 'ours'), 'utf8')).toBe(ours);
  });
});

describe("locks and refusals in git's words", () => {
  it('a stale refs/memory.lock during sync is named with its age and how to clear it', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    await a.memJson(['add', '--title', 'from a', '--content', 'a\n']);
    await a.memJson(['sync']);
    await b.memJson(['add', '--title', 'from b', '--content', 'b\n']);
    const lock = join(b.dir, '.git', 'refs', 'memory.lock');
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 3600_000);
    utimesSync(lock, old, old);
    const before = b.git('rev-parse', 'refs/memory').trim();
    const res = await b.mem(['sync', '--json']);
    expect(res.code).toBe(1);
    expect(res.stderr.trimEnd().split('\n')).toHaveLength(1);
    // the lock and its age, as the error's data (not E_CONFLICT_RETRY: no retrying behind it)
    const e = errorOf(res);
    expect(e).toMatchObject({ code: 'E_LOCKED', lock });
    expect(e.ageMs).toBeGreaterThanOrEqual(59 * 60_000);
    expect(e.ageMs).toBeLessThan(61 * 60_000);
    expect(res.stderr).toContain(`rm '${lock}'`); // the hint: how to clear it
    expect(b.git('rev-parse', 'refs/memory').trim()).toBe(before);
  });

  it('a remote that cannot lock its ref: git\'s own reason, after a few tries, not "rejected 9 times"', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    await a.memJson(['add', '--title', 'first', '--content', 'a\n']);
    await a.memJson(['sync']);
    await a.memJson(['add', '--title', 'second', '--content', 'b\n']);
    writeFileSync(join(remote.dir, 'refs', 'mem', 'memory.lock'), '');
    const res = await a.mem(['sync', '--json']);
    expect(res.code).toBe(1);
    // E_REMOTE naming the ref the remote refused (not E_CONFLICT_RETRY after 9 rejections) ...
    const e = errorOf(res);
    expect(e).toMatchObject({
      code: 'E_REMOTE',
      remote: 'origin',
      rejected: [expect.objectContaining({ ref: 'refs/mem/memory' })],
    });
    // ... with git's own reason, passed on
    expect(e.message).toMatch(
      /cannot lock ref 'refs\/mem\/memory': Unable to create '.*memory\.lock': File exists/,
    );
  });
});

describe('the validator, pure', () => {
  it('names: each refusal says which check it is', () => {
    const kinds: Array<[string, ProblemKind]> = [
      ['', 'empty-name'],
      ['.', 'dot-name'],
      ['..', 'dot-name'],
      ['.git', 'git-name'],
      ['.GIT', 'git-name'],
      ['.Git.', 'git-name'],
      ['git~1', 'git-name'],
      ['.g\u200cit', 'git-name'],
      ['a/b', 'separator'],
      ['a\\b', 'separator'],
      ['a\nb', 'control-chars'],
      ['a\u0000b', 'control-chars'],
      ['\ufffd', 'not-utf8'],
    ];
    for (const [bad, kind] of kinds) expect(nameProblem(bad)?.problem, JSON.stringify(bad)).toBe(kind);
    for (const ok of ['memories', 'AB', '01ARZ3NDEKTSV4RRFFQ69G5FAV.md', '.gitignore', 'git', 'config.yaml'])
      expect(nameProblem(ok), ok).toBeNull();
  });

  it('collisions', () => {
    expect(collisionProblems(['a', 'b', 'c'])).toEqual([]);
    expect(collisionProblems(['README', 'readme'])[0]).toMatchObject({
      name: 'readme',
      problem: 'case-collision',
    });
    expect(collisionProblems(['\u00e9', 'e\u0301'])[0]).toMatchObject({ problem: 'unicode-collision' });
    expect(collisionProblems(['x', 'x'])[0]).toMatchObject({ name: 'x', problem: 'same-name' });
  });

  it('layout paths', () => {
    const id = newId();
    for (const ok of [
      'FORMAT',
      'config.yaml',
      recordPath(id),
      `tombstones/${id.slice(-2)}/${id}.yaml`,
      `attic/${id.slice(-2)}/${id}/0123456789abcdef.md`,
    ])
      expect(pathProblem(ok), ok).toBeNull();
    for (const bad of [
      `memories/${id}.md`,
      'memories/AB/x.md',
      `memories/${id.slice(-2)}/${id}.md/x`,
      'sessions/x',
      'README',
      `memories/../${id}.md`,
      'a/b/c/d/e/f',
    ])
      expect(pathProblem(bad), bad).not.toBeNull();
    expect(pathProblem('sessions/x')?.problem).toBe('layout');
    expect(pathProblem(`memories/${id.slice(-2)}/${id}.md/x`)?.problem).toBe('file-or-folder');
    expect(pathProblem(`memories/../${id}.md`)?.problem).toBe('dot-name');
    expect(pathProblem('a/b/c/d/e/f')?.problem).toBe('too-deep');
  });

  it('anchor paths', () => {
    for (const ok of [
      'src/a.ts',
      'README.md',
      '.github/workflows/ci.yml',
      '.gitignore',
      'a/.git/b',
      'a/..b',
      '...',
      'a\tb',
    ])
      expect(anchorPathProblem(ok), ok).toBeNull();
    for (const bad of [
      '',
      '/etc/passwd',
      'C:/x',
      '\\srv\\x',
      '../x',
      'a/../../x',
      'a\\..\\b',
      '..',
      './a',
      'a/.',
      '.',
      'a//b',
      'a/',
      '.git/config',
      '.GIT\\config',
      '.git',
      'a\u0000b',
      'x'.repeat(4097),
    ])
      expect(anchorPathProblem(bad), bad).not.toBeNull();
  });

  it('contents', () => {
    const id = newId();
    expect(blobProblem(recordPath(id), Buffer.from(recordText(id)))).toBeNull();
    expect(blobProblem('FORMAT', Buffer.from('# git-mem store\nformat: 1\n'))).toBeNull();
    expect(blobProblem('FORMAT', Buffer.from('format: 2\n'))).toMatchObject({ problem: 'format' });
    expect(blobProblem('config.yaml', Buffer.from('a: 1\n'))).toBeNull();
    expect(blobProblem('config.yaml', Buffer.from('- a\n'))).toMatchObject({ problem: 'config' });
    expect(blobProblem(recordPath(id), Buffer.alloc(400 * 1024, 97))).toMatchObject({ problem: 'too-large' });
    expect(blobProblem(recordPath(id), Buffer.from('no frontmatter'))).toMatchObject({ problem: 'record' });
  });

  it('confinement', () => {
    const root = tmpDir('gm-conf-');
    expect(confinedPath(root, 'a/b.md')).toBe(join(root, 'a', 'b.md'));
    // E_IO naming the path refused and the folder it must stay in, as data
    for (const bad of ['../x', 'a/../../x', '/etc/passwd', ''])
      expect(
        thrown(() => confinedPath(root, bad)),
        bad,
      ).toMatchObject({
        code: 'E_IO',
        data: { path: bad, root: resolve(root) },
      });
    symlinkSync(tmpDir('gm-conf-out-'), join(root, 'link'));
    // a path inside the folder, refused only for the link on its way
    expect(thrown(() => confinedPath(root, 'link/x'))).toMatchObject({
      code: 'E_IO',
      data: { path: 'link/x', root: resolve(root) },
    });
  });
});
