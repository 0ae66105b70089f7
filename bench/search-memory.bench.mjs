#!/usr/bin/env node
// Search index memory and cold build (issue 16 item 6: "search that fits in memory at 100k"),
// this tree against an old build run in the same script, on ../shared/bench/gen.mjs data.
//
//   node bench/search-memory.bench.mjs                                  # 10k, this tree only
//   BENCH_SEARCH_MEM_SIZES=10000,100000 BENCH_SEARCH_MEM_BASE=../wt-base \
//   BENCH_SEARCH_MEM_KEEP=/tmp/gm-mem node bench/search-memory.bench.mjs
//   BENCH_SEARCH_MEM_SIZES=0 …                                          # skip
//
// BENCH_SEARCH_MEM_BASE: a checkout of the old build (its src/ and bench/search-api.entry.ts are
// bundled; it needs node_modules). BENCH_SEARCH_MEM_KEEP: a directory where the imported
// repositories are kept and reused (importing 100k memories takes minutes).
// BENCH_SEARCH_MEM_RUNS: runs per build (default 3), old and new alternating.
//
// Each figure comes from a fresh child process:
//   build — the cold build in process (openIndex rebuild, snapshot written): wall time, peak RSS
//           (VmHWM), RSS after it;
//   serve — what the daemon does: open the snapshot with the inverted index, then 3 rounds of 30
//           queries: load time, RSS after load and after queries, query p50 of the last two rounds.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, EMBED_EXTERNAL, ROOT, SHARED_GEN, benchEnv, bundleForNode, fmt, hasSharedGen, median } from './lib.mjs';

// ---- child: one measurement in a fresh process ----
if (process.argv[2] === '--child') {
  const [, , , apiDir, repo, phase, qfile] = process.argv;
  const api = await import(pathToFileURL(join(apiDir, 'api.js')).href);
  const status = () => readFileSync('/proc/self/status', 'utf8');
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status())?.[1] ?? Number.NaN) / 1024;
  const settle = () => {
    global.gc?.();
    global.gc?.();
  };
  const env = { ...process.env, GIT_MEM_DAEMON: 'off' };
  const store = await api.openStoreAt(repo, env);
  const out = {};
  if (phase === 'build') {
    const t = performance.now();
    const c0 = process.cpuUsage();
    const st = await api.openIndex(store, { provider: null, rebuild: true });
    out.ms = performance.now() - t;
    // this process's CPU time (user + system; git's processes not included): steadier than wall
    // time on a shared machine
    const c = process.cpuUsage(c0);
    out.cpuMs = (c.user + c.system) / 1000;
    out.docs = st.index.size;
    settle();
    out.rss = kb('VmRSS');
    out.hwm = kb('VmHWM');
    // what the build left on disk (old builds: index.json and orama-*.json)
    const dir = join(repo, '.git', 'mem', 'search', 'refs_memory');
    out.snapMiB = readdirSync(dir).reduce((s, f) => s + statSync(join(dir, f)).size, 0) / 2 ** 20;
  } else {
    const qs = readFileSync(qfile, 'utf8').trim().split('\n');
    const t = performance.now();
    // both option names: `orama` for builds before issue 16 item 6, `postings` after
    const st = await api.openIndex(store, { provider: null, orama: true, postings: true });
    out.loadMs = performance.now() - t;
    out.docs = st.index.size;
    settle();
    out.rssLoaded = kb('VmRSS');
    const xs = [];
    for (let r = 0; r < 3; r++) {
      for (const q of qs) {
        const t0 = performance.now();
        await api.searchMemories(store, { query: q, limit: 10 }, { provider: null, recordUsage: false });
        if (r > 0) xs.push(performance.now() - t0);
      }
    }
    out.p50 = median(xs);
    settle();
    out.rssQueried = kb('VmRSS');
    out.hwm = kb('VmHWM');
  }
  store.close();
  process.stdout.write(JSON.stringify(out));
  process.exit(0);
}

// ---- parent ----
const SIZES = (process.env.BENCH_SEARCH_MEM_SIZES ?? '10000').split(',').map(Number).filter(Boolean);
const RUNS = Number(process.env.BENCH_SEARCH_MEM_RUNS ?? 3);
const BASE = process.env.BENCH_SEARCH_MEM_BASE ? resolve(process.env.BENCH_SEARCH_MEM_BASE) : undefined;
const KEEP = process.env.BENCH_SEARCH_MEM_KEEP ? resolve(process.env.BENCH_SEARCH_MEM_KEEP) : undefined;
const log = (s) => process.stderr.write(`search-memory bench: ${s}\n`);
if (!SIZES.length) {
  console.log('## search memory\n\nSKIPPED (BENCH_SEARCH_MEM_SIZES=0).');
  process.exit(0);
}
if (!hasSharedGen()) {
  console.log('## search memory\n\nSKIPPED: ../shared/bench/gen.mjs not found.');
  process.exit(0);
}

/** Bundles a tree's in-process search API inside the tree (its node_modules resolve lazy requires). */
async function bundle(tree) {
  const dir = join(tree, `.bench-mem-${process.pid}`);
  await bundleForNode({ entryPoints: { api: join(tree, 'bench', 'search-api.entry.ts') }, outdir: dir, external: EMBED_EXTERNAL });
  return dir;
}
const builds = [{ name: 'new', dir: await bundle(ROOT) }];
if (BASE) builds.unshift({ name: 'old', dir: await bundle(BASE) });

function child(apiDir, repo, phase, qfile) {
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', new URL(import.meta.url).pathname, '--child', apiDir, repo, phase, qfile ?? ''],
    { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env } },
  );
  if (r.status !== 0) throw new Error(`child ${phase} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

const root = KEEP ?? join(tmpdir(), `gm-bench-mem-${process.pid}`);
mkdirSync(root, { recursive: true });
const qfile = join(root, 'queries.txt');
writeFileSync(
  qfile,
  execFileSync(process.execPath, [SHARED_GEN, 'queries', '30'], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).q)
    .join('\n'),
);
const rows = [];
const loadAt = () => loadavg().map((x) => x.toFixed(1)).join(' / ');
const loadStart = loadAt();
try {
  for (const N of SIZES) {
    const repo = join(root, `repo${N}`);
    const env = { ...benchEnv(root), GIT_MEM_DAEMON: 'off' };
    if (!existsSync(join(repo, '.git', 'mem', 'imported'))) {
      log(`size ${N}: importing (once${KEEP ? `, kept in ${repo}` : ''})`);
      rmSync(repo, { recursive: true, force: true });
      writeFileSync(join(root, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.com\n');
      execFileSync('git', ['init', '-q', repo], { env });
      const memFile = join(root, `mem${N}.jsonl`);
      writeFileSync(memFile, execFileSync(process.execPath, [SHARED_GEN, 'memories', String(N)], { maxBuffer: 1 << 30 }));
      execFileSync(process.execPath, [BIN, 'import', '--jsonl', memFile], { cwd: repo, env, stdio: 'ignore' });
      execFileSync(process.execPath, [BIN, 'list', '--json'], { cwd: repo, env, stdio: 'ignore', maxBuffer: 1 << 30 });
      writeFileSync(join(repo, '.git', 'mem', 'imported'), `${N}\n`);
    }
    const res = Object.fromEntries(builds.map((b) => [b.name, { build: [], serve: [] }]));
    for (let run = 0; run < RUNS; run++) {
      for (const b of builds) {
        log(`size ${N}: run ${run + 1}/${RUNS}, ${b.name}: cold build`);
        res[b.name].build.push(child(b.dir, repo, 'build'));
        log(`size ${N}: run ${run + 1}/${RUNS}, ${b.name}: serve`);
        res[b.name].serve.push(child(b.dir, repo, 'serve', qfile));
      }
    }
    for (const b of builds) {
      const B = res[b.name].build;
      const S = res[b.name].serve;
      const m = (xs, k) => median(xs.map((x) => x[k]));
      rows.push({
        N,
        name: b.name,
        docs: B[0].docs,
        buildMs: m(B, 'ms'),
        buildCpuMs: m(B, 'cpuMs'),
        buildHwm: m(B, 'hwm'),
        buildRss: m(B, 'rss'),
        loadMs: m(S, 'loadMs'),
        rssLoaded: m(S, 'rssLoaded'),
        rssQueried: m(S, 'rssQueried'),
        serveHwm: m(S, 'hwm'),
        p50: m(S, 'p50'),
        snapMiB: m(B, 'snapMiB'),
      });
    }
  }
} finally {
  for (const b of builds) rmSync(b.dir, { recursive: true, force: true });
  if (!KEEP) rmSync(root, { recursive: true, force: true });
}

const out = [
  '## search memory',
  '',
  `Data: \`../shared/bench/gen.mjs\` memories, 30 two-word queries. ${RUNS} runs per build, ${BASE ? 'old and new alternating; ' : ''}medians; each figure from a fresh process (\`node --expose-gc\`, RSS read after two GCs). Cold build = \`openIndex(rebuild)\` in process, snapshot written (wall time, and the CPU time of the node process: git's own not included); serve = the daemon's open (snapshot + inverted index), then 3 × 30 queries (p50 of the last 60).`,
  '',
  '| memories | build | cold build | its CPU (node) | peak RSS during build | serve: load | RSS loaded | RSS after queries | peak RSS serving | query p50 | snapshot on disk |',
  '|---|---|---|---|---|---|---|---|---|---|---|',
];
for (const r of rows) {
  const old = rows.find((x) => x.N === r.N && x.name === 'old');
  const ratio = (k) => (old && r.name !== 'old' ? ` (×${(r[k] / old[k]).toFixed(2)})` : '');
  out.push(
    `| ${r.N} | ${r.name} | ${fmt(r.buildMs / 1000)} s${ratio('buildMs')} | ${fmt(r.buildCpuMs / 1000)} s${ratio('buildCpuMs')} | ${fmt(r.buildHwm)} MiB${ratio('buildHwm')} | ${fmt(r.loadMs)} ms | ${fmt(r.rssLoaded)} MiB${ratio('rssLoaded')} | ${fmt(r.rssQueried)} MiB${ratio('rssQueried')} | ${fmt(r.serveHwm)} MiB | ${fmt(r.p50)} ms${ratio('p50')} | ${fmt(r.snapMiB)} MiB |`,
  );
}
out.push('', `Load average (1 / 5 / 15 min) at the start: ${loadStart}; at the end: ${loadAt()}.`);
out.push('', 'Goals (issue 16 item 6): ≤ 800 MiB and a cold build ≤ 15 s at 100k; queries ≤ 5 ms at 10k, ≤ 50 ms at 100k in process.');
console.log(out.join('\n'));
