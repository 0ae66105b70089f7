/**
 * Team and organisation stores (issue #17 item 4): another repository's memory
 * registered by name, fetched through the sync path into its own ref, read by
 * search, context, rules, SessionStart and MCP after the project's, labelled.
 * Real git only: two bare remotes, a lead's clone publishing to them, and a
 * project registering them. In-process CLI runs (r.mem) keep it fast.
 */
import { renameSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMemory } from '../src/commands/memory.js';
import { normalizeStoreUrl, openTeamStores } from '../src/commands/stores.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { sync } from '../src/merge/sync.js';
import type { CliResult, TestRepo } from './helpers.js';
import { plumber, recordText } from './hostile-helpers.js';
import { secretsCorpus } from './secrets-corpus.js';

/** The error a refused command printed with --json: `{error: {code, message, hint}}` on stdout. */
function errorOf(r: CliResult): { code: string; message: string; hint?: string; [k: string]: unknown } {
  return JSON.parse(r.stdout).error;
}

import { bareRemote, clone, type Remote, tipOf } from './sync-helpers.js';

let standards: Remote; // read-only for the project
let platform: Remote; // writable for the project
let lead: TestRepo; // publishes to standards
let project: TestRepo;
const opened: Store[] = [];
afterAll(() => {
  for (const s of opened) s.close();
});

/** Set-up writes go through the library (the CLI under test is store, search, context, rules). */
async function put(r: TestRepo, type: string, title: string, scope: string[] = []): Promise<void> {
  const s = new Store(await openRepo(r.dir, r.env));
  opened.push(s);
  await addMemory(s, { type, title, body: `${title}: body.\n`, scope });
}
async function publish(r: TestRepo): Promise<void> {
  const s = new Store(await openRepo(r.dir, r.env));
  opened.push(s);
  await sync(s);
}

async function ok(r: TestRepo, args: string[]): Promise<string> {
  const res = await r.mem(args);
  if (res.code !== 0) throw new Error(`git mem ${args.join(' ')} exited ${res.code}: ${res.stderr}`);
  return res.stdout;
}

beforeAll(async () => {
  standards = bareRemote();
  platform = bareRemote();
  lead = clone(standards.url);
  await put(lead, 'convention', 'Install with pnpm');
  await put(lead, 'rule', 'Named exports only', ['src/**']);
  await publish(lead);
  project = clone(platform.url, 'upstream');
  await put(project, 'decision', 'pnpm workspaces at the root');
  await put(project, 'rule', 'Tabs', ['src/**']);
});

describe('team stores', () => {
  it('registers a read-only store and reads it after the project, labelled', async () => {
    const own = tipOf(project);
    const added = await project.memJson(['store', 'add', 'standards', standards.url]);
    expect(added).toMatchObject({
      created: true,
      store: { name: 'standards', writable: false, ref: 'refs/mem-stores/standards/memory' },
      sync: { action: 'created', store: 'standards' },
    });
    expect(tipOf(project, 'refs/mem-stores/standards/memory')).toBe(tipOf(lead));
    expect(tipOf(project)).toBe(own); // the project's memory is untouched
    expect(project.git('for-each-ref', 'refs/notes')).toBe(''); // a store brings no notes
    expect(project.git('config', 'mem.store.standards.url').trim()).toBe(standards.url);
    // the registry is not a setting: config list does not show it
    const settings = (await project.memJson(['config', 'list'])) as Array<{ key: string }>;
    expect(settings.filter((x) => x.key.startsWith('store.'))).toEqual([]);

    const list = await project.memJson(['store', 'list']);
    expect(list).toEqual([expect.objectContaining({ name: 'standards', writable: false, memories: 2 })]);

    // search: both stores, each hit labelled, the team's score weighted below the project's
    const hits = await project.memJson(['search', 'pnpm', '--no-daemon']);
    expect(hits.map((h: { store: string }) => h.store)).toEqual(['project', 'standards']);
    expect(Object.keys(hits[0])).toEqual(['id', 'alias', 'type', 'title', 'status', 'score', 'why', 'store']);
    // a team hit's id shows from its store
    expect(await project.memJson(['show', hits[1].id])).toMatchObject({
      title: 'Install with pnpm',
      store: 'standards',
    });
    const human = await ok(project, ['search', 'pnpm', '--no-daemon']);
    expect(human).toMatch(/Install with pnpm {2}\(from standards\)/);
    expect(await project.memJson(['search', 'pnpm', '--no-daemon', '--no-stores'])).toHaveLength(1);

    // rules: at equal specificity, project before team
    const rules = await project.memJson(['rules', '--file', 'src/a.ts']);
    expect(
      rules.map((r: { title: string; store: string; origin: string }) => [r.title, r.store, r.origin]),
    ).toEqual([
      ['Tabs', 'project', 'project'],
      ['Named exports only', 'standards', 'team'],
    ]);
    expect(await ok(project, ['rules', '--file', 'src/a.ts'])).toMatch(
      /\[standards src\/\*\*\] Named exports only/,
    );

    // context: one budget, the team's items labelled in the JSON and in the text
    const pack = await project.memJson([
      'context',
      '--query',
      'pnpm install',
      '--file',
      'src/a.ts',
      '--no-daemon',
    ]);
    const stores = Object.fromEntries(
      pack.items.map((i: { title: string; store: string }) => [i.title, i.store]),
    );
    expect(stores).toMatchObject({
      Tabs: 'project',
      'Named exports only': 'standards',
      'pnpm workspaces at the root': 'project',
      'Install with pnpm': 'standards',
    });
    expect(pack.text).toMatch(/Install with pnpm \(convention; \w{12}, store standards\)/);

    // SessionStart and MCP read through the same operations
    const repo = await openRepo(project.dir, project.env);
    const own$ = new Store(repo);
    opened.push(own$);
    const teams = await openTeamStores(repo, own$);
    opened.push(...teams.map((t) => t.store));
    const { sessionStartContext } = await import('../src/agents/inject.js');
    const inj = await sessionStartContext(own$, { teams });
    expect(inj.text).toMatch(/Named exports only \(applies to src\/\*\*\) \(from standards\)/);
    expect(inj.text).toMatch(/\(convention, from standards\) Install with pnpm/);
    const { callTool } = await import('../src/agents/mcp-tools.js');
    const { unframe } = await import('../src/safety/frame.js');
    const tool = async (name: string, args: object) =>
      JSON.parse(unframe((await callTool(env, name, args)).content[0].text) ?? 'null');
    const env = { store: own$, teams, cwd: project.dir, env: { ...project.env, GIT_MEM_DAEMON: 'off' } };
    const found = await tool('search', { query: 'pnpm' });
    expect(found.map((h: { store: string }) => h.store)).toEqual(['project', 'standards']);
    const mrules = await tool('rules', { file: 'src/a.ts' });
    expect(mrules.map((r: { store: string }) => r.store)).toEqual(['project', 'standards']);

    // read-only: a typed refusal in one line, naming the fix; nothing written
    const before = tipOf(project, 'refs/mem-stores/standards/memory');
    const line = await project.mem(['add', '--store', 'standards', '--title', 'x', '-c', 'y', '--json']);
    expect(line.code).toBe(5);
    expect(line.stderr.trim().split('\n')).toHaveLength(1);
    // the fix it names: registering the store again with --writable
    expect(errorOf(line)).toMatchObject({ code: 'E_FORBIDDEN', hint: expect.stringContaining('--writable') });
    expect(tipOf(project, 'refs/mem-stores/standards/memory')).toBe(before);

    // the lead publishes more: sync follows; a rewound remote is followed too
    const first = tipOf(lead)!;
    await put(lead, 'convention', 'Node 20 or later');
    await publish(lead);
    expect(await project.memJson(['store', 'sync', 'standards'])).toMatchObject({ action: 'fast-forward' });
    standards.git('update-ref', 'refs/mem/memory', first);
    expect(await project.memJson(['store', 'sync'])).toEqual([
      expect.objectContaining({ store: 'standards', action: 'reset', after: first }),
    ]);
    expect(tipOf(project, 'refs/mem-stores/standards/memory')).toBe(first);
  });

  it('refuses a hostile team remote at the boundary, leaving the store as it was', async () => {
    const p = plumber(standards.dir, project.env);
    const base = standards.git('rev-parse', 'refs/mem/memory').trim();
    const id = '01M8AAAAAAAAAAAAAAAAAAAAAA';
    const link = p.commitOver(base, {
      memories: { tree: { AA: { tree: { [`${id}.md`]: { blob: recordText(id), mode: '120000' } } } } },
    });
    standards.git('update-ref', 'refs/mem/memory', link);
    const before = tipOf(project, 'refs/mem-stores/standards/memory');
    const r = await project.mem(['store', 'sync', 'standards', '--json']);
    expect(r.code).toBe(4);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(errorOf(r)).toMatchObject({ code: 'E_MERGE', problem: 'symlink' });
    expect(tipOf(project, 'refs/mem-stores/standards/memory')).toBe(before);
    expect(tipOf(project, 'refs/mem-stores/standards/remote/memory')).toBe(before);
    standards.git('update-ref', 'refs/mem/memory', base);
  });

  it('writes to a writable store and syncs it; a second clone reads it', async () => {
    const own = tipOf(project);
    const added = await project.memJson(['store', 'add', 'platform', platform.url, '--writable']);
    expect(added).toMatchObject({ store: { writable: true }, sync: { action: 'empty' } });
    const a = await project.memJson([
      'add',
      '--store',
      'platform',
      '-t',
      'convention',
      '--title',
      'Deploy with Helm',
      '-c',
      'Charts in deploy/.',
    ]);
    expect(a.store).toEqual({ store: 'platform', pushed: true });
    expect(platform.git('rev-parse', 'refs/mem/memory').trim()).toBe(
      tipOf(project, 'refs/mem-stores/platform/memory'),
    );
    expect(platform.git('for-each-ref', 'refs/notes')).toBe(''); // the project's notes stay home
    expect(tipOf(project)).toBe(own);

    const other = clone(standards.url);
    const got = await other.memJson(['store', 'add', 'platform', platform.url]);
    expect(got.sync.action).toBe('created');
    const hits = await other.memJson(['search', 'helm', '--no-daemon']);
    expect(hits).toEqual([
      expect.objectContaining({ id: a.id, store: 'platform', title: 'Deploy with Helm' }),
    ]);

    // unreachable: the memory is kept here, the add succeeds with a warning; remove will not drop it silently
    renameSync(platform.dir, `${platform.dir}.away`);
    const offline = await project.mem([
      'add',
      '--store',
      'platform',
      '--title',
      'Pin chart versions',
      '-c',
      'Always.',
      '--json',
    ]);
    expect(offline.code).toBe(0);
    expect(JSON.parse(offline.stdout).store).toMatchObject({ store: 'platform', pushed: false });
    expect(offline.stderr).toMatch(/not shared.*git mem store sync platform/);
    const keep = await project.mem(['store', 'remove', 'platform', '--json']);
    expect(keep.code).toBe(2);
    expect(errorOf(keep)).toMatchObject({
      code: 'E_INVALID_ARG',
      store: 'platform',
      hint: expect.stringContaining('git mem store sync platform'),
    });
    renameSync(`${platform.dir}.away`, platform.dir);
    expect(await project.memJson(['store', 'sync', 'platform'])).toMatchObject({ pushed: true });
    expect(await project.memJson(['store', 'remove', 'platform'])).toMatchObject({ name: 'platform' });
    expect(project.git('for-each-ref', 'refs/mem-stores/platform')).toBe('');
    expect(project.git('config', '--list', '--local')).not.toMatch(/mem\.store\.platform/);
  });

  it("add --store keeps to the team store's secret-scan when it is stricter than this person's", async () => {
    // the platform team's shared config blocks secrets; this person's own file says warn
    const member = clone(platform.url);
    await ok(member, ['config', 'set', 'secret-scan', 'block', '--shared']);
    await publish(member);
    await ok(project, ['store', 'add', 'platform', platform.url, '--writable']);
    await ok(project, ['config', 'set', 'secret-scan', 'warn', '--global']);
    try {
      const key = secretsCorpus().find((c) => c.name === 'AWS access key id')!.secret;
      const before = tipOf(project, 'refs/mem-stores/platform/memory');
      const team = await project.mem([
        'add',
        '--store',
        'platform',
        '--title',
        'CI key',
        '-c',
        `use ${key}`,
        '--json',
      ]);
      expect(team.code).toBe(2);
      expect(errorOf(team)).toMatchObject({ code: 'E_SECRET', kind: 'AWS access key id', field: 'body' });
      expect(tipOf(project, 'refs/mem-stores/platform/memory')).toBe(before);
      // the project's own memory follows the personal setting: stored, with a warning
      const own = await project.mem(['add', '--title', 'CI key here', '-c', `use ${key}`, '--force']);
      expect(own.code).toBe(0);
      expect(own.stderr).toMatch(/warning: likely secret/);
    } finally {
      await ok(project, ['config', 'unset', 'secret-scan', '--global']);
      await ok(project, ['store', 'remove', 'platform']);
    }
  });

  it('refuses bad names and undoes a registration whose first fetch fails', async () => {
    for (const name of ['../x', 'global', 'project', 'Team', 'a.b', '-x', 'a_b']) {
      const r = await project.mem(['store', 'add', name, standards.url]);
      expect(r.code, name).toBe(2);
      expect(r.stderr.trim().split('\n'), name).toHaveLength(1);
    }
    const dash = await project.mem(['store', 'add', 'x', '--', '--upload-pack=touch /tmp/pwned']);
    expect(dash.code).toBe(2);
    const missing = await project.mem(['store', 'add', 'nowhere', `${standards.dir}-missing`, '--json']);
    expect(missing.code).toBe(1);
    expect(errorOf(missing).code).toBe('E_REMOTE');
    const names = (await project.memJson(['store', 'list'])).map((s: { name: string }) => s.name);
    expect(names).toEqual(['standards']);
    const unknown = await project.mem(['store', 'sync', 'nope', '--json']);
    expect(unknown.code).toBe(3);
    // the stores there are, in the error's data
    expect(errorOf(unknown)).toMatchObject({ code: 'E_NOT_FOUND', store: 'nope', registered: ['standards'] });
  });

  it('takes only the transports a team store needs, and registers nothing for the others', async () => {
    // a transport helper runs a program (ext::), waits on a descriptor for ever (fd::), or starts
    // git-remote-X; `fd::3` hung with the store registered
    for (const url of [
      'fd::3',
      'fd::0,1',
      'ext::sh -c touch% /tmp/pwned',
      'EXT::x',
      'x::y',
      'ext://host/repo',
      'persistent-https://host/repo',
      'testgit::/tmp/x',
      '-uhost:path',
      'ho st:path',
    ]) {
      const r = await project.mem(['store', 'add', 'hostile', '--json', '--', url]);
      expect(r.code, url).toBe(2);
      expect(r.stderr.trim().split('\n'), url).toHaveLength(1);
      expect(errorOf(r).code, url).toBe('E_INVALID_ARG');
      expect(errorOf(r).message, url).toContain(`"${url}"`); // the URL it refused (no data field holds it)
    }
    expect(project.git('config', '--list', '--local')).not.toMatch(/mem\.store\.hostile/);
    expect(project.git('for-each-ref', 'refs/mem-stores/hostile')).toBe('');
    // what a team store's remote may be: git's own network transports, scp-like, local paths
    for (const url of [
      'https://example.com/org/standards.git',
      'http://example.com/standards.git',
      'ssh://git@example.com/org/standards.git',
      'git+ssh://git@example.com/standards.git',
      'git://example.com/standards.git',
      'file:///srv/standards.git',
      'git@example.com:org/standards.git',
      'example.com:standards.git',
      '[::1]:standards.git',
      '/srv/standards.git',
    ])
      expect(normalizeStoreUrl(url, '/work'), url).toBe(url);
    expect(normalizeStoreUrl('../standards', '/work/project')).toBe('/work/standards');
  });
});
