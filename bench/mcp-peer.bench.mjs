#!/usr/bin/env node
// git-mem's MCP server beside the reference MCP memory server (@modelcontextprotocol/server-memory),
// on the same generated memories, over stdio, calls alternating between the two servers:
//   node bench/mcp-peer.bench.mjs [N] [CALLS]          (default 10000 memories, 25 calls)
// - search: git-mem `search` vs the peer's `search_nodes` (gen.mjs queries)
// - add: git-mem `add` (a new memory: its duplicate check, one commit) vs the peer's `create_entities`
//   (one entity with one observation)
// - search right after an add, on each
// - git-mem `context` (no peer equivalent)
// The peer is installed once into node_modules/.cache/peer-server-memory (npm, from the registry);
// the data comes from ../shared/bench/gen.mjs. Agents wait for these calls.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, fmt, hasSharedGen, median, pct, ROOT, SHARED_GEN, scratchRepo, timeMsAsync } from './lib.mjs';

if (!hasSharedGen()) {
  console.log('mcp-peer bench skipped: ../shared/bench/gen.mjs is not here');
  process.exit(0);
}
const N = Number(process.argv[2] ?? 10000);
const CALLS = Number(process.argv[3] ?? 25);
const peerDir = join(ROOT, 'node_modules', '.cache', 'peer-server-memory');
const peerMain = join(peerDir, 'node_modules', '@modelcontextprotocol', 'server-memory', 'dist', 'index.js');
if (!existsSync(peerMain)) {
  mkdirSync(peerDir, { recursive: true });
  execFileSync('npm', ['install', '--prefix', peerDir, '--no-audit', '--no-fund', '@modelcontextprotocol/server-memory'], {
    stdio: 'ignore',
  });
}
const peerVersion = JSON.parse(
  execFileSync(process.execPath, ['-e', `process.stdout.write(require('fs').readFileSync(${JSON.stringify(join(peerDir, 'node_modules', '@modelcontextprotocol', 'server-memory', 'package.json'))}, 'utf8'))`], {
    encoding: 'utf8',
  }),
).version;

const gen = execFileSync(process.execPath, [SHARED_GEN, 'memories', String(N)], { maxBuffer: 1 << 30, encoding: 'utf8' });
const memories = gen.trim().split('\n').map((l) => JSON.parse(l));
const queries = execFileSync(process.execPath, [SHARED_GEN, 'queries', String(CALLS)], { encoding: 'utf8' })
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).q);

const { dir, repo, env } = scratchRepo('gm-bench-peer-');
env.GIT_MEM_DAEMON = 'off'; // each server holds its own data in process
const jsonl = join(dir, 'mem.jsonl');
writeFileSync(jsonl, gen);
execFileSync(process.execPath, [BIN, 'import', '--jsonl', jsonl], { cwd: repo, env, stdio: 'ignore' });
// the peer's store: one JSON line per entity, as it writes them itself
const peerFile = join(dir, 'peer-memory.jsonl');
writeFileSync(
  peerFile,
  `${memories
    .map((m) =>
      JSON.stringify({
        type: 'entity',
        name: m.title,
        entityType: m.type,
        observations: [m.body, ...(m.tags ?? []).map((t) => `tag: ${t}`)],
      }),
    )
    .join('\n')}\n`,
);

async function connect(command, args, extraEnv) {
  const transport = new StdioClientTransport({ command, args, cwd: repo, env: { ...env, ...extraEnv }, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}
const servers = [
  { name: 'git-mem', client: await connect(process.execPath, [BIN, 'mcp'], {}), t: {} },
  { name: 'server-memory', client: await connect(process.execPath, [peerMain], { MEMORY_FILE_PATH: peerFile }), t: {} },
];
const call = async (s, key, name, args) => {
  let r;
  const ms = await timeMsAsync(async () => (r = await s.client.callTool({ name, arguments: args })));
  if (r.isError) throw new Error(`${s.name} ${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
  (s.t[key] ??= []).push(ms);
};
// warm both (git-mem loads its index on the first search)
await call(servers[0], 'warm', 'search', { query: 'warm up' });
await call(servers[1], 'warm', 'search_nodes', { query: 'warm' });
for (let i = 0; i < CALLS; i++) {
  const q = queries[i % queries.length];
  const w = (k) => `w${((i * 7 + k) * 2654435761) % 1000003}z${k}`;
  const title = `bench ${w(1)} ${w(2)} ${w(3)}`;
  const body = `${w(4)} ${w(5)} ${w(6)} ${w(7)}`;
  for (const s of i % 2 ? [...servers].reverse() : servers) {
    if (s.name === 'git-mem') {
      await call(s, 'search', 'search', { query: q });
      await call(s, 'add', 'add', { type: 'decision', title, body });
      await call(s, 'search after add', 'search', { query: w(4) });
      await call(s, 'context', 'context', { query: q });
    } else {
      await call(s, 'search', 'search_nodes', { query: q });
      await call(s, 'add', 'create_entities', { entities: [{ name: title, entityType: 'decision', observations: [body] }] });
      await call(s, 'search after add', 'search_nodes', { query: w(4) });
    }
  }
}
console.log(`## MCP servers over stdio, ${N} memories, ${CALLS} calls each, alternating (server-memory ${peerVersion})`);
console.log('');
console.log('| call | git-mem p50 | git-mem p95 | server-memory p50 | server-memory p95 | goal (git-mem) |');
console.log('|---|---|---|---|---|---|');
const goals = { search: '≤ 5 ms', add: '≤ 15 ms', 'search after add': '≤ 5 ms', context: '≤ 20 ms' };
for (const k of ['search', 'add', 'search after add', 'context']) {
  const c = (s) => (s.t[k] ? `${fmt(median(s.t[k]))} ms | ${fmt(pct(s.t[k], 95))} ms` : '— | —');
  console.log(`| ${k} | ${c(servers[0])} | ${c(servers[1])} | ${goals[k]} |`);
}
for (const s of servers) await s.client.close();
rmSync(dir, { recursive: true, force: true });
