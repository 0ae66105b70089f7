#!/usr/bin/env node
// Store benchmark (issue: the memory store and the CLI). Sizes 1k, 10k, 100k
// of ../shared/bench/gen.mjs memories imported with `git mem import --jsonl`.
// Every CLI figure is a median over repeated one-shot processes, reported as
// overhead above a bare `node -e 0` measured in the same run; `git notes add`
// stands beside it as git's own floor for "write one small thing to a ref".
import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, SHARED_GEN, cmdMedian, fmt, hasSharedGen, median, scratchRepo, timeMs } from './lib.mjs';

const SIZES = (process.env.BENCH_SIZES ?? '1000,10000,100000').split(',').map(Number);
const N = Number(process.env.BENCH_RUNS ?? 11);
if (!hasSharedGen()) {
  console.log('## store\n\nskipped: ../shared/bench/gen.mjs not found');
  process.exit(0);
}

function peakRss(args, opts) {
  const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, BIN, ...args], { ...opts, encoding: 'utf8' });
  return Number(r.stderr.trim().split('\n').pop()) / 1024;
}

const rows = [];
const { dir: floorDir, repo: floorRepo, env: floorEnv } = scratchRepo();
execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'x'], { cwd: floorRepo, env: floorEnv });
// the floor runs with the very environment the CLI runs with: an inherited
// NODE_EXTRA_CA_CERTS alone adds ~50 ms to every node start on these machines
const nodeFloor = cmdMedian(process.execPath, ['-e', '0'], { env: floorEnv }, N);
const gitFloor = cmdMedian('git', ['rev-parse', 'HEAD'], { cwd: floorRepo, env: floorEnv }, N);
const notes = [];
for (let i = 0; i < N; i++) {
  execFileSync('git', ['commit', '-q', '--allow-empty', '-m', `c${i}`], { cwd: floorRepo, env: floorEnv });
  notes.push(timeMs(() => spawnSync('git', ['notes', 'add', '-m', `note ${i}`], { cwd: floorRepo, env: floorEnv })));
}
const notesFloor = median(notes);
rmSync(floorDir, { recursive: true, force: true });

for (const n of SIZES) {
  const { dir, repo, env } = scratchRepo();
  const opts = { cwd: repo, env };
  const jsonl = join(dir, 'mem.jsonl');
  writeFileSync(jsonl, execFileSync(process.execPath, [SHARED_GEN, 'memories', String(n)], { maxBuffer: 1 << 30 }));
  let importMs;
  let importRss;
  {
    const t = process.hrtime.bigint();
    const r = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, BIN, 'import', '--jsonl', jsonl], { ...opts, encoding: 'utf8' });
    importMs = Number(process.hrtime.bigint() - t) / 1e6;
    importRss = Number(r.stderr.trim().split('\n').pop()) / 1024;
    if (r.status !== 0) throw new Error(`import failed: ${r.stderr}`);
  }
  // warm the catalog cache once (the first read after an import parses every record)
  const warm = timeMs(() => spawnSync(process.execPath, [BIN, 'list', '--json'], { ...opts, stdio: 'ignore' }));
  const ids = JSON.parse(execFileSync(process.execPath, [BIN, 'list', '--json'], { ...opts, maxBuffer: 1 << 30 })).map((m) => m.id);
  // reads first: the first add may start the search daemon (duplicate check), whose
  // index load would otherwise share the CPU with the read measurements
  const showMs = [];
  for (let i = 0; i < N; i++) {
    const id = ids[(i * 7919) % ids.length].slice(0, 12);
    showMs.push(timeMs(() => spawnSync(process.execPath, [BIN, 'show', id], { ...opts, stdio: 'ignore' })));
  }
  const listMs = [];
  for (let i = 0; i < N; i++) listMs.push(timeMs(() => spawnSync(process.execPath, [BIN, 'list', '--json'], { ...opts, stdio: 'ignore', maxBuffer: 1 << 30 })));
  const addMs = [];
  for (let i = 0; i < N; i++) {
    // distinct words each time, so the duplicate check lets every add through
    const w = (k) => `w${(i * 7 + k) * 2654435761 % 1000003}`;
    addMs.push(timeMs(() => spawnSync(process.execPath, [BIN, 'add', '--title', `bench ${w(1)} ${w(2)}`, '--content', `${w(3)} ${w(4)} ${w(5)}`], { ...opts, stdio: 'ignore' })));
  }
  // the first adds of a fresh store build the search index, then start a daemon (not waited for)
  process.stderr.write(`store ${n}: add times (ms): ${addMs.map((x) => x.toFixed(0)).join(" ")}\n`);
  const after = JSON.parse(execFileSync(process.execPath, [BIN, 'stats', '--json'], { ...opts })).records;
  if (after !== n + N) throw new Error(`only ${after - n} of ${N} bench adds landed`);
  // first read after the adds updates the cache incrementally from the tree diff
  const incr = timeMs(() => spawnSync(process.execPath, [BIN, 'list', '--json'], { ...opts, stdio: 'ignore' }));
  rows.push({
    n,
    importMs,
    importRss,
    warm,
    incr,
    add: median(addMs),
    show: median(showMs),
    list: median(listMs),
    rssList: peakRss(['list', '--json'], { ...opts, stdio: ['ignore', 'ignore', 'pipe'] }),
    rssShow: peakRss(['show', ids[0]], { ...opts, stdio: ['ignore', 'ignore', 'pipe'] }),
  });
  rmSync(dir, { recursive: true, force: true });
  process.stderr.write(`store: ${n} done\n`);
}

const out = [];
out.push('## store');
out.push('');
out.push(`Floors in this run (median of ${N}): \`node -e 0\` ${fmt(nodeFloor)} ms; a git command (\`git rev-parse HEAD\`) ${fmt(gitFloor)} ms; \`git notes add\` ${fmt(notesFloor)} ms.`);
out.push('CLI figures are medians of one-shot processes; "+x" is the overhead above the `node -e 0` floor. Goals at 10k: add ≤ +60 ms, show and list --json ≤ +50 ms; import of 100k ≤ 30 s.');
out.push('');
out.push('| records | import (one commit) | import peak RSS | first list (cold cache) | list after 11 adds (incremental) | add p50 | show p50 | list --json p50 | peak RSS list / show |');
out.push('|---|---|---|---|---|---|---|---|---|');
for (const r of rows) {
  const o = (x) => `${fmt(x)} ms (+${fmt(x - nodeFloor)})`;
  out.push(`| ${r.n} | ${fmt(r.importMs / 1000)} s | ${fmt(r.importRss)} MiB | ${fmt(r.warm)} ms | ${fmt(r.incr)} ms | ${o(r.add)} | ${o(r.show)} | ${o(r.list)} | ${fmt(r.rssList)} / ${fmt(r.rssShow)} MiB |`);
}
console.log(out.join('\n'));
