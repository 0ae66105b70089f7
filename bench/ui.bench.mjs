#!/usr/bin/env node
// git mem ui benchmark (issue 15): at 10k memories, the first page to usable
// and search as you type, in Debian's Chromium driven by playwright-core.
//
//   node bench/ui.bench.mjs                 # 10k memories (about a minute)
//   BENCH_UI_SIZE=1000 node bench/ui.bench.mjs
//
// The store: ../shared/bench/gen.mjs memories (a synthetic generator when it is
// absent) through `git mem import`. The server: the built binary's `git mem ui`.
// First page: a fresh load of the Memories page (50 of the 10k, newest first)
// until the list is on screen and the search box takes input, read from the
// page's own clock (performance.now() from navigation start); the first load
// after the server started is reported apart. A new tab is opened two ways
// (lib.mjs openFirstPage): playwright's newPage() then goto(), and the browser
// making the tab with the URL, as a link clicked in a terminal or
// `git mem ui --open` does (that one also from the tab's creation). Search as you type: gen.mjs
// queries typed a key at a time (a key every 150 ms, as a quick typist),
// each key timed from its input event to its results on screen; and the same
// prefixes as bare API requests from node. Prints one markdown section `## ui`.
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { BIN, SHARED_GEN, fmt, hasSharedGen, launchBenchChromium, median, openFirstPage, pct, scratchRepo, startUi } from './lib.mjs';

const N = Number(process.env.BENCH_UI_SIZE ?? 10000);
const startLoad = loadavg().map((x) => x.toFixed(1)).join(' ');
const CHROMIUM = '/usr/bin/chromium';
const log = (s) => process.stderr.write(`ui bench: ${s}\n`);

if (!existsSync(CHROMIUM)) {
  console.log(`## ui\n\nSKIPPED: ${CHROMIUM} not found (apt-get install chromium).`);
  process.exit(0);
}

/** Memories as JSON lines: gen.mjs's when present, else a small synthetic generator. */
function memories(n) {
  if (hasSharedGen()) return execFileSync(process.execPath, [SHARED_GEN, 'memories', String(n)], { maxBuffer: 1 << 30 });
  const words = 'pool cache retry deploy schema index token queue worker config build test flaky upload migrate lock shard replica timeout budget'.split(' ');
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff);
  const pick = () => words[Math.floor(rnd() * words.length)];
  const types = ['decision', 'constraint', 'known_fix', 'convention', 'architecture'];
  const out = [];
  for (let i = 0; i < n; i++)
    out.push(JSON.stringify({ type: types[i % types.length], title: `${pick()} ${pick()} ${pick()} ${i}`, body: Array.from({ length: 40 }, pick).join(' '), tags: [pick()] }));
  return `${out.join('\n')}\n`;
}

function queries(n) {
  if (hasSharedGen())
    return execFileSync(process.execPath, [SHARED_GEN, 'queries', String(n)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).q);
  return ['retry upload', 'pool timeout', 'schema migrate', 'flaky test', 'replica lag'].slice(0, n);
}

function get(port, path, cookie) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const req = request({ host: '127.0.0.1', port, path, headers: { 'x-git-mem-token': cookie } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ ms: Number(process.hrtime.bigint() - t) / 1e6, status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const s = scratchRepo('gm-bench-ui-');
writeFileSync(join(s.dir, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.com\n');
// the import must not leave a daemon behind; the UI starts its own (src/ui/search.ts)
const env = s.env;
const jsonl = join(s.dir, 'mem.jsonl');
log(`generating ${N} memories`);
writeFileSync(jsonl, memories(N));
log('importing');
execFileSync(process.execPath, [BIN, 'import', '--jsonl', jsonl], { cwd: s.repo, env: { ...env, GIT_MEM_DAEMON: 'off' }, stdio: 'ignore' });
// the catalog cache is built by the first command (as after any import); keep it out of the figures
execFileSync(process.execPath, [BIN, 'list', '--json'], { cwd: s.repo, env: { ...env, GIT_MEM_DAEMON: 'off' }, stdio: 'ignore', maxBuffer: 1 << 30 });

log('starting git mem ui');
const { server, url } = await startUi(BIN, s.repo, env);
const u = new URL(url);
const port = Number(u.port);
const base = `http://127.0.0.1:${port}`;

const ctx = await launchBenchChromium(chromium, CHROMIUM);
const page = ctx.pages()[0] ?? (await ctx.newPage());
await page.goto(url); // the one-time link: the page keeps the key (src/ui/security.ts)
const cookie = await page.evaluate(() => localStorage.getItem('git-mem-ui-key')); // the key, sent as x-git-mem-token

/**
 * The floor, measured beside: the same two things done by the least a page can do. A static
 * page from a bare node server fetches the same 50 rows (as JSON the real API gave) and writes
 * them into a table with innerHTML; a search box fetches a prepared answer per prefix and
 * writes it the same way. Same browser, same navigation, same clock.
 */
const floorData = new Map();
const floorPage = `<!doctype html><meta charset="utf-8"><title>floor</title><input id="q"><table id="t"></table><script src="/f.js"></script>`;
const floorJs = `
const rows = (items) => items.map((m) => '<tr><td>' + m.title.replace(/</g, '&lt;') + '</td><td>' + m.type + '</td><td>' + m.status + '</td><td>' + m.tags.join(' ') + '</td><td>' + m.updated + '</td></tr>').join('');
window.__gmPerf = { ready: null, keystrokes: [] };
fetch('/data?q=').then((r) => r.json()).then((d) => { document.getElementById('t').innerHTML = rows(d.items); window.__gmPerf.ready = performance.now(); document.body.dataset.ready = '1'; });
let ac;
document.getElementById('q').addEventListener('input', (e) => {
  const t = performance.now();
  ac?.abort(); ac = new AbortController();
  fetch('/data?q=' + encodeURIComponent(e.target.value), { signal: ac.signal }).then((r) => r.json()).then((d) => {
    document.getElementById('t').innerHTML = rows(d.items);
    window.__gmPerf.keystrokes.push(performance.now() - t);
  }).catch(() => {});
});`;
const { createServer } = await import('node:http');
const floor = createServer((req, res) => {
  const u = new URL(req.url, 'http://x');
  if (u.pathname === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(floorPage);
  // the same page with the header of git mem ui that decides how a new tab opens it: COOP
  // same-origin puts the page in a browsing context group (so a renderer process) of its own
  if (u.pathname === '/coop')
    return res.writeHead(200, { 'content-type': 'text/html', 'cross-origin-opener-policy': 'same-origin' }).end(floorPage);
  if (u.pathname === '/f.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(floorJs);
  const body = floorData.get(u.searchParams.get('q') ?? '') ?? '{"items":[]}';
  res.writeHead(200, { 'content-type': 'application/json' }).end(body);
});
await new Promise((r) => floor.listen(0, '127.0.0.1', r));
const floorBase = `http://127.0.0.1:${floor.address().port}`;

/** ms from navigation start to the list on screen: in a new tab, or reloading the one open. */
async function load(at, fresh) {
  let p = page;
  if (fresh) p = await ctx.newPage();
  if (fresh) await p.goto(at);
  else await p.reload();
  await p.waitForSelector('body[data-ready="1"]');
  const rows = await p.locator('tbody tr, #t tr').count();
  if (rows !== Math.min(50, N)) throw new Error(`expected ${Math.min(50, N)} rows, got ${rows}`);
  const ms = await p.evaluate(() => window.__gmPerf.ready);
  if (fresh) await p.close();
  return ms;
}

log('first page');
const cold = await load(`${base}/#/memories`, true);
floorData.set('', (await get(port, '/api/memories?page=1&size=50', cookie)).body);
const qs = queries(12);
// the first search after the start: the query daemon may still be loading the index
const firstSearch = await get(port, `/api/memories?q=${encodeURIComponent(qs[0].slice(0, 1))}&page=1&size=50`, cookie);
for (const q of qs) for (let i = 1; i <= q.length; i++) floorData.set(q.slice(0, i), (await get(port, `/api/memories?q=${encodeURIComponent(q.slice(0, i))}&page=1&size=50`, cookie)).body);
// the later loads are measured with the daemon up (what a user has after the first search)
const figures = { tab: [], reload: [], floorTab: [], floorReload: [], floorCoopTab: [] };
/** A new tab made by the browser with the URL (a link followed from outside the browser). */
async function fromLink(at) {
  const { page: p, ready, fromCreation } = await openFirstPage(ctx, 'link', at);
  const rows = await p.locator('tbody tr, #t tr').count();
  if (rows !== Math.min(50, N)) throw new Error(`expected ${Math.min(50, N)} rows, got ${rows}`);
  await p.close();
  return { ready, fromCreation };
}
// both ways interleaved; from a link, the URL git mem ui printed (its token swapped for the
// cookie and redirected, as on a click)
const link = { ui: [], uiCreation: [], floor: [], floorCreation: [], coop: [], coopCreation: [] };
for (let i = 0; i < 11; i++) {
  figures.tab.push(await load(`${base}/#/memories`, true));
  figures.floorTab.push(await load(floorBase, true));
  figures.floorCoopTab.push(await load(`${floorBase}/coop`, true));
  for (const [k, at] of [['ui', url], ['floor', floorBase], ['coop', `${floorBase}/coop`]]) {
    const r = await fromLink(at);
    link[k].push(r.ready);
    link[`${k}Creation`].push(r.fromCreation);
  }
}
await page.goto(`${base}/#/memories`);
for (let i = 0; i < 11; i++) figures.reload.push(await load(null, false));
await page.goto(floorBase);
for (let i = 0; i < 11; i++) figures.floorReload.push(await load(null, false));


log('search as you type (API)');
const api = [];
for (const q of qs) for (let i = 1; i <= q.length; i++) api.push((await get(port, `/api/memories?q=${encodeURIComponent(q.slice(0, i))}&page=1&size=50`, cookie)).ms);

/** Types each query a key at a time; ms from each key's input event to its results on screen. */
async function typing(at, box) {
  await page.goto(at);
  await page.waitForSelector('body[data-ready="1"]');
  const out = [];
  for (const q of qs) {
    await page.fill(box, '');
    await page.waitForTimeout(300);
    await page.evaluate(() => {
      window.__gmPerf.keystrokes = [];
    });
    await page.locator(box).pressSequentially(q, { delay: 150 });
    await page.waitForTimeout(400);
    out.push(...(await page.evaluate(() => window.__gmPerf.keystrokes)));
  }
  return out;
}
log('search as you type (browser)');
const keys = await typing(`${base}/#/memories`, 'input.search');
const hits = await page.locator('tbody tr').count();
const floorKeys = await typing(floorBase, '#q');
floor.close();

await ctx.close();
server.kill('SIGINT');
await new Promise((r) => server.once('exit', r));
// the query daemon the UI started
execFileSync(process.execPath, [BIN, 'daemon', 'stop'], { cwd: s.repo, env, stdio: 'ignore' });

const row = (xs) => `${fmt(median(xs))} / ${fmt(pct(xs, 90))} ms`;
const lines = [
  '## ui',
  '',
  `Data: ${N} memories (${hasSharedGen() ? '../shared/bench/gen.mjs' : 'synthetic'}) imported with \`git mem import\`; the built \`git mem ui\` (its search through the query daemon it starts); ${execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8' }).trim().replace(/ built on.*/, '')} headless through playwright-core. Times from the page's own clock (performance.now(), from navigation start or from the key's input event) to the rows in the page. Floor: a bare static page doing the same fetch and writing the same rows with innerHTML, from a bare node server, in the same browser. p50 / p90.`,
  '',
  '| | git mem ui | floor |',
  '|---|---|---|',
  `| first page, new tab (${figures.tab.length} loads) | ${row(figures.tab)} | ${row(figures.floorTab)} |`,
  `| first page, new tab: the floor page sent with the UI's Cross-Origin-Opener-Policy (${figures.floorCoopTab.length}) | | ${row(figures.floorCoopTab)} |`,
  `| first page, new tab from a link (the browser makes the tab with the URL; ${link.ui.length}) | ${row(link.ui)} | ${row(link.floor)} |`,
  `| the same, from the tab's creation | ${row(link.uiCreation)} | ${row(link.floorCreation)} |`,
  `| first page, new tab from a link: the floor page with the UI's Cross-Origin-Opener-Policy (${link.coop.length}) | | ${row(link.coop)}; from the creation ${row(link.coopCreation)} |`,
  `| first page, reload (${figures.reload.length}) | ${row(figures.reload)} | ${row(figures.floorReload)} |`,
  `| first page, first load after the server started | ${fmt(cold)} ms | |`,
  `| keystroke → results in the page (${keys.length} keys) | ${row(keys)} | ${row(floorKeys)} |`,
  `| keystroke, the API request alone from node (${api.length}) | ${row(api)} | |`,
  `| first search after the start (the daemon loading the index) | ${fmt(firstSearch.ms)} ms | |`,
  '',
  `Goals (issue 15): first page ≤ 300 ms to usable, search as you type ≤ 50 ms per keystroke, at ${N} memories. Keys typed every 150 ms; ${qs.length} gen.mjs queries; the last showed ${hits} rows. Load average at the start: ${startLoad}; when done: ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores.`,
];
console.log(lines.join('\n'));
