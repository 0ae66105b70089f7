/**
 * A new field is one row of the field table (src/model/fields.ts), issue #29: this file builds
 * git-mem with two rows added, a `ticket` of kind `line` and a `due` date, and nothing else
 * changed, then drives
 * that build's every surface in-process: the CLI's add, show, update, clearing, export and
 * import; the secret scan on each of them; the MCP tools' schemas and calls; the UI's form and
 * its HTTP API. A field that needed a second edit anywhere (the record's codec, the patch, the
 * add, import or export, the JSON views, the scan) fails here.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, ROOT, type TestRepo } from '../helpers.js';
import { plumber, recordText } from '../hostile-helpers.js';
import { bareRemote } from '../sync-helpers.js';

/** A row of the table as its source would hold it: a field people give as text, set and cleared. */
const row = (key: string, kind: 'line' | 'date', help: string) =>
  `  { key: '${key}', frontmatter: true, kind: '${kind}', merge: 'scalar', help: '${help}', input: 'string', ` +
  `add: true, update: 'set-clear', ui: true, compare: true, exported: true },\n`;
const ROW =
  row('ticket', 'line', 'the tracker ticket it belongs to') +
  row('due', 'date', 'when to look at it again: ISO date or duration (30d, 2w)');
/** an AWS access key id the scanner knows (assembled, so this file holds none) */
const SECRET = `AKIA${'Q3JX7RZ2M5VTBN4W'}`;

interface Built {
  main: (argv: string[], io: unknown, ctx: { cwd: string; env: NodeJS.ProcessEnv }) => Promise<number>;
  bufferIO: (stdin?: string) => { stdout: string; stderr: string };
  callTool: (
    env: unknown,
    name: string,
    args: unknown,
  ) => Promise<{ isError?: boolean; content: Array<{ text: string }> }>;
  TOOLS: Array<{ name: string; inputSchema: { properties: Record<string, unknown> } }>;
  FORM_FIELDS: ReadonlyArray<{ key: string }>;
  Store: new (repo: unknown) => { close(): void };
  openRepo: (dir: string, env: NodeJS.ProcessEnv) => Promise<unknown>;
  startUi: (env: unknown, opts: unknown) => Promise<{ port: number; token: string; close(): Promise<void> }>;
}

// inside the checkout, so the bundle finds the packages it leaves external in node_modules/
const out = join(ROOT, 'node_modules', '.cache', `git-mem-one-row-${process.pid}`);
let gm: Built;
let repo: TestRepo;

beforeAll(async () => {
  mkdirSync(out, { recursive: true });
  const fields = join(ROOT, 'src', 'model', 'fields.ts');
  await build({
    stdin: {
      contents: [
        "export { main } from './cli/main.ts';",
        "export { bufferIO } from './cli/context.ts';",
        "export { callTool, TOOLS } from './agents/mcp-tools.ts';",
        "export { Store } from './gitstore/store.ts';",
        "export { openRepo } from './gitstore/repo.ts';",
        "export { FORM_FIELDS } from './ui/form.ts';",
        "export { startUi } from './ui/server.ts';",
      ].join('\n'),
      resolveDir: join(ROOT, 'src'),
      sourcefile: 'one-row-entry.ts',
      loader: 'ts',
    },
    outfile: join(out, 'entry.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    logLevel: 'error',
    banner: {
      js: "import { createRequire as __gmCreateRequire } from 'node:module'; const require = __gmCreateRequire(import.meta.url);",
    },
    plugins: [
      {
        name: 'one-row',
        setup(b) {
          b.onLoad({ filter: /[\\/]src[\\/]model[\\/]fields\.ts$/ }, async (a) => {
            const { readFileSync } = await import('node:fs');
            const text = readFileSync(a.path, 'utf8');
            const at = text.indexOf("  { key: 'author',");
            if (a.path !== fields || at < 0) throw new Error('the field table moved: update this test');
            return { contents: text.slice(0, at) + ROW + text.slice(at), loader: 'ts' };
          });
        },
      },
    ],
  });
  gm = (await import(pathToFileURL(join(out, 'entry.mjs')).href)) as Built;
  repo = makeRepo({ commit: true });
}, 60_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

async function mem(args: string[], stdin?: string) {
  const io = gm.bufferIO(stdin);
  const code = await gm.main(args, io, { cwd: repo.dir, env: repo.env });
  return { code, stdout: io.stdout, stderr: io.stderr };
}
async function shown(id: string): Promise<Record<string, unknown>> {
  const r = await mem(['show', id, '--json']);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout);
}
const tip = () => repo.git('rev-parse', 'refs/memory').trim();

describe('a field added as one row of the table', () => {
  it('a date row: the CLI and import read a duration or an ISO date, never clears it, an unreadable one is refused', async () => {
    const day = 864e5;
    const add = await mem([
      'add',
      '--title',
      'Review the pool',
      '--content',
      'Size it again.',
      '--due',
      '30d',
      '--json',
    ]);
    expect(add.code, add.stderr).toBe(0);
    const id = JSON.parse(add.stdout).id;
    const due = Date.parse(String((await shown(id)).due));
    expect(Math.abs(due - (Date.now() + 30 * day))).toBeLessThan(day);
    expect((await mem(['update', id, '--due', '2031-05-01'])).code).toBe(0);
    expect((await shown(id)).due).toBe('2031-05-01T00:00:00.000Z');
    expect((await mem(['update', id, '--due', 'never'])).code).toBe(0);
    expect((await shown(id)).due).toBeNull();
    const bad = await mem(['update', id, '--due', 'someday', '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error.code).toBe('E_INVALID_ARG');
    const imp = await mem(
      ['import', '-'],
      `${JSON.stringify({ type: 'decision', title: 'Dated', body: 'b', due: '2032-01-02' })}\n`,
    );
    expect(imp.code, imp.stderr).toBe(0);
    const list = JSON.parse((await mem(['list', '--json'])).stdout) as Array<{ id: string; title: string }>;
    expect((await shown(list.find((m) => m.title === 'Dated')!.id)).due).toBe('2032-01-02T00:00:00.000Z');
  });

  let id: string;

  it('the CLI adds, shows, updates and clears it, and the record file holds it', async () => {
    const add = await mem([
      'add',
      '--title',
      'Pool size',
      '--content',
      'Keep it at 10.',
      '--ticket',
      'OPS-1',
      '--json',
    ]);
    expect(add.code, add.stderr).toBe(0);
    id = JSON.parse(add.stdout).id;
    expect((await shown(id)).ticket).toBe('OPS-1');
    const file = repo
      .git('ls-tree', '-r', '--name-only', 'refs/memory')
      .split('\n')
      .find((p) => p.includes(id))!;
    expect(repo.git('show', `refs/memory:${file}`)).toMatch(/^ticket: OPS-1$/m);
    const text = await mem(['show', id]);
    expect(text.stdout).toMatch(/^ticket: +OPS-1$/m);

    expect((await mem(['update', id, '--ticket', 'OPS-2'])).code).toBe(0);
    expect((await shown(id)).ticket).toBe('OPS-2');
    expect((await mem(['update', id, '--ticket', ''])).code).toBe(0);
    expect((await shown(id)).ticket).toBeNull();
    expect((await mem(['update', id, '--ticket', 'OPS-3'])).code).toBe(0);
  });

  it('export writes it and import reads it back', async () => {
    const exp = await mem(['export']);
    const line = exp.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .find((l) => l.id === id);
    expect(line.ticket).toBe('OPS-3');
    const imp = await mem(
      ['import', '-'],
      `${JSON.stringify({ type: 'decision', title: 'Imported', body: 'b', ticket: 'OPS-4' })}\n`,
    );
    expect(imp.code, imp.stderr).toBe(0);
    const list = JSON.parse((await mem(['list', '--json'])).stdout) as Array<{ id: string; title: string }>;
    const imported = list.find((m) => m.title === 'Imported')!;
    expect((await shown(imported.id)).ticket).toBe('OPS-4');
  });

  it('a likely secret in it is refused by add, update and import, the store unchanged', async () => {
    const before = tip();
    const add = await mem([
      'add',
      '--title',
      'Other',
      '--content',
      'Other text.',
      '--ticket',
      SECRET,
      '--json',
    ]);
    const update = await mem(['update', id, '--ticket', SECRET, '--json']);
    const imp = await mem(
      ['import', '-', '--json'],
      `${JSON.stringify({ type: 'decision', title: 'X', body: 'y', ticket: SECRET })}\n`,
    );
    for (const r of [add, update, imp]) {
      expect(r.code, r.stderr).toBe(2);
      // refused as a secret, in the new field
      expect(JSON.parse(r.stdout).error).toMatchObject({ code: 'E_SECRET', field: 'ticket' });
    }
    expect(tip()).toBe(before);
  });

  it('the MCP tools declare it and set and clear it', async () => {
    for (const name of ['add', 'update'])
      expect(Object.keys(gm.TOOLS.find((t) => t.name === name)!.inputSchema.properties)).toContain('ticket');
    const store = new gm.Store(await gm.openRepo(repo.dir, repo.env));
    try {
      const env = { store, cwd: repo.dir, env: repo.env };
      const add = await gm.callTool(env, 'add', {
        type: 'decision',
        title: 'From MCP',
        body: 'Said by an agent.',
        ticket: 'MCP-1',
      });
      expect(add.isError, add.content[0].text).toBeFalsy();
      const list = JSON.parse((await mem(['list', '--json'])).stdout) as Array<{ id: string; title: string }>;
      const mcpId = list.find((m) => m.title === 'From MCP')!.id;
      expect((await shown(mcpId)).ticket).toBe('MCP-1');
      const clear = await gm.callTool(env, 'update', { id: mcpId, ticket: '' });
      expect(clear.isError, clear.content[0].text).toBeFalsy();
      expect((await shown(mcpId)).ticket).toBeNull();
      const secret = await gm.callTool(env, 'update', { id: mcpId, ticket: SECRET });
      expect(secret.isError).toBe(true);
    } finally {
      store.close();
    }
  });

  it("the UI's form has it and its API sets it", async () => {
    expect(gm.FORM_FIELDS.map((f) => f.key)).toContain('ticket');
    const store = new gm.Store(await gm.openRepo(repo.dir, repo.env));
    const ui = await gm.startUi(
      { store, cwd: repo.dir, env: repo.env },
      { assets: join(ROOT, 'dist'), log: () => {} },
    );
    try {
      // the memory's page lists it by its kind (GET /api/info `shown`), as it lists the table's others
      const info = await fetch(`http://127.0.0.1:${ui.port}/api/info`, {
        headers: { 'x-git-mem-token': ui.token },
      });
      expect(info.status).toBe(200);
      expect(((await info.json()) as { shown: unknown }).shown).toEqual(
        expect.arrayContaining([
          { key: 'ticket', kind: 'line' },
          { key: 'due', kind: 'date' },
        ]),
      );
      const r = await fetch(`http://127.0.0.1:${ui.port}/api/memory/${id}`, {
        method: 'POST',
        headers: { 'x-git-mem-token': ui.token, 'content-type': 'application/json' },
        body: JSON.stringify({ ticket: 'UI-1' }),
      });
      expect(r.status).toBe(200);
      expect((await shown(id)).ticket).toBe('UI-1');
    } finally {
      await ui.close();
      store.close();
    }
  });

  it('the sync boundary checks it as a local write does: too long a ticket is refused both ways', async () => {
    const long = 'x'.repeat(5000);
    const local = await mem(['update', id, '--ticket', long, '--json']);
    expect(local.code, local.stderr).toBe(2);
    expect(JSON.parse(local.stdout).error).toMatchObject({ field: 'ticket' });
    const remote = bareRemote();
    repo.git('remote', 'add', 'origin', remote.url);
    expect((await mem(['sync'])).code).toBe(0);
    const hostile = '01M8AAAAAAAAAAAAAAAAAAAAAB';
    const over = plumber(remote.dir, repo.env).commitOver(remote.git('rev-parse', 'refs/mem/memory').trim(), {
      memories: {
        tree: {
          AB: {
            tree: { [`${hostile}.md`]: { blob: recordText(hostile, 'hostile', 'b\n', `ticket: ${long}`) } },
          },
        },
      },
    });
    remote.git('update-ref', 'refs/mem/memory', over);
    const before = tip();
    const synced = await mem(['sync', '--json']);
    expect(synced.code, synced.stderr).not.toBe(0);
    expect(JSON.parse(synced.stdout).error).toMatchObject({
      code: 'E_MERGE',
      problem: 'record-field',
      field: 'ticket',
      path: `memories/AB/${hostile}.md`,
    });
    expect(tip()).toBe(before);
  });
});
