/**
 * The hostile-remote corpus: commits built by hand with git plumbing in a bare
 * remote, each one something git-mem never writes (entries named `..` or
 * `.git`, links, gitlinks, collisions, a 10,000-deep tree, oversized or
 * invalid files, anchors outside the repository, unknown formats). Every one
 * is refused whole by `sync` on the fast-forward path and on the merge path,
 * in one line naming the commit and what is wrong, with every local ref
 * byte-identical before and after.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ProblemKind } from '../src/merge/problems.js';
import { newId } from '../src/model/id.js';
import { isolatedEnv, type TestRepo } from './helpers.js';
import { type Node, plumber, recordText, type Spec } from './hostile-helpers.js';
import { bareRemote, clone, type Remote, tipOf } from './sync-helpers.js';

const fo = (id: string) => id.slice(-2);
/** A spec placing `node` at memories/<xx>/<name> (default: the record file of `id`). */
const inMemories = (id: string, node: Node, name = `${id}.md`): Spec => ({
  memories: { tree: { [fo(id)]: { tree: { [name]: node } } } },
});
const rec = (id: string, title?: string, body?: string, extra?: string): Node => ({
  blob: recordText(id, title, body, extra),
});
const blobX: Node = { blob: 'x\n' };
const hex40 = (c: string) => c.repeat(40);

interface Case {
  name: string;
  spec?: () => Spec;
  build?: (p: ReturnType<typeof plumber>, base: string) => string;
  /**
   * which check refuses it: E_MERGE's data.problem (src/merge/problems.ts); where two may, either
   * (git's own object checks, `fetch.fsckObjects`, see some names before the boundary does)
   */
  problem: ProblemKind | readonly ProblemKind[];
  /** also try `pull` (the same integrate path; a few cases are enough) */
  pull?: boolean;
}

const cases: Case[] = [
  // names
  {
    name: 'an entry named ..',
    spec: () => ({ '..': { tree: { x: blobX } } }),
    problem: ['fsck', 'dot-name'],
    pull: true,
  },
  {
    name: '.git/hooks/post-commit at the root',
    spec: () => ({
      '.git': {
        tree: { hooks: { tree: { 'post-commit': { blob: '#!/bin/sh\necho pwned\n', mode: '100755' } } } },
      },
    }),
    problem: ['fsck', 'git-name'],
  },
  {
    name: 'memories/../../.git/hooks/post-commit',
    spec: () => ({
      memories: {
        tree: {
          '..': {
            tree: { '..': { tree: { '.git': { tree: { hooks: { tree: { 'post-commit': blobX } } } } } } },
          },
        },
      },
    }),
    problem: ['fsck', 'dot-name', 'git-name'],
  },
  {
    name: '.GIT (another case) under a fan-out folder',
    spec: () => inMemories(newId(), { tree: { x: blobX } }, '.GIT'),
    problem: ['fsck', 'git-name'],
  },
  { name: 'an entry named .', spec: () => ({ '.': { tree: { x: blobX } } }), problem: ['fsck', 'dot-name'] },
  {
    name: 'the NTFS short name GIT~1',
    spec: () => ({ 'GIT~1': { tree: { x: blobX } } }),
    problem: ['fsck', 'git-name'],
  },
  {
    name: '.git. with a trailing dot',
    spec: () => ({ '.git.': { tree: { x: blobX } } }),
    problem: ['fsck', 'git-name'],
  },
  {
    name: 'a name holding a slash',
    spec: () => ({ memories: { tree: { 'x/../../y': blobX } } }),
    problem: ['fsck', 'separator'],
  },
  { name: 'a name holding a backslash', spec: () => ({ 'memories\\..\\x': blobX }), problem: 'separator' },
  { name: 'a name holding a newline', spec: () => ({ 'evil\nname': blobX }), problem: 'control-chars' },
  { name: 'a name that is not UTF-8', spec: () => ({ 'hex:ff6576696c': blobX }), problem: 'not-utf8' },
  // modes
  {
    name: 'a record that is a symlink',
    spec: () => {
      const id = newId();
      return inMemories(id, { blob: '/etc/passwd', mode: '120000' });
    },
    problem: 'symlink',
  },
  {
    name: 'memories/ as a symlink',
    spec: () => ({ memories: { blob: '../../.git/hooks', mode: '120000' } }),
    problem: 'symlink',
  },
  {
    name: 'a gitlink at the root',
    spec: () => ({ sub: { oid: hex40('1'), mode: '160000', type: 'commit' } }),
    problem: 'gitlink',
  },
  {
    name: 'a record that is a gitlink',
    spec: () => {
      const id = newId();
      return inMemories(id, { oid: hex40('2'), mode: '160000', type: 'commit' });
    },
    problem: 'gitlink',
  },
  {
    name: 'an executable record',
    spec: () => {
      const id = newId();
      return inMemories(id, { blob: recordText(id), mode: '100755' });
    },
    problem: 'executable',
  },
  // collisions
  {
    name: 'two records differing only in case',
    spec: () => {
      const id = newId();
      return {
        memories: {
          tree: { [fo(id)]: { tree: { [`${id}.md`]: rec(id), [`${id.toLowerCase()}.md`]: rec(id) } } },
        },
      };
    },
    problem: 'case-collision',
  },
  {
    name: 'FORMAT and format',
    spec: () => ({ format: { blob: 'format: 1\n' } }),
    problem: 'case-collision',
  },
  {
    name: 'NFC and NFD spellings of one name at the root',
    spec: () => ({ 'caf\u00e9': blobX, 'cafe\u0301': blobX }),
    problem: 'unicode-collision',
  },
  {
    name: 'NFC and NFD spellings in a fan-out folder',
    spec: () => {
      const id = newId();
      return { memories: { tree: { [fo(id)]: { tree: { '\u00c5.md': blobX, 'A\u030a.md': blobX } } } } };
    },
    problem: 'unicode-collision',
  },
  // layout and depth
  {
    name: 'a 10,000-deep tree',
    build: (p, base) => p.deepCommit(base, 'memories', 10_000),
    problem: 'layout',
  },
  {
    name: 'a folder below an anchored blob',
    spec: () => {
      const c = `ab${'0'.repeat(38)}`;
      return {
        anchors: { tree: { ab: { tree: { [c]: { tree: { [hex40('3')]: { tree: { x: blobX } } } } } } } },
      };
    },
    problem: 'file-or-folder',
  },
  {
    name: 'junk memories/README.md',
    spec: () => ({ memories: { tree: { 'README.md': blobX } } }),
    problem: 'layout',
  },
  {
    name: 'junk memories/<xx>/notes.txt',
    spec: () => inMemories(newId(), blobX, 'notes.txt'),
    problem: 'layout',
  },
  {
    name: 'a record in the wrong fan-out folder',
    spec: () => {
      const id = newId();
      const other = fo(id) === 'ZZ' ? 'YY' : 'ZZ';
      return { memories: { tree: { [other]: { tree: { [`${id}.md`]: rec(id) } } } } };
    },
    problem: 'layout',
  },
  {
    name: 'an unknown top-level folder',
    spec: () => ({ hooks: { tree: { 'post-commit': blobX } } }),
    problem: 'layout',
  },
  {
    name: 'an attic file with a made-up name',
    spec: () => {
      const id = newId();
      return { attic: { tree: { [fo(id)]: { tree: { [id]: { tree: { 'notes.txt': blobX } } } } } } };
    },
    problem: 'layout',
  },
  {
    name: 'an anchored blob named for another object',
    spec: () => {
      const name = `ab${'1'.repeat(38)}`;
      return { anchors: { tree: { ab: { tree: { [name]: blobX } } } } };
    },
    problem: 'object-name',
  },
  // sizes and encoding
  {
    name: 'a 50 MB body',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'big', 'a'.repeat(50 * 1024 * 1024)));
    },
    problem: 'too-large',
    pull: true,
  },
  {
    name: 'a body one byte over 64 KiB',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'big', 'a'.repeat(64 * 1024 + 1)));
    },
    problem: 'record-field',
  },
  {
    name: 'a record that is not UTF-8',
    spec: () => {
      const id = newId();
      return inMemories(id, {
        blob: Buffer.concat([Buffer.from(recordText(id)), Buffer.from([0xff, 0xfe, 0x80])]),
      });
    },
    problem: 'not-utf8',
  },
  {
    name: 'a body holding NUL bytes',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'nul', 'a\u0000b\n'));
    },
    problem: 'record-field',
  },
  // schemas
  {
    name: 'a record that does not parse',
    spec: () => inMemories(newId(), { blob: '---\nid: [unterminated\n---\nbody\n' }),
    problem: 'record',
  },
  {
    name: 'a record whose id is not its path',
    spec: () => inMemories(newId(), rec(newId())),
    problem: 'record',
  },
  {
    name: 'an anchor outside the repository',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'anchored', 'b\n', 'anchors:\n  - path: ../../etc/passwd'));
    },
    problem: 'record-field',
    pull: true,
  },
  {
    name: 'an absolute anchor path',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'anchored', 'b\n', 'anchors:\n  - path: /etc/passwd'));
    },
    problem: 'record-field',
  },
  {
    name: 'an anchor inside .git',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'anchored', 'b\n', 'anchors:\n  - path: .git/hooks/pre-commit'));
    },
    problem: 'record-field',
  },
  // the limits of a local write (src/model/schema.ts), field by field
  {
    name: '20,000 tags',
    spec: () => {
      const id = newId();
      const tags = Array.from({ length: 20_000 }, (_, i) => `t${i}`).join(', ');
      return inMemories(id, { blob: recordText(id).replace('tags: []', `tags: [${tags}]`) });
    },
    problem: 'record-field',
    pull: true,
  },
  {
    name: 'clock: 1e308',
    spec: () => {
      const id = newId();
      return inMemories(id, { blob: recordText(id).replace('clock: 1', 'clock: 1e308') });
    },
    problem: 'record-field',
  },
  {
    name: 'created as a map',
    spec: () => {
      const id = newId();
      return inMemories(id, {
        blob: recordText(id).replace(/created: .*/, 'created: {year: 2024, evil: true}'),
      });
    },
    problem: 'record-field',
  },
  {
    name: 'anchors[].current.path ../../../../etc/passwd',
    spec: () => {
      const id = newId();
      return inMemories(
        id,
        rec(
          id,
          'anchored',
          'b\n',
          'anchors:\n  - path: src/a.ts\n    current:\n      path: ../../../../etc/passwd\n      blob: 0123456789abcdef0123456789abcdef01234567',
        ),
      );
    },
    problem: 'record-field',
  },
  {
    name: 'ESC (OSC 52, a clipboard write) in a title',
    spec: () => {
      const id = newId();
      // ended by ST (ESC backslash), no BEL: ESC alone never made a text look binary
      return inMemories(id, rec(id, '"copy \\u001b]52;c;SGVsbG8=\\u001b\\\\ me"'));
    },
    problem: 'record-field',
  },
  {
    name: 'a tombstone that is a list',
    spec: () => {
      const id = newId();
      return { tombstones: { tree: { [fo(id)]: { tree: { [`${id}.yaml`]: { blob: '- a\n- list\n' } } } } } };
    },
    problem: 'tombstone',
    pull: true,
  },
  {
    name: 'a tombstone that is not YAML',
    spec: () => {
      const id = newId();
      return { tombstones: { tree: { [fo(id)]: { tree: { [`${id}.yaml`]: { blob: 'id: [\n' } } } } } };
    },
    problem: 'tombstone',
  },
  {
    name: 'a tombstone with an invalid date',
    spec: () => {
      const id = newId();
      return {
        tombstones: {
          tree: { [fo(id)]: { tree: { [`${id}.yaml`]: { blob: `id: ${id}\ndeleted: yesterday-ish\n` } } } },
        },
      };
    },
    problem: 'tombstone',
  },
  {
    name: 'format: 99',
    spec: () => ({ FORMAT: { blob: 'format: 99\n' } }),
    problem: 'format',
    pull: true,
  },
  {
    name: 'a FORMAT that says nothing',
    spec: () => ({ FORMAT: { blob: 'hello\n' } }),
    problem: 'format',
  },
  {
    name: 'a config.yaml that is a list',
    spec: () => ({ 'config.yaml': { blob: '- secret-scan\n- off\n' } }),
    problem: 'config',
  },
  {
    name: 'a 100 KiB config.yaml',
    spec: () => ({ 'config.yaml': { blob: `note: ${'a'.repeat(100 * 1024)}\n` } }),
    problem: 'too-large',
  },
];

let remote: Remote;
let base: string;
let ff: TestRepo;
let merging: TestRepo;
let p: ReturnType<typeof plumber>;

/** A sync or pull --json refused as E_MERGE by the check (one of the checks) named. */
function refusedAs(r: { stdout: string }, kind: ProblemKind | readonly ProblemKind[], how: string): void {
  const e = JSON.parse(r.stdout).error;
  expect(e.code, how).toBe('E_MERGE');
  expect([kind].flat(), `${how}: ${e.message}`).toContain(e.problem);
}

const refsOf = (r: TestRepo) => r.git('for-each-ref', '--format=%(objectname) %(refname)');

beforeAll(async () => {
  remote = bareRemote();
  const seed = clone(remote.url);
  await seed.memJson(['add', '--title', 'seed', '--content', 'seed\n']);
  await seed.memJson(['sync']);
  base = remote.git('rev-parse', 'refs/mem/memory').trim();
  ff = clone(remote.url);
  await ff.memJson(['sync']);
  merging = clone(remote.url);
  await merging.memJson(['sync']);
  await merging.memJson(['add', '--title', 'local only', '--content', 'mine\n']);
  p = plumber(remote.dir, isolatedEnv());
}, 120_000);

describe('a hostile remote is refused whole, the local refs byte-identical', () => {
  it('has at least 30 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(30);
  });

  it.each(cases)(
    '$name',
    async (c) => {
      const hostile = c.build ? c.build(p, base) : p.commitOver(base, c.spec!());
      remote.git('update-ref', 'refs/mem/memory', hostile);
      for (const [victim, path] of [
        [ff, 'fast-forward'],
        [merging, 'merge'],
      ] as const) {
        const before = refsOf(victim);
        const r = await victim.mem(['sync', '--json']);
        expect(r.code, `${path}: ${r.stderr}`).toBe(4);
        expect(r.stderr.trimEnd().split('\n'), path).toHaveLength(1);
        refusedAs(r, c.problem, path);
        expect(JSON.parse(r.stdout).error.commit, path).toBe(hostile); // the commit that brings it
        expect(r.stderr, path).toMatch(/local memory is unchanged/); // the hint
        expect(refsOf(victim), path).toBe(before);
      }
      if (c.pull) {
        // pull refuses it the same way
        const before = refsOf(ff);
        const r = await ff.mem(['pull', '--json']);
        expect(r.code).toBe(4);
        refusedAs(r, c.problem, 'pull');
        expect(refsOf(ff)).toBe(before);
      }
    },
    300_000,
  );

  it('a repaired remote syncs again', async () => {
    remote.git('update-ref', 'refs/mem/memory', base);
    expect(await ff.memJson(['sync'])).toMatchObject({ action: 'up-to-date' });
    expect(await merging.memJson(['sync'])).toMatchObject({ action: 'ahead', pushed: true });
    expect(await ff.memJson(['sync'])).toMatchObject({ action: 'fast-forward' });
    expect(tipOf(ff)).toBe(tipOf(merging));
  });
});

describe('history a sync brings is checked commit by commit, not only the tip', () => {
  const under: Array<{
    name: string;
    spec: (id: string) => Spec;
    problem: ProblemKind | readonly ProblemKind[];
  }> = [
    {
      name: 'a 1 MB record',
      spec: (id) => inMemories(id, rec(id, 'big', 'a'.repeat(1024 * 1024))),
      problem: 'too-large',
    },
    {
      name: 'a record that is a symlink',
      spec: (id) => inMemories(id, { blob: '/etc/passwd', mode: '120000' }),
      problem: 'symlink',
    },
  ];

  it.each(under)(
    '$name in an intermediate commit under a good tip is refused, naming that commit',
    async (c) => {
      remote.git('update-ref', 'refs/mem/memory', base);
      const id = newId();
      const mid = p.commitOver(base, c.spec(id), 'bad in the middle');
      // the tip's tree is the base's again: a tip-only check finds nothing wrong
      const tip = p.commit(p.rootTree(base), mid, 'good tip');
      remote.git('update-ref', 'refs/mem/memory', tip);
      for (const [victim, path] of [
        [ff, 'fast-forward'],
        [merging, 'merge'],
      ] as const) {
        const before = refsOf(victim);
        const r = await victim.mem(['sync', '--json']);
        expect(r.code, `${path}: ${r.stderr}`).toBe(4);
        expect(r.stderr.trimEnd().split('\n'), path).toHaveLength(1);
        refusedAs(r, c.problem, path);
        // the path and the commit under the tip that holds it, as data
        expect(JSON.parse(r.stdout).error, path).toMatchObject({
          path: `memories/${fo(id)}/${id}.md`,
          commit: mid,
        });
        expect(refsOf(victim), path).toBe(before);
      }
      remote.git('update-ref', 'refs/mem/memory', base);
    },
    120_000,
  );
});

describe('hostile notes (refs/notes/memory) are refused whole, the local refs byte-identical', () => {
  const line = (extra: Record<string, unknown> = {}) =>
    `${JSON.stringify({ id: newId(), verdict: 'changed', reason: 'anchored lines edited', ...extra })}\n`;
  /** A notes commit whose tree is `spec` (a note on `base`, by default), on `parent`. */
  const notes = (spec: Spec, parent: string | null = null) => p.commit(p.tree(spec), parent, 'Notes');
  const noteCases: Array<{
    name: string;
    build: () => { tip: string; bad: string };
    problem: ProblemKind | readonly ProblemKind[];
  }> = [
    {
      name: 'a note path with ..',
      build: () => {
        const c = notes({ '..': { tree: { [base]: { blob: line() } } } });
        return { tip: c, bad: c };
      },
      problem: ['fsck', 'dot-name'],
    },
    {
      name: 'a 10 MB note',
      build: () => {
        const big = line().repeat(Math.ceil((10 * 1024 * 1024) / line().length));
        const c = notes({ [base]: { blob: big } });
        return { tip: c, bad: c };
      },
      problem: 'too-large',
    },
    {
      name: 'a note that is not UTF-8',
      build: () => {
        const c = notes({
          [base]: { blob: Buffer.concat([Buffer.from(line()), Buffer.from([0xff, 0xfe])]) },
        });
        return { tip: c, bad: c };
      },
      problem: 'not-utf8',
    },
    {
      name: 'a note that is a symbolic link',
      build: () => {
        const c = notes({ [base]: { blob: '/etc/passwd', mode: '120000' } });
        return { tip: c, bad: c };
      },
      problem: 'symlink',
    },
    {
      name: 'a note line that is not {id, verdict, reason}',
      build: () => {
        const c = notes({ [base]: { blob: `${line()}{"n":1}\n` } });
        return { tip: c, bad: c };
      },
      problem: 'note',
    },
    {
      name: 'a note line with an anchor path outside the repository',
      build: () => {
        const c = notes({ [base]: { blob: line({ path: '../../etc/passwd' }) } });
        return { tip: c, bad: c };
      },
      problem: 'note',
    },
    {
      name: 'a file not named by an object id',
      build: () => {
        const c = notes({ 'README.md': { blob: line() } });
        return { tip: c, bad: c };
      },
      problem: 'layout',
    },
    {
      name: 'an oversized note in an intermediate notes commit under a good tip',
      build: () => {
        const mid = notes({ [base]: { blob: line().repeat(Math.ceil((300 * 1024) / line().length)) } });
        const tip = notes({ [base]: { blob: line() } }, mid);
        return { tip, bad: mid };
      },
      problem: 'too-large',
    },
  ];

  it.each(noteCases)(
    '$name',
    async (c) => {
      remote.git('update-ref', 'refs/mem/memory', base);
      const { tip, bad } = c.build();
      remote.git('update-ref', 'refs/notes/memory', tip);
      for (const [victim, path] of [
        [ff, 'fast-forward'],
        [merging, 'merge'],
      ] as const) {
        const before = refsOf(victim);
        const r = await victim.mem(['sync', '--json']);
        expect(r.code, `${path}: ${r.stderr}`).toBe(4);
        expect(r.stderr.trimEnd().split('\n'), path).toHaveLength(1);
        refusedAs(r, c.problem, path);
        // the notes commit that brings it, as data (`notes` where git's fsck refused the fetch: its
        // `commit` is the memory's tip then)
        const e = JSON.parse(r.stdout).error;
        expect(e.problem === 'fsck' ? e.notes : e.commit, path).toBe(bad);
        expect(r.stderr, path).toMatch(/local memory (and notes )?(is|are) unchanged/); // the hint
        expect(refsOf(victim), path).toBe(before);
      }
      const before = refsOf(ff);
      const r = await ff.mem(['pull', '--json']);
      expect(r.code).toBe(4);
      refusedAs(r, c.problem, 'pull');
      expect(refsOf(ff)).toBe(before);
    },
    300_000,
  );

  it('notes of the right shape sync', async () => {
    const good = notes({ [base]: { blob: line() } });
    remote.git('update-ref', 'refs/notes/memory', good);
    expect(await ff.memJson(['sync'])).toMatchObject({ notes: 'created' });
    expect(tipOf(ff, 'refs/notes/memory')).toBe(good);
  });
});
