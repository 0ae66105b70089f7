/**
 * `git mem lsp`: the real binary over stdio, spoken to by a small JSON-RPC client
 * (Content-Length framing), in a temp repository with anchored memories.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, type Json, makeRepo, runBinAsync, type TestRepo, tmpDir, until } from './helpers.js';

class Client {
  private buf = Buffer.alloc(0);
  private id = 0;
  private readonly waiting = new Map<number, (m: Json) => void>();
  readonly notes: Json[] = [];
  readonly stderr: string[] = [];
  constructor(readonly proc: ChildProcessWithoutNullStreams) {
    proc.stdout.on('data', (d: Buffer) => this.feed(d));
    proc.stderr.on('data', (d: Buffer) => this.stderr.push(d.toString()));
  }
  private feed(d: Buffer) {
    this.buf = Buffer.concat([this.buf, d]);
    for (;;) {
      const h = this.buf.indexOf('\r\n\r\n');
      if (h < 0) return;
      const n = Number(/Content-Length: (\d+)/i.exec(this.buf.toString('ascii', 0, h))?.[1]);
      if (this.buf.length < h + 4 + n) return;
      const m = JSON.parse(this.buf.toString('utf8', h + 4, h + 4 + n));
      this.buf = this.buf.subarray(h + 4 + n);
      if (m.method && m.id !== undefined) {
        // a request of the server's (workspace/codeLens/refresh, window/showDocument): kept, then answered
        this.notes.push(m);
        this.send({
          jsonrpc: '2.0',
          id: m.id,
          result: m.method === 'window/showDocument' ? { success: true } : null,
        });
      } else if (m.method) this.notes.push(m);
      else this.waiting.get(m.id)?.(m);
    }
  }
  sendRaw(body: string) {
    this.proc.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }
  send(m: Json) {
    this.sendRaw(JSON.stringify(m));
  }
  /** The whole response: { result } or { error }. */
  call(method: string, params?: Json): Promise<Json> {
    const id = ++this.id;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.send({ jsonrpc: '2.0', id, method, params });
    });
  }
  async request(method: string, params?: Json): Promise<Json> {
    const r = await this.call(method, params);
    if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
    return r.result;
  }
  notify(method: string, params?: Json) {
    this.send({ jsonrpc: '2.0', method, params });
  }
  /** The latest diagnostics published for a document. */
  diagnostics(uri: string): Json[] | undefined {
    const d = this.notes.filter(
      (n) => n.method === 'textDocument/publishDiagnostics' && n.params.uri === uri,
    );
    return d.length ? d[d.length - 1].params.diagnostics : undefined;
  }
}

let r: TestRepo;
let client: Client;
let uri: string;
let text: string;
const ids: Record<string, string> = {};

const FILE = [
  'export function pool() {',
  '  const size = 10; // capped: the database allows 20 connections',
  '  return new Pool(size);',
  '}',
  'export function retry() {',
  '  for (let i = 0; i < 3; i++) {',
  '    if (attempt()) return;',
  '  }',
  '}',
  'export const x = 1;',
  '',
].join('\n');

const B_FILE = [
  'export function open() {',
  '  return lazy(() => connect());',
  '}',
  'export function close() {',
  '  if (closed) return;',
  '  closed = true;',
  '}',
  '',
].join('\n');
const C_FILE = [
  'export const c = 0;',
  'export function parse(buf) {',
  '  const header = readHeader(buf);',
  '  return readBody(buf, header.length);',
  '}',
  '',
].join('\n');

async function add(title: string, ...extra: string[]): Promise<string> {
  return (await r.memJson(['add', '--title', title, '--content', `${title}: body text`, ...extra])).id;
}

beforeAll(async () => {
  r = makeRepo({ commit: true });
  r.write('src/a.ts', FILE);
  r.commitAll('code');
  await r.memJson(['init']);
  ids.pool = await add('Pool size is capped', '--type', 'constraint', '--anchor', 'src/a.ts:2-3');
  ids.retry = await add('Retry three times', '--type', 'decision', '--anchor', 'src/a.ts:6-7');
  ids.rule = await add('Use the pool helper', '--type', 'rule', '--scope', 'src/**');
  // src/b.ts: two memories of its own and, after the next commit, one whose code moved in from src/c.ts
  r.write('src/b.ts', B_FILE);
  r.write('src/c.ts', C_FILE);
  r.commitAll('b and c');
  ids.open = await add('Open lazily', '--type', 'decision', '--anchor', 'src/b.ts:1-3');
  ids.close = await add('Close twice is fine', '--type', 'known_fix', '--anchor', 'src/b.ts:5-7');
  ids.moved = await add('Parse the header first', '--type', 'constraint', '--anchor', 'src/c.ts:2-5');
  // the retry loop changes in a commit: its memory is stale at HEAD
  r.write('src/a.ts', FILE.replace('i < 3', 'i < 5'));
  r.write(
    'src/b.ts',
    `${B_FILE.replace('closed = true', 'closed = !closed')}${C_FILE.split('\n').slice(1, 5).join('\n')}\n`,
  );
  r.write('src/c.ts', 'export const c = 0;\n');
  r.commitAll('five retries');
  text = readFileSync(join(r.dir, 'src/a.ts'), 'utf8');
  uri = pathToFileURL(join(r.dir, 'src/a.ts')).href;
  // started outside the repository, as editors may: the workspace folder of initialize names it
  const proc = spawn(process.execPath, [BIN, 'lsp'], { cwd: tmpDir('gm-elsewhere-'), env: r.env });
  client = new Client(proc);
  const init = await client.request('initialize', {
    processId: process.pid,
    rootUri: null,
    workspaceFolders: [{ uri: pathToFileURL(r.dir).href, name: 'repo' }],
    capabilities: { window: { showDocument: { support: true } } },
  });
  expect(init.capabilities.hoverProvider).toBe(true);
  expect(init.capabilities.executeCommandProvider.commands).toContain('git-mem.reanchor');
  client.notify('initialized', {});
  client.notify('textDocument/didOpen', {
    textDocument: { uri, languageId: 'typescript', version: 1, text },
  });
}, 120_000);

afterAll(async () => {
  if (!client) return;
  await client.call('shutdown').catch(() => {});
  client.notify('exit');
  await new Promise((res) => {
    client.proc.once('exit', res);
    setTimeout(() => {
      client.proc.kill();
      res(null);
    }, 5000);
  });
});

describe('git mem lsp', () => {
  it('publishes a warning for the memory whose anchored code is stale at HEAD, with the reason', async () => {
    const d = await until(() => client.diagnostics(uri));
    expect(d).toEqual([
      expect.objectContaining({
        severity: 2,
        code: 'stale',
        source: 'git-mem',
        data: { id: ids.retry },
        range: expect.objectContaining({ start: { line: 5, character: 0 } }),
      }),
    ]);
    expect(d[0].message).toContain('Retry three times');
  });

  it('hovers an anchored range with its memories and the rules in force', async () => {
    const h = await client.request('textDocument/hover', {
      textDocument: { uri },
      position: { line: 1, character: 4 },
    });
    expect(h.contents.kind).toBe('markdown');
    expect(h.contents.value).toContain('Pool size is capped');
    expect(h.contents.value).toContain('Pool size is capped: body text');
    expect(h.contents.value).toContain('Use the pool helper');
    expect(h.range).toEqual({ start: { line: 1, character: 0 }, end: { line: 2, character: 24 } });
    // a line no memory is anchored to has no hover
    expect(
      await client.request('textDocument/hover', {
        textDocument: { uri },
        position: { line: 9, character: 0 },
      }),
    ).toBeNull();
  });

  it('shows a lens above each anchored range and one for the rules in force', async () => {
    const lenses: Json[] = await client.request('textDocument/codeLens', { textDocument: { uri } });
    const byLine = lenses.map((l) => [l.range.start.line, l.command.title, l.command.command]);
    expect(byLine).toEqual([
      [0, '1 rule in force', 'git-mem.open'],
      [1, '1 memory', 'git-mem.open'],
      [5, '1 memory · 1 stale', 'git-mem.open'],
    ]);
  });

  it('shows for a file what git mem blame --json says of it: the same memories on the same lines, the same verdicts and rules', async () => {
    const path = 'src/b.ts';
    const bUri = pathToFileURL(join(r.dir, path)).href;
    client.notify('textDocument/didOpen', {
      textDocument: {
        uri: bUri,
        languageId: 'typescript',
        version: 1,
        text: readFileSync(join(r.dir, path), 'utf8'),
      },
    });
    const b = await r.memJson(['blame', path]);
    // several memories: two of its own (one stale at HEAD) and one whose code moved here from src/c.ts
    expect(b.memories.map((m: Json) => m.id).sort()).toEqual([ids.open, ids.close, ids.moved].sort());
    expect(b.memories.find((m: Json) => m.id === ids.moved).at.path).toBe(path);
    expect(b.memories.filter((m: Json) => m.verdict.stale).map((m: Json) => m.id)).toEqual([ids.close]);
    expect(b.rules.map((x: Json) => x.id)).toEqual([ids.rule]);
    const first = (m: Json) => (m.at?.lines ?? m.anchor.lines)[0] - 1;
    const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
    const groups = new Map<number, Json[]>();
    for (const m of b.memories) groups.set(first(m), [...(groups.get(first(m)) ?? []), m]);
    const lenses: Json[] = await client.request('textDocument/codeLens', { textDocument: { uri: bUri } });
    expect(lenses.map((l) => [l.range.start.line, l.command.title])).toEqual([
      [0, plural(b.rules.length, 'rule', 'rules') + ' in force'],
      ...[...groups]
        .sort((x, y) => x[0] - y[0])
        .map(([line, ms]) => {
          const stale = ms.filter((m) => m.verdict.stale).length;
          return [
            line,
            [plural(ms.length, 'memory', 'memories'), stale ? `${stale} stale` : '']
              .filter(Boolean)
              .join(' · '),
          ];
        }),
    ]);
    for (const m of b.memories) {
      const h = await client.request('textDocument/hover', {
        textDocument: { uri: bUri },
        position: { line: first(m), character: 0 },
      });
      expect(h.contents.value).toContain(m.title);
      expect(h.contents.value).toContain(m.id.slice(0, 12));
      for (const x of b.rules) expect(h.contents.value).toContain(x.title);
    }
    const d = await until(() => client.diagnostics(bUri));
    expect(d.map((x: Json) => [x.code, x.data.id, x.range.start.line])).toEqual(
      b.memories.filter((m: Json) => m.verdict.stale).map((m: Json) => ['stale', m.id, first(m)]),
    );
    client.notify('textDocument/didClose', { textDocument: { uri: bUri } });
  });

  it('flags an unsaved edit of anchored lines as information, mapped through the buffer, and clears it when reverted', async () => {
    // two lines inserted on top move everything down; line 2 of the file (now 4) edited
    const edited = `// a\n// b\n${text.replace('const size = 10', 'const size = 50')}`;
    client.notify('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ text: edited }],
    });
    const d = await until(() => {
      const x = client.diagnostics(uri);
      return x?.some((y) => y.code === 'edited') ? x : undefined;
    });
    const info = d.find((y) => y.code === 'edited');
    expect(info).toMatchObject({
      severity: 3,
      data: { id: ids.pool },
      range: { start: { line: 3, character: 0 } },
    });
    // the stale warning moved with its lines
    expect(d.find((y) => y.code === 'stale').range.start.line).toBe(7);
    // an incremental change puts the line back as it was
    client.notify('textDocument/didChange', {
      textDocument: { uri, version: 3 },
      contentChanges: [
        { range: { start: { line: 3, character: 15 }, end: { line: 3, character: 17 } }, text: '10' },
        { range: { start: { line: 0, character: 0 }, end: { line: 2, character: 0 } }, text: '' },
      ],
    });
    const back = await until(() => {
      const x = client.diagnostics(uri);
      return x && !x.some((y) => y.code === 'edited') ? x : undefined;
    });
    expect(back.map((y) => [y.code, y.range.start.line])).toEqual([['stale', 5]]);
  });

  it('offers confirm, re-anchor and open as code actions; confirm records who verified the memory', async () => {
    const actions: Json[] = await client.request('textDocument/codeAction', {
      textDocument: { uri },
      range: { start: { line: 5, character: 0 }, end: { line: 6, character: 3 } },
      context: { diagnostics: client.diagnostics(uri) },
    });
    expect(actions.map((a) => [a.command.command, a.command.arguments])).toEqual([
      ['git-mem.verify', [ids.retry]],
      ['git-mem.reanchor', [ids.retry, uri, 6, 7]],
      ['git-mem.open', [ids.retry]],
    ]);
    const v = await client.request('workspace/executeCommand', {
      command: 'git-mem.verify',
      arguments: [ids.retry],
    });
    expect(v).toMatchObject({ id: ids.retry, verified: { by: expect.any(String), at: expect.any(String) } });
    // the same record `git mem show` reads: the verification is committed, not held by the server
    const shown = await r.memJson(['show', ids.retry]);
    expect(shown.verified).toEqual(v.verified);
    // open: a page server for the session, and the editor asked to show a page file (mode 600) that
    // sends the browser on to a one-time link and the memory's route; the link is in no argv
    const o = await client.request('workspace/executeCommand', {
      command: 'git-mem.open',
      arguments: [ids.retry],
    });
    expect(o).toMatchObject({ opened: true, route: `#/m/${ids.retry}` });
    const asked = client.notes.filter((n) => n.method === 'window/showDocument');
    expect(asked.map((n) => n.params)).toEqual([{ uri: o.uri, external: true }]);
    const page = fileURLToPath(o.uri);
    expect(statSync(page).mode & 0o777).toBe(0o600);
    const link = /url=([^"]+)"/.exec(readFileSync(page, 'utf8'))?.[1] ?? '';
    expect(link).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/\\?code=[^#]+#/m/${ids.retry}$`));
    expect((await fetch(link.replace(/#.*/, ''))).status).toBe(200);
    const bad = await client.call('workspace/executeCommand', {
      command: 'git-mem.open',
      arguments: ['../x'],
    });
    expect(bad.error.code).toBe(-32602);
  });

  it('re-anchors a memory to the selection: the stale warning clears', async () => {
    const res = await client.request('workspace/executeCommand', {
      command: 'git-mem.reanchor',
      arguments: [ids.retry, uri, 6, 7],
    });
    expect(res).toMatchObject({
      id: ids.retry,
      status: 'active',
      anchors: [{ path: 'src/a.ts', lines: [6, 7] }],
    });
    const shown = await r.memJson(['show', ids.retry]);
    expect(shown.status).toBe('active');
    await until(() => {
      const x = client.diagnostics(uri);
      return x && x.length === 0 ? true : undefined;
    });
  });

  it('follows the memory ref: another process adds a memory and the lenses show it', async () => {
    const add = await runBinAsync(
      [
        'add',
        '--title',
        'Export x stays',
        '--content',
        'kept for the API',
        '--anchor',
        'src/a.ts:10',
        '--json',
      ],
      { cwd: r.dir, env: r.env },
    );
    expect(add.code).toBe(0);
    const lens = await until(async () => {
      const ls: Json[] = await client.request('textDocument/codeLens', { textDocument: { uri } });
      return ls.find((l) => l.range.start.line === 9);
    });
    expect(lens.command.title).toBe('1 memory');
    expect(lens.command.arguments).toEqual([JSON.parse(add.stdout).id]);
  });

  it('follows a branch switch: code stale on the other branch warns there and clears back on main', async () => {
    const onMain = readFileSync(join(r.dir, 'src/a.ts'), 'utf8');
    r.git('checkout', '-q', '-b', 'smaller-pool');
    r.write(
      'src/a.ts',
      onMain.replace('const size = 10; // capped: the database allows 20 connections', 'const size = 4;'),
    );
    r.commitAll('smaller pool');
    // the editor reloads the file from disk after the switch
    const reload = (version: number) =>
      client.notify('textDocument/didChange', {
        textDocument: { uri, version },
        contentChanges: [{ text: readFileSync(join(r.dir, 'src/a.ts'), 'utf8') }],
      });
    reload(10);
    const there = await until(() => client.diagnostics(uri)?.find((d) => d.code === 'stale'));
    expect(there).toMatchObject({ severity: 2, data: { id: ids.pool }, range: { start: { line: 1 } } });
    r.git('checkout', '-q', 'main');
    reload(11);
    await until(() => (client.diagnostics(uri)?.length === 0 ? true : undefined));
  });

  it('answers a malformed message with an error and goes on; unknown methods are MethodNotFound', async () => {
    client.sendRaw('{not json');
    const m = await client.call('textDocument/nothing', {});
    expect(m.error.code).toBe(-32601);
    const h = await client.request('textDocument/hover', {
      textDocument: { uri },
      position: { line: 1, character: 0 },
    });
    expect(h.contents.value).toContain('Pool size is capped');
  });
});

/**
 * Neovim's built-in client (Debian's nvim 0.7.2: vim.lsp.start_client) starts `git-mem lsp` from
 * PATH and asks for a hover. Skipped where nvim is not installed, except in CI (env CI set), where
 * .ci/run installs it and its absence fails.
 */
const HAS_NVIM = spawnSync('nvim', ['--version'], { stdio: 'ignore' }).status === 0;
const IN_CI = !!process.env.CI;

describe.skipIf(!HAS_NVIM && !IN_CI)('git mem lsp in Neovim (nvim --headless)', () => {
  it('answers a hover from nvim with the memory title', async () => {
    expect(HAS_NVIM, "nvim is not installed: .ci/run installs Debian's neovim").toBe(true);
    const dir = tmpDir('gm-nvim-');
    const script = join(dir, 'hover.lua');
    const out = join(dir, 'out.json');
    writeFileSync(
      script,
      [
        "vim.cmd('edit ' .. vim.fn.fnameescape(os.getenv('LSP_FILE')))",
        'local buf = vim.api.nvim_get_current_buf()',
        "local id = vim.lsp.start_client({ name = 'git-mem', cmd = { 'git-mem', 'lsp' }, root_dir = os.getenv('LSP_ROOT') })",
        'vim.lsp.buf_attach_client(buf, id)',
        'local ok = vim.wait(20000, function()',
        '  local c = vim.lsp.get_client_by_id(id)',
        '  return c ~= nil and c.server_capabilities ~= nil and c.server_capabilities.hoverProvider == true',
        'end, 50)',
        "local res = vim.lsp.buf_request_sync(buf, 'textDocument/hover', {",
        '  textDocument = { uri = vim.uri_from_bufnr(buf) },',
        '  position = { line = 1, character = 4 },',
        '}, 20000)',
        "local f = io.open(os.getenv('LSP_OUT'), 'w')",
        'f:write(vim.fn.json_encode({ ready = ok, result = res }))',
        'f:close()',
        "vim.cmd('qa!')",
        '',
      ].join('\n'),
    );
    const res = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const p = spawn('nvim', ['--headless', '--clean', '-c', `luafile ${script}`], {
        cwd: r.dir,
        env: { ...r.env, LSP_FILE: join(r.dir, 'src/a.ts'), LSP_ROOT: r.dir, LSP_OUT: out },
      });
      let stderr = '';
      p.stderr.on('data', (d) => (stderr += d));
      const t = setTimeout(() => p.kill('SIGKILL'), 50_000);
      p.on('exit', (code) => {
        clearTimeout(t);
        resolve({ code, stderr });
      });
    });
    expect(res.code, res.stderr).toBe(0);
    const got = JSON.parse(readFileSync(out, 'utf8'));
    expect(got.ready).toBe(true);
    // buf_request_sync answers per client id: the one client's hover
    const answers = Object.values(got.result as Record<string, Json>);
    expect(answers).toHaveLength(1);
    expect(answers[0].result?.contents?.value, JSON.stringify(answers[0])).toContain('Pool size is capped');
  }, 60_000);
});
