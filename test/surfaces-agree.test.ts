/**
 * One table of changes run through every surface that writes a memory: the
 * CLI (the built binary, a real process each), the MCP server (the real
 * `git mem mcp` over stdio, through the SDK's client) and the web UI (its
 * HTTP API, started as test/ui-unit.test.ts starts it). Each surface has its
 * own store holding the same memory; after every case the three records must
 * be the same and a refused case must give the same error code everywhere.
 * (Needs `npm run build`.)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufferIO } from '../src/cli/context.js';
import { openStore } from '../src/commands/context.js';
import { unframe } from '../src/safety/frame.js';
import { startUi, type UiServer } from '../src/ui/server.js';
import { BIN, type Json, makeRepo, ROOT, runBinAsync, type TestRepo } from './helpers.js';
import { secretsCorpus } from './secrets-corpus.js';

type Input = Record<string, unknown>;
interface Case {
  name: string;
  /** an update's fields, as the MCP tool and the UI take them */
  update?: Input;
  /** a verify, with `by` or without (the git identity) */
  verify?: { by?: string; ref?: string };
  /** the error code every surface must give; none: it must succeed */
  code?: string;
  /** a setting made first in each surface's clone (`git mem config set KEY VALUE`) */
  config?: [string, string];
}

/** Text every surface must take for a secret: an AWS access key id. */
const SECRET = `key ${secretsCorpus()[0].secret}`;

const CASES: Case[] = [
  { name: 'set source', update: { source: 'https://wiki.example/db' } },
  { name: 'set confidence', update: { confidence: 0.5 } },
  { name: 'confidence out of range', update: { confidence: 2 }, code: 'E_INVALID_ARG' },
  { name: 'set expiry', update: { expires: '30d' } },
  { name: 'clear expiry with ""', update: { expires: '' } },
  { name: 'set expiry again', update: { expires: '2099-01-01' } },
  { name: 'clear expiry with never', update: { expires: 'never' } },
  { name: 'clear source', update: { source: '' } },
  { name: 'a title cannot be cleared', update: { title: '' }, code: 'E_INVALID_ARG' },
  { name: 'unknown field', update: { colour: 'blue' }, code: 'E_INVALID_ARG' },
  { name: 'unknown status', update: { status: 'maybe' }, code: 'E_INVALID_ARG' },
  { name: 'unknown type', update: { type: 'opinion' }, code: 'E_INVALID_ARG' },
  { name: 'nothing to change', update: {}, code: 'E_INVALID_ARG' },
  { name: 'clear tags with ""', update: { tags: '' } },
  { name: 'replace tags', update: { tags: ['db', 'sql'] } },
  { name: 'add a tag', update: { add_tags: ['pg'] } },
  { name: 'remove a tag', update: { remove_tags: ['sql'] } },
  { name: 'title and status', update: { title: 'Postgres, not MySQL', status: 'stale' } },
  { name: 'a source with a control character', update: { source: 'a\u001bb' }, code: 'E_INVALID_ARG' },
  { name: 'verify by a name', verify: { by: 'Alice' } },
  { name: 'a lifetime of ten days', update: { expires: '10d' } },
  { name: 'verify restarts the expiry', verify: {} },
  { name: 'verify an unknown memory', verify: { ref: 'nosuchalias' }, code: 'E_NOT_FOUND' },
  // the one secret policy (src/commands/secret-policy.ts): the setting decides on every surface
  { name: 'a likely secret is refused (secret-scan block)', update: { body: SECRET }, code: 'E_SECRET' },
  { name: 'secret-scan warn stores it', config: ['secret-scan', 'warn'], update: { source: SECRET } },
  { name: 'secret-scan off stores it', config: ['secret-scan', 'off'], update: { body: `${SECRET}\n` } },
  {
    name: 'secret-scan block again refuses it',
    config: ['secret-scan', 'block'],
    update: { title: SECRET },
    code: 'E_SECRET',
  },
  { name: 'and a source without it', update: { source: '' } },
];

interface Surface {
  name: string;
  repo: TestRepo;
  id: string;
  /** runs a case: the error code (undefined on success) and how many warnings the surface gave */
  run: (c: Case) => Promise<{ code?: string; warnings: number }>;
}

/** The CLI's arguments for an update's fields: `--KEY VALUE`, a list repeated, tag edits as --add-tag/--remove-tag. */
function cliArgs(input: Input): string[] {
  const flag: Record<string, string> = { add_tags: 'add-tag', remove_tags: 'remove-tag', body: 'content' };
  return Object.entries(input).flatMap(([k, v]) =>
    [v].flat().flatMap((x) => [`--${flag[k] ?? k}`, String(x)]),
  );
}

const DAY = 864e5;
/** What must agree: the fields, an expiry as its lifetime from the last verification (or creation). */
function comparable(r: Json) {
  const start = Date.parse(r.verified?.at ?? r.created);
  return {
    type: r.type,
    title: r.title,
    status: r.status,
    tags: r.tags,
    scope: r.scope,
    confidence: r.confidence,
    source: r.source,
    alias: r.alias,
    body: r.body,
    expires:
      r.expires === null
        ? null
        : r.expires.startsWith('2099')
          ? r.expires
          : Math.round((Date.parse(r.expires) - start) / DAY),
    verifiedBy: r.verified?.by ?? null,
    verifiedAt: r.verified ? typeof r.verified.at : null,
  };
}

async function seed(): Promise<{ repo: TestRepo; id: string }> {
  const repo = makeRepo({ commit: true });
  const { id } = await repo.memJson([
    'add',
    '--title',
    'Postgres over MySQL',
    '--tags',
    'db',
    '--content',
    'Chose Postgres for JSONB.',
  ]);
  return { repo, id };
}

describe('every surface gives the same answer', () => {
  const surfaces: Surface[] = [];
  let mcp: Client | undefined;
  let ui: UiServer | undefined;
  const stores: Array<{ close(): void }> = [];

  beforeAll(async () => {
    if (!existsSync(join(ROOT, 'dist', 'cli.js'))) throw new Error('run npm run build first');
    // the CLI: the built binary
    const c = await seed();
    surfaces.push({
      name: 'cli',
      ...c,
      run: async (k) => {
        const args = k.verify
          ? ['verify', k.verify.ref ?? c.id, ...(k.verify.by ? ['--by', k.verify.by] : [])]
          : ['update', c.id, ...cliArgs(k.update ?? {})];
        const r = await runBinAsync([...args, '--json'], { cwd: c.repo.dir, env: c.repo.env });
        const warnings = r.stderr.split('\n').filter((l) => l.startsWith('git-mem: warning:')).length;
        if (r.code === 0) return { warnings };
        return { code: JSON.parse(r.stdout).error.code as string, warnings };
      },
    });
    // the MCP server over stdio
    const m = await seed();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: m.repo.dir,
      env: m.repo.env as Record<string, string>,
      stderr: 'pipe',
    });
    mcp = new Client({ name: 'surfaces-agree', version: '1.0.0' });
    await mcp.connect(transport);
    surfaces.push({
      name: 'mcp',
      ...m,
      run: async (k) => {
        const [name, args] = k.verify
          ? ['verify', { ids: [k.verify.ref ?? m.id], ...(k.verify.by ? { by: k.verify.by } : {}) }]
          : ['update', { id: m.id, ...k.update }];
        const res = (await mcp!.callTool({ name, arguments: args })) as {
          content: Array<{ text: string }>;
          structuredContent?: { warnings?: string[] };
          isError?: boolean;
          _meta?: Record<string, { code?: string }>;
        };
        if (!res.isError) return { warnings: res.structuredContent?.warnings?.length ?? 0 };
        // the code as data (what --json gives), and the same code first in the model's line
        const code = res._meta?.['git-mem/error']?.code ?? 'unknown';
        expect(unframe(res.content[0].text)).toMatch(new RegExp(`^${code}: `));
        return { code, warnings: 0 };
      },
    });
    // the UI's HTTP API
    const u = await seed();
    const ctx = { io: bufferIO(), cwd: u.repo.dir, env: u.repo.env, stores: [] as never[] };
    const store = await openStore(ctx);
    stores.push(...(ctx.stores as Array<{ close(): void }>));
    ui = await startUi(
      { store, cwd: u.repo.dir, env: u.repo.env },
      { assets: join(ROOT, 'dist'), log: () => {} },
    );
    surfaces.push({
      name: 'ui',
      ...u,
      run: async (k) => {
        const path = k.verify ? `memory/${k.verify.ref ?? u.id}/verify` : `memory/${u.id}`;
        const body = k.verify ? (k.verify.by ? { by: k.verify.by } : {}) : k.update;
        const r = await fetch(`http://127.0.0.1:${ui!.port}/api/${path}`, {
          method: 'POST',
          headers: { 'x-git-mem-token': ui!.token, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (r.ok) return { warnings: ((await r.json()) as { warnings?: string[] }).warnings?.length ?? 0 };
        return { code: ((await r.json()) as { error: { code: string } }).error.code, warnings: 0 };
      },
    });
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    await ui?.close();
    for (const s of stores) s.close();
  });

  it('agrees on every case of the table: the same records, the same error codes', async () => {
    for (const k of CASES) {
      const codes: Record<string, string | undefined> = {};
      const warned: Record<string, number> = {};
      const records: Record<string, unknown> = {};
      for (const s of surfaces) {
        if (k.config) expect((await s.repo.mem(['config', 'set', ...k.config])).code, k.name).toBe(0);
        const r = await s.run(k);
        codes[s.name] = r.code;
        warned[s.name] = r.warnings;
        records[s.name] = comparable(await s.repo.memJson(['show', s.id]));
      }
      const want = Object.fromEntries(surfaces.map((s) => [s.name, k.code]));
      expect(codes, k.name).toEqual(want);
      // a likely secret stored under warn is said on every surface (stderr, `warnings` in the answer)
      const warns = Object.fromEntries(surfaces.map((s) => [s.name, k.name.includes(' warn ') ? 1 : 0]));
      expect(warned, k.name).toEqual(warns);
      expect(records.mcp, `${k.name}: mcp and cli`).toEqual(records.cli);
      expect(records.ui, `${k.name}: ui and cli`).toEqual(records.cli);
    }
    // and where the table leads: each case left its mark
    const last = (await surfaces[0].repo.memJson(['show', surfaces[0].id])) as Json;
    expect(comparable(last)).toMatchObject({
      title: 'Postgres, not MySQL',
      status: 'stale',
      tags: ['db', 'pg'],
      confidence: 0.5,
      source: null,
      expires: 10,
      verifiedAt: 'string',
    });
    expect(last.verified.by).not.toBe('Alice');
  }, 300_000);
});
