// One-shot CLI overhead, two builds side by side: `node bench/cli-compare.mjs OLD_ROOT [N] [RUNS]`
// times `show`, `list --json` and `add` of the build in OLD_ROOT (a checkout with dist/ built)
// and of this one, alternating runs, each build on its own copy of the same store of N
// memories (default 1000). Prints medians of RUNS (default 11) and the overhead above `node -e 0`.
import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, fmt, median, ROOT, SHARED_GEN, scratchRepo, timeMs } from './lib.mjs';

const OLD = process.argv[2];
if (!OLD) throw new Error('usage: node bench/cli-compare.mjs OLD_ROOT [N] [RUNS]');
const N = Number(process.argv[3] ?? 1000);
const RUNS = Number(process.argv[4] ?? 11);
const builds = [
  { name: 'old', bin: join(OLD, 'bin', 'git-mem.js') },
  { name: 'new', bin: BIN },
];
const gen = execFileSync(process.execPath, [SHARED_GEN, 'memories', String(N)], { maxBuffer: 1 << 30 });
const dirs = [];
for (const b of builds) {
  const { dir, repo, env } = scratchRepo();
  dirs.push(dir);
  delete env.NODE_EXTRA_CA_CERTS;
  env.GIT_MEM_DAEMON = 'off'; // no background daemon sharing the CPU with the runs
  const jsonl = join(dir, 'mem.jsonl');
  writeFileSync(jsonl, gen);
  execFileSync(process.execPath, [b.bin, 'import', '--jsonl', jsonl], { cwd: repo, env, stdio: 'ignore' });
  const ids = JSON.parse(execFileSync(process.execPath, [b.bin, 'list', '--json'], { cwd: repo, env, maxBuffer: 1 << 30 })).map((m) => m.id);
  Object.assign(b, { opts: { cwd: repo, env, stdio: 'ignore', maxBuffer: 1 << 30 }, ids, t: { show: [], list: [], add: [] } });
}
const floor = [];
const run = (b, args) => timeMs(() => spawnSync(process.execPath, [b.bin, ...args], b.opts));
// reads first (an add moves the tip, and the next read refreshes the catalog cache), then adds
for (let i = 0; i < RUNS; i++) {
  floor.push(timeMs(() => spawnSync(process.execPath, ['-e', '0'], builds[0].opts)));
  for (const b of i % 2 ? [...builds].reverse() : builds) {
    b.t.show.push(run(b, ['show', b.ids[(i * 7919) % b.ids.length].slice(0, 12)]));
    b.t.list.push(run(b, ['list', '--json']));
  }
}
for (let i = 0; i < RUNS; i++) {
  floor.push(timeMs(() => spawnSync(process.execPath, ['-e', '0'], builds[0].opts)));
  for (const b of i % 2 ? [...builds].reverse() : builds) {
    const w = (k) => `w${((i * 7 + k) * 2654435761) % 1000003}`;
    b.t.add.push(run(b, ['add', '--title', `bench ${w(1)} ${w(2)}`, '--content', `${w(3)} ${w(4)} ${w(5)}`]));
  }
}
const f = median(floor);
console.log(`${N} memories, medians of ${RUNS}; node -e 0: ${fmt(f)} ms (${ROOT} vs ${OLD})`);
console.log('| command | old | new |');
console.log('|---|---|---|');
for (const k of ['show', 'list', 'add']) {
  const cell = (b) => `${fmt(median(b.t[k]))} ms (+${fmt(median(b.t[k]) - f)})`;
  console.log(`| ${k === 'list' ? 'list --json' : k} | ${cell(builds[0])} | ${cell(builds[1])} |`);
}
for (const d of dirs) rmSync(d, { recursive: true, force: true });
