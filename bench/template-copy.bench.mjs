// How the ops tier copies its template repository (test/support/template.ts):
// fs.cpSync of the directory, `cp -a`, or `git clone --local` plus a fetch of
// refs/memory (a clone leaves refs/memory behind). Medians of RUNS copies of a
// repository holding N memories. Run: node bench/template-copy.bench.mjs
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const N = Number(process.env.N ?? 20);
const RUNS = Number(process.env.RUNS ?? 15);
const BIN = resolve(import.meta.dirname, '..', 'bin', 'git-mem.js');
const root = mkdtempSync(join(tmpdir(), 'gm-bench-copy-'));
const home = join(root, 'home');
execFileSync('mkdir', ['-p', home]);
writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = B\n\temail = b@example.com\n');
const env = { ...process.env, HOME: home, GIT_CONFIG_GLOBAL: join(home, '.gitconfig'), GIT_CONFIG_NOSYSTEM: '1', CI: 'true' };
const tpl = join(root, 'tpl');
const run = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, env, stdio: 'pipe' });
run('git', ['init', '-q', tpl], root);
writeFileSync(join(tpl, 'README.md'), '# t\n');
run('git', ['add', '-A'], tpl);
run('git', ['commit', '-qm', 'init'], tpl);
for (let i = 0; i < N; i++) run(process.execPath, [BIN, 'add', '--title', `m${i}`, '--content', `body ${i}`], tpl);

const ways = {
  cpSync: (d) => cpSync(tpl, d, { recursive: true, verbatimSymlinks: true }),
  'cp -a': (d) => run('cp', ['-a', tpl, d], root),
  'git clone --local + fetch refs/memory': (d) => {
    run('git', ['clone', '-q', '--local', tpl, d], root);
    run('git', ['fetch', '-q', 'origin', 'refs/memory:refs/memory'], d);
  },
};
const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
let k = 0;
const times = Object.fromEntries(Object.keys(ways).map((w) => [w, []]));
for (let r = 0; r < RUNS; r++)
  for (const [w, f] of Object.entries(ways)) {
    const d = join(root, `c${k++}`);
    const t = process.hrtime.bigint();
    f(d);
    times[w].push(Number(process.hrtime.bigint() - t) / 1e6);
    run('git', ['rev-parse', '-q', '--verify', 'refs/memory'], d); // the copy holds the store
  }
console.log(`template of ${N} memories, ${RUNS} copies each, load ${(await import('node:os')).loadavg()[0].toFixed(1)}`);
for (const [w, xs] of Object.entries(times)) console.log(`${w.padEnd(40)} median ${median(xs).toFixed(1)} ms`);
rmSync(root, { recursive: true, force: true });
