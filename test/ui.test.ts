/**
 * `git mem ui` in a real browser: Debian's Chromium driven by playwright-core,
 * against the built binary serving a real repository that the CLI made (a
 * remote and two clones, so a sync leaves true conflicts; anchored code
 * changed and checked, so memories are stale). Every change made through the
 * page is compared with the same change made by the CLI on a twin record.
 * One browser for the whole file. Screenshots go to test-results/ui/.
 * Without Chromium the file is skipped with one line saying how to install it;
 * where CI is set it fails with that line instead (test/support/needs.ts).
 */
// biome-ignore-all lint/performance/useDomNodeTextContent: innerText here is playwright's method (the text as the browser shows it)
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPARED_FIELDS, FIELD_BY_KEY, TABLE_FIELDS, UI_FIELDS } from '../src/model/fields.js';
import { parseRecord, recordPath } from '../src/model/record.js';
import { BIN, ROOT, type TestRepo, tmpDir, until } from './helpers.js';
import { BROWSER, CHROMIUM, needs } from './support/needs.js';
import { bareRemote, clone } from './sync-helpers.js';

const SHOTS = join(ROOT, 'test-results', 'ui');
const describeUi = needs(BROWSER, existsSync(CHROMIUM)).present ? describe : describe.skip;

interface Served {
  child: ChildProcessWithoutNullStreams;
  /** the first link it printed */
  url: string;
  port: number;
  /** the API's key: never printed; read from the page the first link opened */
  token: string;
  out: () => string;
  /** every one-time link printed so far (a new one each time the last was used) */
  links: () => string[];
}

/** Starts the built binary's `git mem ui` and reads the URL it prints. */
async function serve(
  repo: TestRepo,
  args: string[] = [],
  env: NodeJS.ProcessEnv = repo.env,
): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'ui', '--port', '0', ...args], { cwd: repo.dir, env });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const url = await until(() => /git-mem ui: (http:\/\/\S+)/.exec(out)?.[1], 20_000).catch(() => {
    throw new Error(`git mem ui printed no URL: ${out}${err}`);
  });
  const u = new URL(url);
  const links = () => [...out.matchAll(/git-mem ui: (http:\/\/\S+)/g)].map((m) => m[1]);
  return { child, url, port: Number(u.port), token: '', out: () => out + err, links };
}

/** The newest link a server printed, once it has printed more than `after` of them. */
function nextLink(s: Served, after: number): Promise<string> {
  return until(() => (s.links().length > after ? s.links().at(-1) : undefined), 10_000);
}

function stop(s: Served): Promise<number | null> {
  return new Promise((resolve) => {
    if (s.child.exitCode !== null) return resolve(s.child.exitCode);
    s.child.once('exit', (code) => resolve(code));
    s.child.kill('SIGINT');
  });
}

/** A raw HTTP request (fetch may not set Host). */
function raw(
  port: number,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: opts.headers },
      (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** A line too long for its pane, with a token no space breaks: a pane wraps it (test 'wraps a long line'). */
const LONG = `once the release train has left and the on-call engineer has confirmed that the canary is healthy in every region, see https://runbooks.example/deploy/${'a'.repeat(160)}`;

const CODE = `export function connect() {
  const pool = createPool({ max: 10 });
  return pool;
}

export function close(pool) {
  pool.end();
}
`;

describeUi('git mem ui in a browser', () => {
  let a: TestRepo;
  let b: TestRepo;
  let server: Served;
  let ctx: BrowserContext;
  let page: Page;
  let base: string;
  const ids: Record<string, string> = {};
  const foreign: string[] = [];
  const dialogs: string[] = [];
  const pageErrors: string[] = [];

  const memJson = async (r: TestRepo, args: string[], stdin?: string) => r.memJson(args, { stdin });
  const tip = () => b.git('rev-parse', 'refs/memory').trim();
  const record = async (id: string) => memJson(b, ['show', id]);
  const subject = (commit = 'refs/memory') => b.git('log', '-1', '--format=%s', commit).trim();
  /** Who made a record's last change and how (its author, a person or an agent, the operation, the signature), not which commit. */
  const changeOf = (r: { lastChange?: Record<string, unknown> }) => {
    const { commit, date, subject, ...change } = r.lastChange ?? {};
    return change;
  };
  const add = async (r: TestRepo, args: string[]) =>
    (await memJson(r, ['add', '--force', ...args])).id as string;
  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  /** Goes to a page and waits for what shows it is ready (of the memory asked for, on a memory page). */
  const open = async (hash: string, ready: string) => {
    await page.goto(`${base}/${hash}`);
    await page.locator(ready).first().waitFor();
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // the browser starts while the repository is made
    const launched = chromium.launchPersistentContext(tmpDir('gm-chromium-'), {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 860 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    launched.catch(() => {}); // awaited below; a failure fails the suite there
    // two clones of one remote: b is the repository the UI serves
    const remote = bareRemote();
    a = clone(remote.url);
    b = clone(remote.url);
    // two people: the conflict view names who wrote each side
    for (const [r, name] of [
      [a, 'Alice Ahn'],
      [b, 'Bob Berg'],
    ] as const) {
      r.git('config', 'user.name', name);
      r.git('config', 'user.email', `${name.split(' ')[0].toLowerCase()}@example.com`);
    }
    b.write('src/db/pool.ts', CODE);
    b.write('src/api/handler.ts', 'export const handler = () => 200;\n');
    b.write('docs/guide.md', '# Guide\n');
    b.commitAll('code');
    // the memories: anchored ones by add (anchors made at HEAD), the others in one import
    const anchored = (title: string, content: string, tags = '') =>
      add(b, [
        '--type',
        'decision',
        '--title',
        title,
        '--anchor',
        'src/db/pool.ts:1-4',
        '--content',
        content,
        ...(tags ? ['--tags', tags] : []),
      ]);
    ids.pool = await anchored(
      'Pool size is 10',
      'We cap the **pool** at 10 connections.\n\n- the database allows 100\n- 8 app servers\n',
      'db,perf',
    );
    ids.poolTwin = await anchored('Pool size twin', 'Twin of the pool memory.\n');
    const lines: Array<[string, Record<string, unknown>]> = [
      [
        'rule',
        { type: 'rule', title: 'No console.log in src', scope: ['src/**'], body: 'Use the logger.\n' },
      ],
      [
        'fix',
        { type: 'known_fix', title: 'Flaky upload test', tags: ['tests'], body: 'Retry the upload once.\n' },
      ],
      [
        'proposal',
        {
          type: 'convention',
          status: 'pending',
          title: 'Use pnpm',
          tags: ['tooling'],
          body: 'Install with pnpm, not npm.\n',
        },
      ],
      [
        'proposalTwin',
        {
          type: 'convention',
          status: 'pending',
          title: 'Use pnpm',
          tags: ['tooling'],
          body: 'Install with pnpm, not npm.\n',
        },
      ],
      [
        'session',
        { type: 'session', title: 'Session: fixed the flaky upload test', body: '## Outcome\n\nFixed.\n' },
      ],
      [
        'xss',
        {
          type: 'constraint',
          title: 'Hostile text',
          body: [
            '<script>window.__xss=1</script>',
            '<img src=x onerror="window.__xss=2">',
            '[click me](javascript:window.__xss=3)',
            'and [click here too](javascript:alert(1))',
            '![tracker](https://tracker.example/pixel.png)',
          ].join('\n\n'),
        },
      ],
      ['deploy', { type: 'decision', title: 'Deploy day', body: 'deploy on friday\nrollback by script\n' }],
      [
        'deployTwin',
        { type: 'decision', title: 'Deploy day twin', body: 'deploy on friday\nrollback by script\n' },
      ],
    ];
    const imported = await memJson(b, ['import', '-'], lines.map(([, l]) => JSON.stringify(l)).join('\n'));
    lines.forEach(([k], i) => {
      ids[k] = imported.ids[i];
    });
    // a has b's memory; both change the same line of two memories; b pulls a's: a true conflict each
    a.git('fetch', '-q', b.dir, '+refs/memory:refs/memory');
    // (a's line is long, b's short: side by side, the short one takes the long one's height)
    const edit = async (r: TestRepo, line: string) => {
      for (const k of ['deploy', 'deployTwin'])
        await memJson(r, ['update', ids[k], '--content', `${line}\nrollback by script\n`]);
    };
    await Promise.all([edit(a, `deploy on monday ${LONG}`), edit(b, 'deploy on tuesday')]);
    a.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
    expect((await b.mem(['pull'])).code).toBe(0);
    // the anchored code changes: both pool memories go stale
    b.write('src/db/pool.ts', CODE.replace('max: 10', 'max: 20'));
    b.commitAll('bigger pool');
    expect((await b.mem(['check'])).code).toBe(0);
    expect((await record(ids.pool)).status).toBe('stale');
    server = await serve(b);
    base = `http://127.0.0.1:${server.port}`;
    ctx = await launched;
    ctx.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(`${base}/`) && !u.startsWith('data:')) foreign.push(u);
    });
    page = ctx.pages()[0] ?? (await ctx.newPage());
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    page.setDefaultTimeout(10_000);
    // the printed link: the page it opens holds the key, which the page keeps in its own
    // storage, and the spent code leaves the address bar
    await page.goto(server.url);
    await page.locator('table.list.main').waitFor();
    expect(page.url()).toBe(`${base}/#/memories`);
    server.token = (await page.evaluate(() => localStorage.getItem('git-mem-ui-key'))) ?? '';
    expect(server.token).toMatch(/^[\w-]{43}$/);
    expect(server.url).not.toContain(server.token);
  }, 90_000);

  afterAll(async () => {
    await ctx?.close();
    if (server) expect(await stop(server)).toBe(0);
  });

  it('refuses requests without the key, a spent link, another Host, and changes from another origin', async () => {
    const host = `127.0.0.1:${server.port}`;
    const key = { 'x-git-mem-token': server.token };
    for (const path of ['/api/info', `/api/memory/${ids.fix}`])
      expect((await raw(server.port, path)).status, path).toBe(403);
    // a cookie is no key (a browser would send it to every port of 127.0.0.1)
    expect(
      (
        await raw(server.port, '/api/info', {
          headers: { cookie: `git-mem-ui-${server.port}=${server.token}` },
        })
      ).status,
    ).toBe(403);
    expect((await raw(server.port, `/api/info?token=${server.token}`)).status).toBe(403);
    // the link the browser used is spent; an unknown one is refused too
    const spent = new URL(server.url);
    expect((await raw(server.port, `${spent.pathname}${spent.search}`)).status).toBe(403);
    expect((await raw(server.port, '/?code=nope')).status).toBe(403);
    // the page without a code and its script hold no key and no data
    const bare = await raw(server.port, '/');
    expect(bare.status).toBe(200);
    expect(bare.body).not.toContain(server.token);
    expect(bare.body).not.toContain('git-mem-first');
    expect(bare.headers['set-cookie']).toBeUndefined();
    // DNS rebinding: a page of evil.example resolving to 127.0.0.1 sends its own Host
    const rebound = await raw(server.port, '/api/info', {
      headers: { ...key, host: `evil.example:${server.port}` },
    });
    expect(rebound.status).toBe(403);
    expect(rebound.body).toMatch(/Host refused/);
    expect(
      (await raw(server.port, '/api/info', { headers: { ...key, host: `localhost:${server.port}` } })).status,
    ).toBe(200);
    expect(
      (
        await raw(server.port, '/api/info', {
          headers: { ...key, origin: `http://127.0.0.1:${server.port + 1}` },
        })
      ).status,
    ).toBe(403);
    const page0 = await raw(server.port, '/', { headers: { host } });
    expect(page0.status).toBe(200);
    expect(page0.headers['content-security-policy']).toMatch(/script-src 'self'/);
    // a malformed %-escape is the request's fault: one typed line, no crash
    const malformed = await raw(server.port, '/api/memory/%E0%A4%A', { headers: key });
    expect(malformed.status).toBe(400);
    expect(JSON.parse(malformed.body).error.code).toBe('E_INVALID_ARG');
    expect(server.out()).not.toMatch(/internal error|URIError/);
    // changes: the token header, JSON, and no foreign Origin
    const before = tip();
    const body = JSON.stringify({ status: 'archived' });
    const json = { host, 'content-type': 'application/json' };
    const path = `/api/memory/${ids.fix}`;
    expect((await raw(server.port, path, { method: 'POST', headers: json, body })).status).toBe(403);
    expect(
      (
        await raw(server.port, path, {
          method: 'POST',
          headers: { ...json, 'x-git-mem-token': 'nope' },
          body,
        })
      ).status,
    ).toBe(403);
    const withToken = { ...json, 'x-git-mem-token': server.token };
    expect(
      (
        await raw(server.port, path, {
          method: 'POST',
          headers: { ...withToken, origin: 'http://evil.example' },
          body,
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await raw(server.port, path, {
          method: 'POST',
          headers: { ...withToken, 'sec-fetch-site': 'cross-site' },
          body,
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await raw(server.port, path, {
          method: 'POST',
          headers: { ...withToken, 'content-type': 'text/plain' },
          body,
        })
      ).status,
    ).toBe(400);
    expect(tip()).toBe(before);
    // an operation's own refusal comes back typed
    const bad = await raw(server.port, path, {
      method: 'POST',
      headers: withToken,
      body: JSON.stringify({ type: 'nope' }),
    });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('E_INVALID_ARG');
    expect(tip()).toBe(before);
    const ok = await raw(server.port, path, { method: 'POST', headers: withToken, body });
    expect(ok.status).toBe(200);
    expect((await record(ids.fix)).status).toBe('archived');
    expect(subject()).toBe(`mem: update ${ids.fix.slice(0, 12)} "Flaky upload test" (status)`);
    await memJson(b, ['update', ids.fix, '--status', 'active']);
  });

  it('shows the overview with counts and charts', async () => {
    await open('#/overview', '.stats');
    await expect.poll(() => page.locator('li.stat').first().innerText()).toMatch(/memories/);
    expect(await page.locator('.stat:has-text("stale") .n').innerText()).toBe('2');
    expect(await page.locator('.stat:has-text("conflicts") .n').innerText()).toBe('2');
    expect(await page.locator('svg.chart').count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('table.folders').innerText()).toMatch(/docs/);
    await shot('overview');
  });

  it('lists, filters and searches memories as you type (a word half typed finds it)', async () => {
    await open('#/memories', 'table.list');
    await expect.poll(() => page.locator('tbody tr').count()).toBeGreaterThanOrEqual(8);
    await page.selectOption('select[aria-label="Status"]', 'stale');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    await page.selectOption('select[aria-label="Status"]', '');
    await page.locator('input.search').pressSequentially('upl', { delay: 30 });
    await expect.poll(() => page.locator('tbody tr td.title').allInnerTexts()).toContain('Flaky upload test');
    expect(await page.locator('tbody tr td.title').allInnerTexts()).not.toContain('Pool size is 10');
    await page.locator('input.search').fill('');
    await page.selectOption('select[aria-label="Tag"]', 'db');
    await expect.poll(() => page.locator('tbody tr td.title').allInnerTexts()).toEqual(['Pool size is 10']);
    // the address keeps the filters
    expect(page.url()).toMatch(/tag=db/);
    await page.selectOption('select[aria-label="Tag"]', '');
    await page.fill('input.path', 'src/db');
    await page.press('input.path', 'Enter');
    await expect.poll(() => page.locator('tbody tr').count()).toBe(2);
    await page.fill('input.path', '');
    await page.press('input.path', 'Enter');
    await expect.poll(() => page.locator('tbody tr').count()).toBeGreaterThanOrEqual(8);
    await shot('memories');
  });

  it('lists the curated memories on the landing page, pending proposals and session summaries apart with their counts, and groups search hits as git mem search does', async () => {
    const sessionTitle = 'Session: fixed the flaky upload test';
    const main = page.locator('table.mem-list.main tbody td.title a');
    const apart = page.locator('section.apart table tbody td.title a');
    const n = (kind: string) => page.locator(`nav.kinds [data-kind="${kind}"] .n`).innerText();
    await open('#/memories', 'table.mem-list.main');
    await page.locator('section.apart').waitFor();
    // the curated memories, as git mem list shows them; the proposals and the session in their section
    const listed = (await memJson(b, ['list'])) as Array<{
      id: string;
      title: string;
      type: string;
      status: string;
    }>;
    const curated = listed.filter((m) => m.type !== 'session' && m.status !== 'pending');
    expect((await main.allInnerTexts()).sort()).toEqual(curated.map((m) => m.title).sort());
    expect(await main.allInnerTexts()).toContain('Pool size is 10');
    expect(await main.allInnerTexts()).not.toContain(sessionTitle);
    expect(await main.allInnerTexts()).not.toContain('Use pnpm');
    expect((await apart.allInnerTexts()).sort()).toEqual([sessionTitle, 'Use pnpm', 'Use pnpm'].sort());
    expect([await n('memories'), await n('pending'), await n('sessions')]).toEqual([
      String(curated.length),
      '2',
      '1',
    ]);
    // the navigation counts what the list holds: the curated memories
    expect(await page.locator('nav.side a[data-nav="memories"] .count').innerText()).toBe(
      String(curated.length),
    );
    // a kind of its own: the session summaries alone, in the address
    await page.click('nav.kinds [data-kind="sessions"]');
    await expect.poll(() => main.allInnerTexts()).toEqual([sessionTitle]);
    expect(page.url()).toMatch(/kind=sessions/);
    expect(await page.locator('section.apart').count()).toBe(0);
    await page.click('nav.kinds [data-kind="memories"]');
    await expect.poll(() => main.count()).toBe(curated.length);
    // search: the curated hits, then the proposals and summaries that match under their own heading
    await page.locator('input.search').fill('flaky upload');
    await expect.poll(() => main.allInnerTexts()).toContain('Flaky upload test');
    await expect.poll(() => apart.allInnerTexts()).toEqual([sessionTitle]);
    expect(await main.allInnerTexts()).not.toContain(sessionTitle);
    const hits = (await memJson(b, ['search', 'flaky upload'])) as Array<{ title: string; type: string }>;
    expect(hits.map((h) => h.title)).toContain(sessionTitle); // the CLI finds it too, and puts it apart
    expect((await b.mem(['search', 'flaky upload'])).stdout).toMatch(
      /Pending proposals and session summaries:\n.*Session: fixed the flaky upload test/,
    );
    await page.locator('input.search').fill('');
    await expect.poll(() => main.count()).toBe(curated.length);
  });

  it('shows a stale memory with its code and the change that made it stale, and re-anchors it as the CLI does', async () => {
    await open(`#/m/${ids.pool}`, `article.memory[data-id="${ids.pool}"]`);
    await expect
      .poll(() => page.locator('.banner.stale').innerText())
      .toMatch(/src\/db\/pool\.ts:1-4: changed/);
    // rendered Markdown, the diff and both sides of the code
    expect(await page.locator('.markdown strong').innerText()).toBe('pool');
    const diff = page.locator('figure.diff');
    await diff.waitFor();
    expect(await diff.locator('.line.opd').innerText()).toMatch(/max: 10/);
    expect(await diff.locator('.line.opa').innerText()).toMatch(/max: 20/);
    expect(await page.locator('figure.code:has-text("As anchored") .line.marked').count()).toBe(4);
    expect(await page.locator('figure.code:has-text("At HEAD")').innerText()).toMatch(/max: 20/);
    await shot('memory-stale');
    const before = tip();
    await page.click('button[data-action="reanchor"]');
    await page.locator('.banner.ok').waitFor();
    expect(tip()).not.toBe(before);
    expect(subject()).toBe(`mem: reanchor ${ids.pool.slice(0, 12)} (1 anchor)`);
    // the CLI on the twin
    await memJson(b, ['reanchor', ids.poolTwin]);
    const [viaPage, viaCli] = [await record(ids.pool), await record(ids.poolTwin)];
    const anchors = (r: { anchors: Array<Record<string, unknown>> }) =>
      r.anchors.map((x) => ({ ...x, reanchored: { ...(x.reanchored as object), at: 'T' } }));
    expect(viaPage.status).toBe('active');
    expect(viaCli.status).toBe('active');
    expect(anchors(viaPage)).toEqual(anchors(viaCli));
    expect(viaPage.extra).toEqual(viaCli.extra);
    expect(changeOf(viaPage)).toEqual(changeOf(viaCli));
    await expect.poll(() => page.locator('.banner.stale').count()).toBe(0);
  });

  it('edits a memory in place, and shows its history with a diff of two versions', async () => {
    await open(`#/m/${ids.fix}`, `article.memory[data-id="${ids.fix}"]`);
    await page.click('button[data-action="edit"]');
    await page.fill('textarea[name="body"]', 'Retry the upload once; the CDN is slow to warm.\n');
    await page.fill('input[name="tags"]', 'tests, cdn');
    await page.click('button[type="submit"]');
    await page.locator('.banner.ok').waitFor();
    const r = await record(ids.fix);
    expect(r.body).toBe('Retry the upload once; the CDN is slow to warm.\n');
    expect(r.tags).toEqual(['tests', 'cdn']);
    expect(subject()).toBe(`mem: update ${ids.fix.slice(0, 12)} "Flaky upload test" (body, tags)`);
    await page.click('a.button:has-text("History")');
    await page.locator('table.versions').waitFor();
    // newest against the one before: the edit
    const diff = page.locator('figure.diff');
    await diff.waitFor();
    expect(await diff.locator('.line.opa').allInnerTexts()).toEqual(
      expect.arrayContaining([expect.stringMatching(/CDN is slow/)]),
    );
    expect(await page.locator('table.versions tbody tr').count()).toBe(
      (await memJson(b, ['history', ids.fix])).length,
    );
    await shot('memory-history');
  });

  it('edits the fields the field table marks ui, in its order, each as the table declares it, and sends only what changed', async () => {
    const id = await add(b, [
      '--type',
      'decision',
      '--title',
      'Form fields',
      '--content',
      'The form is derived.\n',
      '--tags',
      'ui,form',
      '--source',
      'https://example.test/form',
      '--expires',
      '30d',
    ]);
    const before = await record(id);
    await open(`#/m/${id}`, `article.memory[data-id="${id}"]`);
    await page.click('button[data-action="edit"]');
    const form = page.locator('form.editor');
    await form.waitFor();
    await shot('memory-edit');
    const controls = await form.locator('[name]').evaluateAll((els) =>
      els.map((e) => ({
        name: e.getAttribute('name'),
        tag: e.tagName.toLowerCase(),
        type: e.getAttribute('type'),
        min: e.getAttribute('min'),
        max: e.getAttribute('max'),
        // (a property: preact sets an option's value so)
        options:
          e.tagName === 'SELECT'
            ? [...e.querySelectorAll('option')].map((o) => (o as unknown as { value: string }).value)
            : null,
      })),
    );
    // exactly the table's ui fields, in its order
    expect(controls.map((c) => c.name)).toEqual([...UI_FIELDS]);
    for (const c of controls) {
      const f = FIELD_BY_KEY.get(c.name!)!;
      if (f.values) expect(c).toMatchObject({ tag: 'select', options: [...f.values] });
      else if (!f.frontmatter) expect(c.tag).toBe('textarea');
      else if (f.input === 'number')
        expect(c).toMatchObject({
          tag: 'input',
          type: 'number',
          min: String(f.minimum),
          max: String(f.maximum),
        });
      else expect(c).toMatchObject({ tag: 'input', type: null });
    }
    // a number between the steps a spinner takes, an emptied field that clears, a list
    await page.fill('input[name="confidence"]', '0.83');
    await page.fill('input[name="source"]', '');
    await page.fill('input[name="tags"]', 'ui, derived');
    const commit = tip();
    await page.click('button[type="submit"]');
    await page.locator('.banner.ok').waitFor();
    expect(tip()).not.toBe(commit);
    const r = await record(id);
    expect(r).toMatchObject({ confidence: 0.83, source: null, tags: ['ui', 'derived'] });
    // the fields left alone were not sent: the update names only the three changed
    expect(r.expires).toBe(before.expires);
    const sent = /\(([^)]*)\)$/.exec(subject())?.[1].split(', ');
    expect(sent?.sort()).toEqual(['confidence', 'source', 'tags']);
  });

  it('says what the update said beside saving it: an expiry already past, as git mem update warns', async () => {
    const id = await add(b, ['--title', 'Soon gone', '--content', 'Until the migration.\n']);
    await open(`#/m/${id}`, `article.memory[data-id="${id}"]`);
    await page.click('button[data-action="edit"]');
    await page.fill('input[name="expires"]', '2020-01-01');
    await page.click('button[type="submit"]');
    await page.locator('.banner.ok').waitFor();
    expect((await record(id)).expires).toMatch(/^2020-01-01/);
    // the warning the operation returned, the one the CLI prints and the MCP tool gives
    const warned = await page.locator('.banner.warn').allInnerTexts();
    expect(warned).toEqual([expect.stringContaining(`${id.slice(0, 12)} expires 2020-01-01`)]);
    // a change that warns of nothing clears it
    await page.click('button[data-action="edit"]');
    await page.fill('input[name="expires"]', '');
    await page.click('button[type="submit"]');
    await expect.poll(() => page.locator('.banner.warn').count()).toBe(0);
    expect((await record(id)).expires).toBeNull();
  });

  it("lists the table's fields by kind beside the text, and Verify records who and when as git mem verify does", async () => {
    const args = [
      '--type',
      'decision',
      '--content',
      'Listed by kind.\n',
      '--source',
      'https://example.test/shown',
    ];
    const id = await add(b, [...args, '--title', 'Shown fields', '--expires', '30d']);
    const twin = await add(b, [...args, '--title', 'Shown fields, verified by the CLI', '--expires', '30d']);
    await open(`#/m/${id}`, `article.memory[data-id="${id}"]`);
    const listed = () =>
      page
        .locator('aside.fields dd[data-field]')
        .evaluateAll((els) => els.map((e) => e.getAttribute('data-field')));
    const has = (r: Record<string, unknown>) =>
      TABLE_FIELDS.map((f) => f.key).filter((k) => r[k] !== null && r[k] !== undefined && r[k] !== '');
    const before = await record(id);
    // every field of the table this memory holds, in the table's order, none it does not hold
    expect(await listed()).toEqual(has(before));
    expect(await page.locator('dd[data-field="source"]').innerText()).toBe('https://example.test/shown');
    expect(await page.locator('dd[data-field="confidence"]').innerText()).toBe(String(before.confidence));
    const commit = tip();
    await page.click('button[data-action="verify"]');
    await page.locator('dd[data-field="verified"]').waitFor();
    expect(tip()).not.toBe(commit);
    const after = await record(id);
    expect(await listed()).toEqual(has(after));
    expect(await listed()).toContain('verified');
    // the same who as the command line's verify, and the same restarted expiry
    const twinBefore = await record(twin);
    await memJson(b, ['verify', twin]);
    const cli = await record(twin);
    expect(after.verified.by).toBe(cli.verified.by);
    expect(await page.locator('dd[data-field="verified"]').innerText()).toContain(`by ${after.verified.by}`);
    for (const [was, now] of [
      [before, after],
      [twinBefore, cli],
    ])
      expect(Date.parse(now.expires) - Date.parse(now.verified.at)).toBe(
        Date.parse(was.expires) - Date.parse(was.created),
      );
  });

  it('approves a proposal through the page as git mem review --approve does', async () => {
    await open('#/review', '.proposal');
    expect(await page.locator('.proposal').count()).toBe(2);
    await shot('review');
    const before = tip();
    await page.click(`li.proposal[data-id="${ids.proposal}"] button[data-action="approve"]`);
    await expect.poll(() => page.locator('.proposal').count()).toBe(1);
    expect(tip()).not.toBe(before);
    const pageSubject = subject();
    await memJson(b, ['review', '--approve', ids.proposalTwin]);
    type Approved = Record<string, unknown> & {
      extra: { review: Record<string, unknown> };
      lastChange?: Record<string, unknown>;
    };
    // all but the id, the times, and the commit of the last change (its author, agent, operation and signature stay)
    const norm = (r: Approved) => {
      const { id, created, updated, extra, lastChange, ...rest } = r;
      return { ...rest, lastChange: changeOf(r), extra: { ...extra, review: { ...extra.review, at: 'T' } } };
    };
    const [viaPage, viaCli] = [await record(ids.proposal), await record(ids.proposalTwin)];
    expect(viaPage.status).toBe('active');
    expect(viaPage.extra.review.state).toBe('approved');
    expect(norm(viaPage)).toEqual(norm(viaCli));
    expect(pageSubject.replace(ids.proposal.slice(0, 12), 'ID')).toBe(
      subject().replace(ids.proposalTwin.slice(0, 12), 'ID'),
    );
  });

  it('wraps a long line in the conflict panes, the two columns aligned', async () => {
    await open('#/conflicts', '.conflict');
    const card = page.locator(`li.conflict[data-id="${ids.deploy}"]`);
    const pane = card.locator('.sbs');
    await pane.waitFor();
    // nothing is cut: neither the pane nor any line is wider than it shows
    const widths = await pane.evaluate((el) => ({
      pane: [el.scrollWidth, el.clientWidth],
      lines: [...el.querySelectorAll('.line .tx')].map((t) => [t.scrollWidth, t.clientWidth]),
    }));
    expect(widths.pane[0]).toBeLessThanOrEqual(widths.pane[1]);
    for (const [scroll, client] of widths.lines) expect(scroll).toBeLessThanOrEqual(client);
    // the long line (on one side; the other side's is short) takes several rows, within the pane
    const paneBox = (await pane.boundingBox())!;
    const [left, right] = [
      (await card.locator('.sbs .line.opd').boundingBox())!,
      (await card.locator('.sbs .line.opa').boundingBox())!,
    ];
    const box = left.height > right.height ? left : right;
    const rowHeight = (await card.locator('.sbs .line.opk').first().boundingBox())!.height;
    expect(box.height).toBeGreaterThan(2 * rowHeight);
    expect(box.x + box.width).toBeLessThanOrEqual(paneBox.x + paneBox.width + 0.5);
    // the short line beside it starts and ends with it, and so does the next row
    expect(left.y).toBeCloseTo(right.y, 0);
    expect(left.height).toBeCloseTo(right.height, 0);
    const next = card.locator('.sbs .line.opk', { hasText: 'rollback by script' });
    const [l, r] = [(await next.nth(0).boundingBox())!, (await next.nth(1).boundingBox())!];
    expect(l.y).toBeCloseTo(r.y, 0);
  });

  it('compares the fields the field table marks compare, in its order', async () => {
    await open('#/conflicts', '.conflict');
    const table = page.locator(`li.conflict[data-id="${ids.deploy}"] table.fields-cmp`).first();
    expect(await table.locator('tbody th').allInnerTexts()).toEqual([...COMPARED_FIELDS]);
    // a field that differs is marked, and one shown as an object reads as text
    expect(await table.innerText()).not.toMatch(/\[object Object\]/);
  });

  it('names who wrote each side of a conflict, beside the commit', async () => {
    await open('#/conflicts', '.conflict');
    const card = page.locator(`li.conflict[data-id="${ids.deploy}"]`);
    const names = {
      ours: await card.locator('.by[data-side="ours"] .author').innerText(),
      other: await card.locator('.by[data-side="other"] .author').innerText(),
    };
    expect([names.ours, names.other].sort()).toEqual(['Alice Ahn', 'Bob Berg']);
    // each the author of the last commit of that side that changed the record (the other: in the commit the merge named)
    const listed = await memJson(b, ['conflicts']);
    const from = listed.find((x: { id: string }) => x.id === ids.deploy).attic[0].from as string;
    const path = recordPath(ids.deploy);
    const [oCommit, oName] = b
      .git('log', '-1', '--no-merges', '--format=%H%x1f%an', from, '--', path)
      .trim()
      .split('\x1f');
    expect(names.other).toBe(oName);
    expect(await card.locator('.by[data-side="other"] code').innerText()).toBe(oCommit.slice(0, 12));
  });

  it('settles a conflict side by side as git mem resolve --take does', async () => {
    await open('#/conflicts', '.conflict');
    expect(await page.locator('.conflict').count()).toBe(2);
    const card = page.locator(`li.conflict[data-id="${ids.deploy}"]`);
    expect(await card.locator('.sbs .line.opd, .sbs .line.opa').count()).toBe(2);
    expect(await card.innerText()).toMatch(/deploy on (monday|tuesday)/);
    await shot('conflicts');
    const listed = await memJson(b, ['conflicts']);
    // the other version of each, as kept in the attic
    const otherBody = (id: string) => {
      const c = listed.find((x: { id: string }) => x.id === id);
      return parseRecord(b.git('show', `refs/memory:${c.attic[0].path}`)).body;
    };
    const theirs = { page: otherBody(ids.deploy), cli: otherBody(ids.deployTwin) };
    await card.locator('button[data-action="take-other"]').click();
    // a write and a reload of the list: more than poll's default second on a loaded machine
    await expect.poll(() => page.locator('.conflict').count(), { timeout: 10_000 }).toBe(1);
    expect(subject()).toBe(`mem: resolve ${ids.deploy.slice(0, 12)} (took-attic)`);
    await memJson(b, ['resolve', ids.deployTwin, '--take', 'theirs']);
    const [viaPage, viaCli] = [await record(ids.deploy), await record(ids.deployTwin)];
    // each took its other version, and the flag went the same way
    expect(viaPage.body).toBe(theirs.page);
    expect(viaCli.body).toBe(theirs.cli);
    expect(viaPage.status).toBe(viaCli.status);
    expect(viaPage.extra).toEqual(viaCli.extra);
    expect(changeOf(viaPage)).toEqual(changeOf(viaCli));
    expect(viaPage.extra.conflict).toBeUndefined();
    expect(b.git('ls-tree', '-r', '--name-only', 'refs/memory')).not.toMatch(/attic\//);
    await page.reload();
    await page.locator('.empty').waitFor();
  });

  it('shows the code tree with the memories and rules that apply to a file', async () => {
    await open('#/code', 'ul.tree');
    await page.click('button.node:has-text("src/")');
    await page.click('button.node:has-text("db/")');
    await page.click('a[data-path="src/db/pool.ts"]');
    const panel = page.locator('.file-panel[data-file="src/db/pool.ts"]');
    await panel.waitFor();
    expect(await panel.innerText()).toMatch(/Pool size is 10/);
    expect(await panel.innerText()).toMatch(/No console\.log in src/);
    expect(await panel.locator('.line.marked').count()).toBe(4);
    await shot('code');
  });

  it('opens the file the address names when it changes within the code page (#/code to #/code?path=…)', async () => {
    await open('#/code', 'ul.tree');
    await page.locator('.panel-pane .empty').waitFor();
    await page.evaluate("location.hash = '#/code?path=src/api/handler.ts'");
    const panel = page.locator('.file-panel[data-file="src/api/handler.ts"]');
    await panel.waitFor();
    expect(await panel.innerText()).toMatch(/export const handler/);
    // the tree opens on the way to it and marks it
    await page.locator('li.file.on a[data-path="src/api/handler.ts"]').waitFor();
    // and another file named by the address, then none
    await page.evaluate("location.hash = '#/code?path=src/db/pool.ts'");
    await page.locator('.file-panel[data-file="src/db/pool.ts"]').waitFor();
    await page.evaluate("location.hash = '#/code'");
    await page.locator('.panel-pane .empty').waitFor();
  });

  it('lists session summaries and looks back at what we knew at an earlier commit', async () => {
    await open('#/sessions', 'table.list');
    expect(await page.locator('tbody').innerText()).toMatch(/fixed the flaky upload test/);
    await shot('sessions');
    // the store before the code changed: the pool memory was active then
    const then = b.git('log', '--format=%H', '--grep=^mem: add', '-1', 'refs/memory').trim();
    await open('#/history', 'table.log');
    await page.fill('input[name="at"]', then);
    await page.click('form.at-form button[type="submit"]');
    await page.locator('.banner.info').waitFor();
    expect(page.url()).toContain(`at=${then}`);
    await expect.poll(() => page.locator('tbody tr').count()).toBeGreaterThan(0);
    await open('#/history', 'table.log');
    await shot('history');
  });

  it('shows hostile memory text as inert text: no script, no handler, no javascript: link, no remote image', async () => {
    await open(`#/m/${ids.xss}`, `article.memory[data-id="${ids.xss}"] .markdown`);
    const md = page.locator('.markdown');
    const text = await md.innerText();
    expect(text).toContain('<script>window.__xss=1</script>');
    expect(text).toContain('<img src=x onerror="window.__xss=2">');
    expect(text).toMatch(/\[image: tracker — https:\/\/tracker\.example\/pixel\.png \(not loaded\)\]/);
    expect(await md.locator('script, img, iframe, [onerror], [onclick]').count()).toBe(0);
    expect(await md.locator('a[href^="javascript"]').count()).toBe(0);
    expect(await md.locator('a.unsafe-link').allInnerTexts()).toEqual(['click me', 'click here too']);
    await md.locator('a.unsafe-link').first().click();
    await md.locator('text=click here too').click();
    await page.waitForTimeout(200);
    expect(await page.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    expect(dialogs).toEqual([]);
    await shot('memory-sanitised');
  });

  it('puts the first list into the page itself, where hostile titles stay inert text', async () => {
    // the newest memory (so on the first page): a title that tries to end the data block, open a
    // comment, and split the JSON with a line separator
    const title =
      '</script><script>window.__xss=4</script><!-- \u2028 </SCRIPT ><img src=x onerror="window.__xss=5">';
    const id = await add(b, ['--type', 'constraint', '--title', title, '--content', 'inert\n']);
    // the page the printed link opens (the link is spent, and the next one printed)
    const printed = server.links().length;
    const link = new URL(server.links().at(-1)!);
    const html = (await raw(server.port, `${link.pathname}${link.search}`)).body;
    expect(html).toContain('id="git-mem-first"');
    expect(html).not.toMatch(/<\/script><script>window|<!-- \u2028|<img src=x/i);
    // a new tab: the list comes with the page (no request for it) and shows the title as it is
    const asked: string[] = [];
    const tab = await ctx.newPage();
    tab.on('request', (r) => asked.push(new URL(r.url()).pathname));
    const tabErrors: string[] = [];
    tab.on('pageerror', (e) => tabErrors.push(e.message));
    tab.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await tab.goto(`${await nextLink(server, printed)}#/memories`);
    await tab.locator(`tbody tr[data-id="${id}"]`).waitFor();
    expect(tab.url()).toBe(`${base}/#/memories`);
    expect(await tab.locator(`tbody tr[data-id="${id}"] td.title a`).innerText()).toBe(title);
    expect(asked).not.toContain('/api/memories');
    expect(asked).not.toContain('/api/info');
    // one data block (that the page read) and its script; nothing ran from the title
    expect(
      await tab.locator('script').evaluateAll((els) => els.map((s) => s.getAttribute('type') ?? 'classic')),
    ).toEqual(['application/json', 'module']);
    expect(await tab.locator('img').count()).toBe(0);
    expect(await tab.evaluate(() => (globalThis as { __xss?: number }).__xss)).toBeUndefined();
    expect(tabErrors).toEqual([]);
    // a later visit to the list asks the server (the page's own answers are used once)
    await tab.goto(`${base}/#/overview`);
    await tab.locator('nav.side a[data-nav="memories"]').click();
    await expect.poll(() => asked.filter((p) => p === '/api/memories').length).toBe(1);
    await tab.close();
    expect(dialogs).toEqual([]);
  });

  it('loaded nothing from the network and raised no error on any page', () => {
    expect(foreign).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it('--open hands $BROWSER a file only this user reads, no key or link in any process arguments; a port in use is refused in one line', async () => {
    const got = join(tmpDir('gm-browser-'), 'argv');
    const script = join(tmpDir('gm-browser-'), 'browser.sh');
    // the browser records its arguments and stays a while, as a browser does
    writeFileSync(
      script,
      `#!/bin/sh\nprintf '%s\\n' "$@" > '${got}.tmp' && mv '${got}.tmp' '${got}'\nsleep 30\n`,
    );
    chmodSync(script, 0o755);
    const s = await serve(b, ['--open'], { ...b.env, BROWSER: script });
    const argv = (
      await until(() => (existsSync(got) ? readFileSync(got, 'utf8') : undefined), 10_000)
    ).trim();
    // a path, not a URL; the file is this user's alone and sends the browser on to a link of its own
    expect(argv).not.toMatch(/^http|code=/);
    expect(statSync(argv).mode & 0o077).toBe(0);
    expect(statSync(dirname(argv)).mode & 0o077).toBe(0);
    const opened = /url=(http:\/\/\S+?)"/.exec(readFileSync(argv, 'utf8'))?.[1];
    expect(opened).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${s.port}/\\?code=[\\w-]+$`));
    expect(opened).not.toBe(s.url);
    const codeOf = (u: string) => new URL(u).searchParams.get('code')!;
    // what another local user sees: every process's arguments, none with a code (or the key, below)
    const ps = execFileSync('runuser', ['-u', 'nobody', '--', 'ps', '-eww', '-o', 'args'], {
      encoding: 'utf8',
    });
    expect(ps).toContain(argv); // the browser was seen
    const cmdlines = readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map((d) => {
        try {
          return readFileSync(`/proc/${d}/cmdline`, 'utf8');
        } catch {
          return '';
        }
      })
      .join('\n');
    // Chromium, given the file, lands on the page with the key; its link is then spent
    const tab = await ctx.newPage();
    await tab.goto(pathToFileURL(argv).href);
    await tab.locator('table.list.main').waitFor();
    expect(tab.url()).toBe(`http://127.0.0.1:${s.port}/#/memories`);
    const key = (await tab.evaluate(() => localStorage.getItem('git-mem-ui-key'))) ?? '';
    expect(key).toMatch(/^[\w-]{43}$/);
    await tab.close();
    for (const secret of [codeOf(s.url), codeOf(opened!), key]) {
      expect(ps).not.toContain(secret);
      expect(cmdlines).not.toContain(secret);
    }
    expect((await raw(s.port, `/?code=${codeOf(opened!)}`)).status).toBe(403);
    expect(await stop(s)).toBe(0);
    expect(existsSync(argv)).toBe(false); // removed with the server
    const busy = spawn(process.execPath, [BIN, 'ui', '--port', String(server.port)], {
      cwd: b.dir,
      env: b.env,
    });
    let out = '';
    busy.stderr.on('data', (d) => (out += d));
    const code = await new Promise((r) => busy.on('exit', r));
    expect(code).toBe(1);
    expect(out).toMatch(/port \d+ is in use/);
  });

  it("isolates the page from other origins' windows, also in a tab another page opened", async () => {
    const host = `127.0.0.1:${server.port}`;
    const coop = async (site?: string) =>
      (
        await raw(server.port, '/', {
          headers: { host, ...(site ? { 'sec-fetch-site': site } : {}) },
        })
      ).headers['cross-origin-opener-policy'];
    // the user's own navigation (a link from another application, --open, a typed URL) goes without
    expect(await coop('none')).toBeUndefined();
    for (const site of ['same-origin', 'cross-site', undefined])
      expect(await coop(site), site).toBe('same-origin');

    // a page of another origin (localhost, not 127.0.0.1) opens a tab; the user then types a URL into it
    const other = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>other</title><p>another origin</p>');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherPort = (other.address() as AddressInfo).port;
    const opener = await ctx.newPage();
    try {
      await opener.goto(`http://localhost:${otherPort}/`);
      const [tab] = await Promise.all([
        ctx.waitForEvent('page'),
        opener.evaluate("window.tab = window.open('about:blank', '_blank'), undefined"),
      ]);
      const closed = () => opener.evaluate('window.tab.closed') as Promise<boolean>;
      expect(await closed()).toBe(false);
      // the control: a page of a third origin without the policy leaves the opener its reference
      await tab.goto(`http://127.0.0.1:${otherPort}/`);
      expect(await closed()).toBe(false);
      // the UI: loaded as the user's own navigation (no policy), it loads itself once more and
      // the browser cuts the reference
      await tab.goto(`${base}/#/overview`, { waitUntil: 'commit' });
      expect(await until(async () => ((await closed()) ? true : undefined), 10_000)).toBe(true);
      await tab.locator('nav a[href="#/overview"]').waitFor();
      expect(tab.url()).toBe(`${base}/#/overview`);
      await tab.close();
    } finally {
      await opener.close();
      other.closeAllConnections(); // the browser keeps its connections alive
      await new Promise((r) => other.close(r));
      // the test's own pages of other origins are not the UI loading from the network
      for (let i = foreign.length - 1; i >= 0; i--)
        if (foreign[i].includes(`:${otherPort}/`)) foreign.splice(i, 1);
    }
  });

  it('gives no other server of 127.0.0.1 its key: another port gets no cookie, and its page cannot read the key', async () => {
    const seen: string[] = [];
    const other = createServer((req, res) => {
      seen.push(JSON.stringify(req.headers));
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>other</title><p>another local server</p>');
    });
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const otherPort = (other.address() as AddressInfo).port;
    const tab = await ctx.newPage();
    try {
      // the UI is open in this browser, with its key
      expect(await page.evaluate(() => localStorage.getItem('git-mem-ui-key'))).toBe(server.token);
      await tab.goto(`http://127.0.0.1:${otherPort}/`);
      expect(
        await tab.evaluate(async () => {
          await fetch('/probe', { credentials: 'include' });
          return [
            localStorage.getItem('git-mem-ui-key'),
            (globalThis as unknown as { document: { cookie: string } }).document.cookie,
          ];
        }),
      ).toEqual([null, '']);
      expect(seen.length).toBeGreaterThanOrEqual(2); // the page, the probe (and a favicon)
      for (const h of seen) {
        expect(h).not.toContain(server.token);
        expect(JSON.parse(h).cookie).toBeUndefined();
      }
      expect(await ctx.cookies(`http://127.0.0.1:${server.port}/`)).toEqual([]);
    } finally {
      await tab.close();
      other.closeAllConnections();
      await new Promise((r) => other.close(r));
      for (let i = foreign.length - 1; i >= 0; i--)
        if (foreign[i].includes(`:${otherPort}/`)) foreign.splice(i, 1);
    }
  });
});
