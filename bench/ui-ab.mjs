#!/usr/bin/env node
// git mem ui, builds side by side (issue 15): the first page in a new tab and on reload, for
// several builds of git-mem serving one store, and the floor pages of bench/ui.bench.mjs, every
// load interleaved in one browser, so the machine's load falls on all of them alike.
//
//   node bench/ui-ab.mjs                                   # this build only
//   BUILDS=old=/path/to/other/checkout,new=. node bench/ui-ab.mjs
//   BENCH_UI_SIZE=1000 N=9 NORELOAD=1 node bench/ui-ab.mjs
//   FLOOR_COOP=same-origin-allow-popups,noopener-allow-popups NOTOKEN=1 node bench/ui-ab.mjs
//
// Each build is a checkout with dist/ built (npm run build). The store: gen.mjs memories imported
// by the first build. Prints one markdown table, p50 / p90 ms from navigation start to the rows
// in the page (the page's own clock, as in bench/ui.bench.mjs), for two ways of opening a new
// tab (lib.mjs openFirstPage): playwright's newPage() then goto(), and the browser making the
// tab with the URL (as a link clicked in a terminal, or --open, does; a build is then opened at
// the URL it printed, with its token). For the latter also ms from the tab's creation, and the
// first frame painted after the rows were in the page. FLOOR_COOP adds the floor page sent
// with each other Cross-Origin-Opener-Policy value named.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { fmt, hasSharedGen, launchBenchChromium, median, openFirstPage, pct, ROOT, SHARED_GEN, scratchRepo, startUi } from './lib.mjs';

const startLoad = loadavg().map((x) => x.toFixed(1)).join(' ');
const SIZE = Number(process.env.BENCH_UI_SIZE ?? 10000);
const N = Number(process.env.N ?? 15);
const CHROMIUM = '/usr/bin/chromium';
const builds = (process.env.BUILDS ?? `this=${ROOT}`).split(',').map((b) => {
  const [name, dir] = b.split('=');
  return { name, bin: join(resolve(dir), 'bin', 'git-mem.js') };
});
const log = (s) => process.stderr.write(`ui ab: ${s}\n`);
if (!hasSharedGen()) throw new Error(`${SHARED_GEN} is missing`);

const s = scratchRepo('gm-bench-ui-ab-');
writeFileSync(join(s.dir, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.com\n');
// one store for every build, searched in process (no daemon shared between builds)
const env = { ...s.env, GIT_MEM_DAEMON: 'off' };
const jsonl = join(s.dir, 'mem.jsonl');
log(`importing ${SIZE} memories`);
writeFileSync(jsonl, execFileSync(process.execPath, [SHARED_GEN, 'memories', String(SIZE)], { maxBuffer: 1 << 30 }));
execFileSync(process.execPath, [builds[0].bin, 'import', '--jsonl', jsonl], { cwd: s.repo, env, stdio: 'ignore' });
for (const b of builds)
  execFileSync(process.execPath, [b.bin, 'list', '--json'], { cwd: s.repo, env, stdio: 'ignore', maxBuffer: 1 << 30 });

for (const b of builds) {
  ({ server: b.server, url: b.url } = await startUi(b.bin, s.repo, env));
  b.base = new URL(b.url).origin;
}

const ctx = await launchBenchChromium(chromium, CHROMIUM);
// the first frame painted once the rows are in the page (the next animation frame, then a task)
await ctx.addInitScript(() => {
  window.__gmPaint = null;
  const o = new MutationObserver(() => {
    if (document.body?.dataset.ready !== '1') return;
    o.disconnect();
    requestAnimationFrame(() => setTimeout(() => (window.__gmPaint = performance.now())));
  });
  o.observe(document, { attributes: true, subtree: true, attributeFilter: ['data-ready'] });
});
const page = ctx.pages()[0] ?? (await ctx.newPage());
for (const b of builds) {
  await page.goto(b.url); // the one-time link: the page keeps the key
  b.key = await page.evaluate(() => localStorage.getItem('git-mem-ui-key'));
  await page.waitForSelector('body[data-ready="1"]');
}

// the floor pages of bench/ui.bench.mjs, with the rows the first build gave
const u = new URL(builds[0].url);
const data = await new Promise((ok) =>
  request({ host: '127.0.0.1', port: u.port, path: '/api/memories?page=1&size=50', headers: { 'x-git-mem-token': builds[0].key } }, (r) => {
    let body = '';
    r.on('data', (d) => (body += d));
    r.on('end', () => ok(body));
  }).end(),
);
const floorPage = `<!doctype html><meta charset="utf-8"><title>floor</title><input id="q"><table id="t"></table><script src="/f.js"></script>`;
const floorJs = `
const rows = (items) => items.map((m) => '<tr><td>' + m.title.replace(/</g, '&lt;') + '</td><td>' + m.type + '</td><td>' + m.status + '</td><td>' + m.tags.join(' ') + '</td><td>' + m.updated + '</td></tr>').join('');
window.__gmPerf = { ready: null, keystrokes: [] };
fetch('/data').then((r) => r.json()).then((d) => { document.getElementById('t').innerHTML = rows(d.items); window.__gmPerf.ready = performance.now(); document.body.dataset.ready = '1'; });`;
const coops = ['same-origin', ...(process.env.FLOOR_COOP ? process.env.FLOOR_COOP.split(',') : [])];
const floor = createServer((req, res) => {
  const p = new URL(req.url, 'http://x').pathname;
  if (p === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(floorPage);
  const coop = /^\/coop\/(.+)$/.exec(p)?.[1];
  if (coop)
    return res.writeHead(200, { 'content-type': 'text/html', 'cross-origin-opener-policy': coop }).end(floorPage);
  if (p === '/f.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(floorJs);
  res.writeHead(200, { 'content-type': 'application/json' }).end(data);
});
await new Promise((r) => floor.listen(0, '127.0.0.1', r));
const floorBase = `http://127.0.0.1:${floor.address().port}`;

// name, URL in a tab, URL from a link (a build: the URL it printed, token and all)
const targets = [
  ...builds.map((b) => [b.name, `${b.base}/#/memories`, b.url]),
  // NOTOKEN=1: the first build also from a link without the token (its cookie set): no redirect
  ...(process.env.NOTOKEN ? [[`${builds[0].name}, a link without the token`, `${builds[0].base}/#/memories`, `${builds[0].base}/#/memories`]] : []),
  ['floor', `${floorBase}/`, `${floorBase}/`],
  ...coops.map((c) => [c === 'same-origin' ? 'floor + COOP' : `floor + COOP ${c}`, `${floorBase}/coop/${c}`, `${floorBase}/coop/${c}`]),
];

async function check(p, at) {
  const rows = await p.locator('tbody tr, #t tr').count();
  if (rows !== Math.min(50, SIZE)) throw new Error(`${at}: expected ${Math.min(50, SIZE)} rows, got ${rows}`);
}
async function fresh(how, at) {
  const { page: p, ready, fromCreation } = await openFirstPage(ctx, how, at);
  await check(p, at);
  await p.waitForFunction(() => window.__gmPaint !== null);
  const paint = await p.evaluate(() => window.__gmPaint);
  await p.close();
  return { ready, fromCreation, paint };
}
async function reloaded() {
  await page.reload();
  await page.waitForSelector('body[data-ready="1"]');
  await check(page, page.url());
  return page.evaluate(() => window.__gmPerf.ready);
}
const fig = new Map(targets.map(([n]) => [n, { tab: [], link: [], linkCreation: [], linkPaint: [], reload: [] }]));
// the tab open beside the new ones: by default on about:blank, as a browser with no other page of
// 127.0.0.1 open (Chromium may put a new tab of a site into a process the site already has);
// OPENER=site leaves it on the last build's page
if (process.env.OPENER !== 'site') await page.goto('about:blank');
log('new tabs');
for (const [, at, link] of targets) {
  await fresh('tab', at);
  await fresh('link', link);
}
for (let i = 0; i < N; i++)
  for (const [n, at, link] of targets) {
    const f = fig.get(n);
    f.tab.push((await fresh('tab', at)).ready);
    const l = await fresh('link', link);
    f.link.push(l.ready);
    f.linkCreation.push(l.fromCreation);
    f.linkPaint.push(l.paint);
  }
if (!process.env.NORELOAD) {
  log('reloads');
  for (const [n, at] of targets) {
    await page.goto(at);
    await page.waitForSelector('body[data-ready="1"]');
    for (let i = 0; i < N; i++) fig.get(n).reload.push(await reloaded());
  }
}
await ctx.close();
floor.close();
for (const b of builds) {
  b.server.kill('SIGINT');
  await new Promise((r) => b.server.once('exit', r));
}

const row = (xs) => (xs.length ? `${fmt(median(xs))} / ${fmt(pct(xs, 90))} ms` : '—');
console.log(
  [
    `| ${SIZE} memories, p50 / p90 | new tab: newPage, goto (${N}) | new tab from a link (${N}) | the same from the tab's creation | the same, first frame painted | reload (${process.env.NORELOAD ? 0 : N}) |`,
    '|---|---|---|---|---|---|',
    ...targets.map(([n]) => {
      const f = fig.get(n);
      return `| ${n} | ${row(f.tab)} | ${row(f.link)} | ${row(f.linkCreation)} | ${row(f.linkPaint)} | ${row(f.reload)} |`;
    }),
    '',
    `Loads interleaved in one browser. Load average at the start: ${startLoad}; when done: ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores.`,
  ].join('\n'),
);
