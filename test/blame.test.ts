/**
 * `git mem blame FILE[:START[-END]]`: the memories anchored to lines and the rules for the file,
 * judged at HEAD with nothing written. The operation is called in process (the web UI and PR
 * comments call it too); the CLI once for its text, --json and its errors.
 */
import { describe, expect, it } from 'vitest';
import { blame } from '../src/commands/blame.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { errorOf, makeRepo } from './helpers.js';

const CODE = [
  'import { db } from "./db";',
  '',
  'export function findUser(id) {',
  '  return db.query("select * from users where id = ?", [id]);',
  '}',
  '',
  'export function listUsers() {',
  '  return db.query("select * from users");',
  '}',
  '',
].join('\n');

describe('blame', () => {
  it('finds memories by the lines they are on at HEAD, rules by scope, and writes nothing', async () => {
    const r = makeRepo({ commit: true });
    r.write('src/users.js', CODE);
    r.write('src/db/pool.js', 'export const pool = 1;\n');
    r.commitAll('code');
    const add = (...args: string[]) => r.memJson(['add', '--force', ...args]);
    const find = await add(
      '--type',
      'decision',
      '--title',
      'Parameters, never concatenation',
      '--content',
      'Bind values.',
      '--anchor',
      'src/users.js:3-5',
    );
    const list = await add(
      '--type',
      'known_fix',
      '--title',
      'listUsers must page',
      '--content',
      'Add LIMIT.',
      '--anchor',
      'src/users.js:7-9',
    );
    const scoped = await add(
      '--type',
      'rule',
      '--title',
      'SQL lives in src',
      '--scope',
      'src/**/*.js',
      '--content',
      'Keep SQL in src.',
    );
    await add('--type', 'rule', '--title', 'DB rule', '--scope', 'src/db/**', '--content', 'Pool only.');
    const everywhere = await add('--type', 'rule', '--title', 'Use pnpm', '--content', 'pnpm only.');
    const anchoredRule = await add(
      '--type',
      'rule',
      '--title',
      'findUser is the only lookup',
      '--scope',
      'src/**',
      '--content',
      'One lookup.',
      '--anchor',
      'src/users.js:3',
    );
    const store = new Store(await openRepo(r.dir, r.env));
    try {
      const whole = await blame(store, { path: 'src/users.js' });
      expect(whole.lines).toBeNull();
      expect(whole.memories.map((m) => m.id)).toEqual(
        [find.id, anchoredRule.id, list.id].sort((a, b) =>
          a === list.id ? 1 : b === list.id ? -1 : a < b ? -1 : 1,
        ),
      );
      const m = whole.memories.find((x) => x.id === find.id)!;
      expect(m).toMatchObject({
        type: 'decision',
        status: 'active',
        author: 'Test User <test@example.com>',
        by: { kind: 'person' },
        anchor: { index: 0, path: 'src/users.js', lines: [3, 5], symbol: null },
        at: { path: 'src/users.js', lines: [3, 5] },
        verdict: { status: 'fresh', stale: false },
        verified: { by: 'anchor', commit: r.git('rev-parse', 'HEAD').trim() },
      });
      // rules: scoped ones that match, unscoped ones (everywhere); one anchored here is listed once, as a memory
      expect(whole.rules.map((x) => [x.id, x.matched])).toEqual([
        [scoped.id, 'src/**/*.js'],
        [everywhere.id, null],
      ]);
      expect(whole.rules[0]).toMatchObject({
        author: 'Test User <test@example.com>',
        by: { kind: 'person' },
      });

      // a range: only the memories on those lines
      expect((await blame(store, { path: 'src/users.js', start: 8 })).memories.map((x) => x.id)).toEqual([
        list.id,
      ]);
      expect((await blame(store, { path: 'src/users.js', start: 1, end: 2 })).memories).toEqual([]);

      // code moves down two lines and listUsers is edited: blame follows the text, judged at HEAD
      r.write('src/users.js', `// users\n\n${CODE.replace('from users"', 'from users limit 50"')}`);
      r.commitAll('edit');
      const tip = r.git('rev-parse', 'refs/memory').trim();
      const moved = await blame(store, { path: 'src/users.js', start: 5, end: 7 });
      expect(moved.memories.map((x) => [x.id, x.verdict.status, x.at?.lines])).toEqual([
        [find.id, 'moved', [5, 7]],
        [anchoredRule.id, 'moved', [5, 5]],
      ]);
      const edited = (await blame(store, { path: 'src/users.js', start: 10 })).memories;
      expect(edited.map((x) => [x.id, x.verdict.status, x.verdict.stale])).toEqual([
        [list.id, 'changed', true],
      ]);
      expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip); // judged, nothing recorded

      // after a recording check, `verified` is that check's (fresh) or null (stale)
      await r.mem(['check']);
      const checked = (await blame(store, { path: 'src/users.js' })).memories;
      expect(checked.find((x) => x.id === find.id)!.verified).toMatchObject({ by: 'check' });
      expect(checked.find((x) => x.id === list.id)!.verified).toBeNull();

      // a rename: the memories follow the file to its new name
      r.git('mv', 'src/users.js', 'src/people.js');
      r.commitAll('rename');
      const renamed = await blame(store, { path: 'src/people.js' });
      expect(renamed.memories.map((x) => [x.id, x.verdict.status]).sort()).toEqual(
        [
          [find.id, 'renamed'],
          [anchoredRule.id, 'renamed'],
          [list.id, 'changed'], // still the edited text, now in the renamed file
        ].sort(),
      );
      expect(renamed.memories.find((x) => x.id === list.id)!.verdict.reason).toMatch(
        /^file renamed to src\/people.js/,
      );
      expect((await blame(store, { path: 'src/db/pool.js' })).rules.map((x) => x.title)).toEqual([
        'SQL lives in src', // the most specific glob first, as git mem rules --file lists them
        'DB rule',
        'findUser is the only lookup', // not anchored in this file: a rule for it
        'Use pnpm',
      ]);
    } finally {
      store.close();
    }
  });

  it('answers in a long-lived store (the LSP, MCP and UI servers) as a one-shot does, file after file, as HEAD and the memory ref move', async () => {
    const r = makeRepo({ commit: true });
    const OTHER =
      'export function parse(buf) {\n  const header = readHeader(buf);\n  return readBody(buf, header);\n}\n';
    r.write('src/users.js', CODE);
    r.write('src/other.js', `export const o = 1;\n${OTHER}`);
    r.write('src/new.js', 'export const n = 1;\n');
    r.commitAll('code');
    const add = (...args: string[]) => r.memJson(['add', '--force', '--content', 'x', ...args]);
    const find = await add('--title', 'Bind values', '--anchor', 'src/users.js:3-5');
    await add('--title', 'listUsers must page', '--anchor', 'src/users.js:7-9');
    const parse = await add('--title', 'Header first', '--anchor', 'src/other.js:2-5');
    await add('--type', 'rule', '--title', 'SQL lives in src', '--scope', 'src/**');
    const kept = new Store(await openRepo(r.dir, r.env));
    kept.longLived = true;
    const paths = ['src/users.js', 'src/other.js'];
    const same = async () => {
      const once = new Store(await openRepo(r.dir, r.env));
      try {
        const out = [];
        for (const path of paths) {
          const a = await blame(kept, { path });
          expect(a).toEqual(await blame(once, { path }));
          out.push(a);
        }
        return out;
      } finally {
        once.close();
      }
    };
    try {
      await same();
      // HEAD moves: parse() moves into users.js, listUsers is edited
      r.write('src/users.js', `${CODE.replace('from users"', 'from users limit 50"')}${OTHER}`);
      r.write('src/other.js', 'export const o = 1;\n');
      r.commitAll('move parse');
      const [users] = await same();
      expect(users.memories.find((m) => m.id === parse.id)?.at?.path).toBe('src/users.js');
      // the memory ref moves: a check records the verdicts (the anchor index's journal)
      await r.mem(['check']);
      await same();
      // only the memory ref moves: a memory anchored to a file no memory was anchored to
      const fresh = await add('--title', 'New file', '--anchor', 'src/new.js:1');
      paths.push('src/new.js');
      expect((await same())[2].memories.map((m) => [m.id, m.verdict.reason])).toEqual([
        [fresh.id, 'same blob'],
      ]);
      // both: a branch where findUser is gone, and a memory added there
      r.git('checkout', '-q', '-b', 'other');
      r.write('src/users.js', OTHER);
      r.commitAll('drop users');
      await add('--title', 'Other only', '--anchor', 'src/users.js:1-2');
      const [gone] = await same();
      expect(gone.memories.find((m) => m.id === find.id)?.verdict.stale).toBe(true);
    } finally {
      kept.close();
    }
  });

  it('names bad input and the fix, and prints text and --json through the CLI', async () => {
    const r = makeRepo({ commit: true });
    r.write('a.txt', 'one\ntwo\nthree\n');
    r.commitAll('a');
    const added = await r.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'Two is two',
      '--content',
      'x',
      '--anchor',
      'a.txt:2',
    ]);
    const text = await r.mem(['blame', 'a.txt:2']);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`a.txt:2 at HEAD ${r.git('rev-parse', 'HEAD').trim().slice(0, 12)}`);
    expect(text.stdout).toContain(`${added.id.slice(0, 12)}  decision  Two is two`);
    expect(text.stdout).toMatch(
      /line 2: fresh, same blob\n {4}by Test User <test@example.com> \(person\) \d{4}-\d\d-\d\d; last verified .* \(when anchored\)/,
    );
    const json = await r.memJson(['blame', 'a.txt']);
    expect(Object.keys(json)).toEqual(['path', 'lines', 'head', 'memoryCommit', 'memories', 'rules']);
    expect(Object.keys(json.memories[0])).toEqual([
      'id',
      'alias',
      'type',
      'title',
      'status',
      'author',
      'by',
      'created',
      'updated',
      'anchor',
      'at',
      'verdict',
      'verified',
    ]);
    const none = await r.mem(['blame', 'a.txt:3']);
    expect(none.stdout).toContain('No memory is anchored here and no rule covers a.txt.');

    // each refusal: its exit and error code, what it names (none carries a data field) and the fix
    const head = r.git('rev-parse', 'HEAD').trim().slice(0, 12);
    for (const [args, exit, code, named, fix] of [
      [['blame', 'a.txt:5'], 2, 'E_INVALID_ARG', ['a.txt', head], 'pass lines within 1-3'],
      [['blame', 'a.txt:3-2'], 2, 'E_INVALID_ARG', ['"a.txt:3-2"'], ''],
      [['blame', 'nope.txt'], 3, 'E_NOT_FOUND', ['nope.txt', head], 'blame reads committed files'],
      [['blame', '.'], 2, 'E_INVALID_ARG', [], ''],
      [['blame', '../x'], 2, 'E_INVALID_ARG', ['../x'], ''],
    ] as const) {
      const res = await r.mem([...args, '--json']);
      expect(res.code, res.stderr).toBe(exit);
      expect(res.stderr.trim().split('\n')).toHaveLength(1);
      const e = errorOf(res);
      expect(e.code, args.join(' ')).toBe(code);
      for (const n of named) expect(e.message, args.join(' ')).toContain(n);
      expect(e.hint ?? '', args.join(' ')).toContain(fix);
    }
    const empty = makeRepo();
    const noHead = await empty.mem(['blame', 'x', '--json']);
    expect(noHead.code).toBe(2);
    expect(errorOf(noHead).code).toBe('E_REV');
  });
});
