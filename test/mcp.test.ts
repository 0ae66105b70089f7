/**
 * `git mem mcp` through the MCP SDK's own client: a real `node bin/git-mem.js
 * mcp` process over stdio against a temp repository (needs `npm run build`).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkArgs, mcpErrorLine, TOOLS } from '../src/agents/mcp-tools.js';
import { err } from '../src/errors.js';
import { unframe } from '../src/safety/frame.js';
import { BIN, type Json, makeRepo, type TestRepo, thrown } from './helpers.js';

let r: TestRepo;
let client: Client;
let transport: StdioClientTransport;
const ids: Record<string, string> = {};

type Content = Array<{ type: string; text: string }>;

async function call(name: string, args: Record<string, unknown> = {}) {
  const res = (await client.callTool({ name, arguments: args })) as {
    content: Content;
    isError?: boolean;
    _meta?: Record<string, { code?: string; [k: string]: unknown }>;
  };
  return res;
}
async function callJson<T = Json>(name: string, args: Record<string, unknown> = {}): Promise<T> {
  const res = await call(name, args);
  if (res.isError) throw new Error(`${name} failed: ${res.content[0]?.text}`);
  // every result comes framed for the model; JSON results are JSON inside the frame
  return JSON.parse(unframe(res.content[0].text)!) as T;
}

beforeAll(async () => {
  if (!existsSync(BIN.replace(/bin\/git-mem\.js$/, 'dist/cli.js')))
    throw new Error('run npm run build first');
  r = makeRepo({ commit: true });
  r.write('src/db/pool.ts', 'export const pool = 1;\n');
  r.commitAll('code');
  ids.rule = (
    await r.memJson([
      'add',
      '--type',
      'rule',
      '--title',
      'Parameterised SQL only',
      '--scope',
      'src/db/**',
      '--content',
      'Never build SQL by string concatenation.',
    ])
  ).id;
  ids.always = (
    await r.memJson(['add', '--type', 'rule', '--title', 'Use pnpm', '--content', 'Run scripts with pnpm.'])
  ).id;
  ids.decision = (
    await r.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'Postgres over MySQL',
      '--tags',
      'db',
      '--content',
      'Chose Postgres for JSONB columns and partial indexes.',
    ])
  ).id;
  // a memory anchored to code that then changes: `git mem check` flags it stale with a reason
  ids.stale = (
    await r.memJson([
      'add',
      '--type',
      'known_fix',
      '--anchor',
      'src/db/pool.ts:1',
      '--title',
      'Pool exhaustion fix',
      '--content',
      'Raise the pool size to 20 in src/db/pool.ts.',
    ])
  ).id;
  r.write('src/db/pool.ts', 'export const pool = 20;\n');
  r.commitAll('bigger pool');
  await r.memJson(['check']);
  ids.pending = (
    await r.memJson([
      'add',
      '--type',
      'convention',
      '--status',
      'pending',
      '--title',
      'Snake case for SQL columns',
      '--content',
      'Columns use snake_case.',
    ])
  ).id;
  ids.pending2 = (
    await r.memJson([
      'add',
      '--type',
      'decision',
      '--status',
      'pending',
      '--title',
      'Build succeeded today',
      '--content',
      'Transient.',
    ])
  ).id;
  ids.session = (
    await r.memJson([
      'add',
      '--type',
      'session',
      '--title',
      'Session: fixed the flaky pool test',
      '--content',
      '## Files Modified\n- src/db/pool.ts (+3 -1)\n\n## Status\n- Completed',
    ])
  ).id;
  transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd: r.dir,
    env: r.env as Record<string, string>,
    stderr: 'pipe',
  });
  client = new Client({ name: 'git-mem-test', version: '1.0.0' });
  await client.connect(transport);
});

afterAll(async () => {
  await client?.close();
});

describe('git mem mcp over stdio', () => {
  it('announces itself and lists every tool with a JSON schema and a description', async () => {
    expect(client.getServerVersion()?.name).toBe('git-mem');
    expect(client.getInstructions()).toContain('refs/memory');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([
      'add',
      'context',
      'delete',
      'get',
      'review',
      'rules',
      'search',
      'sessions',
      'stale',
      'update',
      'verify',
    ]);
    for (const t of tools) {
      expect(t.inputSchema.type).toBe('object');
      // every tool says what its structured content holds (the client validates each answer by it)
      expect(t.outputSchema?.type, t.name).toBe('object');
      expect((t.description ?? '').length).toBeGreaterThan(40);
    }
    const add = tools.find((t) => t.name === 'add')!;
    expect(add.inputSchema.required).toEqual(['type', 'title', 'body']);
    expect((add.inputSchema.properties as Record<string, { enum?: string[] }>).type.enum).toContain(
      'known_fix',
    );
    expect(tools.find((t) => t.name === 'get')!.annotations?.readOnlyHint).toBe(true);
    expect(tools.find((t) => t.name === 'delete')!.annotations?.destructiveHint).toBe(true);
  });

  it('search, get and context', async () => {
    const hits = await callJson<Array<{ id: string; title: string }>>('search', {
      query: 'postgres JSONB',
      limit: 5,
    });
    expect(hits[0].id).toBe(ids.decision);
    // the structured content is the same data as the (framed) text: a list as {items}, an object as it is
    const raw = await client.callTool({ name: 'search', arguments: { query: 'postgres JSONB', limit: 5 } });
    // (the second call's `why` counts the first as a use: compare the hits by id)
    const items = (raw.structuredContent as { items: Array<{ id: string }> }).items;
    expect(items.map((h) => h.id)).toEqual(hits.map((h) => h.id));
    const shown = await client.callTool({ name: 'get', arguments: { id: ids.decision } });
    expect(shown.structuredContent).toMatchObject({ id: ids.decision, type: 'decision' });
    const typed = await callJson<Array<{ id: string }>>('search', { query: 'pool', types: ['decision'] });
    expect(typed.map((h) => h.id)).not.toContain(ids.stale);
    const got = await callJson('get', { id: ids.decision.slice(0, 12).toLowerCase() });
    expect(got).toMatchObject({
      id: ids.decision,
      type: 'decision',
      title: 'Postgres over MySQL',
      body: 'Chose Postgres for JSONB columns and partial indexes.\n',
    });
    const ctx = await call('context', {
      file: 'src/db/pool.ts',
      query: 'which database: postgres',
      budget: 1500,
    });
    expect(ctx.isError).toBeFalsy();
    const t = ctx.content[0].text;
    expect(t).toContain('<memory');
    expect(t).toContain('Parameterised SQL only');
    expect(t).toContain('Use pnpm');
    expect(t.indexOf('Parameterised SQL only')).toBeLessThan(t.indexOf('Postgres over MySQL'));
    const asJson = await callJson<{ items: Array<{ id: string }> }>('context', {
      file: `${r.dir}/src/db/pool.ts`,
      format: 'json',
    });
    expect(asJson.items.map((i) => i.id)).toContain(ids.rule);
  });

  it('rules, stale and sessions', async () => {
    const rules = await callJson<Array<{ id: string; matched: string | null }>>('rules', {
      file: 'src/db/pool.ts',
    });
    expect(rules.map((x) => x.id)).toEqual([ids.rule, ids.always]);
    expect(rules[0].matched).toBe('src/db/**');
    const other = await callJson<Array<{ id: string }>>('rules', { file: 'README.md' });
    expect(other.map((x) => x.id)).toEqual([ids.always]);
    const stale = await callJson<Array<{ id: string; title: string; reasons: string[] }>>('stale');
    expect(stale.map((s) => s.id)).toEqual([ids.stale]);
    expect(stale[0].reasons.join('\n')).toMatch(/src\/db\/pool\.ts:1-1: changed/);
    const sessions = await callJson<Array<{ id: string; summary: string }>>('sessions');
    expect(sessions.map((s) => s.id)).toEqual([ids.session]);
    expect(sessions[0].summary).toContain('src/db/pool.ts (+3 -1)');
    const one = await callJson('sessions', { id: ids.session });
    expect(one.type).toBe('session');
    const notSession = await call('sessions', { id: ids.decision });
    expect(notSession.isError).toBe(true);
    expect(notSession.content[0].text).toContain('not a session summary');
  });

  it('add, update and delete commit to refs/memory', async () => {
    const before = r.git('rev-list', '--count', 'refs/memory').trim();
    const added = await callJson('add', {
      type: 'known_fix',
      title: 'ECONNRESET in CI: retry the registry',
      body: 'npm ci fails with ECONNRESET; set fetch-retries=5.',
      tags: ['ci'],
    });
    expect(added.status).toBe('active');
    expect(Number(r.git('rev-list', '--count', 'refs/memory').trim())).toBe(Number(before) + 1);
    const shown = await r.memJson(['show', added.id]);
    expect(shown).toMatchObject({
      title: 'ECONNRESET in CI: retry the registry',
      source: 'mcp',
      tags: ['ci'],
    });
    // provenance: the MCP client, by the name it gave at initialize, on the record and the commit
    expect(shown.by).toEqual({ kind: 'agent', agent: 'git-mem-test' });
    expect(r.git('log', '-1', '--format=%(trailers:key=Mem-Agent,valueonly)', 'refs/memory').trim()).toBe(
      'git-mem-test',
    );
    const upd = await callJson('update', {
      id: added.id,
      body: 'Set fetch-retries=5 in .npmrc.',
      add_tags: ['npm'],
    });
    expect(upd.changed).toEqual(['body', 'tags']);
    expect((await r.memJson(['show', added.id])).body).toBe('Set fetch-retries=5 in .npmrc.\n');
    const del = await callJson('delete', { id: added.id, reason: 'obsolete' });
    expect(del.deleted).toBe(true);
    expect(r.git('ls-tree', '-r', '--name-only', 'refs/memory')).toContain(
      `tombstones/${added.id.slice(-2)}/${added.id}.yaml`,
    );
    expect((await r.mem(['show', added.id])).code).toBe(3);
  });

  it('review lists, approves (with edits) and rejects pending proposals', async () => {
    const pending = await callJson<Array<{ id: string; title: string }>>('review', { action: 'list' });
    expect(pending.map((p) => p.id).sort()).toEqual([ids.pending, ids.pending2].sort());
    // the same view of each proposal as `git mem review --json` (and the UI's Review page)
    expect(pending).toEqual(await r.memJson(['review']));
    const ok = await callJson('review', {
      action: 'approve',
      id: ids.pending,
      title: 'SQL columns use snake_case',
    });
    expect(ok.status).toBe('active');
    expect(await r.memJson(['show', ids.pending])).toMatchObject({
      status: 'active',
      title: 'SQL columns use snake_case',
    });
    const no = await callJson('review', { action: 'reject', id: ids.pending2 });
    expect(no.rejected).toBe(true);
    expect((await r.mem(['show', ids.pending2])).code).toBe(3);
    // remembered locally so extraction never proposes it again
    expect(readFileSync(join(r.dir, '.git', 'mem', 'review-rejected.txt'), 'utf8').trim()).not.toBe('');
    // approve with a new type and tags as well
    const p3 = (
      await r.memJson([
        'add',
        '--type',
        'decision',
        '--status',
        'pending',
        '--title',
        'Retry flaky network tests once',
        '--content',
        'Retry once.',
      ])
    ).id;
    const ok3 = await callJson('review', { action: 'approve', id: p3, type: 'convention', tags: ['tests'] });
    expect(ok3).toMatchObject({ status: 'active', type: 'convention', tags: ['tests'] });
    expect(await callJson('review', { action: 'list' })).toEqual([]);
    const again = await call('review', { action: 'approve', id: ids.pending });
    expect(again.isError).toBe(true);
    expect(again._meta?.['git-mem/error']?.code).toBe('E_INVALID_ARG');
    expect(again.content[0].text).toContain(ids.pending.slice(0, 12)); // the proposal, no longer pending
  });

  it('returns errors as tool errors and keeps serving', async () => {
    const tip = r.git('rev-parse', 'refs/memory').trim();
    // each refusal: its code and data (as --json gives them), and what the line names where no
    // data field holds it (the argument, the id or the path at fault)
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string]> = [
      ['get', { id: 'ZZZZZZZZZZZZ' }, { code: 'E_NOT_FOUND' }, '"ZZZZZZZZZZZZ"'],
      ['get', {}, { code: 'E_INVALID_ARG' }, '"id"'],
      ['add', { type: 'nonsense', title: 't', body: 'b' }, { code: 'E_INVALID_ARG' }, '"type"'],
      [
        'add',
        { type: 'decision', title: 't', body: 'token ghp_abcdefghijklmnopqrstuvwxyz0123456789' },
        { code: 'E_SECRET', field: 'body' },
        '',
      ],
      ['search', { query: 'x', limit: 'ten' }, { code: 'E_INVALID_ARG' }, '"limit"'],
      ['search', { query: 'x', bogus: 1 }, { code: 'E_INVALID_ARG' }, '"bogus"'],
      ['update', { id: ids.decision }, { code: 'E_INVALID_ARG' }, ''],
      ['rules', { file: '/etc/passwd' }, { code: 'E_INVALID_ARG' }, '/etc/passwd'],
      // repository-relative paths are resolved from the work tree: one that climbs out is refused alike
      ['rules', { file: '../../x' }, { code: 'E_INVALID_ARG' }, '../../x'],
      ['context', { file: 'src/../../x' }, { code: 'E_INVALID_ARG' }, 'src/../../x'],
      ['search', { query: 'x', file: '../etc/passwd' }, { code: 'E_INVALID_ARG' }, '../etc/passwd'],
      ['review', { action: 'approve' }, { code: 'E_INVALID_ARG' }, '"id"'],
      ['no_such_tool', {}, { code: 'E_INVALID_ARG' }, '"no_such_tool"'],
    ];
    for (const [name, args, error, named] of cases) {
      const what = `${name} ${JSON.stringify(args)}`;
      const res = await call(name, args);
      expect(res.isError, what).toBe(true);
      expect(res._meta?.['git-mem/error'], what).toMatchObject(error);
      expect(res.content[0].text, what).toContain(named);
      // the code first in the model's line
      expect(unframe(res.content[0].text), what).toMatch(new RegExp(`^${error.code}: `));
    }
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip);
    // the fix named is one an agent can make with the tool's arguments, not a command-line flag
    const secret = await call('add', {
      type: 'decision',
      title: 't',
      body: 'token ghp_abcdefghijklmnopqrstuvwxyz0123456789',
    });
    expect(secret.content[0].text).toContain('remove it from the text');
    expect(secret._meta?.['git-mem/error']).toMatchObject({ code: 'E_SECRET', field: 'body' });
    expect(secret.content[0].text).not.toContain('pass --allow-secret');
    const badAnchor = await call('add', { type: 'decision', title: 'a', body: 'b', anchors: ['x.ts:9-2'] });
    expect(badAnchor.isError).toBe(true);
    expect(badAnchor.content[0].text).toMatch(/"anchors" item/);
    expect(badAnchor.content[0].text).not.toContain('--anchor');
    const dup = mcpErrorLine(
      err(
        'E_DUPLICATE',
        'likely duplicate of X',
        'update that memory instead, or pass --force to add anyway',
      ),
    );
    expect(dup).toBe(
      'E_DUPLICATE: likely duplicate of X (update that memory instead (the update tool with its id); the add tool never stores a duplicate)',
    );
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip);
    // still alive
    expect((await callJson('get', { id: ids.decision })).id).toBe(ids.decision);
  });

  it('serves the rules and each memory as resources', async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((x) => x.uri);
    expect(uris[0]).toBe('memory://rules');
    expect(uris).toContain(`memory://${ids.decision}`);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['memory://{id}']);
    const rules = await client.readResource({ uri: 'memory://rules' });
    const rt = (rules.contents[0] as { text: string }).text;
    expect(rt).toContain('## Parameterised SQL only');
    expect(rt).toContain('applies to: `src/db/**`');
    const one = await client.readResource({ uri: `memory://${ids.decision}` });
    expect(one.contents[0]).toMatchObject({ uri: `memory://${ids.decision}`, mimeType: 'text/markdown' });
    expect(unframe((one.contents[0] as { text: string }).text)).toMatch(
      /^---\nid: "?[0-9A-Z]{26}"?\ntype: decision\n[\s\S]*---\nChose Postgres/,
    );
    // the code and data `--json` gives, under the key a tool's error uses
    const missing = await client.readResource({ uri: 'memory://ZZZZZZZZZZZZ' }).catch((e) => e);
    expect(missing.code).toBe(-32602);
    expect(missing.data).toEqual({ uri: 'memory://ZZZZZZZZZZZZ', 'git-mem/error': { code: 'E_NOT_FOUND' } });
    const unknown = await client.readResource({ uri: 'bogus://x' }).catch((e) => e);
    expect(unknown.data).toMatchObject({ uri: 'bogus://x', 'git-mem/error': { code: 'E_NOT_FOUND' } });
  });

  it('exits when the client closes stdin', async () => {
    const t2 = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: r.dir,
      env: r.env as Record<string, string>,
      stderr: 'pipe',
    });
    const c2 = new Client({ name: 'second', version: '1.0.0' });
    await c2.connect(t2);
    const pid = t2.pid!;
    expect((await c2.listTools()).tools.length).toBe(11);
    await c2.close();
    let alive = true;
    for (let i = 0; i < 50 && alive; i++) {
      await new Promise((res) => setTimeout(res, 100));
      try {
        process.kill(pid, 0);
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
  });
});

describe('mcp tools (pure parts)', () => {
  it('checks arguments against the schemas', () => {
    const search = TOOLS.find((t) => t.name === 'search')!;
    expect(checkArgs(search, { query: 'x', types: ['decision'] })).toEqual({
      query: 'x',
      types: ['decision'],
    });
    // E_INVALID_ARG naming the argument at fault (no data field holds it)
    expect(thrown(() => checkArgs(search, { query: 'x', types: ['nope'] }))).toMatchObject({
      code: 'E_INVALID_ARG',
      message: expect.stringContaining('"types"'),
    });
    expect(thrown(() => checkArgs(search, { query: 'x', limit: 0 }))).toMatchObject({
      code: 'E_INVALID_ARG',
      message: expect.stringContaining('"limit"'),
    });
    expect(thrown(() => checkArgs(search, []))).toMatchObject({ code: 'E_INVALID_ARG' });
    // the schema decides, whole (a JSON-schema validator, not a checker of a few keywords): a union
    // type the old hand-written checker skipped is enforced, and every refusal is E_INVALID_ARG
    const update = TOOLS.find((t) => t.name === 'update')!;
    const codeOf = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return (e as { code?: string }).code;
      }
      return 'accepted';
    };
    expect(codeOf(() => checkArgs(update, { id: '01ABCDEF', tags: 5 }))).toBe('E_INVALID_ARG');
    expect(codeOf(() => checkArgs(update, { id: '01ABCDEF', tags: ['a'] }))).toBe('accepted');
    expect(codeOf(() => checkArgs(update, { id: '01ABCDEF', tags: 'a,b' }))).toBe('accepted');
    expect(codeOf(() => checkArgs(update, { id: '01ABCDEF', confidence: 1.5 }))).toBe('E_INVALID_ARG');
    expect(codeOf(() => checkArgs(search, { query: 'x', nope: 1 }))).toBe('E_INVALID_ARG');
  });
});

describe('mcp tools in-process on a repository without a store yet', () => {
  it('reads give empty answers, the first add creates the store', async () => {
    const { Store } = await import('../src/gitstore/store.js');
    const { openRepo } = await import('../src/gitstore/repo.js');
    const { callTool, readResource } = await import('../src/agents/mcp-tools.js');
    const fresh = makeRepo();
    const store = new Store(await openRepo(fresh.dir, fresh.env));
    const env = { store, cwd: fresh.dir };
    try {
      for (const [name, args] of [
        ['search', { query: 'anything' }],
        ['rules', {}],
        ['stale', {}],
        ['sessions', {}],
        ['review', { action: 'list' }],
      ] as const) {
        const res = await callTool(env, name, args);
        expect(res.isError, `${name}: ${res.content[0].text}`).toBeFalsy();
        expect(JSON.parse(unframe(res.content[0].text)!)).toEqual([]);
      }
      const ctx = await callTool(env, 'context', { query: 'x' });
      expect(ctx.isError).toBeFalsy();
      const get = await callTool(env, 'get', { id: 'ABCD' });
      expect(get.isError).toBe(true);
      expect(get.content[0].text).toContain('git mem init');
      expect((await readResource(env, 'memory://rules')).text).toContain('No rules yet');
      const added = await callTool(env, 'add', {
        type: 'decision',
        title: 'First',
        body: 'The first memory.',
      });
      expect(added.isError).toBeFalsy();
      expect(fresh.git('cat-file', '-p', 'refs/memory:FORMAT')).toContain('format: 1');
      // a budget that holds none of the pack's memories is an error naming the budget that does
      const tiny = await callTool(env, 'context', { query: 'the first memory', budget: 10 });
      expect(tiny.isError).toBe(true);
      expect(unframe(tiny.content[0].text)).toMatch(
        /^E_INVALID_ARG: budget 10 is too small for any memory in this pack \(give a "budget" of \d+\)$/,
      );
    } finally {
      store.close();
    }
  });
});

describe('mcp.add-status', () => {
  it('sends additions through review when set to pending', async () => {
    const { mcpEnv } = await import('../src/agents/mcp.js');
    const { callTool } = await import('../src/agents/mcp-tools.js');
    const { bufferIO } = await import('../src/cli/context.js');
    const repo = makeRepo();
    repo.git('config', 'mem.mcp.add-status', 'pending');
    const ctx = { io: bufferIO(), cwd: repo.dir, env: repo.env, json: false, stores: [] };
    const env = await mcpEnv(ctx);
    try {
      const res = await callTool(env, 'add', { type: 'decision', title: 'Agent idea', body: 'Try X.' });
      expect(JSON.parse(unframe(res.content[0].text)!).status).toBe('pending');
      const explicit = await callTool(env, 'add', {
        type: 'decision',
        title: 'Agent fact',
        body: 'Y.',
        status: 'active',
      });
      expect(JSON.parse(unframe(explicit.content[0].text)!).status).toBe('active');
    } finally {
      for (const s of ctx.stores as Array<{ close(): void }>) s.close();
    }
  });
});

describe('mcp tools in-process: what counts as a use', () => {
  it('the hits search gives the agent and the memory get reads count; nothing is committed', async () => {
    const { Store } = await import('../src/gitstore/store.js');
    const { openRepo } = await import('../src/gitstore/repo.js');
    const { callTool } = await import('../src/agents/mcp-tools.js');
    const { usageCounts } = await import('../src/search/usage.js');
    const t = makeRepo({ commit: true });
    const a = (
      await t.memJson(['add', '--type', 'decision', '--title', 'Postgres over MySQL', '--content', 'JSONB.'])
    ).id as string;
    const b = (
      await t.memJson(['add', '--type', 'decision', '--title', 'Redis for sessions', '--content', 'TTL.'])
    ).id as string;
    const before = t.git('rev-parse', 'refs/memory');
    const store = new Store(await openRepo(t.dir, t.env));
    const env = { store, cwd: t.dir };
    try {
      const res = await callTool(env, 'search', { query: 'postgres' });
      expect(res.isError).toBeFalsy();
      expect(usageCounts(store.repo).get(a)).toBe(1);
      expect(usageCounts(store.repo).get(b)).toBeUndefined();
      expect((await callTool(env, 'get', { id: b })).isError).toBeFalsy();
      expect(usageCounts(store.repo).get(b)).toBe(1);
      expect(t.git('rev-parse', 'refs/memory')).toBe(before);
    } finally {
      store.close();
    }
  });
});
