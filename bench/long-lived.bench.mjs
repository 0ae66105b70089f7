#!/usr/bin/env node
// Where agents wait: the operations a long-lived process (the MCP server, the daemon, the UI) runs
// call after call, in process, on a store of N memories — two builds side by side.
//
//   node bench/long-lived.bench.mjs [OLD_ROOT] [N] [CALLS]     (default: no old build, 10000, 40)
//
// The store is imported once by this build's CLI and copied for each build, which indexes its copy
// with its own CLI (the index saved on disk, then loaded as a server started on a store loads it). Each root's own src/ is bundled (esbuild, as bench/search.bench.mjs does) from a small entry
// written into that root, so an old checkout needs nothing of this file. Both builds open their
// own copy of the same store (gen.mjs memories, imported once) as the MCP server does
// (store.longLived, one reflog message), warm up with one call of each kind, then alternate call by call:
//   - search      searchMemories, gen.mjs queries
//   - context     buildContextPack for the same queries (no --file)
//   - add         the add operation with its duplicate check (a person's add; distinct text)
//   - search after add   a search right after each add (the index brought to the new tip)
// Prints medians and p90 per build. Goals (issue 16): add ≤ 15 ms, search ≤ 5 ms also right
// after a write, context ≤ 20 ms at 10k.
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BIN, bundleForNode, EMBED_EXTERNAL, fmt, hasSharedGen, median, pct, ROOT, SHARED_GEN, scratchRepo } from './lib.mjs';

if (!hasSharedGen()) {
  console.log('## long-lived\n\nSKIPPED: ../shared/bench/gen.mjs not found.');
  process.exit(0);
}
const OLD = process.argv[2] && process.argv[2] !== '-' ? process.argv[2] : undefined;
const N = Number(process.argv[3] ?? 10000);
const CALLS = Number(process.argv[4] ?? 40);

const ENTRY = `
import { openRepo } from './src/gitstore/repo.js';
import { Store } from './src/gitstore/store.js';
export { searchMemories, buildContextPack } from './src/search/index.js';
export { add } from './src/commands/add.js';
export async function openStoreAt(cwd, env) {
  const s = new Store(await openRepo(cwd, env));
  // as src/agents/mcp.ts opens it: one reflog message keeps one update-ref process for every write
  s.reflogMessage = 'mem: long-lived bench';
  s.longLived = true;
  return s;
}
`;

async function bundle(root, tag) {
  const entry = join(root, `.bench-long-lived-${process.pid}.ts`);
  const outdir = join(ROOT, `.bench-long-lived-${process.pid}-${tag}`);
  writeFileSync(entry, ENTRY);
  try {
    await bundleForNode({ entryPoints: { api: entry }, outdir, nodePaths: [join(ROOT, 'node_modules')], external: EMBED_EXTERNAL });
  } finally {
    rmSync(entry, { force: true });
  }
  const api = await import(pathToFileURL(join(outdir, 'api.js')).href);
  return { api, outdir };
}

const s = scratchRepo('gm-bench-long-');
writeFileSync(join(s.dir, '.gitconfig'), '[user]\n\tname = Bench\n\temail = bench@example.com\n');
const env = { ...s.env, GIT_MEM_DAEMON: 'off' };
const jsonl = join(s.dir, 'mem.jsonl');
writeFileSync(jsonl, execFileSync(process.execPath, [SHARED_GEN, 'memories', String(N)], { maxBuffer: 1 << 30 }));
execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'init'], { cwd: s.repo, env });
execFileSync(process.execPath, [BIN, 'import', '--jsonl', jsonl], { cwd: s.repo, env, stdio: 'ignore' });
const queries = execFileSync(process.execPath, [SHARED_GEN, 'queries', String(CALLS)], { encoding: 'utf8' })
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).q);

const builds = [];
for (const [name, root] of [...(OLD ? [['old', OLD]] : []), ['new', ROOT]]) {
  const repo = join(s.dir, `repo-${name}`);
  cpSync(s.repo, repo, { recursive: true });
  // the index saved on disk by that build's own CLI (snapshot formats differ between builds), as a
  // server started on an existing store finds it and loads it
  execFileSync(process.execPath, [join(root, 'bin', 'git-mem.js'), 'reindex'], { cwd: repo, env, stdio: 'ignore' });
  const { api, outdir } = await bundle(root, name);
  const store = await api.openStoreAt(repo, env);
  builds.push({ name, api, outdir, store, t: { search: [], context: [], add: [], 'search after add': [] } });
}

const addOf = (b, i) =>
  b.api.add(
    b.store,
    {
      type: 'decision',
      title: `Long-lived bench decision ${i} on shard ${i * 7919} routing`,
      body: `Route tenant ${i} writes through replica set ${i % 13} after the ${i}th cutover; checked ${i * 31}.`,
      tags: ['bench', `shard-${i % 11}`],
    },
    { cwd: repo(b), env, duplicates: 'person', daemon: false },
  );
const repo = (b) => join(s.dir, `repo-${b.name}`);
const timed = async (b, what, f) => {
  const t = performance.now();
  await f();
  b.t[what].push(performance.now() - t);
};

// warm: the index (with its postings) and the writer, once per build
for (const b of builds) {
  await b.api.searchMemories(b.store, { query: queries[0] }, { recordUsage: false });
  await b.api.buildContextPack(b.store, { query: queries[0] }, { recordUsage: false });
  await addOf(b, 1e6);
}
for (let i = 0; i < CALLS; i++) {
  for (const b of i % 2 ? [...builds].reverse() : builds) {
    const q = queries[i % queries.length];
    await timed(b, 'search', () => b.api.searchMemories(b.store, { query: q }));
    await timed(b, 'context', () => b.api.buildContextPack(b.store, { query: q }));
    await timed(b, 'add', () => addOf(b, i));
    await timed(b, 'search after add', () => b.api.searchMemories(b.store, { query: q }));
  }
}
for (const b of builds) {
  b.store.close?.();
  rmSync(b.outdir, { recursive: true, force: true });
}
rmSync(s.dir, { recursive: true, force: true });

const cell = (xs) => `${fmt(median(xs))} / ${fmt(pct(xs, 90))} ms`;
const lines = [
  '## long-lived',
  '',
  `In process, ${N} memories (gen.mjs), a long-lived store as the MCP server opens it, ${CALLS} calls of each kind, builds alternating call by call${OLD ? ` (old = ${OLD})` : ''}. p50 / p90.`,
  '',
  `| operation | ${builds.map((b) => b.name).join(' | ')} | goal |`,
  `|---|${builds.map(() => '---|').join('')}---|`,
];
const goals = { search: '≤ 5 ms', context: '≤ 20 ms', add: '≤ 15 ms', 'search after add': '≤ 5 ms' };
for (const k of Object.keys(goals)) lines.push(`| ${k} | ${builds.map((b) => cell(b.t[k])).join(' | ')} | ${goals[k]} |`);
console.log(lines.join('\n'));
process.exit(0);
