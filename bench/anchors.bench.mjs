#!/usr/bin/env node
// Anchors benchmark: a generated repository of FILES files and COMMITS commits
// (fast-import), N anchored memories, 1 % of the anchored files changed in one
// commit (half shifted, half edited); then
//   * `git mem check --all --dry-run` (the CLI, a real process), cold (index build) and warm medians,
//     beside floors measured in the same run: `git mem --version` and `git ls-tree -r HEAD`;
//   * the post-commit hook: a commit touching 10 anchored files, with and without the hook, and with
//     a query daemon running in a copy of the repository (the hook sends its work to it), interleaved.
// Sizes: BENCH_ANCHORS=10000,100000 BENCH_FILES=20000 BENCH_COMMITS=5000 (env) — defaults as in the issue.
// BENCH_HOOK_BASE=<another git-mem checkout, built> also times that build's hook and its warm check, interleaved (before/after).
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadHarness } from '../eval/anchors/load-harness.mjs';
import { BIN, fmt, median, scratchRepo, timeMs } from './lib.mjs';

const FILES = Number(process.env.BENCH_FILES ?? 20000);
const COMMITS = Number(process.env.BENCH_COMMITS ?? 5000);
const SIZES = (process.env.BENCH_ANCHORS ?? '10000,100000').split(',').map(Number);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const HOOK_RUNS = Number(process.env.BENCH_HOOK_RUNS ?? 9);
const HOOK_BASE = process.env.BENCH_HOOK_BASE;

const H = await loadHarness();

let seed = 12345;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed / 0x7fffffff;
};
const int = (n) => Math.floor(rnd() * n);
const fileText = (i, v) => {
  const lines = [`// file ${i} v${v}`, `import { dep${i % 97} } from './dep';`, ''];
  for (let f = 0; f < 5; f++) {
    lines.push(`export function f${i}_${f}(a: number) {`);
    for (let k = 0; k < 5; k++) lines.push(`  const v${k} = dep${i % 97}(a, ${i * 31 + f * 7 + k});`);
    lines.push(`  return v0 + v4 + ${f};`, '}', '');
  }
  return `${lines.join('\n')}\n`;
};
const pathOf = (i) => `src/m${String(i % 200).padStart(3, '0')}/f${i}.ts`;

function makeRepo() {
  const t0 = Date.now();
  const s = scratchRepo('gm-bench-anchors-');
  const chunks = [];
  const now = 1700000000;
  const commit = (n, files) => {
    const msg = `commit ${n}`;
    chunks.push(`commit refs/heads/main\ncommitter Bench <bench@example.com> ${now + n} +0000\ndata ${msg.length}\n${msg}\n`);
    for (const [p, text] of files) chunks.push(`M 100644 inline ${p}\ndata ${Buffer.byteLength(text)}\n${text}\n`);
  };
  const version = new Map();
  commit(1, Array.from({ length: FILES }, (_, i) => [pathOf(i), fileText(i, 0)]));
  for (let n = 2; n <= COMMITS; n++) {
    const files = [];
    for (let k = 0; k < 1 + int(3); k++) {
      const i = int(FILES);
      const v = (version.get(i) ?? 0) + 1;
      version.set(i, v);
      files.push([pathOf(i), fileText(i, v)]);
    }
    commit(n, files);
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: s.repo, env: s.env, input: chunks.join(''), maxBuffer: 1 << 30 });
  execFileSync('git', ['reset', '-q', '--hard', 'main'], { cwd: s.repo, env: s.env });
  execFileSync('git', ['gc', '-q'], { cwd: s.repo, env: s.env });
  return { ...s, version, ms: Date.now() - t0 };
}

/** CPU time (user + sys, ms) of a command and everything it waited for (bash's `times` of its children). */
function cpuMs(s, cmd, args) {
  const out = execFileSync('bash', ['-c', '"$@" >/dev/null 2>&1; times', 'bash', cmd, ...args], { cwd: s.repo, env: s.env, encoding: 'utf8' });
  const m = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s\s*$/.exec(out.trim());
  return m ? (Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])) * 1000 : Number.NaN;
}
const git = (s, ...a) => execFileSync('git', a, { cwd: s.repo, env: s.env, encoding: 'utf8', maxBuffer: 1 << 28 });
const mem = (s, ...a) => spawnSync(process.execPath, [BIN, ...a], { cwd: s.repo, env: s.env, encoding: 'utf8', maxBuffer: 1 << 28 });

/** Anchors: memory j anchors one function (8 lines) of a file; up to 5 anchors per file, spread over the files. */
function specs(n) {
  const perFile = Math.min(5, Math.max(1, Math.ceil(n / FILES)));
  const items = [];
  const filesUsed = Math.ceil(n / perFile);
  const stride = Math.max(1, Math.floor(FILES / filesUsed));
  for (let j = 0; j < n; j++) {
    const file = (Math.floor(j / perFile) * stride) % FILES;
    const f = j % perFile;
    const start = 4 + f * 9;
    items.push({ title: `memory ${j}`, anchors: [`${pathOf(file)}:${start}-${start + 7}`], file });
  }
  return items;
}

/** Changes 1 % of the anchored files in one commit: half get two lines inserted on top (moved), half an edit in the first function (changed). */
function changeOnePercent(s, files, tag) {
  const list = [...files];
  const k = Math.max(1, Math.round(list.length / 100));
  for (let x = 0; x < k; x++) {
    const i = list[int(list.length)];
    const p = join(s.repo, pathOf(i));
    let text = readFileSync(p, 'utf8');
    if (x % 2) text = text.replace(`${i * 31 + 0 + 0});`, `${i * 31 + 0 + 0} + 1); // ${tag}`);
    else text = `// ${tag} a\n// ${tag} b\n${text}`;
    writeFileSync(p, text);
  }
  git(s, 'commit', '-q', '-am', `change 1% (${tag})`);
  return k;
}

// ---------------------------------------------------------------- post-commit hook
const hookLines = [];
const baseLines = [];
let v = 0;
function measureHook(total, anchoredFiles) {
  const hookTimes = [];
  const plainTimes = [];
  const baseTimes = [];
  const daemonTimes = [];
  const touch = [...anchoredFiles].slice(0, 10);
  const commit10 = (repo = r) => {
    v++;
    for (const i of touch) {
      const p = join(repo.repo, pathOf(i));
      writeFileSync(p, `// hook bench ${v}\n${readFileSync(p, 'utf8')}`);
    }
    git(repo, 'add', '-A');
    const t = process.hrtime.bigint();
    const cpu = cpuMs(repo, 'git', ['commit', '-q', '-m', `hook bench ${v}`]);
    return { wall: Number(process.hrtime.bigint() - t) / 1e6, cpu };
  };
  // BENCH_HOOK_BASE=<another git-mem checkout, built>: its hook, in a copy of this repository, interleaved too
  let base;
  if (HOOK_BASE) {
    base = { ...r, repo: `${r.repo}-base`, env: { ...r.env, GIT_MEM_CMD: hookCmd(join(HOOK_BASE, 'bin', 'git-mem.js')) } };
    rmSync(base.repo, { recursive: true, force: true });
    cpSync(r.repo, base.repo, { recursive: true });
    spawnSync(process.execPath, [join(HOOK_BASE, 'bin', 'git-mem.js'), 'hooks', 'install'], { cwd: base.repo, env: base.env });
    commit10(base); // its first run (caches)
  }
  // this build with a query daemon running in a copy of its own: the hook sends its work to it
  const dm = { ...r, repo: `${r.repo}-daemon` };
  rmSync(dm.repo, { recursive: true, force: true });
  cpSync(r.repo, dm.repo, { recursive: true });
  mem(dm, 'hooks', 'install');
  mem(dm, 'daemon', 'start');
  commit10(dm); // its first run (the daemon's first write)
  const before = git(r, 'notes', '--ref=memory', 'list').trim().split('\n').filter(Boolean).length;
  for (let i = 0; i < HOOK_RUNS; i++) {
    mem(r, 'hooks', 'uninstall');
    plainTimes.push(commit10());
    mem(r, 'hooks', 'install');
    hookTimes.push(commit10());
    daemonTimes.push(commit10(dm));
    if (base) baseTimes.push(commit10(base));
  }
  mem(r, 'hooks', 'uninstall');
  mem(dm, 'daemon', 'stop');
  rmSync(dm.repo, { recursive: true, force: true, maxRetries: 5 });
  if (base) {
    // an older build's hook started a daemon of its own in the copy (this build's hooks never
    // do): stopped before the copy goes, or it writes into it while it is removed
    spawnSync(process.execPath, [join(HOOK_BASE, 'bin', 'git-mem.js'), 'daemon', 'stop'], { cwd: base.repo, env: base.env });
    rmSync(base.repo, { recursive: true, force: true, maxRetries: 5 });
  }
  const notes = git(r, 'notes', '--ref=memory', 'list').trim().split('\n').filter(Boolean).length - before;
  const ph = median(hookTimes.map((x) => x.wall));
  const pp = median(plainTimes.map((x) => x.wall));
  const ch = median(hookTimes.map((x) => x.cpu));
  const cp = median(plainTimes.map((x) => x.cpu));
  hookLines.push(`| ${total} | wall | ${fmt(pp)} ms | ${fmt(ph)} ms | **${fmt(ph - pp)} ms** | ${(ph / pp).toFixed(1)}× | ${fmt(ph - pp - nodeFloor)} ms | ${notes} |`);
  hookLines.push(`| ${total} | CPU | ${fmt(cp)} ms | ${fmt(ch)} ms | **${fmt(ch - cp)} ms** | ${(ch / cp).toFixed(1)}× | ${fmt(ch - cp - nodeCpu)} ms | |`);
  const dh = median(daemonTimes.map((x) => x.wall));
  const dc = median(daemonTimes.map((x) => x.cpu));
  hookLines.push(`| ${total} | wall, a daemon running | ${fmt(pp)} ms | ${fmt(dh)} ms | **${fmt(dh - pp)} ms** | ${(dh / pp).toFixed(1)}× | ${fmt(dh - pp - nodeFloor)} ms | |`);
  hookLines.push(`| ${total} | CPU, a daemon running (the hook's process; the daemon's work not counted) | ${fmt(cp)} ms | ${fmt(dc)} ms | **${fmt(dc - cp)} ms** | ${(dc / cp).toFixed(1)}× | ${fmt(dc - cp - nodeCpu)} ms | |`);
  if (base) {
    const bh = median(baseTimes.map((x) => x.wall));
    const bc = median(baseTimes.map((x) => x.cpu));
    baseLines.push(`| ${total} | ${fmt(bh - pp)} ms wall, ${fmt(bc - cp)} ms CPU | ${fmt(ph - pp)} ms wall, ${fmt(ch - cp)} ms CPU | ×${((ph - pp) / (bh - pp)).toFixed(2)} wall, ×${((ch - cp) / (bc - cp)).toFixed(2)} CPU |`);
    baseLines.push(`| ${total}, this build's daemon running | ${fmt(bh - pp)} ms wall | ${fmt(dh - pp)} ms wall | ×${((dh - pp) / (bh - pp)).toFixed(2)} wall |`);
  }
}

const lines = ['## anchors', ''];
const checkBaseLines = [];
const r = makeRepo();
// the installed hook runs the git-mem on PATH, or GIT_MEM_CMD: this build (without it the hook
// only says git-mem is not installed, and the figure would time that)
const hookCmd = (bin) => `"${process.execPath}" "${bin}"`;
r.env = { ...r.env, GIT_MEM_CMD: hookCmd(BIN) };
lines.push(`Repository: ${FILES} files (${(FILES * 48) / 1000}k lines of TypeScript), ${COMMITS} commits, made with git fast-import in ${(r.ms / 1000).toFixed(1)} s. CLI runs are real processes (\`node bin/git-mem.js\`), medians of ${RUNS}.`, '');
const verFloor = median(Array.from({ length: RUNS }, () => timeMs(() => mem(r, '--version'))));
const verCpu = median(Array.from({ length: RUNS }, () => cpuMs(r, process.execPath, [BIN, '--version'])));
// the floor of any hook written in Node: node on an empty file, same environment
const emptyJs = join(r.dir, 'empty.cjs');
writeFileSync(emptyJs, '');
const nodeFloor = median(Array.from({ length: RUNS * 2 }, () => timeMs(() => spawnSync(process.execPath, [emptyJs], { cwd: r.repo, env: r.env }))));
const nodeCpu = median(Array.from({ length: RUNS * 2 }, () => cpuMs(r, process.execPath, [emptyJs])));
const lsFloor = median(Array.from({ length: RUNS }, () => timeMs(() => git(r, 'ls-tree', '-r', 'HEAD'))));
lines.push(`Floors: \`git mem --version\` ${fmt(verFloor)} ms wall, ${fmt(verCpu)} ms CPU (node start + bundle); node on an empty file ${fmt(nodeFloor)} ms wall, ${fmt(nodeCpu)} ms CPU; \`git ls-tree -r HEAD\` (${FILES} entries) ${fmt(lsFloor)} ms. CPU = user + sys of the process and the git processes it waited for (bash \`times\`): less sensitive than wall time to the other work on this shared machine.`, '');
lines.push('| anchors | memories | changed files | set-up | cold check (index build) | warm `check --all --dry-run` wall | ratio to `--version` | warm CPU | CPU ratio to `--version` | verdicts | recorded check | first check after a further 1 % change |', '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|');
mem(r, 'init');
let total = 0;
const anchoredFiles = new Set();
for (const n of SIZES) {
  const add = n - total;
  const items = specs(n).slice(total);
  const store = await H.openStore(r.repo, r.env);
  const tSet = Date.now();
  // memories are added in chunks of 5000 (one memory commit each)
  for (let i = 0; i < items.length; i += 5000) await H.bulkAnchored(store, items.slice(i, i + 5000));
  store.close();
  for (const it of items) anchoredFiles.add(it.file);
  total = n;
  const setup = Date.now() - tSet;
  const changed = changeOnePercent(r, anchoredFiles, `n${n}`);
  const cold = timeMs(() => mem(r, 'check', '--all', '--dry-run', '--json'));
  const warm = [];
  const warmBase = [];
  const cpuBase = [];
  const baseBin = HOOK_BASE ? join(HOOK_BASE, 'bin', 'git-mem.js') : undefined;
  // the other build checks a copy of the repository: the two builds' caches under .git/mem
  // differ, and in one repository each run would rebuild what the other's run wrote
  const baseRepo = `${r.repo}-check-base`;
  const baseCheck = () =>
    spawnSync(process.execPath, [baseBin, 'check', '--all', '--dry-run', '--json'], { cwd: baseRepo, env: r.env });
  if (baseBin) {
    rmSync(baseRepo, { recursive: true, force: true });
    cpSync(r.repo, baseRepo, { recursive: true });
    baseCheck(); // its caches, as this build's were made by the cold run
  }
  let counts = {};
  for (let i = 0; i < RUNS; i++) {
    let out;
    warm.push(timeMs(() => (out = mem(r, 'check', '--all', '--dry-run', '--json'))));
    counts = JSON.parse(out.stdout).counts;
    // the other build's check of the same repository, interleaved run by run
    if (baseBin) warmBase.push(timeMs(baseCheck));
  }
  const cpu = median(
    Array.from({ length: RUNS }, () => {
      if (baseBin) cpuBase.push(cpuMs({ ...r, repo: baseRepo }, process.execPath, [baseBin, 'check', '--all', '--dry-run', '--json']));
      return cpuMs(r, process.execPath, [BIN, 'check', '--all', '--dry-run', '--json']);
    }),
  );
  if (baseBin) {
    spawnSync(process.execPath, [baseBin, 'daemon', 'stop'], { cwd: baseRepo, env: r.env });
    rmSync(baseRepo, { recursive: true, force: true, maxRetries: 5 });
  }
  if (baseBin)
    checkBaseLines.push(`| ${n} | ${fmt(median(warmBase))} ms wall, ${fmt(median(cpuBase))} ms CPU | ${fmt(median(warm))} ms wall, ${fmt(cpu)} ms CPU | ×${(median(warm) / median(warmBase)).toFixed(2)} wall, ×${(cpu / median(cpuBase)).toFixed(2)} CPU |`);
  const recorded = timeMs(() => mem(r, 'check', '--all'));
  // a further 1 % change, checked once: the index is warm, the changed records are parsed for the first time
  changeOnePercent(r, anchoredFiles, `n${n}b`);
  const t1 = process.hrtime.bigint();
  const firstCpu = cpuMs(r, process.execPath, [BIN, 'check', '--all', '--dry-run', '--json']);
  const first = Number(process.hrtime.bigint() - t1) / 1e6;
  const verdicts = Object.entries(counts)
    .filter(([, v]) => v)
    .map(([k, v]) => `${v} ${k}`)
    .join(', ');
  lines.push(`| ${n} | ${n} | ${changed} | ${(setup / 1000).toFixed(1)} s | ${fmt(cold)} ms | **${fmt(median(warm))} ms** | ${(median(warm) / verFloor).toFixed(1)}× | ${fmt(cpu)} ms | ${(cpu / verCpu).toFixed(1)}× | ${verdicts} | ${fmt(recorded)} ms | ${fmt(first)} ms (${fmt(firstCpu)} ms CPU) |`);
  void add;
  measureHook(n, anchoredFiles);
}
if (checkBaseLines.length) {
  lines.push('', `Warm \`check --all --dry-run\` against another build (BENCH_HOOK_BASE=${HOOK_BASE}), in a copy of the same repository, run by run interleaved (medians of ${RUNS}):`, '');
  lines.push('| anchors | that build | this build | this / that |', '|---:|---:|---:|---:|', ...checkBaseLines);
}
lines.push('', 'Goals: 10k anchors < 1 s, 100k anchors < 5 s. The cold run parses every record once to build the anchor index under .git/mem/cache/. The warm runs repeat the same check (the records of the changed files come from the JSON record cache after the first run); the last column is the first check of a new change with a warm index, where those records are parsed from YAML once — the case a developer meets after a commit.', '');

lines.push(`Post-commit hook: a commit touching 10 anchored files (each such commit moves 10 anchors: a memory commit and a note), ${HOOK_RUNS} commits with and ${HOOK_RUNS} without the hook, interleaved:`, '');
lines.push('| anchored memories | | commit without hook (p50) | with hook (p50) | added (p50) | ratio | added beyond node start | notes |', '|---:|---|---:|---:|---:|---:|---:|---:|');
lines.push(...hookLines);
if (baseLines.length) {
  lines.push('', `Against the hook of another build (BENCH_HOOK_BASE=${HOOK_BASE}), in a copy of the same repository, the same ${HOOK_RUNS} commits interleaved (added p50 over the same commits without hook):`, '');
  lines.push('| anchored memories | that build | this build | this / that |', '|---:|---:|---:|---:|', ...baseLines);
}
lines.push('', `Goal: added p50 < 100 ms with 10k anchored memories. Starting node on an empty file costs ${fmt(nodeFloor)} ms wall / ${fmt(nodeCpu)} ms CPU here (the floor of a hook written in Node; \`git mem --version\`, which loads the CLI, ${fmt(verFloor)} ms): the column before last is the hook's own work. The installed hook runs \`git-mem hook post-commit\`: a running query daemon of the work tree runs its work on its warm store, else the CLI runs it; GIT_MEM_TRACE=1 prints where its time goes.`);
// a daemon of an older build the hooks started (they no longer do): none outlives the bench
mem(r, 'daemon', 'stop');
if (process.env.BENCH_KEEP) process.stderr.write(`kept ${r.repo}\n`);
else rmSync(r.dir, { recursive: true, force: true });
process.stdout.write(`${lines.join('\n')}\n`);
