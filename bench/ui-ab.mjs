#!/usr/bin/env node
// git mem ui, builds side by side (issue 15): the first page in a new tab and on reload, for
// several builds of git-mem serving one store, and the floor pages of bench/ui.bench.mjs, every
// load interleaved in one browser, so the machine's load falls on all of them alike.
//
//   node bench/ui-ab.mjs                                   # this build only
//   BUILDS=old=/path/to/other/checkout,new=. node bench/ui-ab.mjs
//   BENCH_UI_SIZE=1000 N=9 NORELOAD=1 node bench/ui-ab.mjs
//
// Each build is a checkout with dist/ built (npm run build). The store: gen.mjs memories imported
// by the first build. Prints one markdown table, p50 / p90 ms from navigation start to the rows
// in the page (the page's own clock, as in bench/ui.bench.mjs).
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium } from 'playwright-core';
import { fmt, hasSharedGen, median, pct, ROOT, SHARED_GEN, scratchRepo, startUi, launchBenchChromium } from './lib.mjs';

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
const page = ctx.pages()[0] ?? (await ctx.newPage());
for (const b of builds) {
  await page.goto(b.url); // the token becomes a cookie
  await page.waitForSelector('body[data-ready="1"]');
}

// the floor pages of bench/ui.bench.mjs, with the rows the first build gave
const u = new URL(builds[0].url);
const data = await new Promise((ok) =>
  request({ host: '127.0.0.1', port: u.port, path: '/api/memories?page=1&size=50', headers: { cookie: `git-mem-ui-${u.port}=${u.searchParams.get('token')}` } }, (r) => {
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
const floor = createServer((req, res) => {
  const p = new URL(req.url, 'http://x').pathname;
  if (p === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(floorPage);
  if (p === '/coop')
    return res.writeHead(200, { 'content-type': 'text/html', 'cross-origin-opener-policy': 'same-origin' }).end(floorPage);
  if (p === '/f.js') return res.writeHead(200, { 'content-type': 'text/javascript' }).end(floorJs);
  res.writeHead(200, { 'content-type': 'application/json' }).end(data);
});
await new Promise((r) => floor.listen(0, '127.0.0.1', r));
const floorBase = `http://127.0.0.1:${floor.address().port}`;

const targets = [
  ...builds.map((b) => [b.name, `${b.base}/#/memories`]),
  ['floor', `${floorBase}/`],
  ['floor + COOP', `${floorBase}/coop`],
];

async function load(at, fresh) {
  let p = page;
  if (fresh) {
    p = await ctx.newPage();
    await p.goto(at);
  } else await p.reload();
  await p.waitForSelector('body[data-ready="1"]');
  const rows = await p.locator('tbody tr, #t tr').count();
  if (rows !== Math.min(50, SIZE)) throw new Error(`${at}: expected ${Math.min(50, SIZE)} rows, got ${rows}`);
  const ms = await p.evaluate(() => window.__gmPerf.ready);
  if (fresh) await p.close();
  return ms;
}
const tab = new Map(targets.map(([n]) => [n, []]));
const reload = new Map(targets.map(([n]) => [n, []]));
log('new tabs');
for (const [, at] of targets) await load(at, true);
for (let i = 0; i < N; i++) for (const [n, at] of targets) tab.get(n).push(await load(at, true));
if (!process.env.NORELOAD) {
  log('reloads');
  for (const [n, at] of targets) {
    await page.goto(at);
    await page.waitForSelector('body[data-ready="1"]');
    for (let i = 0; i < N; i++) reload.get(n).push(await load(null, false));
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
    `| ${SIZE} memories, p50 / p90 | first page, new tab (${N}) | first page, reload (${process.env.NORELOAD ? 0 : N}) |`,
    '|---|---|---|',
    ...targets.map(([n]) => `| ${n} | ${row(tab.get(n))} | ${row(reload.get(n))} |`),
    '',
    `Loads interleaved in one browser. Load average when done: ${loadavg().map((x) => x.toFixed(1)).join(' ')} on ${cpus().length} cores.`,
  ].join('\n'),
);
