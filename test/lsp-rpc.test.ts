/**
 * The LSP server's JSON-RPC connection (src/lsp/rpc.ts), in process over
 * streams: framing split across chunks, `$/cancelRequest`, bad and oversized
 * messages answered with errors while the connection goes on.
 */
import { realpathSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Connection } from '../src/lsp/rpc.js';

const LIMIT = 4096;

import type { Json } from './helpers.js';

function pair() {
  const input = new PassThrough();
  const output = new PassThrough();
  const conn = new Connection(input, output, LIMIT);
  let buf = Buffer.alloc(0);
  const got: Json[] = [];
  output.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const h = buf.indexOf('\r\n\r\n');
      if (h < 0) return;
      const n = Number(/Content-Length: (\d+)/.exec(buf.toString('ascii', 0, h))?.[1]);
      if (buf.length < h + 4 + n) return;
      got.push(JSON.parse(buf.toString('utf8', h + 4, h + 4 + n)));
      buf = buf.subarray(h + 4 + n);
    }
  });
  const frame = (m: Json) => {
    const body = typeof m === 'string' ? m : JSON.stringify(m);
    return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  };
  const next = async (pred: (m: Json) => boolean) => {
    for (let i = 0; i < 200; i++) {
      const m = got.find(pred);
      if (m) return m;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error(`no such message; got ${JSON.stringify(got)}`);
  };
  return { input, conn, got, frame, next };
}

describe('lsp rpc', () => {
  it('reads messages split anywhere across chunks, several in one chunk, with UTF-8 bodies', async () => {
    const { input, conn, frame, next } = pair();
    conn.onRequest('echo', (p) => p);
    const all = Buffer.from(
      frame({ jsonrpc: '2.0', id: 1, method: 'echo', params: { s: 'héllo ✓' } }) +
        frame({ jsonrpc: '2.0', id: 2, method: 'echo', params: { s: 'two' } }),
    );
    for (let i = 0; i < all.length; i += 7) input.write(all.subarray(i, i + 7));
    expect((await next((m) => m.id === 1)).result).toEqual({ s: 'héllo ✓' });
    expect((await next((m) => m.id === 2)).result).toEqual({ s: 'two' });
  });

  it('honours $/cancelRequest: the handler sees its signal abort and the request ends RequestCancelled', async () => {
    const { input, conn, frame, next } = pair();
    let started = false;
    let sawAbort = false;
    let ran = 0;
    conn.onRequest(
      'slow',
      (_p, signal) =>
        new Promise((resolve) => {
          started = true;
          signal.addEventListener('abort', () => {
            sawAbort = true;
            resolve('late');
          });
        }),
    );
    conn.onRequest('quick', () => {
      ran++;
      return 'done';
    });
    input.write(frame({ jsonrpc: '2.0', id: 7, method: 'slow' }));
    for (let i = 0; i < 100 && !started; i++) await new Promise((r) => setTimeout(r, 5));
    input.write(frame({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 7 } }));
    const m = await next((x) => x.id === 7);
    expect(sawAbort).toBe(true);
    expect(m.error.code).toBe(-32800);
    expect(m.result).toBeUndefined();
    // cancelled before it started: never run
    input.write(
      frame({ jsonrpc: '2.0', id: 8, method: 'quick' }) +
        frame({ jsonrpc: '2.0', method: '$/cancelRequest', params: { id: 8 } }),
    );
    expect((await next((x) => x.id === 8)).error.code).toBe(-32800);
    expect(ran).toBe(0);
  });

  it('answers bad JSON, a non-object and an oversized body with errors, and goes on', async () => {
    const { input, conn, frame, next, got } = pair();
    conn.onRequest('ping', () => 'pong');
    input.write(frame('{nope'));
    input.write(frame('[1,2]'));
    // an oversized body is skipped as it arrives, never held
    input.write(`Content-Length: ${LIMIT * 50 + 10}\r\n\r\n`);
    const chunk = Buffer.alloc(1000, 0x20);
    for (let left = LIMIT * 50 + 10; left > 0; left -= chunk.length)
      input.write(left >= chunk.length ? chunk : chunk.subarray(0, left));
    input.write(frame({ jsonrpc: '2.0', id: 3, method: 'ping' }));
    input.write(frame({ jsonrpc: '2.0', id: 4, method: 'nosuch' }));
    expect((await next((m) => m.id === 3)).result).toBe('pong');
    expect((await next((m) => m.id === 4)).error.code).toBe(-32601);
    expect(got.filter((m) => m.id === null).map((m) => m.error.code)).toEqual([-32700, -32600, -32600]);
  });

  it('ends the connection on a header without Content-Length', async () => {
    const { input, conn } = pair();
    input.write('X-Nothing: 1\r\n\r\n{}');
    await conn.closed;
  });
});

describe('lsp server in process', () => {
  it('runs the injected verify for the Confirm command with the memory id and the store', async () => {
    const { makeRepo } = await import('./helpers.js');
    const { bufferIO } = await import('../src/commands/context.js');
    const { serveLsp } = await import('../src/lsp/server.js');
    const repo = makeRepo({ commit: true });
    repo.write('src/v.ts', 'one\ntwo\nthree\n');
    repo.commitAll('code');
    const { id } = await repo.memJson(['add', '--title', 'v', '--content', 'x', '--anchor', 'src/v.ts:2']);
    const calls: Array<[string, string]> = [];
    const { frame } = pair();
    const input = new PassThrough();
    const output = new PassThrough();
    const got: Json[] = [];
    const next = async (pred: (m: Json) => boolean) => {
      for (let i = 0; i < 1000; i++) {
        const m = got.find(pred);
        if (m) return m;
        await new Promise((r) => setTimeout(r, 10));
      }
      throw new Error(`no such message; got ${JSON.stringify(got)}`);
    };
    const ctx = { io: bufferIO(), cwd: repo.dir, env: repo.env, stores: [] as never[] };
    const done = serveLsp(ctx, {
      stdin: input,
      stdout: output,
      verify: async (vid, store) => {
        calls.push([vid, store.repo.workTree ?? '']);
        return { id: vid, verified: true };
      },
    });
    let buf = Buffer.alloc(0);
    output.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const h = buf.indexOf('\r\n\r\n');
        if (h < 0) return;
        const n = Number(/Content-Length: (\d+)/.exec(buf.toString('ascii', 0, h))?.[1]);
        if (buf.length < h + 4 + n) return;
        got.push(JSON.parse(buf.toString('utf8', h + 4, h + 4 + n)));
        buf = buf.subarray(h + 4 + n);
      }
    });
    input.write(frame({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: {} } }));
    await next((m) => m.id === 1);
    input.write(
      frame({
        jsonrpc: '2.0',
        id: 2,
        method: 'workspace/executeCommand',
        params: { command: 'git-mem.verify', arguments: [id] },
      }),
    );
    expect((await next((m) => m.id === 2)).result).toEqual({ id, verified: true });
    expect(calls.map((c) => c[0])).toEqual([id]);
    expect(realpathSync(calls[0][1])).toBe(realpathSync(repo.dir));
    input.end();
    await done;
    for (const s of ctx.stores as Array<{ close(): void }>) s.close();
  });
});
