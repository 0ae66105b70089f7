#!/usr/bin/env node
// Merge benchmark (issue 5: the memory-aware three-way merge). Two stores of
// 10k ../shared/bench/gen.mjs memories diverged by 1,000 changes each, 20 % of
// them on the same records, merged IN PROCESS by mergeCommits (the engine
// `git mem sync` calls), both ways; beside it, measured in the same run:
// the git floor of the same data (`git fetch` of the other side + `git push`
// of the result to a bare remote), and `git diff-tree` of the merge base
// against both sides (the least any three-way merge of two trees reads).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, ROOT, SHARED_GEN, bundleForNode, fmt, hasSharedGen, median, scratchRepo, timeMs, timeMsAsync } from './lib.mjs';

const N = Number(process.env.BENCH_MERGE_N ?? 10000);
const CHANGES = Number(process.env.BENCH_MERGE_CHANGES ?? 1000);
const SHARED = Math.round(CHANGES * 0.2);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
if (!hasSharedGen()) {
  console.log('## merge\n\nskipped: ../shared/bench/gen.mjs not found');
  process.exit(0);
}

// a small bundle of the merge and the store (internals are not in dist/)
const bdir = mkdtempSync(join(tmpdir(), 'gm-merge-bundle-'));
writeFileSync(
  join(bdir, 'entry.ts'),
  `export { mergeCommits } from '${ROOT}src/merge/merge-commits.ts';
export { Store } from '${ROOT}src/gitstore/store.ts';
export { openRepo } from '${ROOT}src/gitstore/repo.ts';
export { parseRecord, serializeRecord, recordPath, tombstonePath } from '${ROOT}src/model/record.ts';
`,
);
// written inside the tree: the lazy require() of yaml and micromatch (src/model/yaml.ts, glob.ts)
// resolves from the bundle's folder, and a folder under /tmp has no node_modules
const out = join(ROOT, `.bench-merge-${process.pid}`);
await bundleForNode({ entryPoints: [join(bdir, 'entry.ts')], outfile: join(out, 'merge.mjs') });
let M;
try {
  M = await import(join(out, 'merge.mjs'));
} finally {
  rmSync(out, { recursive: true, force: true });
}

const { dir, repo, env } = scratchRepo('gm-bench-merge-');
const opts = { cwd: repo, env, maxBuffer: 1 << 30 };
const g = (...args) => execFileSync('git', args, opts).toString().trim();
const jsonl = join(dir, 'mem.jsonl');
writeFileSync(jsonl, execFileSync(process.execPath, [SHARED_GEN, 'memories', String(N)], { maxBuffer: 1 << 30 }));
const imp = spawnSync(process.execPath, [BIN, 'import', '--jsonl', jsonl], { ...opts, encoding: 'utf8' });
if (imp.status !== 0) throw new Error(`import failed: ${imp.stderr}`);
const base = g('rev-parse', 'refs/memory');
const store = new M.Store(await M.openRepo(repo, env));
const ids = (await store.lsTree(base, 'memories')).map((e) => e.path.split('/').pop().replace(/\.md$/, '')).sort();

// deterministic divergence: side A takes records [0, CHANGES), side B the last
// CHANGES - SHARED records plus SHARED of A's (the same records on both sides)
const aIds = ids.slice(0, CHANGES);
const bIds = [...ids.slice(CHANGES - SHARED, CHANGES), ...ids.slice(ids.length - (CHANGES - SHARED))];
async function diverge(side, list) {
  g('update-ref', 'refs/memory', base);
  await store.write(async (tx) => {
    const recs = await store.catFile.readMany(list.map((id) => `${base}:${M.recordPath(id)}`));
    list.forEach((id, i) => {
      const r = M.parseRecord(recs[i].content.toString('utf8'));
      const k = i % 10;
      if (k === 9) {
        tx.removeRecord(id, { id, deleted: new Date().toISOString(), by: side, title: r.title, clock: r.clock + 1 });
        return;
      }
      // B appends to every 10th of its body edits too: on shared records, both sides wrote the same lines
      const append = side === 'A' || (k === 4 && i < SHARED);
      if (k < 5) r.body = append ? `${r.body}\n${side}: appended note ${i}\n` : `B: prepended note ${i}\n\n${r.body}`;
      else if (k < 8) r.tags = [...r.tags, `side-${side.toLowerCase()}`];
      else r.title = `${r.title} (${side} ${i})`;
      r.clock += 1;
      r.updated = new Date().toISOString();
      tx.putRecord(r);
    });
    return { message: `bench: ${list.length} changes by ${side}`, value: null };
  });
  return g('rev-parse', 'refs/memory');
}
const A = await diverge('A', aIds);
const B = await diverge('B', bIds);
g('update-ref', 'refs/memory', A);
// any git mem read brings the catalog cache up to the tip, as after a user's own writes
execFileSync(process.execPath, [BIN, 'list', '--json'], { ...opts, stdio: 'ignore' });

if (process.env.BENCH_MERGE_SETUP_ONLY) {
  console.log(JSON.stringify({ repo, A, B, bundle: join(bdir, 'merge.mjs'), env }));
  process.exit(0);
}
const ab = [];
const ba = [];
let resAB;
let resBA;
for (let i = 0; i < RUNS; i++) {
  ab.push(await timeMsAsync(async () => (resAB = await M.mergeCommits(store, A, B))));
  ba.push(await timeMsAsync(async () => (resBA = await M.mergeCommits(store, B, A))));
}
const treeAB = g('rev-parse', `${resAB.commit}^{tree}`);
const treeBA = g('rev-parse', `${resBA.commit}^{tree}`);
if (treeAB !== treeBA) throw new Error('merge: the two directions gave different trees');
store.close();

// floors: diff-tree of base against both sides; fetch + push of the same refs
const diffFloor = median(
  Array.from({ length: RUNS }, () =>
    timeMs(() => {
      spawnSync('git', ['diff-tree', '-r', '-z', '--no-renames', base, A], { ...opts, stdio: 'ignore' });
      spawnSync('git', ['diff-tree', '-r', '-z', '--no-renames', base, B], { ...opts, stdio: 'ignore' });
    }),
  ),
);
g('gc', '-q');
const fetchMs = [];
const pushMs = [];
for (let i = 0; i < RUNS; i++) {
  // a clone holding A fetches B (1,000 changed records), then pushes the merge to a bare remote holding B
  const bare = join(dir, `remote-${i}`);
  const clone = join(dir, `clone-${i}`);
  execFileSync('git', ['init', '-q', '--bare', bare], { env });
  execFileSync('git', ['push', '-q', bare, `${B}:refs/mem/memory`], opts);
  execFileSync('git', ['init', '-q', clone], { env });
  execFileSync('git', ['fetch', '-q', repo, `${A}:refs/memory`], { cwd: clone, env });
  fetchMs.push(timeMs(() => execFileSync('git', ['fetch', '-q', bare, '+refs/mem/memory:refs/mem-remotes/origin/memory'], { cwd: clone, env })));
  execFileSync('git', ['fetch', '-q', repo, `${resAB.commit}:refs/memory`], { cwd: clone, env });
  pushMs.push(timeMs(() => execFileSync('git', ['push', '-q', bare, 'refs/memory:refs/mem/memory'], { cwd: clone, env })));
}
const mAB = median(ab);
const mBA = median(ba);
const floor = median(fetchMs) + median(pushMs);
rmSync(dir, { recursive: true, force: true });
rmSync(bdir, { recursive: true, force: true });

const s = resAB.stats;
console.log(`## merge

In-process \`mergeCommits\` (the merge \`git mem sync\` runs) of two stores of ${N.toLocaleString('en')} gen.mjs memories
diverged from one base by ${CHANGES.toLocaleString('en')} changes each, ${SHARED} of them on the same records
(per side: 50 % body edits, 30 % tag additions, 10 % title edits, 10 % deletions; on the shared records
one body edit in ten touches the same lines on both sides). Medians of ${RUNS} runs.

| measure | ms | ratio |
|---|---:|---:|
| merge A←B (in process, writes the merge commit) | ${fmt(mAB)} | ${(mAB / floor).toFixed(2)}× fetch+push |
| merge A←B, first run in the process (cold, as in a one-shot \`git mem sync\`) | ${fmt(ab[0])} | ${(ab[0] / floor).toFixed(2)}× fetch+push |
| merge B←A (no catalog of B cached: every changed record parsed; same tree: ${treeAB === treeBA ? 'yes' : 'NO'}) | ${fmt(mBA)} | ${(mBA / floor).toFixed(2)}× fetch+push |
| floor: \`git fetch\` of B's ref + \`git push\` of the merge (bare remote) | ${fmt(floor)} | 1.00× |
|   of which fetch / push | ${fmt(median(fetchMs))} / ${fmt(median(pushMs))} | |
| floor: \`git diff-tree\` base→A and base→B | ${fmt(diffFloor)} | ${(mAB / diffFloor).toFixed(1)}× (merge ÷ this) |

Merge result: ${s.added} added, ${s.updated} updated, ${s.removed} removed, ${s.merged} merged field by field,
${resAB.conflicts.length} flagged for review. Goal from the issue: \`git mem sync\` of this case ≤ 2 s (the sync
benchmark measures it end to end); the merge is its in-process part.`);
