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
import { diffRows, hunks, splitText } from '../src/ui/diff.js';
import { checkRequest, cookieName, openerPolicy } from '../src/ui/security.js';
import { jsonForScript, startUi, type UiServer } from '../src/ui/server.js';
import { makeRepo, ROOT, type TestRepo } from './helpers.js';

describe('the gate', () => {
  const gate = { token: 'secret-token', port: 4000 };
  const host = '127.0.0.1:4000';
  const cookie = `${cookieName(4000)}=secret-token`;
  const check = (method: string, url: string, headers: Record<string, string>) =>
    checkRequest(gate, { method, url, headers });

  it('swaps the token of the printed URL for a cookie and an address without it', () => {
    const v = check('GET', '/?token=secret-token', { host });
    expect(v).toMatchObject({ ok: true, redirect: '/' });
    expect(v.ok && v.setCookie).toBe(`${cookieName(4000)}=secret-token; HttpOnly; SameSite=Strict; Path=/`);
    // with the cookie already set, the address still loses the token
    expect(check('GET', '/?token=secret-token&x=1', { host, cookie })).toMatchObject({
      ok: true,
      redirect: '/?x=1',
    });
  });

  it('refuses every request without the token, a wrong one, or a token in the query of a change', () => {
    for (const [method, url, headers] of [
      ['GET', '/', { host }],
      ['GET', '/ui-app.js', { host }],
      ['GET', '/api/info', { host, cookie: `${cookieName(4000)}=nope` }],
      ['GET', '/api/info', { host, cookie: `${cookieName(4001)}=secret-token` }],
      ['GET', '/?token=secret-tokeN', { host }],
      ['POST', '/api/memory/x?token=secret-token', { host, 'x-git-mem-token': 'secret-token' }],
    ] as const)
      expect(check(method, url, headers), `${method} ${url}`).toMatchObject({ ok: false, status: 403 });
    expect(check('GET', '/api/info', { host, cookie })).toEqual({ ok: true });
    expect(check('GET', '/api/info', { host: 'localhost:4000', cookie })).toEqual({ ok: true });
  });

  it('answers only to its own Host (DNS rebinding)', () => {
    for (const h of ['evil.example:4000', '127.0.0.1:4001', '127.0.0.1', '0.0.0.0:4000', '[::1]:4000', ''])
      expect(check('GET', '/api/info', { host: h, cookie }), h).toMatchObject({ ok: false, status: 403 });
  });

  it('takes a change only with the token header, from its own origin (CSRF)', () => {
    const base = { host, cookie };
    expect(check('POST', '/api/x', base)).toMatchObject({ ok: false, reason: expect.stringMatching(/CSRF/) });
    expect(check('DELETE', '/api/x', { ...base, 'x-git-mem-token': 'nope' })).toMatchObject({ ok: false });
    const good = { ...base, 'x-git-mem-token': 'secret-token' };
    expect(check('POST', '/api/x', good)).toEqual({ ok: true });
    expect(
      check('POST', '/api/x', { ...good, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' }),
    ).toEqual({
      ok: true,
    });
    expect(check('POST', '/api/x', { ...good, origin: 'http://evil.example' })).toMatchObject({ ok: false });
    expect(check('POST', '/api/x', { ...good, origin: 'null' })).toMatchObject({ ok: false });
    expect(check('POST', '/api/x', { ...good, 'sec-fetch-site': 'same-site' })).toMatchObject({ ok: false });
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
      cookie: `${cookieName(ui.port)}=${ui.token}`,
      ...(init.method === 'POST' ? { 'content-type': 'application/json', 'x-git-mem-token': ui.token } : {}),
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

  it('puts the first answers of the landing page into the page, as the API gives them', async () => {
    const res = await fetch(`http://127.0.0.1:${ui.port}/`, {
      headers: { cookie: `${cookieName(ui.port)}=${ui.token}` },
    });
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
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
    const id = (await api('memories?q=anchored')).body.items[0].id;
    const empty = await api(`memory/${id}`, { method: 'POST', body: '{}' });
    expect(empty).toMatchObject({ status: 400, body: { error: { message: 'nothing to change' } } });
    const bad = await api(`memory/${id}`, { method: 'POST', body: '[1]' });
    expect(bad.status).toBe(400);
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
