/**
 * Both MCP protocol eras from one `git mem mcp`: the legacy handshake (`initialize`, 2024-11-05
 * to 2025-11-25, the v1 SDK's client) and the stateless 2026-07-28 revision (`server/discover`
 * first, the protocol version and client capabilities in every request's `_meta`, no handshake:
 * the v2 SDK's client pinned to it, and a bare client writing the wire by hand, as Claude Code's
 * probe does). Each client is launched twice against the built binary, on a real repository.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, type Json, makeRepo, type TestRepo } from './helpers.js';

const MODERN = '2026-07-28';
/** Distinct words per run, so the second add is not a duplicate of the first. */
const WORDS = ['', 'Tabs indent the Makefile recipes.', 'Release tags are signed with the team key.'];
let r: TestRepo;
let anchoredId: string;

beforeAll(async () => {
  r = makeRepo();
  anchoredId = (
    await r.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'Connection pool size is 20',
      '--content',
      'The database pool holds twenty connections; more starve the replica.',
    ])
  ).id;
});

const serverParams = () => ({
  command: process.execPath,
  args: [BIN, 'mcp'],
  cwd: r.dir,
  env: r.env as Record<string, string>,
  stderr: 'pipe' as const,
});

/** The text of a tool result's first content block. */
const textOf = (res: Json): string => String(res?.content?.[0]?.text ?? '');

describe('legacy clients (initialize handshake), launched twice', () => {
  for (const run of [1, 2]) {
    it(`run ${run}: initialize, list tools, search and add`, async () => {
      const client = new LegacyClient({ name: `legacy-${run}`, version: '1.0.0' });
      await client.connect(new LegacyStdio(serverParams()));
      try {
        expect(client.getServerVersion()?.name).toBe('git-mem');
        const tools = (await client.listTools()).tools.map((t) => t.name);
        expect(tools).toContain('search');
        const hit = await client.callTool({ name: 'search', arguments: { query: 'pool connections' } });
        expect(hit.isError).toBeFalsy();
        expect(textOf(hit)).toContain(anchoredId);
        const added = await client.callTool({
          name: 'add',
          arguments: {
            type: 'convention',
            title: `Legacy: ${WORDS[run]}`,
            body: `${WORDS[run]} Written over the handshake.`,
          },
        });
        expect(added.isError, textOf(added)).toBeFalsy();
      } finally {
        await client.close();
      }
    });
  }
});

describe('stateless clients (2026-07-28), launched twice', () => {
  for (const run of [1, 2]) {
    it(`run ${run}: the v2 SDK client pinned to ${MODERN} lists tools, searches and adds`, async () => {
      const client = new ModernClient(
        { name: `modern-${run}`, version: '2.0.0' },
        { versionNegotiation: { mode: { pin: MODERN } } },
      );
      await client.connect(new ModernStdio(serverParams()));
      try {
        expect(client.getNegotiatedProtocolVersion?.() ?? MODERN).toBe(MODERN);
        const tools = (await client.listTools()).tools.map((t) => t.name);
        expect(tools).toContain('search');
        const hit = await client.callTool({ name: 'search', arguments: { query: 'pool connections' } });
        expect(hit.isError).toBeFalsy();
        expect(textOf(hit)).toContain(anchoredId);
        const added = await client.callTool({
          name: 'add',
          arguments: {
            type: 'preference',
            title: `Stateless: ${WORDS[run]}`,
            body: `${WORDS[run]} Written without a handshake, ${MODERN}.`,
          },
        });
        expect(added.isError, textOf(added)).toBeFalsy();
      } finally {
        await client.close();
      }
    });
  }

  /** A bare client on the wire: one JSON line per message, as a stateless client writes them. */
  function wire(): {
    proc: ChildProcessWithoutNullStreams;
    send: (m: Json) => void;
    next: () => Promise<Json>;
    close: () => Promise<number | null>;
  } {
    const proc = spawn(process.execPath, [BIN, 'mcp'], { cwd: r.dir, env: r.env });
    const lines: Json[] = [];
    const waiting: ((m: Json) => void)[] = [];
    createInterface({ input: proc.stdout }).on('line', (l) => {
      const m = JSON.parse(l);
      const w = waiting.shift();
      if (w) w(m);
      else lines.push(m);
    });
    return {
      proc,
      send: (m) => proc.stdin.write(`${JSON.stringify(m)}\n`),
      next: () => (lines.length ? Promise.resolve(lines.shift()) : new Promise((res) => waiting.push(res))),
      close: () =>
        new Promise((res) => {
          proc.once('exit', (code) => res(code));
          proc.stdin.end();
        }),
    };
  }

  const meta = (name: string) => ({
    'io.modelcontextprotocol/protocolVersion': MODERN,
    'io.modelcontextprotocol/clientCapabilities': {},
    'io.modelcontextprotocol/clientInfo': { name, version: '1.0.0' },
  });

  for (const run of [1, 2]) {
    it(`run ${run}: server/discover first, then requests carrying _meta, no initialize`, async () => {
      const c = wire();
      c.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta('wire') } });
      const discovered = await c.next();
      expect(discovered.id).toBe(1);
      expect(discovered.error).toBeUndefined();
      expect(discovered.result.supportedVersions).toContain(MODERN);
      expect(discovered.result.capabilities.tools).toBeDefined();
      expect(
        discovered.result.serverInfo?.name ??
          discovered.result._meta?.['io.modelcontextprotocol/serverInfo']?.name,
      ).toBe('git-mem');

      c.send({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta('wire') } });
      const listed = await c.next();
      expect(listed.id).toBe(2);
      expect(listed.result.tools.map((t: Json) => t.name)).toContain('get');

      c.send({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { _meta: meta('wire'), name: 'get', arguments: { id: anchoredId } },
      });
      const got = await c.next();
      expect(got.id).toBe(3);
      expect(got.result.isError).toBeFalsy();
      expect(textOf(got.result)).toContain('Connection pool size is 20');

      // a request without the envelope on a stateless connection is refused as invalid params, not served
      c.send({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/list',
        params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } },
      });
      const bad = await c.next();
      expect(bad.id).toBe(4);
      expect(bad.error?.code).toBe(-32602);
      expect(await c.close()).toBe(0);
    });
  }

  it('a revision the server does not speak gets the unsupported-version error naming what it does', async () => {
    const c = wire();
    c.send({
      jsonrpc: '2.0',
      id: 1,
      method: 'server/discover',
      params: { _meta: { ...meta('future'), 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    });
    const res = await c.next();
    expect(res.id).toBe(1);
    expect(res.error).toBeDefined();
    expect(JSON.stringify(res.error.data ?? {})).toContain(MODERN);
    await c.close();
  });
});
