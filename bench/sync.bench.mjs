#!/usr/bin/env node
// `git mem sync` on two stores of N records (default 10k) diverged by 1,000
// changes each, 20 % of them touching the same records (half on different
// fields, half appending to the same body: real conflicts that go to attics),
// against a local bare remote. Beside it, in the same run: the merge alone
// (in-process, from an esbuild bundle of src/merge/merge-commits.ts) and the
// floor, `git fetch` + `git push` of the same refs. Every timed run starts
// from fresh copies of the two repositories, so every fetch and push moves the
// real objects.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, SHARED_GEN, benchEnv, fmt, hasSharedGen, median } from './lib.mjs';

const N = Number(process.env.SYNC_BENCH_N ?? 10_000);
const CHANGES = Number(process.env.SYNC_BENCH_CHANGES ?? 1_000);
const OVERLAP = Math.round(CHANGES * 0.2);
const RUNS = Number(process.env.SYNC_BENCH_RUNS ?? 5);

const work = mkdtempSync(join(tmpdir(), 'gm-bench-sync-'));
const env = benchEnv(work);
writeFileSync(join(work, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n[gc]\n\tauto = 0\n');
const git = (cwd, ...args) => execFileSync('git', args, { cwd, env, encoding: 'utf8', maxBuffer: 1 << 30 });
const mem = (cwd, args, input) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd, env, input, encoding: 'utf8', maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`git mem ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const log = (s) => process.stderr.write(`sync bench: ${s}\n`);
const time = (fn) => {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
};

// ------------------------------------------------------------------ data
let lines;
if (hasSharedGen()) {
  lines = execFileSync(process.execPath, [SHARED_GEN, 'memories', String(N)], { encoding: 'utf8', maxBuffer: 1 << 30 })
    .split('\n')
    .filter(Boolean);
} else {
  lines = Array.from({ length: N }, (_, i) =>
    JSON.stringify({ id: `mem-${i}`, title: `memory ${i}`, body: `body of memory ${i}\n\nsecond paragraph ${i}\n`, tags: ['t'], type: 'decision' }),
  );
}
const remote = join(work, 'remote.git');
const A = join(work, 'a');
const B = join(work, 'b');
git(work, 'init', '-q', '--bare', remote);
for (const d of [A, B]) {
  git(work, 'init', '-q', d);
  git(d, 'commit', '-q', '--allow-empty', '-m', 'init');
  git(d, 'remote', 'add', 'origin', remote);
}
log(`importing ${N} records`);
mem(A, ['import', '--jsonl', '-'], `${lines.join('\n')}\n`);
mem(A, ['sync']);
mem(B, ['sync']);

// ------------------------------------------------------------------ divergence
const exported = mem(A, ['export'])
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l));
const bump = (r, patch) => ({ ...r, ...patch, clock: (r.clock ?? 1) + 1, updated: new Date().toISOString() });
const aIdx = [...Array(CHANGES).keys()];
const bIdx = [...Array(CHANGES).keys()].map((i) => i + CHANGES - OVERLAP);
const aLines = aIdx.map((i) => bump(exported[i], { body: `${exported[i].body}\nA's note on record ${i}.\n`, tags: [...exported[i].tags, 'seen-by-a'] }));
const bLines = bIdx.map((i, k) => {
  const r = exported[i];
  const shared = i < CHANGES;
  // overlapping records: half change another field (clean merge), half the same body lines (attic)
  if (shared && k % 2 === 0) return bump(r, { title: `${r.title} (reviewed by B)` });
  return bump(r, { body: `${r.body}\nB's note on record ${i}.\n` });
});
log(`diverging: ${CHANGES} changes each, ${OVERLAP} on the same records`);
mem(A, ['import', '--jsonl', '-'], `${aLines.map((l) => JSON.stringify(l)).join('\n')}\n`);
mem(B, ['import', '--jsonl', '-'], `${bLines.map((l) => JSON.stringify(l)).join('\n')}\n`);
mem(A, ['sync']);
for (const d of [A, B, remote]) git(d, 'gc', '-q');

// ------------------------------------------------------------------ merge bundle (in-process)
const { build } = await import('esbuild');
const bundle = join(work, 'merge-bundle.mjs');
writeFileSync(
  join(work, 'merge-entry.ts'),
  `export { mergeCommits } from '${ROOT}src/merge/merge-commits.ts';\nexport { Store } from '${ROOT}src/gitstore/store.ts';\nexport { openRepo } from '${ROOT}src/gitstore/repo.ts';\n`,
);
await build({
  entryPoints: [join(work, 'merge-entry.ts')],
  outfile: bundle,
  bundle: true,
  format: 'esm',
  platform: 'node',
  logLevel: 'error',
  nodePaths: [join(ROOT, 'node_modules')],
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
const { mergeCommits, Store, openRepo } = await import(bundle);

// ------------------------------------------------------------------ runs
const fresh = (i) => {
  const r = join(work, `run-${i}`);
  rmSync(r, { recursive: true, force: true });
  cpSync(remote, join(r, 'remote.git'), { recursive: true });
  cpSync(B, join(r, 'b'), { recursive: true });
  git(join(r, 'b'), 'remote', 'set-url', 'origin', join(r, 'remote.git'));
  return { dir: r, b: join(r, 'b'), remote: join(r, 'remote.git') };
};
const syncMs = [];
const floorMs = [];
const mergeMs = [];
let last;
for (let i = 0; i < RUNS; i++) {
  log(`run ${i + 1}/${RUNS}`);
  // the floor: fetch their memory and notes, push ours (new refs, so nothing is rejected)
  let f = fresh(`f${i}`);
  floorMs.push(
    time(() => {
      git(f.b, 'fetch', '-q', 'origin', '+refs/mem/*:refs/floor/theirs/*', '+refs/notes/memory*:refs/floor/notes/memory*');
      git(f.b, 'push', '-q', 'origin', 'refs/memory:refs/floor/ours');
    }),
  );
  rmSync(f.dir, { recursive: true, force: true });
  // git mem sync, end to end as a user runs it
  f = fresh(`s${i}`);
  syncMs.push(time(() => (last = JSON.parse(mem(f.b, ['sync', '--json'])))));
  rmSync(f.dir, { recursive: true, force: true });
  // the merge alone, in-process, after a plain fetch
  f = fresh(`m${i}`);
  git(f.b, 'fetch', '-q', 'origin', '+refs/mem/*:refs/mem-remotes/origin/*');
  const store = new Store(await openRepo(f.b, env));
  const ours = git(f.b, 'rev-parse', 'refs/memory').trim();
  const theirs = git(f.b, 'rev-parse', 'refs/mem-remotes/origin/memory').trim();
  const t = process.hrtime.bigint();
  await mergeCommits(store, ours, theirs);
  mergeMs.push(Number(process.hrtime.bigint() - t) / 1e6);
  store.close();
  rmSync(f.dir, { recursive: true, force: true });
}
// fixed cost: a sync with nothing to do (process start, remote lookup, fetch negotiation)
const noopMs = [];
{
  const f = fresh('noop');
  mem(f.b, ['sync']);
  for (let i = 0; i < RUNS; i++) noopMs.push(time(() => mem(f.b, ['sync'])));
  rmSync(f.dir, { recursive: true, force: true });
}
if (process.env.SYNC_BENCH_KEEP) log(`kept ${work}`);
else rmSync(work, { recursive: true, force: true });

const s = median(syncMs);
const fl = median(floorMs);
const m = median(mergeMs);
const out = [
  '## sync',
  '',
  `Two stores of ${N.toLocaleString('en')} records diverged by ${CHANGES.toLocaleString('en')} changes each (${OVERLAP} on the same records: half on different fields, half on the same body lines), local bare remote; median of ${RUNS} runs, each from fresh copies, load average ${loadavg()[0].toFixed(1)} at the end (other work on the machine slows every row alike). Goal: sync ≤ 2 s.`,
  '',
  '| step | median ms | × floor |',
  '|---|---:|---:|',
  `| \`git fetch\` + \`git push\` of the same refs (floor) | ${fmt(fl)} | 1.00 |`,
  `| merge alone, in-process (\`mergeCommits\`) | ${fmt(m)} | ${(m / fl).toFixed(2)} |`,
  `| \`git mem sync\` (process start, fetch, merge, CAS, push) | ${fmt(s)} | ${(s / fl).toFixed(2)} |`,
  `| \`git mem sync\` with nothing to do (fixed cost) | ${fmt(median(noopMs))} | ${(median(noopMs) / fl).toFixed(2)} |`,
  `| … of which fetch / merge (memory + notes) / push, inside the process | ${last?.timings ? `${last.timings.fetch} / ${last.timings.merge} / ${last.timings.push}` : '–'} | |`,
  '',
  `Sync result (last run): action \`${last?.action}\`, ${last?.conflicts?.length ?? 0} records flagged for review, pushed ${last?.pushed}, ${last?.attempts} attempt(s). Goal ${s <= 2000 ? 'met' : 'NOT met'} (${fmt(s)} ms).`,
];
process.stdout.write(`${out.join('\n')}\n`);

