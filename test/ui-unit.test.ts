/**
 * git mem ui without a browser: the gate (token, Host, CSRF) as a pure
 * function, the diff rows the pages show, and the API of a server started
 * in process against a real repository the CLI made (lists, filters,
 * paging, typed errors, the methods a route takes).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufferIO } from '../src/cli/context.js';
import { openStore } from '../src/commands/context.js';
import { COMPARED_FIELDS, FIELD_BY_KEY, UI_FIELDS } from '../src/model/fields.js';
import { diffRows, hunks, splitText } from '../src/ui/diff.js';
import { checkRequest, openerPolicy } from '../src/ui/security.js';
import { jsonForScript, startUi, type UiServer } from '../src/ui/server.js';
import type { Info } from '../src/ui/wire.js';
import { makeRepo, ROOT, type TestRepo } from './helpers.js';

describe('the gate', () => {
  const gate = { token: 'secret-token', port: 4000, codes: new Set(['code-1']) };
  const host = '127.0.0.1:4000';
  const key = { 'x-git-mem-token': 'secret-token' };
  const check = (method: string, url: string, headers: Record<string, string>) =>
    checkRequest(gate, { method, url, headers });

  it('opens the page with a one-time code (GET only), and refuses a code it does not hold', () => {
    expect(check('GET', '/?code=code-1', { host })).toEqual({ ok: true, code: 'code-1' });
    expect(check('GET', '/?code=code-1#/memories', { host })).toEqual({ ok: true, code: 'code-1' });
    for (const [method, url] of [
      ['GET', '/?code=code-2'],
      ['GET', '/?code='],
      ['GET', '/ui-app.js?code=code-1'],
      ['HEAD', '/?code=code-1'],
    ] as const)
      expect(check(method, url, { host }), `${method} ${url}`).toMatchObject({ ok: false, status: 403 });
    // a spent code is no longer in the set: refused
    expect(
      checkRequest({ ...gate, codes: new Set() }, { url: '/?code=code-1', headers: { host } }),
    ).toMatchObject({ ok: false, status: 403 });
  });

  it('serves the page without a code and its script to anyone (they hold no key and no data), the API only with the key', () => {
    expect(check('GET', '/', { host })).toEqual({ ok: true });
    expect(check('GET', '/ui-app.js', { host })).toEqual({ ok: true });
    for (const [method, url, headers] of [
      ['GET', '/api/info', { host }],
      ['GET', '/api/info', { host, 'x-git-mem-token': 'nope' }],
      // a cookie, a query or a code is no key
      ['GET', '/api/info', { host, cookie: 'git-mem-ui-4000=secret-token' }],
      ['GET', '/api/info?token=secret-token', { host }],
      ['GET', '/api/info?code=code-1', { host }],
    ] as const)
      expect(check(method, url, headers), `${method} ${url}`).toMatchObject({ ok: false, status: 403 });
    expect(check('GET', '/api/info', { host, ...key })).toEqual({ ok: true });
    expect(check('GET', '/api/info', { host: 'localhost:4000', ...key })).toEqual({ ok: true });
  });

  it('answers only to its own Host (DNS rebinding)', () => {
    for (const h of ['evil.example:4000', '127.0.0.1:4001', '127.0.0.1', '0.0.0.0:4000', '[::1]:4000', '']) {
      expect(check('GET', '/api/info', { host: h, ...key }), h).toMatchObject({ ok: false, status: 403 });
      expect(check('GET', '/?code=code-1', { host: h }), h).toMatchObject({ ok: false, status: 403 });
    }
  });

  it('takes a request only from its own origin (CSRF)', () => {
    const base = { host };
    expect(check('POST', '/api/x', base)).toMatchObject({ ok: false });
    expect(check('DELETE', '/api/x', { ...base, 'x-git-mem-token': 'nope' })).toMatchObject({ ok: false });
    const good = { ...base, ...key };
    expect(check('POST', '/api/x', good)).toEqual({ ok: true });
    expect(
      check('POST', '/api/x', { ...good, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' }),
    ).toEqual({
      ok: true,
    });
    for (const method of ['GET', 'POST']) {
      expect(check(method, '/api/x', { ...good, origin: 'http://evil.example' })).toMatchObject({
        ok: false,
      });
      expect(check(method, '/api/x', { ...good, origin: 'http://127.0.0.1:4001' })).toMatchObject({
        ok: false,
      });
      expect(check(method, '/api/x', { ...good, origin: 'null' })).toMatchObject({ ok: false });
      expect(check(method, '/api/x', { ...good, 'sec-fetch-site': 'same-site' })).toMatchObject({
        ok: false,
      });
    }
  });
});

describe('the opener policy', () => {
  it('isolates every response but those to a navigation the user made', () => {
    const policy = (site?: string | string[]) =>
      openerPolicy({ headers: site === undefined ? {} : { 'sec-fetch-site': site } });
    expect(policy('none')).toBeUndefined();
    expect(policy(['none'])).toBeUndefined();
    for (const site of ['same-origin', 'same-site', 'cross-site', 'NONE', ''])
      expect(policy(site), site).toBe('same-origin');
    expect(policy()).toBe('same-origin'); // a browser that does not say
  });
});

describe('the first answers in the page', () => {
  it('writes JSON that cannot end its script element, open a comment or split a line, and reads back the same', () => {
    const value = { t: '</script><script>alert(1)</script><!-- --> & \u2028\u2029 </SCRIPT >', n: [1, null] };
    const text = jsonForScript(value);
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});

describe('diff rows', () => {
  it('marks kept, removed and added lines with their numbers, and folds what is far from a change', () => {
    const a = splitText('a\nb\nc\nd\ne\nf\ng\nh\n');
    const b = splitText('a\nb\nC\nd\ne\nf\ng\nh\ni\n');
    const rows = diffRows(a, b);
    expect(rows.filter((r) => r.op !== ' ')).toEqual([
      { op: '-', old: 3, text: 'c' },
      { op: '+', new: 3, text: 'C' },
      { op: '+', new: 9, text: 'i' },
    ]);
    expect(hunks(rows, 1).map((r) => r.op + r.text)).toEqual([
      '…1 unchanged line',
      ' b',
      '-c',
      '+C',
      ' d',
      '…3 unchanged lines',
      ' h',
      '+i',
    ]);
    // only the change inside the focus (old lines 2-4); the one outside is folded and counted
    expect(hunks(rows, 1, [2, 4]).map((r) => r.op + r.text)).toEqual([
      '…1 unchanged line',
      ' b',
      '-c',
      '+C',
      ' d',
      '…5 lines (1 changed, away from the anchored lines)',
    ]);
    expect(hunks(diffRows(a, a), 3)).toEqual([]);
    expect(diffRows([], splitText('x\n'))).toEqual([{ op: '+', new: 1, text: 'x' }]);
  });
});

describe('the API, in process', () => {
  let repo: TestRepo;
  let ui: UiServer;
  let stores: import('../src/gitstore/store.js').Store[];
  interface Body {
    total: number;
    page: number;
    size: number;
    items: Array<{ id: string; title: string }>;
    error?: { code: string; message: string };
  }
  const api = async (path: string, init: RequestInit = {}): Promise<{ status: number; body: Body }> => {
    const headers = {
      'x-git-mem-token': ui.token,
      ...(init.method === 'POST' ? { 'content-type': 'application/json' } : {}),
    };
    const r = await fetch(`http://127.0.0.1:${ui.port}/api/${path}`, { ...init, headers });
    return { status: r.status, body: (await r.json()) as Body };
  };

  beforeAll(async () => {
    repo = makeRepo({ commit: true });
    repo.write('src/a.ts', 'export const a = 1;\n');
    repo.commitAll('code');
    const lines = Array.from({ length: 7 }, (_, i) =>
      JSON.stringify({
        type: i % 2 ? 'decision' : 'convention',
        title: `Memory ${i}`,
        body: `body ${i}`,
        tags: [`t${i % 3}`],
      }),
    );
    expect((await repo.mem(['import', '-'], { stdin: lines.join('\n') })).code).toBe(0);
    expect(
      (await repo.mem(['add', '--title', 'Anchored', '--content', 'x', '--anchor', 'src/a.ts:1'])).code,
    ).toBe(0);
    const ctx = { io: bufferIO(), cwd: repo.dir, env: repo.env, stores: [] as never[] };
    const store = await openStore(ctx);
    stores = ctx.stores;
    ui = await startUi(
      { store, cwd: repo.dir, env: repo.env },
      { assets: join(ROOT, 'dist'), log: () => {} },
    );
  });
  afterAll(async () => {
    await ui?.close();
    for (const s of stores ?? []) s.close();
  });

  it('lists newest first, filters, sorts and pages as the list command filters', async () => {
    const all = await api('memories');
    expect(all.status).toBe(200);
    expect(all.body.total).toBe(8);
    expect(all.body.items[0].title).toBe('Anchored');
    const decisions = await api('memories?type=decision&sort=title&order=asc');
    // (add's default type is decision)
    expect(decisions.body.items.map((m) => m.title)).toEqual([
      'Anchored',
      'Memory 1',
      'Memory 3',
      'Memory 5',
    ]);
    const cli = await repo.memJson(['list', '--type', 'decision']);
    expect(decisions.body.total).toBe(cli.length);
    expect((await api('memories?tag=t0')).body.total).toBe(3);
    expect((await api('memories?path=src')).body.items.map((m) => m.title)).toEqual(['Anchored']);
    const page2 = await api('memories?size=3&page=2');
    expect(page2.body).toMatchObject({ total: 8, page: 2, size: 3 });
    expect(page2.body.items).toHaveLength(3);
    // search, a word half typed
    expect((await api('memories?q=anch')).body.items.map((m) => m.title)).toEqual(['Anchored']);
  });

  it('puts the key and the first answers of the landing page into the page a one-time link opens, once', async () => {
    const link = ui.link();
    const res = await fetch(link);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain(`<meta name="git-mem-token" content="${ui.token}">`);
    // the code is spent: refused the second time; the page without it holds neither key nor data
    expect((await fetch(link)).status).toBe(403);
    const bare = await (await fetch(`http://127.0.0.1:${ui.port}/`)).text();
    expect(bare).toContain('<meta name="git-mem-token" content="">');
    expect(bare).not.toContain(ui.token);
    expect(bare).not.toContain('git-mem-first');
    const block = /<script type="application\/json" id="git-mem-first">([^<]*)<\/script>/.exec(html);
    expect(block).not.toBeNull();
    const first = JSON.parse(block![1]);
    expect(Object.keys(first).sort()).toEqual(['info', 'memories?page=1&size=50', 'tags']);
    expect(first['memories?page=1&size=50']).toEqual((await api('memories?page=1&size=50')).body);
    expect(first.tags).toEqual((await api('tags')).body);
    expect(first.info).toEqual((await api('info')).body);
    // before the script that reads it
    expect(html.indexOf('id="git-mem-first"')).toBeLessThan(html.indexOf('<script type="module"'));
  });

  it('describes the edit form from the field table: its ui fields in order, each as declared', async () => {
    const info = (await api('info')).body as unknown as Info;
    expect(info.form.map((f) => f.key)).toEqual([...UI_FIELDS]);
    for (const f of info.form) {
      const def = FIELD_BY_KEY.get(f.key)!;
      expect(f).toMatchObject({
        input: def.input,
        values: def.values ?? null,
        minimum: def.minimum ?? null,
        maximum: def.maximum ?? null,
        clears: def.update === 'set-clear',
        markdown: !def.frontmatter,
      });
    }
    expect(info.compared).toEqual([...COMPARED_FIELDS]);
  });

  it('answers with the operations typed errors and refuses a wrong method', async () => {
    expect(await api('memories?type=nope')).toMatchObject({
      status: 400,
      body: { error: { code: 'E_INVALID_ARG' } },
    });
    expect(await api('memory/ZZZZZZZZ')).toMatchObject({
      status: 404,
      body: { error: { code: 'E_NOT_FOUND' } },
    });
    expect((await api('memory/x/reanchor')).status).toBe(405);
    expect((await api('nothing')).status).toBe(404);
    // a malformed %-escape: the request's fault, in one line
    expect(await api('memory/%E0%A4%A')).toMatchObject({
      status: 400,
      body: { error: { code: 'E_INVALID_ARG' } },
    });
    const id = (await api('memories?q=anchored')).body.items[0].id;
    const empty = await api(`memory/${id}`, { method: 'POST', body: '{}' });
    expect(empty).toMatchObject({ status: 400, body: { error: { message: 'nothing to change' } } });
    const bad = await api(`memory/${id}`, { method: 'POST', body: '[1]' });
    expect(bad.status).toBe(400);
  });

  it('marks a record a merge flagged for review in the list and on its page, as git mem list and show do', async () => {
    const id = (await api('memories?q=anchored')).body.items[0].id;
    const store = stores[0];
    await store.write(async (tx) => {
      const rec = await tx.get(id);
      tx.putRecord({ ...rec, extra: { ...rec.extra, conflict: { reasons: ['body'], attic: [] } } });
      return { message: 'flag', value: null };
    });
    const items = (await api('memories?size=50')).body.items as Array<{ id: string; conflict?: boolean }>;
    expect(items.filter((m) => m.conflict).map((m) => m.id)).toEqual([id]);
    const page = (await api(`memory/${id}`)).body as unknown as {
      record: { conflict?: boolean };
      conflict: boolean;
    };
    expect(page.record.conflict).toBe(true);
    expect(page.conflict).toBe(true);
    expect((await repo.memJson(['list'])).filter((m: { conflict?: boolean }) => m.conflict)).toHaveLength(1);
    await repo.memJson(['resolve', id]);
    expect(
      ((await api('memories?size=50')).body.items as Array<{ conflict?: boolean }>).some((m) => m.conflict),
    ).toBe(false);
  });
});

describe('the code panel', () => {
  it('labels a personal rule as the global store’s, as git mem rules does', async () => {
    const r = makeRepo({ commit: true });
    r.write('src/a.ts', 'export const a = 1;\n');
    r.commitAll('code');
    await r.memJson(['add', '--type', 'rule', '--title', 'Project rule', '--content', 'x']);
    await r.memJson(['add', '--global', '--type', 'rule', '--title', 'Mine', '--content', 'y']);
    const ctx = { io: bufferIO(), cwd: r.dir, env: r.env, stores: [] as never[] };
    const store = await openStore(ctx);
    const global = await openStore(ctx, { global: true });
    try {
      const { codeFile } = await import('../src/ui/code.js');
      const panel = await codeFile({ store, global, cwd: r.dir, env: r.env }, 'src/a.ts');
      const label = (t: string) => panel.rules.find((x) => x.title === t);
      expect(label('Project rule')).toMatchObject({ origin: 'project' });
      expect(label('Mine')).toMatchObject({ origin: 'global', store: 'global' });
      const cli = await r.memJson(['rules', '--file', 'src/a.ts']);
      expect(cli.find((x: { title: string }) => x.title === 'Mine')).toMatchObject({ store: 'global' });
    } finally {
      for (const s of ctx.stores as unknown as Array<{ close(): void }>) s.close();
    }
  });
});

describe('the kinds of records on the Memories page', () => {
  it('lists the curated memories, pending proposals and session summaries apart with counts, as git mem list does', async () => {
    const r = makeRepo({ commit: true });
    const records = [
      { type: 'decision', title: 'Deploy on tuesdays', body: 'deploy on tuesdays\n' },
      { type: 'convention', title: 'Use pnpm', body: 'deploy tooling\n' },
      { type: 'convention', status: 'pending', title: 'Proposed: deploy freeze', body: 'deploy freeze\n' },
      { type: 'session', title: 'Session: deployed the fix', body: 'deploy done\n' },
    ];
    const ids = (
      await r.memJson(['import', '-'], { stdin: records.map((x) => JSON.stringify(x)).join('\n') })
    ).ids as string[];
    const ctx = { io: bufferIO(), cwd: r.dir, env: r.env, stores: [] as never[] };
    const store = await openStore(ctx);
    try {
      const { listMemories } = await import('../src/ui/memories.js');
      const env = { store, cwd: r.dir, env: { ...r.env, GIT_MEM_DAEMON: 'off' } };
      const titles = (l: { items: Array<{ title: string }> }) => l.items.map((m) => m.title).sort();
      const cliIds = async (args: string[]) =>
        ((await r.memJson(['list', ...args])) as Array<{ id: string }>).map((m) => m.id).sort();
      // by default: the curated memories; the others apart, counted
      const first = await listMemories(env, {});
      expect(titles(first)).toEqual(['Deploy on tuesdays', 'Use pnpm']);
      expect(first).toMatchObject({
        total: 2,
        kinds: ['memories'],
        counts: { memories: 2, pending: 1, sessions: 1 },
      });
      expect(first.apart.map((m) => m.id).sort()).toEqual([ids[2], ids[3]].sort());
      // a kind asked for: those alone, as git mem list --pending / --sessions
      const sessions = await listMemories(env, { kind: ['sessions'] });
      expect(sessions.items.map((m) => m.id)).toEqual(await cliIds(['--sessions']));
      expect(sessions.apart).toEqual([]);
      const pending = await listMemories(env, { kind: ['pending'] });
      expect(pending.items.map((m) => m.id)).toEqual(await cliIds(['--pending']));
      // a type or status asked for: every kind that matches, none apart (as git mem list --type)
      const byType = await listMemories(env, { type: ['convention'] });
      expect(byType).toMatchObject({ kinds: null, apart: [] });
      expect(byType.items.map((m) => m.id).sort()).toEqual(await cliIds(['--type', 'convention']));
      // search: the curated hits in rank order, the proposal and the summary that match after them, apart
      const hits = await listMemories(env, { q: 'deploy' });
      expect(hits.items.map((m) => m.id).sort()).toEqual([ids[0], ids[1]].sort());
      expect(hits.apart.map((m) => m.id).sort()).toEqual([ids[2], ids[3]].sort());
      expect(hits.counts).toEqual({ memories: 2, pending: 1, sessions: 1 });
      await expect(listMemories(env, { kind: ['nope'] })).rejects.toMatchObject({ code: 'E_INVALID_ARG' });
    } finally {
      for (const s of ctx.stores as unknown as Array<{ close(): void }>) s.close();
    }
  });
});
