/**
 * The store's commands on long-lived stores: each test works on a fresh copy
 * of a template repository (test/support/template.ts) through the command's
 * run function and the operations, with the store opened once per test.
 * Converted from test/cli-commands.test.ts, which drove each case as a whole
 * CLI command opening its own store; the assertions keep their meaning, and
 * those that matched message text now match the error code and the data.
 */
import { describe, expect, it } from 'vitest';
import { fresh, jsonOn, runOn, template } from '../support/template.js';

const KEEP = template('keep', {
  memories: [{ type: 'decision', title: 'Keep', body: 'k', alias: 'keep/me' }],
});
const EMPTY = template('empty');

describe('errors: a stable code, a non-zero exit, the store untouched', () => {
  it('refuses bad input on every writing command without moving refs/memory', async () => {
    const f = await fresh(KEEP);
    const id = f.records[0].id;
    const before = f.tip();
    const cases: Array<{ args: string[]; exit: number; code: string; stdin?: string }> = [
      { args: ['add', '--title', 'T', '--content', 'x', '--type', 'bogus'], exit: 2, code: 'E_INVALID_ARG' },
      {
        args: ['add', '--title', 'T', '--content', 'x', '--alias', 'Bad Alias'],
        exit: 2,
        code: 'E_INVALID_ARG',
      },
      {
        args: ['add', '--title', 'T', '--content', 'x', '--alias', 'keep/me'],
        exit: 2,
        code: 'E_ALIAS_TAKEN',
      },
      { args: ['add', '--title', 'T', '--content', 'aws AKIAIOSFODNN7EXAMPLE'], exit: 2, code: 'E_SECRET' },
      { args: ['add', '--title', 'T', '--content', 'x'.repeat(70000)], exit: 2, code: 'E_TOO_LARGE' },
      { args: ['add', '--title', 'T', '--content', 'a\u0000b'], exit: 2, code: 'E_BINARY' },
      {
        args: ['add', '--title', 'T', '--content', 'x', '--expires', 'whenever'],
        exit: 2,
        code: 'E_INVALID_ARG',
      },
      {
        args: ['add', '--title', 'T', '--content', 'x', '--file', 'nope.md'],
        exit: 2,
        code: 'E_INVALID_ARG',
      },
      { args: ['add', '--title', 'T'], exit: 2, code: 'E_INVALID_ARG' },
      { args: ['update', 'zzzz', '--title', 'x'], exit: 3, code: 'E_NOT_FOUND' },
      { args: ['update', id, '--status', 'weird'], exit: 2, code: 'E_INVALID_ARG' },
      { args: ['update', id, '--expires', '1d', '--clear-expiry'], exit: 2, code: 'E_INVALID_ARG' },
      { args: ['rm', 'nothing/here'], exit: 3, code: 'E_NOT_FOUND' },
      { args: ['mv', id, 'BAD ALIAS'], exit: 2, code: 'E_INVALID_ARG' },
      { args: ['supersede', id, '--by', id], exit: 2, code: 'E_INVALID_ARG' },
      {
        args: ['import', '--jsonl', '-'],
        exit: 2,
        code: 'E_INVALID_ARG',
        stdin: '{"title":"ok","body":"b"}\n{broken\n',
      },
      { args: ['import', '--jsonl', '-'], exit: 2, code: 'E_INVALID_ARG', stdin: '{"body":"no title"}\n' },
      { args: ['import', '--jsonl', 'missing.jsonl'], exit: 2, code: 'E_INVALID_ARG' },
      { args: ['config', 'set', 'Bad Key', '1'], exit: 2, code: 'E_INVALID_ARG' },
      { args: ['config', 'set', 'context-budget', 'lots', '--shared'], exit: 2, code: 'E_INVALID_ARG' },
      { args: ['show', id, '--at', 'no-such-thing'], exit: 2, code: 'E_REV' },
    ];
    const got = [];
    for (const c of cases) {
      const res = await runOn(f, c.args, { stdin: c.stdin });
      got.push({
        args: c.args.join(' ').slice(0, 60),
        exit: res.exit,
        code: res.code,
        same: f.tip() === before,
      });
    }
    expect(got).toEqual(
      cases.map((c) => ({ args: c.args.join(' ').slice(0, 60), exit: c.exit, code: c.code, same: true })),
    );
  });
});

describe('commands', () => {
  it('update changes only what is passed; history shows every version; rm keeps a tombstone', async () => {
    const f = await fresh(EMPTY);
    const { id } = await jsonOn(f, [
      'add',
      '--type',
      'convention',
      '--title',
      'Tabs',
      '--content',
      'v1',
      '--tags',
      'style',
      '--expires',
      '2999-01-01',
    ]);
    const u = await jsonOn(f, ['update', id, '--title', 'Spaces', '--add-tag', 'fmt', '--clear-expiry']);
    expect(u.changed.sort()).toEqual(['expires', 'tags', 'title']);
    expect(u).toMatchObject({
      title: 'Spaces',
      tags: ['style', 'fmt'],
      expires: null,
      body: 'v1\n',
      clock: 2,
    });
    const same = await jsonOn(f, ['update', id, '--title', 'Spaces']);
    expect(same.changed).toEqual([]);
    expect(same.commit).toBeNull();
    expect((await runOn(f, ['update', id, '--stdin'], { stdin: 'v2 from stdin' })).exit).toBe(0);
    await jsonOn(f, ['update', id, '--remove-tag', 'style', '--status', 'archived']);
    const hist = await jsonOn(f, ['history', id]);
    expect(hist.map((h: { record: { body: string } }) => h.record.body)).toEqual([
      'v2 from stdin\n',
      'v2 from stdin\n',
      'v1\n',
      'v1\n',
    ]);
    expect(hist[0].author).toBe('Test User');
    await jsonOn(f, ['rm', id, '--reason', 'obsolete']);
    expect((await jsonOn(f, ['history', id]))[0].deleted).toBe(true);
    expect(f.git('cat-file', '-p', `refs/memory:tombstones/${id.slice(-2)}/${id}.yaml`)).toMatch(
      /reason: obsolete/,
    );
  });

  it('rm removes several memories in one commit, each once, or none if one is unknown', async () => {
    const f = await fresh(KEEP);
    const keep = f.records[0].id;
    const a = (await jsonOn(f, ['add', '--title', 'A', '--content', 'x'])).id;
    const b = (await jsonOn(f, ['add', '--title', 'B', '--content', 'y'])).id;
    const before = f.tip();
    const bad = await runOn(f, ['rm', a, 'nothing/here', b]);
    expect(bad.exit).toBe(3);
    expect(bad.code).toBe('E_NOT_FOUND');
    expect(f.tip()).toBe(before);
    const commits = Number(f.git('rev-list', '--count', 'refs/memory'));
    // keep named twice (id and alias), a twice: each removed once
    const out = await jsonOn(f, ['rm', keep, a, 'keep/me', b, a.slice(0, 12), '--reason', 'cleanup']);
    expect(out.map((m: { id: string }) => m.id)).toEqual([keep, a, b]);
    expect(new Set(out.map((m: { commit: string }) => m.commit)).size).toBe(1);
    expect(Number(f.git('rev-list', '--count', 'refs/memory'))).toBe(commits + 1);
    expect(f.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(/\b3\b/);
    expect(await jsonOn(f, ['list'])).toEqual([]);
    for (const id of [keep, a, b]) expect((await jsonOn(f, ['history', id]))[0].deleted).toBe(true);
  });

  it('hides expired memories unless asked, and prune removes them in one commit', async () => {
    const f = await fresh(EMPTY);
    await jsonOn(f, ['add', '--title', 'Fresh', '--content', 'x']);
    const { id } = await jsonOn(f, ['add', '--title', 'Old', '--content', 'x', '--expires', '2020-01-01']);
    expect((await jsonOn(f, ['list'])).map((m: { title: string }) => m.title)).toEqual(['Fresh']);
    expect((await jsonOn(f, ['list', '--include-expired'])).length).toBe(2);
    expect((await jsonOn(f, ['prune', '--dry-run'])).map((m: { id: string }) => m.id)).toEqual([id]);
    const commits = Number(f.git('rev-list', '--count', 'refs/memory'));
    await jsonOn(f, ['prune']);
    expect(Number(f.git('rev-list', '--count', 'refs/memory'))).toBe(commits + 1);
    expect((await jsonOn(f, ['list', '--include-expired'])).length).toBe(1);
  });

  it('filters by type, tag, status and scope file; shows token estimates', async () => {
    const f = await fresh(EMPTY);
    await jsonOn(f, [
      'add',
      '--type',
      'rule',
      '--title',
      'DB rule',
      '--content',
      'use the pool',
      '--scope',
      'packages/db/**',
      '--tags',
      'db',
    ]);
    await jsonOn(f, [
      'add',
      '--type',
      'decision',
      '--title',
      'UI choice',
      '--content',
      'react',
      '--tags',
      'ui',
    ]);
    await jsonOn(f, [
      'add',
      '--type',
      'decision',
      '--title',
      'Pending',
      '--content',
      'maybe',
      '--status',
      'pending',
    ]);
    const titles = async (args: string[]) =>
      (await jsonOn(f, ['list', ...args])).map((m: { title: string }) => m.title);
    expect(await titles(['--type', 'rule'])).toEqual(['DB rule']);
    expect(await titles(['--tag', 'ui'])).toEqual(['UI choice']);
    expect(await titles(['--status', 'pending'])).toEqual(['Pending']);
    expect(await titles(['--scope-file', 'packages/db/src/pool.ts'])).toEqual(['DB rule']);
    expect(await titles(['--type', 'decision', '--status', 'active'])).toEqual(['UI choice']);
    const show = await jsonOn(f, ['list', '--type', 'rule']);
    expect(show[0].tokens).toBe(Math.ceil('DB rule'.length / 4) + Math.ceil('use the pool\n'.length / 4) + 4);
  });

  it('supersede links both ways; mv renames the alias; stats counts', async () => {
    const f = await fresh(EMPTY);
    const { id: a } = await jsonOn(f, ['add', '--title', 'Old way', '--content', 'x', '--alias', 'how/old']);
    const { id: b } = await jsonOn(f, ['add', '--title', 'New way', '--content', 'y']);
    await jsonOn(f, ['supersede', 'how/old', '--by', b]);
    const old = await jsonOn(f, ['show', a]);
    const neu = await jsonOn(f, ['show', b]);
    expect(old.status).toBe('superseded');
    expect(old.links.superseded_by).toEqual([b]);
    expect(neu.links.supersedes).toEqual([a]);
    // again: already so, no commit; the other way round: refused (both would be hidden from search)
    const tip = f.tip();
    expect(await jsonOn(f, ['supersede', a, b])).toMatchObject({ old: a, new: b, commit: null });
    expect(await runOn(f, ['supersede', b, a])).toMatchObject({ exit: 2, code: 'E_INVALID_ARG' });
    expect(f.tip()).toBe(tip);
    await jsonOn(f, ['mv', b, 'how/new']);
    expect((await jsonOn(f, ['show', 'how/new'])).id).toBe(b);
    expect(await runOn(f, ['mv', a, 'how/new'])).toMatchObject({ exit: 2, code: 'E_ALIAS_TAKEN' });
    expect(await jsonOn(f, ['stats'])).toMatchObject({
      records: 2,
      byStatus: { superseded: 1, active: 1 },
      malformed: 0,
    });
  });
});
