// The MCP server, two builds side by side: `node bench/mcp-compare.mjs OLD_ROOT [N] [CALLS]`
// starts `git mem mcp` of the build in OLD_ROOT (a checkout with dist/ built) and of this one,
// each on its own copy of the same store of N memories (default 10000), and times warm tool
// calls on one connection each, alternating builds call by call: first adds before any search
// (the duplicate check alone, as an agent adding at a session's end), then search, context, and
// add (distinct generated text, so no add is refused as a duplicate), then a search right after
// each add. Prints medians and p95 of CALLS calls (default 25). Agents wait for these.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, fmt, median, pct, SHARED_GEN, scratchRepo, timeMsAsync } from './lib.mjs';

const OLD = process.argv[2];
if (!OLD) throw new Error('usage: node bench/mcp-compare.mjs OLD_ROOT [N] [CALLS]');
const N = Number(process.argv[3] ?? 10000);
const CALLS = Number(process.argv[4] ?? 25);
const builds = [
  { name: 'old', bin: join(OLD, 'bin', 'git-mem.js') },
  { name: 'new', bin: BIN },
];
const gen = execFileSync(process.execPath, [SHARED_GEN, 'memories', String(N)], { maxBuffer: 1 << 30 });
const queries = execFileSync(process.execPath, [SHARED_GEN, 'queries', String(CALLS)], { encoding: 'utf8' })
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l).q);
const dirs = [];
for (const b of builds) {
  const { dir, repo, env } = scratchRepo();
  dirs.push(dir);
  delete env.NODE_EXTRA_CA_CERTS;
  env.GIT_MEM_DAEMON = 'off'; // the server's own index, no background daemon sharing the CPU
  const jsonl = join(dir, 'mem.jsonl');
  writeFileSync(jsonl, gen);
  execFileSync(process.execPath, [b.bin, 'import', '--jsonl', jsonl], { cwd: repo, env, stdio: 'ignore' });
  const transport = new StdioClientTransport({ command: process.execPath, args: [b.bin, 'mcp'], cwd: repo, env, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  // loads the index (an add: no search has built the postings yet)
  await client.callTool({ name: 'add', arguments: { type: 'decision', title: 'warm up', body: 'warm up' } });
  Object.assign(b, {
    client,
    t: { 'add, before any search': [], search: [], context: [], add: [], 'search after add': [] },
  });
}
const call = async (b, name, args, key) => {
  let r;
  b.t[key].push(await timeMsAsync(async () => (r = await b.client.callTool({ name, arguments: args }))));
  if (r.isError) throw new Error(`${b.name} ${name}: ${JSON.stringify(r.content).slice(0, 300)}`);
};
// an agent that adds before it ever searches (a session's end): the duplicate check alone
for (let i = 0; i < CALLS; i++) {
  for (const b of i % 2 ? [...builds].reverse() : builds) {
    const w = (k) => `p${((i * 7 + k) * 2654435761) % 1000003}z${k}`;
    await call(b, 'add', { type: 'decision', title: `early ${w(1)} ${w(2)} ${w(3)}`, body: `${w(4)} ${w(5)} ${w(6)} ${w(7)}` }, 'add, before any search');
  }
}
for (const b of builds) await b.client.callTool({ name: 'search', arguments: { query: 'warm up' } });
for (let i = 0; i < CALLS; i++) {
  for (const b of i % 2 ? [...builds].reverse() : builds) {
    const q = queries[i % queries.length];
    await call(b, 'search', { query: q }, 'search');
    await call(b, 'context', { query: q }, 'context');
    const w = (k) => `w${((i * 7 + k) * 2654435761) % 1000003}z${k}`;
    await call(b, 'add', { type: 'decision', title: `bench ${w(1)} ${w(2)} ${w(3)}`, body: `${w(4)} ${w(5)} ${w(6)} ${w(7)}` }, 'add');
    await call(b, 'search', { query: w(4) }, 'search after add');
  }
}
console.log(`MCP server over stdio, ${N} memories, ${CALLS} calls each, alternating builds (${OLD} vs this build)`);
console.log('| tool | old p50 | old p95 | new p50 | new p95 |');
console.log('|---|---|---|---|---|');
for (const k of Object.keys(builds[0].t)) {
  const c = (b) => `${fmt(median(b.t[k]))} ms | ${fmt(pct(b.t[k], 95))} ms`;
  console.log(`| ${k} | ${c(builds[0])} | ${c(builds[1])} |`);
}
for (const b of builds) await b.client.close();
for (const d of dirs) rmSync(d, { recursive: true, force: true });
