/**
 * The MCP server brings its index to the tip right after it answers a write, so the query that
 * follows (an agent's search after its add) finds it current. The server runs in this process on
 * a template's copy, over in-memory streams: its index is this process's, and the next open of it
 * says whether it still had a change to apply.
 */
import { PassThrough } from 'node:stream';
import { expect, it } from 'vitest';
import { serveMcp } from '../../src/agents/mcp.js';
import { bufferIO, type RunContext } from '../../src/commands/context.js';
import { indexIsOpen, openIndex } from '../../src/search/store-index.js';
import { type Fresh, fresh, template } from '../support/template.js';

const KEEP = template('mcp-refresh', { memories: [{ type: 'decision', title: 'Keep', body: 'kept words' }] });

/** A JSON-RPC client over the server's streams: each request resolves with its response. */
function client(stdin: PassThrough, stdout: PassThrough) {
  const waiting = new Map<number, (m: Record<string, unknown>) => void>();
  let buf = '';
  stdout.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const m = JSON.parse(buf.slice(0, nl));
      buf = buf.slice(nl + 1);
      waiting.get(m.id)?.(m);
    }
  });
  let id = 0;
  return {
    request: (method: string, params: unknown) =>
      new Promise<Record<string, unknown>>((res) => {
        waiting.set(++id, res);
        stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      }),
    notify: (method: string) => stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`),
  };
}

/** The server on a template's copy, initialized; ended after `fn`. */
async function withServer(f: Fresh, fn: (c: ReturnType<typeof client>) => Promise<void>): Promise<void> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const ctx: RunContext = {
    io: bufferIO(),
    cwd: f.dir,
    env: { ...f.env, GIT_MEM_DAEMON: 'off' },
    stores: [],
  };
  const served = serveMcp(ctx, { stdin, stdout });
  try {
    const c = client(stdin, stdout);
    await c.request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'test', version: '1' },
    });
    c.notify('notifications/initialized');
    await fn(c);
  } finally {
    stdin.end();
    await served;
    for (const s of ctx.stores) s.close();
  }
}

const call = async (c: ReturnType<typeof client>, name: string, args: Record<string, unknown>) =>
  ((await c.request('tools/call', { name, arguments: args })) as { result: { isError?: boolean } }).result;

it('applies an answered add to the index before the next call asks for it', async () => {
  const f = await fresh(KEEP);
  await withServer(f, async (c) => {
    const before = f.tip();
    const add = await call(c, 'add', {
      type: 'decision',
      title: 'Quokka zebra',
      body: 'words nobody else has',
    });
    expect(add.isError).toBeFalsy();
    expect(f.tip()).not.toBe(before);
    await new Promise((r) => setTimeout(r, 100));
    // the next open (a search's) finds the index at the tip already: nothing left to apply
    const st = await openIndex(f.store, { postings: true });
    expect(st.tip).toBe(f.tip());
    expect(st.last).toMatchObject({ mode: 'memory', changed: 0 });
  });
});

it('leaves an index no query opened unopened after a write', async () => {
  const f = await fresh(KEEP);
  await withServer(f, async (c) => {
    const before = f.tip();
    expect((await call(c, 'verify', { ids: [f.records[0].id] })).isError).toBeFalsy();
    expect(f.tip()).not.toBe(before);
    await new Promise((r) => setTimeout(r, 100));
    expect(indexIsOpen(f.store)).toBe(false);
  });
});
