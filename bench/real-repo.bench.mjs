#!/usr/bin/env node
// Anchors in a real repository's history (issue #13, speed): `node bench/real-repo.bench.mjs [REPO]`.
// REPO is a local clone of a public project (default: $BENCH_REPO, else vuejs/core where the tool
// library's mirror keeps it). The bench clones it (shared objects) at the commit COMMITS first-parent
// commits before its HEAD, then
//   * `git mem add --anchor` of ANCHORS memories, each on 4-16 lines of a source file (files and
//     ranges from a fixed seed), one CLI process each: median and p90 per add, beside `node -e 0`
//     timed between them;
//   * moves the checkout to HEAD (COMMITS commits later) and times `git mem check` of all of them:
//     the first (it records), then RUNS `check --dry-run` (the same judging, nothing written).
// Env: BENCH_ANCHORS (250), BENCH_COMMITS (200), BENCH_RUNS (5), BENCH_BIN (another build's bin/git-mem.js
// to time instead of this one). Skips with a message when no repository is there: tests never need it.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, benchEnv, fmt, median, pct, timeMs } from './lib.mjs';

const SRC = process.argv[2] ?? process.env.BENCH_REPO ?? '/work/.mirror/vuejs+core/repo';
const ANCHORS = Number(process.env.BENCH_ANCHORS ?? 250);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 200);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const bin = process.env.BENCH_BIN ?? BIN;
if (!existsSync(SRC)) {
  console.log(`real-repo bench skipped: no repository at ${SRC} (pass one, or set BENCH_REPO)`);
  process.exit(0);
}

const dir = execFileSync('mktemp', ['-d', '/tmp/gm-bench-real-XXXXXX'], { encoding: 'utf8' }).trim();
const env = { ...benchEnv(dir), GIT_MEM_TEST_POST_COMMIT_BUDGET_MS: '0' };
const repo = join(dir, 'repo');
const git = (...a) => execFileSync('git', a, { cwd: repo, env, encoding: 'utf8', maxBuffer: 1 << 28 }).trim();
execFileSync('git', ['clone', '-q', '--shared', '--no-checkout', SRC, repo], { env });
const head = git('rev-parse', 'HEAD');
const base = git('rev-list', '--first-parent', `--skip=${COMMITS}`, '-1', head);
git('checkout', '-q', '--detach', base);
const files = git('ls-files', '*.ts', '*.js', '*.py', '*.go', '*.rs')
  .split('\n')
  .filter((f) => f && !/\.d\.ts$|__tests__|\.spec\.|test/.test(f));

let seed = 20261125;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const mem = (args) => spawnSync(process.execPath, [bin, ...args], { cwd: repo, env, encoding: 'utf8' });
if (mem(['init']).status !== 0) throw new Error('git mem init failed');

const addMs = [];
const floorMs = [];
// what one process costs here: add starts seven git processes besides node (see RESULTS-real-repo.md)
const gitFloorMs = [];
let made = 0;
for (let tries = 0; made < ANCHORS && tries < ANCHORS * 5; tries++) {
  const f = files[Math.floor(rnd() * files.length)];
  const n = git('show', `HEAD:${f}`).split('\n').length;
  if (n < 30) continue;
  const len = 4 + Math.floor(rnd() * 13);
  const start = 1 + Math.floor(rnd() * (n - len - 1));
  const args = ['add', '--title', `bench anchor ${made} in ${f}`, '--content', `about ${f} lines ${start}+${len} (${made})`];
  args.push('--anchor', `${f}:${start}-${start + len - 1}`, '--force');
  floorMs.push(timeMs(() => spawnSync(process.execPath, ['-e', '0'], { env })));
  gitFloorMs.push(timeMs(() => spawnSync('git', ['--version'], { env })));
  let r;
  addMs.push(timeMs(() => (r = mem(args))));
  if (r.status !== 0) throw new Error(`add failed: ${r.stderr}`);
  made++;
}

git('checkout', '-q', '--detach', head);
let first;
const firstMs = timeMs(() => (first = mem(['check', '--json'])));
if (first.status !== 0 && first.status !== 1) throw new Error(`check failed: ${first.stderr}`);
const counts = JSON.parse(first.stdout).counts;
const checkMs = [];
for (let i = 0; i < RUNS; i++) checkMs.push(timeMs(() => mem(['check', '--dry-run', '--json'])));

const name = SRC.replace(/\/repo$/, '').split('/').pop();
console.log(`## anchors in a real history: ${name}, ${files.length} source files, ${COMMITS} commits apart`);
console.log('');
console.log('| step | median | p90 | goal |');
console.log('|---|---|---|---|');
console.log(`| node -e 0 (floor) | ${fmt(median(floorMs))} ms | ${fmt(pct(floorMs, 90))} ms | |`);
console.log(`| git --version (one process) | ${fmt(median(gitFloorMs))} ms | ${fmt(pct(gitFloorMs, 90))} ms | |`);
console.log(`| add --anchor (one process each, ${made} adds) | ${fmt(median(addMs))} ms | ${fmt(pct(addMs, 90))} ms | ≤ 150 ms |`);
console.log(`| check of ${made} anchors ${COMMITS} commits later, first (records) | ${fmt(firstMs)} ms | | ≤ 1000 ms |`);
console.log(`| check --dry-run, again (${RUNS} runs) | ${fmt(median(checkMs))} ms | ${fmt(pct(checkMs, 90))} ms | |`);
console.log('');
console.log(`verdicts: ${JSON.stringify(counts)}`);
rmSync(dir, { recursive: true, force: true });
