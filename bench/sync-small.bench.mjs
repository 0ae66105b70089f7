#!/usr/bin/env node
// The syncs people wait for: the pre-push hook (`git mem hook pre-push` runs a sync before every
// `git push`) and a `git mem sync` after a teammate's few changes. Two clones of a local bare
// remote share 20 records; each round a teammate (B) adds one and syncs, then A adds one and
// times four syncs, one of each kind:
//   merged       both sides changed (fetch, merge commit, push)
//   up to date   nothing to do (the fixed cost)
//   ahead        only A changed (push only)
//   fast-forward only the remote changed (B pulls A's merge)
// Beside them, in the same rounds: `node -e 0` and a plain `git fetch` of the same refs (the floor),
// and the git processes each sync starts (GIT_TRACE, the children of fetch and push included).
//
//   node bench/sync-small.bench.mjs                       this build
//   BUILDS="old=/path/to/old/bin/git-mem.js,new=bin/git-mem.js" node bench/sync-small.bench.mjs
//                                                         several builds, interleaved round by round
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BIN, benchEnv, fmt, median } from './lib.mjs';

const ROUNDS = Number(process.env.SYNC_SMALL_ROUNDS ?? 9);
const builds = (process.env.BUILDS ?? `this=${BIN}`).split(',').map((b) => {
  const [name, bin] = b.split('=');
  return { name, bin: resolve(bin) };
});
const KINDS = ['merged', 'up to date', 'ahead', 'fast-forward'];

const log = (s) => process.stderr.write(`sync-small bench: ${s}\n`);
const time = (fn) => {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};

/** Two clones of a bare remote, sharing 20 records, for one build. */
function setup(b) {
  const work = mkdtempSync(join(tmpdir(), 'gm-bench-sync-small-'));
  const env = benchEnv(work);
  writeFileSync(join(work, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n');
  const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8' });
  const mem = (cwd, args, extra = {}) => {
    const r = spawnSync(process.execPath, [b.bin, ...args], { cwd, env: { ...env, ...extra }, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${b.name}: git mem ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const remote = join(work, 'remote.git');
  git(work, 'init', '-q', '--bare', remote);
  const A = join(work, 'a');
  const B = join(work, 'b');
  for (const d of [A, B]) {
    git(work, 'init', '-q', d);
    git(d, 'commit', '-q', '--allow-empty', '-m', 'init');
    git(d, 'remote', 'add', 'origin', remote);
  }
  for (let i = 0; i < 20; i++) mem(A, ['add', '--title', `seed ${i}`, '-c', `body of seed ${i}`]);
  mem(A, ['sync']);
  mem(B, ['sync']);
  return { ...b, work, env, git, mem, A, B, ms: Object.fromEntries(KINDS.map((k) => [k, []])), procs: {}, floor: [], node: [] };
}

/** One round: the four kinds of sync, timed; the git processes counted in the first round. */
function round(s, r) {
  const trace = join(s.work, 'trace');
  const sync = (dir, kind) => {
    const count = r === 0;
    if (count) rmSync(trace, { force: true });
    s.ms[kind].push(time(() => s.mem(dir, ['sync'], count ? { GIT_TRACE: trace } : {})));
    if (count) s.procs[kind] = (readFileSync(trace, 'utf8').match(/trace: built-in: /g) ?? []).length;
  };
  s.mem(s.B, ['add', '--title', `b ${r}`, '-c', `B's change ${r}`]);
  s.mem(s.B, ['sync']);
  s.mem(s.A, ['add', '--title', `a ${r}`, '-c', `A's change ${r}`]);
  sync(s.A, 'merged');
  sync(s.A, 'up to date');
  s.mem(s.A, ['add', '--title', `a2 ${r}`, '-c', `A's second change ${r}`]);
  sync(s.A, 'ahead');
  sync(s.B, 'fast-forward');
  s.node.push(time(() => execFileSync(process.execPath, ['-e', '0'])));
  s.floor.push(time(() => s.git(s.A, 'fetch', '-q', 'origin', '+refs/mem/*:refs/floor/*', '+refs/notes/memory*:refs/floor-notes/memory*')));
}

const runs = builds.map((b) => {
  log(`setting up ${b.name} (${b.bin})`);
  return setup(b);
});
const loadStart = loadavg()[0];
for (let r = 0; r < ROUNDS; r++) {
  log(`round ${r + 1}/${ROUNDS}`);
  for (const s of r % 2 ? [...runs].reverse() : runs) round(s, r);
}
for (const s of runs) rmSync(s.work, { recursive: true, force: true });

const head = ['| sync, median ms (git processes) |', ...runs.map((s) => ` ${s.name} |`)].join('');
const out = [
  '## small syncs (a pre-push hook, a teammate\'s few changes)',
  '',
  `20 records shared by two clones of a local bare remote; one new record on each side per round; median of ${ROUNDS} rounds${runs.length > 1 ? ', the builds interleaved round by round' : ''}; load average ${loadStart.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end.`,
  '',
  head,
  `|---|${runs.map(() => '---:|').join('')}`,
  ...KINDS.map((k) => `| ${k} |${runs.map((s) => ` ${fmt(median(s.ms[k]))} (${s.procs[k]}) |`).join('')}`),
  `| floor: \`git fetch\` of the same refs, up to date |${runs.map((s) => ` ${fmt(median(s.floor))} |`).join('')}`,
  `| floor: \`node -e 0\` |${runs.map((s) => ` ${fmt(median(s.node))} |`).join('')}`,
];
process.stdout.write(`${out.join('\n')}\n`);
