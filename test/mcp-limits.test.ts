/**
 * `git mem mcp` under oversized and malformed messages: a real
 * `node bin/git-mem.js mcp` process (needs npm run build) fed raw JSON-RPC
 * lines on stdin. Each bad message gets a JSON-RPC error in plain words and
 * the server goes on serving; a 100 MB line does not kill it.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../src/agents/mcp-tools.js';
import { idFromEnds, MAX_MESSAGE_BYTES } from '../src/agents/mcp-transport.js';
import { unframe } from '../src/safety/frame.js';
import { BIN, makeRepo } from './helpers.js';

interface Reply {
  jsonrpc: string;
  id: number | string | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}

let child: ChildProcessWithoutNullStreams;
const replies: Reply[] = [];
let stderr = '';
let exited: number | null | undefined;

function send(msg: unknown): void {
  child.stdin.write(`${typeof msg === 'string' ? msg : JSON.stringify(msg)}\n`);
}

/** Writes `bytes` of one JSON-RPC line (a tools/call whose text fills it), respecting backpressure. */
async function sendHuge(id: number, bytes: number, idFirst: boolean): Promise<void> {
  const head = idFirst
    ? `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"search","arguments":{"query":"`
    : '{"method":"tools/call","params":{"name":"search","arguments":{"query":"';
  const tail = idFirst ? '"}}}\n' : `"}},"jsonrpc":"2.0","id":${id}}\n`;
  const block = Buffer.alloc(1 << 20, 'a');
  const write = (b: Buffer | string) =>
    new Promise<void>((resolve, reject) => {
      if (exited !== undefined) return reject(new Error(`server exited (${exited}): ${stderr}`));
      if (child.stdin.write(b)) resolve();
      else child.stdin.once('drain', resolve);
    });
  await write(head);
  let left = bytes - head.length - tail.length;
  while (left > 0) {
    const n = Math.min(left, block.length);
    await write(n === block.length ? block : block.subarray(0, n));
    left -= n;
  }
  await write(tail);
}

async function reply(id: number | string | null, ms = 30_000): Promise<Reply> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const i = replies.findIndex((r) => r.id === id);
    if (i >= 0) return replies.splice(i, 1)[0];
    if (exited !== undefined) throw new Error(`server exited (${exited}): ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no reply to ${id} within ${ms} ms; stderr: ${stderr}`);
}

async function stillServing(id: number): Promise<void> {
  send({ jsonrpc: '2.0', id, method: 'tools/list' });
  const r = await reply(id);
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect((r.result!.tools as unknown[]).length).toBe(TOOLS.length);
}

/** Plain words: one line, no validation library dump (JSON of issues, "zod", stack frames). */
function expectPlain(message: string): void {
  expect(message).not.toMatch(/\n|\[\s*\{|"code"|"path"|zod|at .*:\d+:\d+/i);
  expect(message.length).toBeLessThan(300);
}

beforeAll(async () => {
  if (!existsSync(BIN.replace(/bin\/git-mem\.js$/, 'dist/cli.js')))
    throw new Error('run npm run build first');
  const r = makeRepo({ commit: true });
  await r.memJson(['add', '--type', 'decision', '--title', 'Postgres over MySQL', '--content', 'JSONB.']);
  child = spawn(process.execPath, [BIN, 'mcp'], { cwd: r.dir, env: r.env });
  child.on('exit', (code) => {
    exited = code;
  });
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  let buf = '';
  child.stdout.on('data', (d) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      replies.push(JSON.parse(buf.slice(0, nl)) as Reply);
      buf = buf.slice(nl + 1);
    }
  });
  send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });
  expect((await reply(0)).result?.serverInfo).toMatchObject({ name: 'git-mem' });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}, 60_000);

afterAll(() => {
  child?.stdin.end();
  if (exited === undefined) child?.kill();
});

describe('mcp server limits', () => {
  it('answers a 10 MB message with -32600 and its id, and keeps serving', async () => {
    await sendHuge(1, 10_000_000, true);
    const r = await reply(1);
    expect(r.error?.code).toBe(-32600);
    expect(r.error?.message).toMatch(/^message too large: 9\.5 MiB in one line, the limit is 4 MiB/);
    expectPlain(r.error!.message);
    await stillServing(2);
    // the id written last, as the SDK's own client writes it
    await sendHuge(3, 10_000_000, false);
    expect((await reply(3)).error?.code).toBe(-32600);
    await stillServing(4);
  }, 60_000);

  it('survives a 100 MB line', async () => {
    await sendHuge(5, 100_000_000, false);
    const r = await reply(5, 60_000);
    expect(r.error?.code).toBe(-32600);
    expect(exited).toBeUndefined();
    // the line was skipped as it came, never held: the server stays small
    const rss =
      Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1]) / 1024;
    expect(rss).toBeLessThan(250);
    await stillServing(6);
  }, 120_000);

  it('answers malformed params with -32602 in plain words', async () => {
    send({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'search', arguments: 'str' } });
    const r = await reply(7);
    expect(r.error?.code).toBe(-32602);
    expect(r.error?.message).toBe(
      'invalid params: tools/call: params.arguments must be an object, not a string',
    );
    expectPlain(r.error!.message);
    for (const [id, params, said] of [
      [8, { arguments: {} }, /params\.name is required \(a string\)/],
      [9, { name: 42 }, /params\.name must be a string, not a number/],
      [10, 'x', /params must be an object, not a string/],
    ] as const) {
      send({ jsonrpc: '2.0', id, method: 'tools/call', params });
      const e = await reply(id);
      expect(e.error?.code, JSON.stringify(e)).toBe(-32602);
      expect(e.error?.message).toMatch(said);
      expectPlain(e.error!.message);
    }
    send({ jsonrpc: '2.0', id: 11, method: 'resources/read', params: { uri: ['memory://rules'] } });
    const rr = await reply(11);
    expect(rr.error?.code).toBe(-32602);
    expect(rr.error?.message).toMatch(/params\.uri must be a string, not an array/);
    await stillServing(12);
  });

  it('answers what is not JSON or not JSON-RPC, and stays quiet for bad notifications', async () => {
    send('{"jsonrpc":"2.0","id":13,"method":');
    const p = await reply(null);
    expect(p.error?.code).toBe(-32700);
    expectPlain(p.error!.message);
    send({ id: 14, method: 'tools/list' });
    const q = await reply(14);
    expect(q.error?.code).toBe(-32600);
    expectPlain(q.error!.message);
    send([{ jsonrpc: '2.0', id: 15, method: 'tools/list' }]);
    expect((await reply(null)).error?.code).toBe(-32600);
    send({ jsonrpc: '2.0', method: 'notifications/whatever', params: 'x' });
    send('');
    await stillServing(16);
    expect(replies).toEqual([]);
  });

  it('frames tool results on the wire', async () => {
    send({
      jsonrpc: '2.0',
      id: 17,
      method: 'tools/call',
      params: { name: 'search', arguments: { query: 'postgres' } },
    });
    const r = await reply(17);
    const text = (r.result!.content as Array<{ text: string }>)[0].text;
    expect(text.startsWith('<memory source="git-mem" kind="search">')).toBe(true);
    expect(JSON.parse(unframe(text)!)[0].title).toBe('Postgres over MySQL');
  });
});

describe('mcp transport (pure parts)', () => {
  it('finds the id of an oversized request at either end, only at the top level', () => {
    expect(idFromEnds('{"jsonrpc":"2.0","id":7,"method":"x","params":{"q":"aaa', '')).toBe(7);
    expect(idFromEnds('{"id":"abc","jsonrpc":"2.0"', '')).toBe('abc');
    expect(idFromEnds('{"method":"x","params":{"q":"aa', 'aaa"}},"jsonrpc":"2.0","id":42}')).toBe(42);
    expect(idFromEnds('{"method":"x","params":{"q":"aa', 'aa","id":9}}}')).toBeNull();
    expect(idFromEnds('{"method":"x"', 'no id here"}}')).toBeNull();
    expect(MAX_MESSAGE_BYTES).toBe(4 << 20);
  });
});
