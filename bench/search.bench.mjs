#!/usr/bin/env node
// Search benchmark (issue 4): git mem search against `rg -il` over the same
// memories written as one file each, on ../shared/bench/gen.mjs data.
//
//   node bench/search.bench.mjs            # sizes 1k and 10k (a few minutes)
//   BENCH_SEARCH_SIZES=1000,10000,100000 node bench/search.bench.mjs
//
// Per size: node -e 0 and rg floors; `git mem search` as a process without a
// daemon and with a warm one; in-process query (searchMemories from a bundle
// of src/search built here); incremental update after one add; cold index
// build; RSS. Prints one markdown section `## search`.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  BIN,
  fmt,
  hasSharedGen,
  importEntry,
  median,
  ROOT,
  SHARED_GEN,
  scratchRepo,
  timeMs,
  timeMsAsync,
} from './lib.mjs';

const SIZES = (process.env.BENCH_SEARCH_SIZES ?? '1000,10000').split(',').map(Number).filter(Boolean);
const log = (s) => process.stderr.write(`search bench: ${s}\n`);
const out = ['## search', ''];

if (!hasSharedGen()) {
  console.log('## search\n\nSKIPPED: ../shared/bench/gen.mjs not found.');
  process.exit(0);
}
const rg = spawnSync('rg', ['--version'], { encoding: 'utf8' });
const haveRg = rg.status === 0;

// in-process API: bundle src/search/index.ts and the store (the bench cannot import TypeScript)
const api = await importEntry(join(ROOT, 'bench', 'search-api.entry.ts'));

function run(args, opts) {
  const r = spawnSync(args[0], args.slice(1), { encoding: 'utf8', maxBuffer: 256 << 20, ...opts });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr}`);
  return r.stdout;
}
function p50(fn, n) {
  const xs = [];
  for (let i = 0; i < n; i++) xs.push(fn(i));
  return median(xs);
}
function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

const rows = [];
for (const N of SIZES) {
  log(`size ${N}: generating`);
  const s = scratchRepo('gm-bench-search-');
  const env = { ...s.env, GIT_MEM_DAEMON: 'off' };
  writeFileSync(join(s.dir, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.com\n');
  const memFile = join(s.dir, 'mem.jsonl');
  writeFileSync(memFile, execFileSync(process.execPath, [SHARED_GEN, 'memories', String(N)], { maxBuffer: 1 << 30 }));
  const files = join(s.dir, 'files');
  mkdirSync(files);
  execFileSync(process.execPath, [SHARED_GEN, 'files', String(N), files], { stdio: 'ignore' });
  const queries = execFileSync(process.execPath, [SHARED_GEN, 'queries', '30'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  const cwd = s.repo;
  log(`size ${N}: importing`);
  run([process.execPath, BIN, 'import', '--jsonl', memFile], { cwd, env });
  // the catalog cache is built by the first command; keep it out of the figures
  run([process.execPath, BIN, 'list', '--json'], { cwd, env });

  const nq = N >= 100000 ? 7 : N >= 10000 ? 11 : 15;
  const qs = (i) => queries[i % queries.length].q;
  const nodeFloor = p50(() => timeMs(() => spawnSync(process.execPath, ['-e', '0'])), nq);
  const rgMs = haveRg ? p50((i) => timeMs(() => spawnSync('rg', ['-i', '-l', '--', qs(i), files], { stdio: 'ignore' })), nq) : Number.NaN;

  log(`size ${N}: cold build`);
  const cold = timeMs(() => run([process.execPath, BIN, 'reindex', '--json'], { cwd, env }));
  const snapMiB = (() => {
    try {
      return readFileSync(join(cwd, '.git', 'mem', 'search', 'refs_memory', 'index.json')).length / 2 ** 20;
    } catch {
      return Number.NaN;
    }
  })();

  log(`size ${N}: process without daemon`);
  const noDaemon = p50((i) => timeMs(() => run([process.execPath, BIN, 'search', '--json', '--no-daemon', '--', qs(i)], { cwd, env })), Math.min(nq, 7));

  log(`size ${N}: daemon`);
  const started = JSON.parse(run([process.execPath, BIN, 'daemon', 'start', '--json'], { cwd, env: { ...env, GIT_MEM_DAEMON: 'on' } }));
  const denv = { ...env, GIT_MEM_DAEMON: 'on' };
  run([process.execPath, BIN, 'search', '--json', '--', qs(0)], { cwd, env: denv }); // warm
  const withDaemon = p50((i) => timeMs(() => run([process.execPath, BIN, 'search', '--json', '--', qs(i)], { cwd, env: denv })), nq);
  const daemonRss = rssOf(started.pid);
  run([process.execPath, BIN, 'daemon', 'stop'], { cwd, env });

  log(`size ${N}: in-process`);
  const store = await api.openStoreAt(cwd, env);
  const tLoad = await timeMsAsync(() => api.openIndex(store, { provider: null }));
  const inproc = [];
  for (let i = 0; i < Math.max(30, nq); i++) {
    const q = qs(i);
    inproc.push(await timeMsAsync(() => api.searchMemories(store, { query: q, limit: 10 }, { provider: null, recordUsage: false })));
  }
  const scanP50 = median(inproc);
  // a long-lived process (daemon, MCP server) builds the postings once
  const tOrama = await timeMsAsync(() => api.openIndex(store, { provider: null, postings: true }));
  const inprocO = [];
  for (let i = 0; i < Math.max(30, nq); i++) {
    const q = qs(i);
    inprocO.push(await timeMsAsync(() => api.searchMemories(store, { query: q, limit: 10 }, { provider: null, recordUsage: false })));
  }
  const inprocP50 = median(inprocO);
  const rss = process.memoryUsage().rss / 2 ** 20;
  // incremental update after one add (made by another process, as an agent would)
  const incr = [];
  const modes = new Set();
  for (let i = 0; i < 5; i++) {
    run([process.execPath, BIN, 'add', '--force', '--title', `Bench memory ${i} ${Date.now()}`, '--content', `incremental update probe ${i}`], { cwd, env });
    let st;
    incr.push(await timeMsAsync(async () => {
      st = await api.openIndex(store, { provider: null, persist: false });
    }));
    modes.add(`${st.last.mode} ${st.last.changed}`);
  }
  const st = { last: { mode: [...modes].join(', ') } };
  const incrP50 = median(incr);
  store.close();
  api.forgetIndex(store);
  rows.push({ N, nodeFloor, rgMs, noDaemon, withDaemon, inprocP50, scanP50, tOrama, incrP50, incrMode: st.last.mode, cold, tLoad, rss, daemonRss, snapMiB });
  rmSync(s.dir, { recursive: true, force: true });
}

out.push(
  `Data: \`../shared/bench/gen.mjs\` memories and 30 two-word queries; rg = \`rg -i -l QUERY\` over one file per memory (${haveRg ? rg.stdout.split('\n')[0] : 'rg not installed'}). Medians; ratios against rg measured in the same run.`,
  '',
  '| memories | node -e 0 | rg -il | search, warm daemon | ×rg | search, no daemon | ×rg | in-process query (postings / scan) | incremental update after 1 add | cold build (reindex process) | snapshot | load (docs / +postings) | RSS in-process / daemon |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
);
for (const r of rows) {
  out.push(
    `| ${r.N} | ${fmt(r.nodeFloor)} ms | ${fmt(r.rgMs)} ms | ${fmt(r.withDaemon)} ms | ${(r.withDaemon / r.rgMs).toFixed(2)} | ${fmt(r.noDaemon)} ms | ${(r.noDaemon / r.rgMs).toFixed(2)} | ${fmt(r.inprocP50)} / ${fmt(r.scanP50)} ms | ${fmt(r.incrP50)} ms (${r.incrMode}) | ${fmt(r.cold)} ms | ${fmt(r.snapMiB)} MiB | ${fmt(r.tLoad)} / ${fmt(r.tOrama)} ms | ${fmt(r.rss)} / ${fmt(r.daemonRss)} MiB |`,
  );
}
out.push(
  '',
  'Goals (issue 4): warm-daemon process within 1.5× rg at 10k and below 0.25× rg at 100k; in-process ≤ 5 ms at 10k and ≤ 50 ms at 100k; incremental update ≤ 50 ms.',
);
console.log(out.join('\n'));
