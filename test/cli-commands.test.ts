import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importJsonl } from '../src/commands/bulk.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { errorOf, makeRepo, runBin, runCli, type TestRepo, tmpDir, until } from './helpers.js';
import { fresh, runOn, template } from './support/template.js';
import { withEnv } from './support/with-env.js';

/** a repository with a first commit and no store: each command's first write creates it */
const NO_STORE = template('no-store', { init: false });

const tip = (r: Pick<TestRepo, 'git'>) => r.git('rev-parse', '-q', '--verify', 'refs/memory').trim();

/** Plants a record file straight into refs/memory (as a sync from a broken client could). */
function plant(r: Pick<TestRepo, 'dir' | 'env' | 'git'>, path: string, content: string) {
  const oid = runGit(r, ['hash-object', '-w', '--stdin'], content).trim();
  const idx = join(tmpDir(), 'index');
  const env = { ...r.env, GIT_INDEX_FILE: idx };
  runGit(r, ['read-tree', 'refs/memory'], undefined, env);
  runGit(r, ['update-index', '--add', '--cacheinfo', `100644,${oid},${path}`], undefined, env);
  const tree = runGit(r, ['write-tree'], undefined, env).trim();
  const commit = runGit(r, ['commit-tree', tree, '-p', 'refs/memory', '-m', 'plant'], undefined, env).trim();
  r.git('update-ref', 'refs/memory', commit);
}
function runGit(r: Pick<TestRepo, 'dir' | 'env'>, args: string[], input?: string, env = r.env): string {
  return execFileSync('git', args, { cwd: r.dir, env, input, encoding: 'utf8' });
}

describe('errors: one line, a stable code, a non-zero exit, the store untouched', () => {
  it('refuses bad input on every writing command without moving refs/memory', async () => {
    const r = makeRepo();
    await r.memJson(['add', '--title', 'Keep', '--content', 'k', '--alias', 'keep/me']);
    const before = tip(r);
    // end to end through main(): each refusal is one line with its code; every other refusal of the
    // store's commands is asserted by code on a long-lived store in test/ops/store-commands.test.ts
    const cases: Array<{ args: string[]; code: number; json: string; stdin?: string }> = [
      { args: ['add', '--content', 'no title'], code: 2, json: 'E_INVALID_ARG' },
      {
        args: ['add', '--title', 'T', '--content', 'x', '--alias', 'keep/me'],
        code: 2,
        json: 'E_ALIAS_TAKEN',
      },
      { args: ['update', 'zzzz', '--title', 'x'], code: 3, json: 'E_NOT_FOUND' },
      {
        args: ['import', '--jsonl', '-'],
        code: 2,
        json: 'E_INVALID_ARG',
        stdin: '{"title":"ok","body":"b"}\n{broken\n',
      },
      { args: ['frobnicate'], code: 2, json: 'E_INVALID_ARG' },
    ];
    for (const c of cases) {
      const res = await r.mem(c.args, { stdin: c.stdin });
      expect(res.code, `${c.args.join(' ')} → ${res.stderr}`).toBe(c.code);
      expect(res.stderr.trim().split('\n').length, res.stderr).toBe(1);
      expect(res.stderr).not.toMatch(/\n\s+at /);
      expect(tip(r), c.args.join(' ')).toBe(before);
      const j = await r.mem([...c.args, '--json'], { stdin: c.stdin });
      expect(JSON.parse(j.stdout).error.code).toBe(c.json);
    }
  });

  it('the real binary prints the same one-line error and exit code, and help works', async () => {
    const r = makeRepo();
    const res = runBin(['show', 'abcd', '--json'], { cwd: r.dir, env: r.env });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^git-mem: error: [^\n]*\(run git mem init\)\n$/); // one line, with the fix
    expect(errorOf(res).code).toBe('E_NOT_INITIALIZED');
    const help = runBin(['--help'], { cwd: r.dir, env: r.env });
    expect(help.code).toBe(0);
    for (const c of [
      'init',
      'add',
      'show',
      'list',
      'update',
      'rm',
      'history',
      'prune',
      'import',
      'export',
      'stats',
      'doctor',
      'mv',
      'supersede',
      'config',
      'rules',
    ]) {
      expect(help.stdout).toMatch(new RegExp(`^  git mem ${c}\\b`, 'm'));
    }
    const outside = runBin(['list', '--json'], { cwd: tmpDir(), env: r.env });
    expect(outside.code).toBe(1);
    expect(errorOf(outside).code).toBe('E_NOT_A_REPO');
  });
});

describe('commands', () => {
  // update/history/rm, expiry and prune, list filters, supersede/mv/stats: test/ops/store-commands.test.ts
  it('list prints token estimates beside the titles', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['add', '--type', 'rule', '--title', 'DB rule', '--content', 'use the pool']);
    // the rendered list is the product
    const human = await r.mem(['list']);
    expect(human.stdout).toMatch(/DB rule\s+~\d+t/);
  });

  it('imports JSON lines in one commit (foreign ids become aliases, unknown fields kept) and exports them back', async () => {
    const r = await fresh(NO_STORE);
    const lines = [
      {
        id: 'm001',
        type: 'security',
        title: 'Scan deps',
        body: 'osv-scanner in CI',
        tags: ['ci'],
        source: 'x/y:z',
        custom_field: { a: 1 },
      },
      {
        id: 'm002',
        type: 'known_fix',
        title: 'Pool fix',
        body: 'wait for pg',
        anchors: [{ path: 'packages/db/src/pool.ts', lines: [3, 9] }],
      },
      { type: 'decision', title: 'No id', body: 'gets a new one' },
    ];
    const res = await r.memJson(['import', '--jsonl', '-'], {
      stdin: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(res).toMatchObject({ imported: 3, added: 3, replaced: 0 });
    expect(r.git('rev-list', '--count', 'refs/memory').trim()).toBe('1');
    const m1 = await r.memJson(['show', 'm001']);
    expect(m1).toMatchObject({
      alias: 'm001',
      type: 'security',
      source: 'x/y:z',
      extra: { custom_field: { a: 1 } },
    });
    expect((await r.memJson(['show', 'm002'])).anchors).toEqual([
      { path: 'packages/db/src/pool.ts', lines: [3, 9] },
    ]);
    const exported = (await r.mem(['export'])).stdout;
    const other = await fresh(NO_STORE);
    const again = await other.memJson(['import', '--jsonl', '-'], { stdin: exported });
    expect(again.added).toBe(3);
    expect((await other.mem(['export'])).stdout).toBe(exported);
    // re-importing the same export changes nothing: no record replaced, no commit, not even an empty one
    const tip = other.tip();
    const same = await other.mem(['import', '--jsonl', '-'], { stdin: exported });
    expect(same.code, same.stderr).toBe(0);
    expect(other.tip()).toBe(tip);
    const json = await other.memJson(['import', '--jsonl', '-'], { stdin: exported });
    expect(json).toMatchObject({ added: 0, replaced: 0, unchanged: 3, commit: null });
    expect(other.tip()).toBe(tip);
    // a line that differs replaces its record in place, the others stay unchanged
    const edited = exported.replace('"title":"Pool fix"', '"title":"Pool fix, revised"');
    expect(edited).not.toBe(exported);
    const replace = await other.memJson(['import', '--jsonl', '-'], { stdin: edited });
    expect(replace).toMatchObject({ added: 0, replaced: 1, unchanged: 2 });
    expect(other.git('rev-list', '--count', `${tip}..refs/memory`).trim()).toBe('1');
    // the commit's subject is data a person reads in git log
    expect(other.git('log', '--format=%s', '-1', 'refs/memory').trim()).toBe(
      'mem: import 3 records (0 new, 1 replaced, 2 unchanged)',
    );
    expect((await other.memJson(['show', 'm002'])).title).toBe('Pool fix, revised');

    // the same file again: lines with no id of ours are the memories they repeat (foreign ids with
    // their aliases), so nothing is added twice
    const file = lines.map((l) => JSON.stringify(l)).join('\n');
    const rtip = r.tip();
    const twice = await r.memJson(['import', '--jsonl', '-'], { stdin: file });
    expect(twice).toMatchObject({ imported: 3, added: 0, replaced: 0, unchanged: 3, commit: null });
    expect(r.tip()).toBe(rtip);
    // each reports the memory it is
    expect(twice.ids).toEqual(res.ids);
    // a line that says something else is a new memory; lines repeated within a file are the file's to say
    const more = [
      { type: 'decision', title: 'Twice in a file', body: 'once' },
      { type: 'decision', title: 'Twice in a file', body: 'once' },
      { type: 'decision', title: 'No id', body: 'says something else' },
      { type: 'decision', title: 'No id', body: 'gets a new one' },
    ];
    const res2 = await r.memJson(['import', '--jsonl', '-'], {
      stdin: more.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(res2).toMatchObject({ added: 3, unchanged: 1 });
    const titles = (await r.memJson(['list'])).map((m: { title: string }) => m.title).sort();
    expect(titles).toEqual(['No id', 'No id', 'Pool fix', 'Scan deps', 'Twice in a file', 'Twice in a file']);
    // again: each of the twins is one of the stored two, once each
    const res3 = await r.memJson(['import', '--jsonl', '-'], {
      stdin: more.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(res3).toMatchObject({ added: 0, replaced: 0, unchanged: 4, commit: null });
    expect(new Set(res3.ids.slice(0, 2)).size).toBe(2);
  });

  it('import that loses a race to a removal matches its lines again: the removed memory is not brought back', async () => {
    const r = await fresh(NO_STORE);
    const line = `${JSON.stringify({ type: 'decision', title: 'Twin', body: 'Same text.' })}\n`;
    const twin = (await r.memJson(['import', '--jsonl', '-'], { stdin: line })).ids[0];
    const paused = join(r.dir, '.git', 'mem', 'test-paused');
    // a second writer on the same repository, paused before its compare-and-swap
    const store = new Store(await openRepo(r.dir, { ...r.env, GIT_MEM_TEST_PAUSE_BEFORE_CAS: '30000' }));
    try {
      // the same memory with a tag: it replaces the twin, whose change is written when it is removed
      const tagged = `${JSON.stringify({ type: 'decision', title: 'Twin', body: 'Same text.', tags: ['new'] })}\n`;
      const importing = importJsonl(store, tagged);
      await until(() => existsSync(paused) || undefined, 20_000);
      expect((await r.mem(['rm', twin])).code).toBe(0);
      writeFileSync(join(r.dir, '.git', 'mem', 'test-release'), '');
      const res = await importing;
      expect(res).toMatchObject({ added: 1, replaced: 0 });
      expect(res.records[0].id).not.toBe(twin);
    } finally {
      store.close();
    }
    const listed = await r.memJson(['list']);
    expect(listed.map((m: { id: string }) => m.id)).toEqual([expect.not.stringMatching(twin)]);
  });

  it('import keeps what a line does not say: a foreign id names its memory, dates and clock stay', async () => {
    const r = await fresh(NO_STORE);
    const line = (o: Record<string, unknown>) => `${JSON.stringify(o)}\n`;
    const first = await r.memJson(['import', '--jsonl', '-'], {
      stdin: line({ id: 'm001', type: 'decision', title: 'Foreign one', body: 'Body one.' }),
    });
    const id = first.ids[0];
    const shown = await r.memJson(['show', id]);
    // the foreign id's line, changed: it replaces the memory its alias names, created kept, clock raised
    const edited = await r.memJson(['import', '--jsonl', '-'], {
      stdin: line({
        id: 'm001',
        type: 'decision',
        title: 'Foreign one',
        body: 'Body one, edited.',
        tags: ['z'],
      }),
    });
    expect(edited).toMatchObject({ ids: [id], added: 0, replaced: 1 });
    const after = await r.memJson(['show', id]);
    expect(after).toMatchObject({
      body: 'Body one, edited.\n',
      tags: ['z'],
      created: shown.created,
      clock: shown.clock + 1,
    });
    expect(after.updated >= shown.updated).toBe(true);
    // our id without dates or clock, imported again and again: unchanged after the first, no commit
    const ours = line({
      id,
      type: 'decision',
      title: 'Foreign one',
      body: 'Body one, edited.',
      tags: ['z'],
      alias: 'm001',
    });
    const tip = r.tip();
    for (let i = 0; i < 2; i++)
      expect(await r.memJson(['import', '--jsonl', '-'], { stdin: ours })).toMatchObject({
        unchanged: 1,
        commit: null,
      });
    expect(r.tip()).toBe(tip);
    expect((await r.memJson(['show', id])).created).toBe(shown.created);
    // a line without an id that repeats it but adds a tag: that memory, replaced, not a second one
    const tagged = await r.memJson(['import', '--jsonl', '-'], {
      stdin: line({ type: 'decision', title: 'Foreign one', body: 'Body one, edited.', tags: ['z', 'new'] }),
    });
    expect(tagged).toMatchObject({ ids: [id], added: 0, replaced: 1 });
    // imported by someone else (a store opened as another author), the same line changes nothing:
    // the author is the stored one
    const other = await withEnv(r, {
      ...r.env,
      GIT_AUTHOR_NAME: 'Someone Else',
      GIT_AUTHOR_EMAIL: 'else@example.com',
    });
    expect((await other.store.ident()).name).toBe('Someone Else');
    const byOther = await other.mem(['import', '--jsonl', '-', '--json'], {
      stdin: line({ type: 'decision', title: 'Foreign one', body: 'Body one, edited.', tags: ['z', 'new'] }),
    });
    expect(byOther.code, byOther.stderr).toBe(0);
    expect(byOther.json).toMatchObject({ ids: [id], unchanged: 1, commit: null });
    expect((await r.memJson(['show', id])).tags).toEqual(['z', 'new']);
    expect(await r.memJson(['list'])).toHaveLength(1);
  });

  it('a large import is written by git as one pack, not a loose object per record', async () => {
    const r = await fresh(NO_STORE);
    const n = 300;
    const lines = Array.from({ length: n }, (_, i) =>
      JSON.stringify({ id: `bulk-${i}`, type: 'decision', title: `Bulk ${i}`, body: `body ${i}` }),
    );
    const loose0 = Number(
      Object.fromEntries(
        r
          .git('count-objects', '-v')
          .trim()
          .split('\n')
          .map((l) => l.split(': ')),
      ).count,
    );
    const res = await r.memJson(['import', '--jsonl', '-'], { stdin: lines.join('\n') });
    expect(res).toMatchObject({ imported: n, added: n });
    const count = Object.fromEntries(
      r
        .git('count-objects', '-v')
        .trim()
        .split('\n')
        .map((l) => l.split(': ')),
    );
    // the records' blobs are in a pack; what stays loose is the commit and its trees (fan-out folders)
    expect(Number(count['in-pack'])).toBeGreaterThanOrEqual(n);
    expect(Number(count.count) - loose0).toBeLessThan(n);
    expect(r.git('fsck', '--no-dangling').trim()).toBe('');
    expect((await r.memJson(['list', '--json'])).length).toBe(n);
    expect((await r.memJson(['show', 'bulk-7'])).body).toBe('body 7\n');
  });

  it('a malformed record pulled from elsewhere does not stop list; doctor names it and how to mend', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['add', '--title', 'Good', '--content', 'fine']);
    const badId = '01JBADBADBADBADBADBADBADBA';
    const badPath = `memories/${badId.slice(-2)}/${badId}.md`;
    plant(r, badPath, `---\nid: ${badId}\ntype: decision\ntitle: [unclosed\n---\nbody\n`);
    const list = await r.mem(['list']);
    expect(list.code).toBe(0);
    expect(list.stdout).toContain('Good');
    // the rendered list says what it skipped and the command that explains it
    expect(list.stdout).toMatch(/1 malformed record\(s\) skipped; run git mem doctor/);
    expect((await r.memJson(['list'])).map((m: { title: string }) => m.title)).toEqual(['Good']);
    const doc = await r.mem(['doctor', '--json']);
    expect(doc.code).toBe(1);
    const bad = doc.json.findings.find((f: { check: string }) => f.check === 'record');
    expect(bad).toMatchObject({ level: 'error' });
    expect(bad.message).toContain(badPath);
    expect(bad.fix).toMatch(/git cat-file -p [0-9a-f]{12}/);
    // the fix it names works, and names the full id: a healthy memory sharing its first 12
    // characters is not the one removed
    const twin = `${badId.slice(0, 20)}TWXNZZ`;
    plant(
      r,
      `memories/ZZ/${twin}.md`,
      `---\nid: ${twin}\ntype: decision\ntitle: Twin\nstatus: active\ntags: []\nscope: []\nconfidence: 0.8\ncreated: 2026-01-01T00:00:00.000Z\nupdated: 2026-01-01T00:00:00.000Z\nclock: 1\n---\ntwin\n`,
    );
    expect((await r.memJson(['show', twin])).title).toBe('Twin');
    const again = (await r.mem(['doctor', '--json'])).json.findings.find(
      (f: { check: string }) => f.check === 'record',
    );
    const fix = /git mem rm (\w+)/.exec(again.fix)?.[1];
    expect(fix).toBe(badId);
    const rm = await r.mem(['rm', fix!]);
    expect(rm.code, rm.stderr).toBe(0);
    expect((await r.mem(['doctor'])).code).toBe(0);
    expect((await r.memJson(['show', twin])).title).toBe('Twin');
    expect(r.git('ls-tree', '-r', '--name-only', 'refs/memory')).toContain(
      `tombstones/${badId.slice(-2)}/${badId}.yaml`,
    );
  });

  it('a ref that names a blob: doctor says which and the commit to point it back at; a broken personal store is left out', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['add', '--type', 'rule', '--title', 'Project rule', '--content', 'x']);
    await r.memJson(['add', '--global', '--type', 'rule', '--title', 'Mine', '--content', 'y']);
    expect((await r.memJson(['rules'])).map((x: { title: string }) => x.title).sort()).toEqual([
      'Mine',
      'Project rule',
    ]);
    const good = r.tip();
    const blob = runGit(r, ['hash-object', '-w', '--stdin'], 'junk\n').trim();
    r.git('update-ref', 'refs/memory', blob);
    const doc = await r.mem(['doctor', '--json']);
    expect(doc.code).toBe(1);
    const [ref] = doc.json.findings;
    expect(ref).toMatchObject({ level: 'error', check: 'ref' });
    // names the ref, the repository and the blob it points at
    for (const named of ['refs/memory', r.dir, blob.slice(0, 12)]) expect(ref.message).toContain(named);
    const fix = /git --git-dir=(\S+) update-ref refs\/memory ([0-9a-f]{40})/.exec(ref.fix)!;
    expect(fix[2]).toBe(good);
    r.git(`--git-dir=${fix[1]}`, 'update-ref', 'refs/memory', fix[2]);
    expect((await r.mem(['doctor'])).code).toBe(0);
    // the personal store's ref broken: the project's commands go on without it, saying so
    const home = join(r.env.GIT_MEM_HOME!, 'store.git');
    const gblob = execFileSync('git', ['--git-dir', home, 'hash-object', '-w', '--stdin'], {
      input: 'junk\n',
      env: r.env,
      encoding: 'utf8',
    }).trim();
    execFileSync('git', ['--git-dir', home, 'update-ref', 'refs/memory', gblob], { env: r.env });
    const rules = await r.mem(['rules', '--json']);
    expect(rules.code, rules.stderr).toBe(0);
    expect(rules.json.map((x: { title: string }) => x.title)).toEqual(['Project rule']);
    // one warning, naming the store, the blob and the command that mends it
    expect(rules.stderr.trim().split('\n')).toHaveLength(1);
    for (const named of [home, gblob.slice(0, 12), 'git mem doctor --global'])
      expect(rules.stderr).toContain(named);
    const gdoc = await r.mem(['doctor', '--global', '--json']);
    expect(gdoc.code).toBe(1);
    expect(gdoc.json.findings[0]).toMatchObject({ level: 'error', check: 'ref' });
    expect(gdoc.json.findings[0].message).toContain('store.git');
  });

  it('an unreadable FORMAT: add says run doctor, doctor says run init, init writes it again; a newer one stays', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['add', '--title', 'Kept', '--content', 'x']);
    plant(r, 'FORMAT', 'garbage: [\n');
    const add = await r.mem(['add', '--title', 'New', '--content', 'y']);
    expect(add).toMatchObject({ code: 1, error: 'E_FORMAT' }); // the operation failed
    expect(add.hint).toContain('git mem doctor');
    const fmt = (await r.mem(['doctor', '--json'])).json.findings.find(
      (f: { check: string; level: string }) => f.check === 'format',
    );
    expect(fmt.level).toBe('error');
    expect(fmt.fix).toContain('git mem init');
    const init = await r.mem(['init', '--json']);
    expect(init.code, init.stderr).toBe(0);
    expect(init.json).toMatchObject({ created: false, repaired: true });
    expect(r.git('show', 'refs/memory:FORMAT')).toContain('format: 1');
    expect((await r.mem(['doctor'])).code).toBe(0);
    expect((await r.memJson(['add', '--title', 'New', '--content', 'y'])).id).toBeTruthy();
    expect((await r.memJson(['list'])).map((m: { title: string }) => m.title)).toEqual(['Kept', 'New']);
    // a newer store format is not ours to rewrite
    plant(r, 'FORMAT', 'format: 99\n');
    const tip = r.tip();
    const newer = await r.mem(['init']);
    expect(newer).toMatchObject({ code: 1, error: 'E_FORMAT' });
    expect(newer.message).toContain('99');
    expect(newer.hint).toContain('upgrade');
    expect(r.tip()).toBe(tip);
  });

  it('a shared config.yaml that does not read, or holds a value this version refuses, is named, not silently dropped', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['add', '--title', 'Good', '--content', 'fine']);
    plant(r, 'config.yaml', 'context-budget: [\nfoo\n');
    // a command that reads settings says so, once; a read that needs none goes on
    expect((await r.mem(['list'])).code).toBe(0);
    const add = await r.mem(['add', '--title', 'Two', '--content', 'second']);
    expect(add.code, add.stderr).toBe(0);
    // one warning, naming the file and the command that rewrites it
    expect(add.stderr.trim().split('\n')).toHaveLength(1);
    for (const named of ['config.yaml', 'git mem config set KEY VALUE --shared'])
      expect(add.stderr).toContain(named);
    const doc = await r.mem(['doctor', '--json']);
    expect(doc.code).toBe(1);
    const cfg = doc.json.findings.find((f: { check: string }) => f.check === 'config');
    expect(cfg.level).toBe('error');
    expect(cfg.message).toContain('config.yaml');
    plant(r, 'config.yaml', 'context-budget: banana\nsecret-scan: block\n');
    const ctx = await r.mem(['context', '--query', 'fine']);
    expect(ctx.code, ctx.stderr).toBe(0);
    // one warning, naming the key, the value and the command that fixes it for the team
    expect(ctx.stderr.trim().split('\n')).toHaveLength(1);
    for (const named of ['context-budget', '"banana"', 'git mem config set context-budget VALUE --shared'])
      expect(ctx.stderr).toContain(named);
    expect((await r.memJson(['config', 'get', 'context-budget'])).value).toBe(2000);
    const warned = (await r.mem(['doctor', '--json'])).json.findings.find(
      (f: { check: string }) => f.check === 'config',
    );
    expect(warned.level).toBe('warn');
    expect(warned.message).toContain('context-budget');
    // this clone's own bad value names where it is and how to change it
    r.git('config', 'mem.context-budget', '-5');
    const own = await r.mem(['context', '--query', 'fine']);
    expect(own).toMatchObject({ code: 2, error: 'E_INVALID_ARG' });
    expect(own.message).toContain('"-5"');
    expect(own.hint).toContain('git mem config unset context-budget');
    expect(await r.mem(['config', 'set', 'context-budget', '--', '-5'])).toMatchObject({
      code: 2,
      error: 'E_INVALID_ARG',
    });
  });

  it('layers config: defaults < global < shared < local', async () => {
    const r = await fresh(NO_STORE);
    const get = async () =>
      (await r.memJson(['config', 'get', 'context-budget'])) as { value: number; origin: string };
    expect(await get()).toMatchObject({ value: 2000, origin: 'default' });
    await r.memJson(['config', 'set', 'context-budget', '2500', '--global']);
    expect(await get()).toMatchObject({ value: 2500, origin: 'global' });
    await r.memJson(['config', 'set', 'context-budget', '3000', '--shared']);
    expect(await get()).toMatchObject({ value: 3000, origin: 'shared' });
    expect(r.git('cat-file', '-p', 'refs/memory:config.yaml')).toContain('context-budget: 3000');
    await r.memJson(['config', 'set', 'context-budget', '4000']);
    expect(await get()).toMatchObject({ value: 4000, origin: 'local' });
    expect(r.git('config', 'mem.context-budget').trim()).toBe('4000');
    await r.memJson(['config', 'unset', 'context-budget']);
    expect(await get()).toMatchObject({ value: 3000, origin: 'shared' });
    // a layer flag reads that layer, also where another one wins
    await r.memJson(['config', 'set', 'context-budget', '4000']);
    const at = async (layer: string) => (await r.memJson(['config', 'get', 'context-budget', layer])).value;
    expect([await at('--global'), await at('--shared'), await at('--local')]).toEqual([2500, 3000, 4000]);
    expect(await r.memJson(['config', 'list', '--shared'])).toEqual([
      { key: 'context-budget', value: 3000, origin: 'shared' },
    ]);
    const none = await r.mem(['config', 'get', 'mcp.add-status', '--shared']);
    expect(none).toMatchObject({ code: 3, error: 'E_NOT_FOUND' });
    expect(none.message).toContain('mcp.add-status');
    // values the docs close: refused where they are set, named, the store as it was (settings
    // that send data are personal: set in this clone's layer, never the shared one)
    const tip0 = r.tip();
    for (const [k, v, layer] of [
      ['embedding-provider', 'foo', '--local'],
      ['llm.provider', 'bogus', '--local'],
      ['llm.timeout', 'abc', '--local'],
      ['mcp.add-status', 'later', '--shared'],
      ['post-commit-budget-ms', '1.5', '--shared'],
    ] as const) {
      const bad = await r.mem(['config', 'set', k, v, layer]);
      expect(bad, `${k} ${v}`).toMatchObject({ code: 2, error: 'E_INVALID_ARG' });
      // names the key and the value refused
      expect(bad.message).toContain(k);
      expect(bad.message).toContain(`"${v}"`);
    }
    expect(r.tip()).toBe(tip0);
    expect(r.git('config', '--get-regexp', '^mem\\.').trim()).toBe('mem.context-budget 4000');
    expect((await r.mem(['config', 'set', 'llm.provider', 'Anthropic', '--local'])).code).toBe(0);
    // read in lower case, as every module compares it (a Pending add-status is pending)
    expect((await r.memJson(['config', 'get', 'llm.provider'])).value).toBe('anthropic');
    await r.memJson(['config', 'set', 'mcp.add-status', 'Pending', '--local']);
    expect((await r.memJson(['config', 'get', 'mcp.add-status'])).value).toBe('pending');
    // the same shared value again: no commit
    const tip = r.tip();
    await r.memJson(['config', 'set', 'context-budget', '3000', '--shared']);
    expect(r.tip()).toBe(tip);
  });

  it('prints the rules in force for a file, most specific first, project over global', async () => {
    const r = await fresh(NO_STORE);
    const add = (...args: string[]) => r.memJson(['add', ...args]);
    await add('--type', 'rule', '--title', 'Everywhere', '--content', 'be kind');
    await add('--type', 'rule', '--title', 'TS files', '--content', 'strict', '--scope', '**/*.ts');
    await add(
      '--type',
      'rule',
      '--title',
      'DB package',
      '--content',
      'use pool',
      '--scope',
      'packages/db/**',
    );
    await add('--type', 'rule', '--title', 'Web only', '--content', 'react', '--scope', 'apps/web/**');
    await add('--type', 'decision', '--title', 'Not a rule', '--content', 'x', '--scope', '**');
    await add(
      '--global',
      '--type',
      'rule',
      '--title',
      'My TS habit',
      '--content',
      'no any',
      '--scope',
      '**/*.ts',
    );
    // expired rules are in force nowhere, project or personal
    for (const g of [[], ['--global']])
      await add(...g, '--type', 'rule', '--title', 'Old', '--content', 'no', '--expires', '2020-01-01');
    const rules = await r.memJson(['rules', '--file', 'packages/db/src/pool.ts']);
    expect(rules.map((x: { title: string; origin: string }) => `${x.title}@${x.origin}`)).toEqual([
      'DB package@project',
      'TS files@project',
      'My TS habit@global',
      'Everywhere@project',
    ]);
    const sub = join(r.dir, 'packages', 'db');
    r.write('packages/db/x.ts', '');
    const fromSub = await runOn(r, ['rules', '--file', 'x.ts'], { cwd: sub });
    expect(fromSub.json[0].title).toBe('DB package');
    expect((await r.memJson(['list', '--global'])).map((m: { title: string }) => m.title)).toEqual([
      'My TS habit',
    ]);
    await r.memJson(['rules', 'export', '--to', 'claude']);
    const claude = readFileSync(join(r.dir, 'CLAUDE.md'), 'utf8');
    expect(claude).toContain('DB package');
    expect(claude).not.toContain('### Old');
    expect(existsSync(join(r.env.GIT_MEM_HOME!, 'store.git', 'HEAD'))).toBe(true);
  });

  // end to end through main(): which store a command finds from its working directory
  it('outside a repository uses the global store unless strict-local is set', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['add', '--global', '--title', 'Personal', '--content', 'mine']);
    const outside = tmpDir();
    const res = await runCli(['list', '--json'], { cwd: outside, env: r.env });
    expect(JSON.parse(res.stdout).map((m: { title: string }) => m.title)).toEqual(['Personal']);
    await r.memJson(['config', 'set', 'strict-local', 'true', '--global']);
    const strict = await runCli(['list', '--json'], { cwd: outside, env: r.env });
    expect(strict.code).toBe(1);
    expect(JSON.parse(strict.stdout).error.code).toBe('E_NOT_A_REPO');
  });
});

describe('settings that change behaviour', () => {
  it('secret-scan: block refuses, warn stores with a warning, off skips; output: json/yaml from the global file', async () => {
    const r = await fresh(NO_STORE);
    // distinct texts each time, so the duplicate warning does not interfere
    const secret = (n: string) => [
      'add',
      '--title',
      `Creds ${n}`,
      '--content',
      `${n} key AKIAIOSFODNN7EXAMPLE`,
    ];
    expect(await r.mem(secret('one'))).toMatchObject({ code: 2, error: 'E_SECRET' });
    await r.memJson(['config', 'set', 'secret-scan', 'warn', '--local']);
    const warned = await r.mem(secret('two'));
    expect(warned.code).toBe(0);
    // one warning, naming the kind and where it is
    expect(warned.stderr.trim().split('\n')).toHaveLength(1);
    for (const named of ['AWS access key id', 'body', 'line 1']) expect(warned.stderr).toContain(named);
    // the shared layer (anyone who can push refs/memory) may not switch the scan off: ignored, said once
    await r.memJson(['config', 'set', 'secret-scan', 'off', '--shared']);
    await r.memJson(['config', 'unset', 'secret-scan', '--local']);
    const shared = await r.mem(secret('three alpha beta gamma'));
    expect(shared).toMatchObject({ code: 2, error: 'E_SECRET' });
    expect(shared.stderr.trim().split('\n')).toHaveLength(1);
    for (const named of ['secret-scan', 'off', 'shared']) expect(shared.stderr).toContain(named);
    // this clone's own setting may
    await r.memJson(['config', 'set', 'secret-scan', 'off', '--local']);
    const off = await r.mem(secret('three alpha beta gamma'));
    expect(off.code).toBe(0);
    expect(off.stderr).toBe('');
    // end to end through main(): the output format is read from the global file before a command runs
    await r.memJson(['config', 'set', 'output', 'json', '--global']);
    const list = await runCli(['list'], { cwd: r.dir, env: r.env });
    expect(JSON.parse(list.stdout).length).toBe(2);
    await r.memJson(['config', 'set', 'output', 'yaml', '--global']);
    const y = await runCli(['stats'], { cwd: r.dir, env: r.env });
    expect(y.stdout).toMatch(/^records: 2$/m);
  });
});
