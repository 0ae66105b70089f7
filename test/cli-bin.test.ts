/**
 * The built launcher (bin/git-mem.js → dist/), run as users run it: each
 * command twice in a row, since the second run used to find what the first
 * left behind (a V8 code cache under which every dynamic import() died).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, errorOf, type Json, makeRepo, ROOT, runBin, runCli, sh } from './helpers.js';

/** Runs the built CLI twice and returns both results; neither may be an internal error. */
function twice(args: string[], o: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string }) {
  return [runBin(args, o), runBin(args, o)].map((res) => {
    expect(res.stderr, args.join(' ')).not.toContain('internal error');
    expect(res.code, `${args.join(' ')}: ${res.stderr}`).not.toBe(70);
    return res;
  });
}

/** A port nothing listens on. */
async function closedPortUrl(): Promise<string> {
  const srv = createServer();
  await new Promise<void>((res) => srv.listen(0, '127.0.0.1', res));
  const { port } = srv.address() as { port: number };
  await new Promise((res) => srv.close(res));
  return `http://127.0.0.1:${port}`;
}

/** Starts `git mem mcp`, asks it to initialize, and returns its answer. */
function mcpInitialize(cwd: string, env: NodeJS.ProcessEnv): Promise<Record<string, Json>> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [BIN, 'mcp'], { cwd, env });
    let out = '';
    let errText = '';
    const timer = setTimeout(() => {
      c.kill();
      reject(new Error(`no answer from git mem mcp: ${errText}`));
    }, 20_000);
    c.stderr.on('data', (d) => (errText += d));
    c.stdout.on('data', (d) => {
      out += d;
      const line = out.split('\n').find((l) => l.includes('"id":1'));
      if (!line) return;
      clearTimeout(timer);
      c.kill();
      resolve(JSON.parse(line));
    });
    c.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`git mem mcp exited ${code}: ${errText}`));
    });
    c.stdin.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      })}\n`,
    );
  });
}

describe('the built git-mem, run twice', () => {
  it('serves MCP on every launch, not only the first', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['init']);
    for (let i = 0; i < 2; i++) {
      const res = await mcpInitialize(r.dir, r.env);
      expect(res.result?.serverInfo?.name, JSON.stringify(res)).toBeTruthy();
    }
  }, 60_000);

  it('runs the commands that import code on demand, again and again', async () => {
    const r = makeRepo({ commit: true });
    const o = { cwd: r.dir, env: { ...r.env, GIT_MEM_DAEMON: 'off' } };
    r.write('body.md', 'Deploys go through the staging queue.\n');
    const added = twice(['add', '--title', 'Deploy path', '--file', 'body.md', '--json'], o);
    expect(added.map((a) => a.code)).toEqual([0, 2]); // the second is refused as a duplicate
    const { id } = JSON.parse(added[0].stdout);
    expect(JSON.parse(runBin(['show', id, '--json'], o).stdout).body).toContain('staging queue');

    sh('git', ['branch', '-M', 'main'], r.dir, r.env);
    const ciOut = join(r.dir, 'ci.json');
    for (const res of twice(['ci', '--base', 'main', '--format', 'json', '--out', ciOut], o))
      expect(res.code).toBe(0);
    expect(JSON.parse(readFileSync(ciOut, 'utf8'))).toBeTypeOf('object');

    await r.memJson(['add', '--type', 'rule', '--title', 'Run npm test first', '--content', 'always']);
    for (const res of twice(['rules', 'export', '--to', 'claude'], o)) expect(res.code).toBe(0);
    for (const res of twice(['rules', 'import', '--dry-run'], o)) expect(res.code).toBe(0);

    // a refused model download is one clear line, on every run
    const host = await closedPortUrl();
    for (const res of twice(['models', 'pull', 'acme/some-model', '--host', host, '--json'], o)) {
      expect(res.code).toBe(1);
      expect(errorOf(res).code).toBe('E_REMOTE');
      expect(errorOf(res).message).toContain('acme/some-model'); // the model (no data field)
    }
  }, 120_000);

  it('finds a Chinese memory by a word inside its text, each time', async () => {
    const r = makeRepo({ commit: true });
    const o = { cwd: r.dir, env: { ...r.env, GIT_MEM_DAEMON: 'off' } };
    const add = runBin(
      ['add', '--title', '数据库连接池的配置', '--content', '连接池的大小由环境变量决定。', '--json'],
      o,
    );
    expect(add.code, add.stderr).toBe(0);
    const { id } = JSON.parse(add.stdout);
    for (const res of twice(['search', '数据库', '--json'], o)) {
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout).map((h: { id: string }) => h.id)).toEqual([id]);
    }
    // one word typed, though the index cuts it in three: not a sentence to expand with the words of
    // its best match (which would bring a memory without it that shares that match's text)
    for (const title of ['监控告警二', 'Alerts two'])
      expect(
        runBin(['add', '--title', title, '--content', '连接池的大小由环境变量决定。', '--force'], o).code,
      ).toBe(0);
    const one = runBin(['search', '数据库', '--json'], o);
    expect(JSON.parse(one.stdout).map((h: { id: string }) => h.id)).toEqual([id]);
  });

  it('rejects proposals in review, and records the rejection each time', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['init']);
    const ids: string[] = [];
    for (const title of ['Staging resets nightly', 'Flags live in flags.yaml'])
      ids.push((await r.memJson(['add', '--title', title, '--content', 'x', '--status', 'pending'])).id);
    for (const id of ids) {
      const res = runBin(['review', '--reject', id, '--json'], { cwd: r.dir, env: r.env });
      expect(res.stderr).not.toContain('internal error');
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)[0]).toMatchObject({ id, action: 'rejected' });
    }
    expect(await r.memJson(['review'])).toEqual([]);
  }, 60_000);

  it('answers outside a repository under GIT_CEILING_DIRECTORIES as git does: not a repository', () => {
    const r = makeRepo({ commit: true });
    const sub = join(r.dir, 'a', 'b');
    mkdirSync(sub, { recursive: true });
    const env = { ...r.env, GIT_CEILING_DIRECTORIES: join(r.dir, 'a') };
    for (const args of [
      ['list', '--json'],
      ['show', 'x', '--json'],
      ['search', 'x', '--json'],
    ])
      for (const res of twice(args, { cwd: sub, env })) {
        expect(res.code, args.join(' ')).not.toBe(0);
        expect(errorOf(res).code, args.join(' ')).toBe('E_NOT_A_REPO');
      }
  }, 60_000);

  it('add and the post-commit hook, whose store processes the launcher starts early: used where the store opens, left and ended elsewhere', () => {
    const r = makeRepo({ commit: true });
    const sub = join(r.dir, 'a', 'b');
    mkdirSync(sub, { recursive: true });
    const o = { cwd: r.dir, env: r.env };
    const added = twice(['add', '--json', '--title', 'Early', '--content', 'started early', '--force'], o);
    for (const res of added) expect(res.code, res.stderr).toBe(0);
    expect(
      r
        .git('log', '--format=%s', 'refs/memory')
        .split('\n')
        .filter((l) => l.includes('"Early"')),
    ).toHaveLength(2);
    // bad input, and no repository (nor a global store yet): the one-line refusal, promptly
    for (const res of twice(['add', '--type', 'bogus', '--title', 'x', '--content', 'y'], o))
      expect(res.code).toBe(2);
    const env = { ...r.env, GIT_CEILING_DIRECTORIES: join(r.dir, 'a') };
    for (const res of twice(['add', '--title', 'x', '--content', 'y', '--json'], { cwd: sub, env })) {
      expect(res.code).not.toBe(0);
      expect(errorOf(res).code).toBe('E_NOT_A_REPO');
    }
    for (const res of twice(['hook', 'post-commit'], { cwd: sub, env })) expect(res.code).toBe(0);
    // --global: the processes started in the repository are not the store's; the add goes to the global store
    for (const res of twice(['add', '--global', '--title', 'Personal', '--content', 'mine', '--force'], o))
      expect(res.code, res.stderr).toBe(0);
    expect(runBin(['list', '--global', '--json'], o).stdout).toContain('Personal');
  }, 60_000);

  it('prints what the in-process CLI prints, help with -h as with --help', async () => {
    const r = makeRepo({ commit: true });
    const ids: string[] = [];
    const add = async (...args: string[]) => ids.push((await r.memJson(['add', ...args])).id);
    await add('--title', 'Plain', '--content', 'a body\nwith two lines');
    await add('--type', 'convention', '--title', 'Aliased', '--content', 'x', '--alias', 'standards/ts/x');
    await add('--title', 'Expired', '--content', 'old', '--expires', '2001-01-01');
    await r.memJson(['list']); // the catalog cache reflects the tip (`show` prints the whole id from it)
    const o = { cwd: r.dir, env: r.env };
    for (const args of [
      ['show', ids[0].slice(0, 12)],
      ['show', ids[1].slice(0, 10).toLowerCase()],
      ['show', 'standards/ts/x'],
      ['list', '--json'],
      ['ls'],
    ]) {
      const viaBin = twice(args, o);
      expect(viaBin[0].code).toBe(0);
      expect(viaBin[0].stdout, args.join(' ')).toBe((await runCli(args, o)).stdout);
      expect(viaBin[1].stdout).toBe(viaBin[0].stdout);
    }
    expect(
      JSON.parse(runBin(['list', '--json'], o).stdout).map((m: { title: string }) => m.title),
    ).not.toContain('Expired');
    const missing = runBin(['show', 'no/such/alias', '--json'], o);
    expect(missing.code).toBe(3);
    expect(errorOf(missing).code).toBe('E_NOT_FOUND');
    expect(
      JSON.parse(runBin(['show', ids[1]], { ...o, env: { ...r.env, GIT_MEM_OUTPUT: 'json' } }).stdout).id,
    ).toBe(ids[1]);
    for (const args of [['-h'], ['show', '-h']]) {
      const short = runBin(args, o);
      expect(short.code).toBe(0);
      expect(short.stdout).toContain('git mem');
      expect(short.stdout).toBe(
        runBin(
          args.map((a) => (a === '-h' ? '--help' : a)),
          o,
        ).stdout,
      );
    }
    expect(runBin(['-h'], o).stdout).toMatch(/git mem show <ref> +show one memory/);
    const typo = runBin(['shwo'], o);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Did you mean show?');
  }, 120_000);
});

describe('post-commit hooks installed by earlier versions', () => {
  it('still record verdicts: they run `hook post-commit` once dist/post-commit.cjs has gone', async () => {
    const r = makeRepo();
    r.write('src/a.ts', 'export const a = 1;\nexport const b = 2;\n');
    r.commitAll('one');
    const { id } = await r.memJson([
      'add',
      '--title',
      'a is one',
      '--content',
      'x',
      '--anchor',
      'src/a.ts:1',
    ]);
    // the script earlier versions installed (the program path guarded by -f, else the CLI)
    const prog = join(ROOT, 'dist', 'post-commit.cjs');
    const self = `"${process.execPath}" "${BIN}"`;
    const hook = join(r.dir, '.git', 'hooks', 'post-commit');
    writeFileSync(
      hook,
      `#!/bin/sh
# git-mem hook: installed by \`git mem hooks install\`; \`git mem hooks uninstall\` restores
status=0
GIT_MEM="\${GIT_MEM_CMD:-${self.replace(/"/g, '\\"')}}"
if [ -z "\${GIT_MEM_CMD:-}" ] && [ -f "${prog}" ]; then GIT_MEM="NODE_EXTRA_CA_CERTS= \\"${process.execPath}\\" \\"${prog}\\""; else GIT_MEM="$GIT_MEM hook post-commit"; fi
eval "$GIT_MEM \\"\\$@\\"" </dev/null 2>&1 | { IFS= read -r line; [ -n "$line" ] && printf '%s\\n' "$line" >&2; cat >/dev/null; } || true
exit $status
`,
      { mode: 0o755 },
    );
    r.write('src/a.ts', 'export const a = 42;\nexport const b = 2;\n');
    r.commitAll('two');
    expect((await r.memJson(['show', id])).status).toBe('stale');
  }, 60_000);
});

describe('the command table', () => {
  it('names each command by its module, and every alias the modules declare', async () => {
    const { commandAliases, commandLoaders } = await import('../src/cli/commands.js');
    const declared: Record<string, string> = {};
    for (const [name, load] of Object.entries(commandLoaders)) {
      const c = (await load()).default;
      expect(c.command.split(' ')[0]).toBe(name);
      for (const a of c.aliases ?? []) declared[a] = name;
    }
    expect(declared).toEqual(commandAliases);
  });
});
