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
  /** what the one line says */
  says: RegExp;
  /** also try `pull` (the same integrate path; a few cases are enough) */
  pull?: boolean;
}

const cases: Case[] = [
  // names
  {
    name: 'an entry named ..',
    spec: () => ({ '..': { tree: { x: blobX } } }),
    says: /hasDotdot|"\.\."/,
    pull: true,
  },
  {
    name: '.git/hooks/post-commit at the root',
    spec: () => ({
      '.git': {
        tree: { hooks: { tree: { 'post-commit': { blob: '#!/bin/sh\necho pwned\n', mode: '100755' } } } },
      },
    }),
    says: /hasDotgit|git's own folder/,
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
    says: /hasDotdot|hasDotgit|"\.\."/,
  },
  {
    name: '.GIT (another case) under a fan-out folder',
    spec: () => inMemories(newId(), { tree: { x: blobX } }, '.GIT'),
    says: /hasDotgit|git's own folder/,
  },
  { name: 'an entry named .', spec: () => ({ '.': { tree: { x: blobX } } }), says: /hasDot|"\."/ },
  {
    name: 'the NTFS short name GIT~1',
    spec: () => ({ 'GIT~1': { tree: { x: blobX } } }),
    says: /hasDotgit|git's own folder/,
  },
  {
    name: '.git. with a trailing dot',
    spec: () => ({ '.git.': { tree: { x: blobX } } }),
    says: /hasDotgit|git's own folder/,
  },
  {
    name: 'a name holding a slash',
    spec: () => ({ memories: { tree: { 'x/../../y': blobX } } }),
    says: /fullPathname|path separator/,
  },
  { name: 'a name holding a backslash', spec: () => ({ 'memories\\..\\x': blobX }), says: /path separator/ },
  { name: 'a name holding a newline', spec: () => ({ 'evil\nname': blobX }), says: /control characters/ },
  { name: 'a name that is not UTF-8', spec: () => ({ 'hex:ff6576696c': blobX }), says: /not valid UTF-8/ },
  // modes
  {
    name: 'a record that is a symlink',
    spec: () => {
      const id = newId();
      return inMemories(id, { blob: '/etc/passwd', mode: '120000' });
    },
    says: /symbolic link/,
  },
  {
    name: 'memories/ as a symlink',
    spec: () => ({ memories: { blob: '../../.git/hooks', mode: '120000' } }),
    says: /symbolic link/,
  },
  {
    name: 'a gitlink at the root',
    spec: () => ({ sub: { oid: hex40('1'), mode: '160000', type: 'commit' } }),
    says: /gitlink/,
  },
  {
    name: 'a record that is a gitlink',
    spec: () => {
      const id = newId();
      return inMemories(id, { oid: hex40('2'), mode: '160000', type: 'commit' });
    },
    says: /gitlink/,
  },
  {
    name: 'an executable record',
    spec: () => {
      const id = newId();
      return inMemories(id, { blob: recordText(id), mode: '100755' });
    },
    says: /executable/,
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
    says: /differ only in case/,
  },
  {
    name: 'FORMAT and format',
    spec: () => ({ format: { blob: 'format: 1\n' } }),
    says: /differ only in case/,
  },
  {
    name: 'NFC and NFD spellings of one name at the root',
    spec: () => ({ 'caf\u00e9': blobX, 'cafe\u0301': blobX }),
    says: /Unicode normalisation/,
  },
  {
    name: 'NFC and NFD spellings in a fan-out folder',
    spec: () => {
      const id = newId();
      return { memories: { tree: { [fo(id)]: { tree: { '\u00c5.md': blobX, 'A\u030a.md': blobX } } } } };
    },
    says: /Unicode normalisation/,
  },
  // layout and depth
  {
    name: 'a 10,000-deep tree',
    build: (p, base) => p.deepCommit(base, 'memories', 10_000),
    says: /memories\/a is not part of the store layout/,
  },
  {
    name: 'a folder below an anchored blob',
    spec: () => {
      const c = `ab${'0'.repeat(38)}`;
      return {
        anchors: { tree: { ab: { tree: { [c]: { tree: { [hex40('3')]: { tree: { x: blobX } } } } } } } },
      };
    },
    says: /is a folder where the layout has a file/,
  },
  {
    name: 'junk memories/README.md',
    spec: () => ({ memories: { tree: { 'README.md': blobX } } }),
    says: /memories\/README\.md is not part of the store layout/,
  },
  {
    name: 'junk memories/<xx>/notes.txt',
    spec: () => inMemories(newId(), blobX, 'notes.txt'),
    says: /notes\.txt is not part of the store layout/,
  },
  {
    name: 'a record in the wrong fan-out folder',
    spec: () => {
      const id = newId();
      const other = fo(id) === 'ZZ' ? 'YY' : 'ZZ';
      return { memories: { tree: { [other]: { tree: { [`${id}.md`]: rec(id) } } } } };
    },
    says: /whose ID ends in/,
  },
  {
    name: 'an unknown top-level folder',
    spec: () => ({ hooks: { tree: { 'post-commit': blobX } } }),
    says: /hooks is not part of the store layout/,
  },
  {
    name: 'an attic file with a made-up name',
    spec: () => {
      const id = newId();
      return { attic: { tree: { [fo(id)]: { tree: { [id]: { tree: { 'notes.txt': blobX } } } } } } };
    },
    says: /not part of the store layout/,
  },
  {
    name: 'an anchored blob named for another object',
    spec: () => {
      const name = `ab${'1'.repeat(38)}`;
      return { anchors: { tree: { ab: { tree: { [name]: blobX } } } } };
    },
    says: /is named for object/,
  },
  // sizes and encoding
  {
    name: 'a 50 MB body',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'big', 'a'.repeat(50 * 1024 * 1024)));
    },
    says: /is \d+ bytes, over the \d+-byte limit/,
    pull: true,
  },
  {
    name: 'a body one byte over 64 KiB',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'big', 'a'.repeat(64 * 1024 + 1)));
    },
    says: /body is 65537 bytes, over the 65536-byte limit/,
  },
  {
    name: 'a record that is not UTF-8',
    spec: () => {
      const id = newId();
      return inMemories(id, {
        blob: Buffer.concat([Buffer.from(recordText(id)), Buffer.from([0xff, 0xfe, 0x80])]),
      });
    },
    says: /is not valid UTF-8/,
  },
  {
    name: 'a body holding NUL bytes',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'nul', 'a\u0000b\n'));
    },
    says: /looks binary/,
  },
  // schemas
  {
    name: 'a record that does not parse',
    spec: () => inMemories(newId(), { blob: '---\nid: [unterminated\n---\nbody\n' }),
    says: /malformed record .*does not parse/,
  },
  {
    name: 'a record whose id is not its path',
    spec: () => inMemories(newId(), rec(newId())),
    says: /does not match its path/,
  },
  {
    name: 'an anchor outside the repository',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'anchored', 'b\n', 'anchors:\n  - path: ../../etc/passwd'));
    },
    says: /anchor path "\.\.\/\.\.\/etc\/passwd" is outside the repository/,
    pull: true,
  },
  {
    name: 'an absolute anchor path',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'anchored', 'b\n', 'anchors:\n  - path: /etc/passwd'));
    },
    says: /is absolute/,
  },
  {
    name: 'an anchor inside .git',
    spec: () => {
      const id = newId();
      return inMemories(id, rec(id, 'anchored', 'b\n', 'anchors:\n  - path: .git/hooks/pre-commit'));
    },
    says: /points inside \.git/,
  },
  // the limits of a local write (src/model/schema.ts), field by field
  {
    name: '20,000 tags',
    spec: () => {
      const id = newId();
      const tags = Array.from({ length: 20_000 }, (_, i) => `t${i}`).join(', ');
      return inMemories(id, { blob: recordText(id).replace('tags: []', `tags: [${tags}]`) });
    },
    says: /too many tags \(20000\)/,
    pull: true,
  },
  {
    name: 'clock: 1e308',
    spec: () => {
      const id = newId();
      return inMemories(id, { blob: recordText(id).replace('clock: 1', 'clock: 1e308') });
    },
    says: /clock 1e\+308 is not a whole number/,
  },
  {
    name: 'created as a map',
    spec: () => {
      const id = newId();
      return inMemories(id, {
        blob: recordText(id).replace(/created: .*/, 'created: {year: 2024, evil: true}'),
      });
    },
    says: /invalid creation date/,
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
    says: /anchor path "\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd" is outside the repository/,
  },
  {
    name: 'ESC (OSC 52, a clipboard write) in a title',
    spec: () => {
      const id = newId();
      // ended by ST (ESC backslash), no BEL: ESC alone never made a text look binary
      return inMemories(id, rec(id, '"copy \\u001b]52;c;SGVsbG8=\\u001b\\\\ me"'));
    },
    says: /title holds a control character \(U\+001B\)/,
  },
  {
    name: 'a tombstone that is a list',
    spec: () => {
      const id = newId();
      return { tombstones: { tree: { [fo(id)]: { tree: { [`${id}.yaml`]: { blob: '- a\n- list\n' } } } } } };
    },
    says: /malformed tombstone/,
    pull: true,
  },
  {
    name: 'a tombstone that is not YAML',
    spec: () => {
      const id = newId();
      return { tombstones: { tree: { [fo(id)]: { tree: { [`${id}.yaml`]: { blob: 'id: [\n' } } } } } };
    },
    says: /malformed tombstone/,
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
    says: /invalid date/,
  },
  {
    name: 'format: 99',
    spec: () => ({ FORMAT: { blob: 'format: 99\n' } }),
    says: /FORMAT \(commit \w+\): says format 99/,
    pull: true,
  },
  {
    name: 'a FORMAT that says nothing',
    spec: () => ({ FORMAT: { blob: 'hello\n' } }),
    says: /does not say "format: 1"/,
  },
  {
    name: 'a config.yaml that is a list',
    spec: () => ({ 'config.yaml': { blob: '- secret-scan\n- off\n' } }),
    says: /not a YAML mapping/,
  },
  {
    name: 'a 100 KiB config.yaml',
    spec: () => ({ 'config.yaml': { blob: `note: ${'a'.repeat(100 * 1024)}\n` } }),
    says: /over the 65536-byte limit/,
  },
];

let remote: Remote;
let base: string;
let ff: TestRepo;
let merging: TestRepo;
let p: ReturnType<typeof plumber>;

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
        const r = await victim.mem(['sync']);
        expect(r.code, `${path}: ${r.stderr}`).not.toBe(0);
        expect(r.stderr.trimEnd().split('\n'), path).toHaveLength(1);
        expect(r.stderr, path).toMatch(c.says);
        expect(r.stderr, path).toContain(hostile.slice(0, 12));
        expect(r.stderr, path).toMatch(/local memory is unchanged/);
        expect(refsOf(victim), path).toBe(before);
      }
      if (c.pull) {
        // pull refuses it the same way
        const before = refsOf(ff);
        const r = await ff.mem(['pull']);
        expect(r.code).not.toBe(0);
        expect(r.stderr).toMatch(c.says);
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
  const under: Array<{ name: string; spec: (id: string) => Spec; says: RegExp }> = [
    {
      name: 'a 1 MB record',
      spec: (id) => inMemories(id, rec(id, 'big', 'a'.repeat(1024 * 1024))),
      says: /is \d+ bytes, over the \d+-byte limit/,
    },
    {
      name: 'a record that is a symlink',
      spec: (id) => inMemories(id, { blob: '/etc/passwd', mode: '120000' }),
      says: /symbolic link/,
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
        const r = await victim.mem(['sync']);
        expect(r.code, `${path}: ${r.stderr}`).not.toBe(0);
        expect(r.stderr.trimEnd().split('\n'), path).toHaveLength(1);
        expect(r.stderr, path).toMatch(c.says);
        expect(r.stderr, path).toContain(`memories/${fo(id)}/${id}.md`);
        expect(r.stderr, path).toContain(`commit ${mid.slice(0, 12)}`);
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
  const noteCases: Array<{ name: string; build: () => { tip: string; bad: string }; says: RegExp }> = [
    {
      name: 'a note path with ..',
      build: () => {
        const c = notes({ '..': { tree: { [base]: { blob: line() } } } });
        return { tip: c, bad: c };
      },
      says: /hasDotdot|"\.\."/,
    },
    {
      name: 'a 10 MB note',
      build: () => {
        const big = line().repeat(Math.ceil((10 * 1024 * 1024) / line().length));
        const c = notes({ [base]: { blob: big } });
        return { tip: c, bad: c };
      },
      says: /invalid note [0-9a-f]{40} \(commit \w+\): is \d{8} bytes, over the 262144-byte limit/,
    },
    {
      name: 'a note that is not UTF-8',
      build: () => {
        const c = notes({
          [base]: { blob: Buffer.concat([Buffer.from(line()), Buffer.from([0xff, 0xfe])]) },
        });
        return { tip: c, bad: c };
      },
      says: /is not valid UTF-8/,
    },
    {
      name: 'a note that is a symbolic link',
      build: () => {
        const c = notes({ [base]: { blob: '/etc/passwd', mode: '120000' } });
        return { tip: c, bad: c };
      },
      says: /symbolic link/,
    },
    {
      name: 'a note line that is not {id, verdict, reason}',
      build: () => {
        const c = notes({ [base]: { blob: `${line()}{"n":1}\n` } });
        return { tip: c, bad: c };
      },
      says: /line 2 has no record id/,
    },
    {
      name: 'a note line with an anchor path outside the repository',
      build: () => {
        const c = notes({ [base]: { blob: line({ path: '../../etc/passwd' }) } });
        return { tip: c, bad: c };
      },
      says: /line 1: anchor path "\.\.\/\.\.\/etc\/passwd" is outside the repository/,
    },
    {
      name: 'a file not named by an object id',
      build: () => {
        const c = notes({ 'README.md': { blob: line() } });
        return { tip: c, bad: c };
      },
      says: /README\.md is not part of a notes tree/,
    },
    {
      name: 'an oversized note in an intermediate notes commit under a good tip',
      build: () => {
        const mid = notes({ [base]: { blob: line().repeat(Math.ceil((300 * 1024) / line().length)) } });
        const tip = notes({ [base]: { blob: line() } }, mid);
        return { tip, bad: mid };
      },
      says: /over the 262144-byte limit/,
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
        const r = await victim.mem(['sync']);
        expect(r.code, `${path}: ${r.stderr}`).not.toBe(0);
        expect(r.stderr.trimEnd().split('\n'), path).toHaveLength(1);
        expect(r.stderr, path).toMatch(c.says);
        expect(r.stderr, path).toContain(bad.slice(0, 12));
        expect(r.stderr, path).toMatch(/local memory (and notes )?(is|are) unchanged/);
        expect(refsOf(victim), path).toBe(before);
      }
      const before = refsOf(ff);
      const r = await ff.mem(['pull']);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toMatch(c.says);
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
