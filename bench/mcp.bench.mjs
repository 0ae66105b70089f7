#!/usr/bin/env node
// MCP server and rules export: what an agent waits for.
//   - startup: spawn → initialize → first tools/list, for `git mem mcp` and for a bare SDK server
//     with one tool (the floor), beside `node -e 0`
//   - warm tool calls at N memories (1k, 10k): search (queries from ../shared/bench/gen.mjs), get,
//     context, rules; tools/list on the same connection is the round-trip floor
//   - rules export --to all with 100 rules: first run and the no-change rerun, beside `node -e 0`
// Needs `npm run build`. MCP_BENCH_SIZES=1000,10000 and MCP_BENCH_RUNS=… override the defaults.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { BIN, fmt, hasSharedGen, median, pct, ROOT, SHARED_GEN, scratchRepo, timeMs, timeMsAsync } from './lib.mjs';

const SIZES = (process.env.MCP_BENCH_SIZES ?? '1000,10000').split(',').map(Number);
const RUNS = Number(process.env.MCP_BENCH_RUNS ?? 7);
const CALLS = Number(process.env.MCP_BENCH_CALLS ?? 50);

function gen(kind, n) {
  if (hasSharedGen()) {
    return execFileSync(process.execPath, [SHARED_GEN, kind, String(n)], { encoding: 'utf8', maxBuffer: 256 << 20 })
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  }
  if (kind === 'queries') return Array.from({ length: n }, (_, i) => ({ q: `pool timeout ${i % 7}` }));
  return Array.from({ length: n }, (_, i) => ({ title: `Memory ${i} about pool timeout ${i % 7}`, body: `Body ${i}: pool timeout ${i % 7} on CI.`, tags: ['ci'], type: 'known_fix' }));
}

const mem = (repo, env, args) => {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: repo, env, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`git mem ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};

async function connect(command, args, cwd, env) {
  const transport = new StdioClientTransport({ command, args, cwd, env, stderr: 'ignore' });
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

// a bare SDK server with one tool: the floor for startup
const work = mkdtempSync(join(tmpdir(), 'gm-bench-mcp-'));
const bare = join(work, 'bare-server.mjs');
writeFileSync(
  bare,
  `import { Server } from ${JSON.stringify(join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/server/index.js'))};
import { StdioServerTransport } from ${JSON.stringify(join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/server/stdio.js'))};
import { ListToolsRequestSchema, CallToolRequestSchema } from ${JSON.stringify(join(ROOT, 'node_modules/@modelcontextprotocol/sdk/dist/esm/types.js'))};
const s = new Server({ name: 'bare', version: '1' }, { capabilities: { tools: {} } });
s.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }));
s.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'ok' }] }));
await s.connect(new StdioServerTransport());
process.stdin.on('end', () => process.exit(0));
`,
);

const lines = ['## mcp', ''];
const floorNode = median(Array.from({ length: RUNS }, () => timeMs(() => spawnSync(process.execPath, ['-e', '0']))));
lines.push(`Floor: \`node -e 0\` ${fmt(floorNode)} ms (median of ${RUNS}).`, '');

lines.push('| N memories | startup: bare SDK server | startup: git mem mcp | git-mem − bare | first search (builds/loads index) | search p50 / p90 | get p50 | context p50 | rules p50 | tools/list p50 (RPC floor) |');
lines.push('|---|---|---|---|---|---|---|---|---|---|');
for (const n of SIZES) {
  const { repo, env } = scratchRepo();
  const jsonl = join(work, `mem-${n}.jsonl`);
  const memories = gen('memories', n);
  writeFileSync(jsonl, memories.map((m) => JSON.stringify({ ...m, id: undefined, alias: undefined })).join('\n'));
  mem(repo, env, ['init']);
  mem(repo, env, ['import', '--jsonl', jsonl]);
  mem(repo, env, ['add', '--type', 'rule', '--title', 'Bench rule', '--scope', 'src/**', '--content', 'A rule.']);
  const someId = JSON.parse(mem(repo, env, ['list', '--json', '--type', 'rule']))[0].id;
  const queries = gen('queries', CALLS).map((q) => q.q);

  const startBare = [];
  const startMem = [];
  for (let i = 0; i < Math.max(3, Math.floor(RUNS / 2)); i++) {
    startBare.push(
      await timeMsAsync(async () => {
        const c = await connect(process.execPath, [bare], repo, env);
        await c.listTools();
        await c.close();
      }),
    );
    startMem.push(
      await timeMsAsync(async () => {
        const c = await connect(process.execPath, [BIN, 'mcp'], repo, env);
        await c.listTools();
        await c.close();
      }),
    );
  }
  const c = await connect(process.execPath, [BIN, 'mcp'], repo, env);
  const firstSearch = await timeMsAsync(() => c.callTool({ name: 'search', arguments: { query: queries[0] } }));
  const time = async (fn) => {
    const xs = [];
    for (let i = 0; i < CALLS; i++) xs.push(await timeMsAsync(() => fn(i)));
    return xs;
  };
  const search = await time((i) => c.callTool({ name: 'search', arguments: { query: queries[i % queries.length], limit: 10 } }));
  const get = await time(() => c.callTool({ name: 'get', arguments: { id: someId } }));
  const context = await time((i) => c.callTool({ name: 'context', arguments: { file: 'src/app.ts', query: queries[i % queries.length] } }));
  const rules = await time(() => c.callTool({ name: 'rules', arguments: { file: 'src/app.ts' } }));
  const list = await time(() => c.listTools());
  await c.close();
  const sb = median(startBare);
  const sm = median(startMem);
  lines.push(
    `| ${n} | ${fmt(sb)} ms | ${fmt(sm)} ms | ${fmt(sm - sb)} ms | ${fmt(firstSearch)} ms | ${fmt(median(search))} / ${fmt(pct(search, 90))} ms | ${fmt(median(get))} ms | ${fmt(median(context))} ms | ${fmt(median(rules))} ms | ${fmt(median(list))} ms |`,
  );
}
lines.push('');
lines.push(
  'Peer (from ../shared/bench/README.md, not measured in this run): the official MCP memory server `search_nodes` 5.6 ms at 1k and 36.6 ms at 10k entities.',
  '',
);

// rules export
{
  const { repo, env } = scratchRepo();
  execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'init'], { cwd: repo, env });
  const rules = Array.from({ length: 100 }, (_, i) => ({
    type: 'rule',
    title: `Rule ${i}: keep module ${i} pure`,
    body: `Module ${i} must not import the file system.\n\n- use the port in src/ports/${i}.ts`,
    scope: i % 3 === 0 ? [] : [`src/mod${i}/**`],
  }));
  const jsonl = join(work, 'rules.jsonl');
  writeFileSync(jsonl, rules.map((r) => JSON.stringify(r)).join('\n'));
  mem(repo, env, ['import', '--jsonl', jsonl]);
  const first = timeMs(() => mem(repo, env, ['rules', 'export', '--to', 'all']));
  const again = median(Array.from({ length: RUNS }, () => timeMs(() => mem(repo, env, ['rules', 'export', '--to', 'all']))));
  const check = median(Array.from({ length: RUNS }, () => timeMs(() => mem(repo, env, ['rules', 'export', '--to', 'all', '--check']))));
  const nFiles = JSON.parse(mem(repo, env, ['rules', 'export', '--to', 'all', '--json'])).files.length;
  lines.push(
    `Rules export, 100 rules → ${nFiles} files (\`--to all\`): first run ${fmt(first)} ms; rerun with no change ${fmt(again)} ms (${fmt(again - floorNode)} ms above \`node -e 0\`); \`--check\` ${fmt(check)} ms.`,
  );
}
process.stdout.write(`${lines.join('\n')}\n`);
