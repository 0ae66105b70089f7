/**
 * Cursor: `git mem hooks install --cursor` merges git-mem's entries into
 * `.cursor/hooks.json` (Cursor's format: a version and a map of camelCase
 * event → [{command}]) and exports the rules to `.cursor/rules`, the fallback
 * for a sessionStart context Cursor drops. The installed commands run as real
 * processes on Cursor-shaped payloads: they answer in Cursor's shape and record
 * the session as Claude Code's hooks record one.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runBin, type TestRepo, until } from './helpers.js';

const COMMAND = 'if command -v git-mem >/dev/null 2>&1; then git mem hook cursor; fi';
const EVENTS = [
  'sessionStart',
  'beforeSubmitPrompt',
  'afterShellExecution',
  'afterFileEdit',
  'afterMCPExecution',
  'stop',
  'sessionEnd',
];

const hooksFile = (repo: TestRepo) => join(repo.dir, '.cursor', 'hooks.json');
const readHooks = (repo: TestRepo) => JSON.parse(readFileSync(hooksFile(repo), 'utf8'));

/** Runs the command hooks.json holds for an event, as Cursor does: a shell, the payload on stdin. */
function runInstalled(repo: TestRepo, payload: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) {
  const entries = readHooks(repo).hooks[payload.hook_event_name as string] as Array<{ command: string }>;
  const ours = entries.filter((e) => e.command.includes('git-mem'));
  expect(ours).toHaveLength(1);
  const r = spawnSync('sh', ['-c', ours[0].command], {
    cwd: repo.dir,
    env: { ...repo.env, ...env },
    input: JSON.stringify(payload),
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).toBe('');
  return r.stdout;
}

function events(repo: TestRepo, session: string): Array<Record<string, unknown>> {
  const file = join(repo.dir, '.git', 'mem', 'events', `${session}.jsonl`);
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

describe('Cursor hooks', { timeout: 90_000 }, () => {
  it("installs into .cursor/hooks.json idempotently, keeps the user's hooks, and removes only its own", async () => {
    const repo = makeRepo({ commit: true });
    const mine = { command: './scripts/format.sh' };
    repo.write(
      '.cursor/hooks.json',
      `${JSON.stringify({ version: 1, hooks: { afterFileEdit: [mine], beforeShellExecution: [mine] } }, null, 2)}\n`,
    );
    const res = await repo.memJson(['hooks', 'install', '--cursor']);
    expect(res).toEqual([{ hook: 'cursor', action: 'installed', path: hooksFile(repo), events: EVENTS }]);
    const once = readFileSync(hooksFile(repo), 'utf8');
    const file = JSON.parse(once);
    expect(file.version).toBe(1);
    expect(file.hooks.afterFileEdit).toEqual([mine, { command: COMMAND }]);
    expect(file.hooks.beforeShellExecution).toEqual([mine]);
    for (const e of EVENTS) expect(file.hooks[e]).toContainEqual({ command: COMMAND });

    // twice: the same file, byte for byte
    expect((await repo.memJson(['hooks', 'install', '--cursor']))[0].action).toBe('already installed');
    expect(readFileSync(hooksFile(repo), 'utf8')).toBe(once);

    const bad = await repo.mem(['hooks', 'install', '--cursor', '--local', '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout).error.code).toBe('E_INVALID_ARG');

    const gone = (await repo.memJson(['hooks', 'uninstall', '--cursor']))[0];
    expect(gone.action).toBe('removed');
    expect([...gone.events].sort()).toEqual([...EVENTS].sort());
    expect(readHooks(repo)).toEqual({
      version: 1,
      hooks: { afterFileEdit: [mine], beforeShellExecution: [mine] },
    });
    expect((await repo.memJson(['hooks', 'uninstall', '--cursor']))[0].action).toBe('not installed');
  });

  it('removes a hooks.json it created, with its folder; refuses a malformed one untouched', async () => {
    const repo = makeRepo({ commit: true });
    await repo.memJson(['hooks', 'install', '--cursor']);
    expect(existsSync(hooksFile(repo))).toBe(true);
    await repo.memJson(['hooks', 'uninstall', '--cursor']);
    expect(existsSync(join(repo.dir, '.cursor'))).toBe(false);

    repo.write('.cursor/hooks.json', '{"version": 1, "hooks": {"stop": {"command": "x"}}}\n');
    const r = await repo.mem(['hooks', 'install', '--cursor', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout).error.code).toBe('E_INVALID_ARG');
    expect(readFileSync(hooksFile(repo), 'utf8')).toBe(
      '{"version": 1, "hooks": {"stop": {"command": "x"}}}\n',
    );
  });

  it('writes the rules to .cursor/rules, the fallback for a sessionStart context Cursor drops', async () => {
    const repo = makeRepo({ commit: true });
    const add = await repo.mem([
      'add',
      '--type',
      'rule',
      '--title',
      'use pnpm',
      '--content',
      'Always use pnpm, never npm.',
      '--force',
    ]);
    expect(add.code, add.stderr).toBe(0);
    const res = await repo.memJson(['hooks', 'install', '--cursor']);
    const rules = res.filter((c: { hook: string }) => c.hook === 'cursor-rules');
    expect(rules).toHaveLength(1);
    expect(rules[0].action).toBe('created');
    const files = readdirSync(join(repo.dir, '.cursor', 'rules'));
    expect(files).toHaveLength(1);
    expect(readFileSync(join(repo.dir, '.cursor', 'rules', files[0]), 'utf8')).toContain(
      'Always use pnpm, never npm.',
    );
    // and again: nothing to change
    const again = await repo.memJson(['hooks', 'install', '--cursor']);
    expect(again.filter((c: { hook: string }) => c.hook === 'cursor-rules')).toEqual([]);
  });

  it('runs the installed commands on Cursor payloads: Cursor-shaped answers, the session recorded as for Claude Code', async () => {
    const repo = makeRepo({ commit: true });
    for (const [type, title, content] of [
      ['rule', 'use pnpm', 'Always use pnpm, never npm.'],
      ['constraint', 'port 8080', 'Port 8080 is taken by the local proxy.'],
    ]) {
      const r = await repo.mem(['add', '--type', type, '--title', title, '--content', content, '--force']);
      expect(r.code, r.stderr).toBe(0);
    }
    await repo.memJson(['hooks', 'install', '--cursor']);
    const common = { conversation_id: 'cur-1', generation_id: 'g-1', workspace_roots: [repo.dir] };

    const start = runInstalled(repo, {
      ...common,
      hook_event_name: 'sessionStart',
      session_id: 'cur-1',
      is_background_agent: false,
    });
    const ctx = JSON.parse(start);
    expect(Object.keys(ctx)).toEqual(['additional_context']);
    expect(ctx.additional_context).toContain('use pnpm');
    expect(ctx.additional_context).toContain('Port 8080 is taken');

    // beforeSubmitPrompt can only let the prompt through: it does, and the prompt is recorded
    const prompt = runInstalled(repo, {
      ...common,
      hook_event_name: 'beforeSubmitPrompt',
      prompt: 'which port does the proxy use?',
      attachments: [],
    });
    expect(JSON.parse(prompt)).toEqual({ continue: true });

    expect(
      runInstalled(repo, {
        ...common,
        hook_event_name: 'afterFileEdit',
        file_path: join(repo.dir, 'src', 'health.ts'),
        edits: [{ old_string: 'a\n', new_string: 'export const ok = () => true;\nexport const up = 1;\n' }],
      }),
    ).toBe('');
    expect(
      runInstalled(repo, {
        ...common,
        hook_event_name: 'afterShellExecution',
        command: 'npm test',
        cwd: repo.dir,
        output: 'Tests: 1 failed, 11 passed',
        duration: 1200,
      }),
    ).toBe('');
    runInstalled(repo, {
      ...common,
      hook_event_name: 'afterMCPExecution',
      tool_name: 'search',
      tool_input: '{"query":"proxy"}',
      result_json: '{"hits":1}',
      duration: 5,
    });

    // the same session as Claude Code's hooks send it
    const claude = { session_id: 'cc-1', transcript_path: '/tmp/t.jsonl', cwd: repo.dir };
    const cc = (p: Record<string, unknown>) =>
      runBin(['hook', 'claude-code'], {
        cwd: repo.dir,
        env: repo.env,
        stdin: JSON.stringify({ ...claude, ...p }),
      });
    cc({ hook_event_name: 'SessionStart', source: 'startup' });
    cc({ hook_event_name: 'UserPromptSubmit', prompt: 'which port does the proxy use?' });
    cc({
      hook_event_name: 'PostToolUse',
      tool_name: 'MultiEdit',
      tool_input: {
        file_path: join(repo.dir, 'src', 'health.ts'),
        edits: [{ old_string: 'a\n', new_string: 'export const ok = () => true;\nexport const up = 1;\n' }],
      },
      tool_response: { filePath: join(repo.dir, 'src', 'health.ts') },
    });
    cc({
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'npm test' },
      tool_response: { stdout: 'Tests: 1 failed, 11 passed', stderr: '' },
    });

    const shape = (e: Record<string, unknown>) => ({
      event: e.event,
      prompt: e.prompt,
      source: e.source,
      files: e.files,
      command: (e.input as { command?: string } | undefined)?.command,
      exit: e.exit,
    });
    const cursor = events(repo, 'cur-1');
    expect(cursor.map((e) => e.event)).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PostToolUse',
      'PostToolUse',
      'PostToolUse',
    ]);
    expect(cursor.slice(0, 4).map(shape)).toEqual(events(repo, 'cc-1').map(shape));
    expect(cursor[2].files).toEqual([{ path: join(repo.dir, 'src', 'health.ts'), added: 2, removed: 1 }]);
    expect(cursor[3]).toMatchObject({ tool: 'Shell', exit: 1 });
    expect(cursor[4]).toMatchObject({ tool: 'MCP:search', input: { query: 'proxy' } });

    // the end: the session summary, as for any agent
    expect(
      runInstalled(repo, { ...common, hook_event_name: 'stop', status: 'completed', loop_count: 0 }),
    ).toBe('');
    runInstalled(repo, {
      ...common,
      hook_event_name: 'sessionEnd',
      session_id: 'cur-1',
      reason: 'completed',
    });
    const shown = await until(async () => {
      const s = await repo.mem(['sessions', 'show', 'cur-1', '--json']);
      return s.code === 0 ? JSON.parse(s.stdout) : undefined;
    });
    expect(shown.body).toContain('src/health.ts');
    expect(shown.body).toContain('`npm test`');
    expect(existsSync(join(repo.dir, '.git', 'mem', 'logs', 'hooks.log'))).toBe(false);
  });
});
