/**
 * The agents that copy Claude Code's hook format: Codex CLI and Factory Droid.
 * Their hook files are installed and removed like Claude's; a Droid session
 * (its tool names, and the camelCase field names it has sent) goes through
 * the same hook command, as real processes, into the same session summary.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { errorOf, makeRepo, runBin, until } from './helpers.js';

describe('Codex CLI and Factory Droid', { timeout: 60_000 }, () => {
  it('installs each agent its hook file with the events it has, idempotently, and removes exactly that', async () => {
    const repo = makeRepo();
    repo.write('.factory/settings.json', `${JSON.stringify({ model: 'custom', hooks: {} }, null, 2)}\n`);
    const res = await repo.memJson(['hooks', 'install', '--codex', '--droid']);
    expect(res).toEqual([
      {
        hook: 'codex',
        action: 'installed',
        path: join(repo.dir, '.codex', 'hooks.json'),
        events: ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop'],
      },
      {
        hook: 'droid',
        action: 'installed',
        path: join(repo.dir, '.factory', 'settings.json'),
        events: ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop', 'SessionEnd'],
      },
    ]);
    const codex = JSON.parse(readFileSync(join(repo.dir, '.codex', 'hooks.json'), 'utf8'));
    expect(codex.hooks.PostToolUse).toEqual([
      {
        matcher: '*',
        hooks: [
          {
            type: 'command',
            command: 'if command -v git-mem >/dev/null 2>&1; then git mem hook claude-code; fi',
            timeout: 5,
          },
        ],
      },
    ]);
    const droid = JSON.parse(readFileSync(join(repo.dir, '.factory', 'settings.json'), 'utf8'));
    expect(droid.model).toBe('custom');
    expect(Object.keys(droid.hooks)).toHaveLength(5);
    expect(
      (await repo.memJson(['hooks', 'install', '--codex', '--droid'])).map(
        (c: { action: string }) => c.action,
      ),
    ).toEqual(['already installed', 'already installed']);
    const bad = await repo.mem(['hooks', 'install', '--codex', '--local', '--json']);
    expect(bad.code).toBe(2);
    expect(errorOf(bad).code).toBe('E_INVALID_ARG');
    expect(errorOf(bad).message).toContain('Codex'); // the agent it refused --local for (no data field)

    await repo.memJson(['hooks', 'uninstall', '--codex', '--droid']);
    // the Codex file was created by install: gone with its directory; Droid's settings are back as they were
    expect(existsSync(join(repo.dir, '.codex'))).toBe(false);
    expect(JSON.parse(readFileSync(join(repo.dir, '.factory', 'settings.json'), 'utf8'))).toEqual({
      model: 'custom',
    });
  });

  it('summarises a Droid session sent with camelCase fields and Droid tool names', async () => {
    const repo = makeRepo({ commit: true });
    const base = {
      sessionId: 'droid-1',
      transcriptPath: '/tmp/t.md',
      cwd: repo.dir,
      permissionMode: 'auto-medium',
    };
    const hook = (payload: Record<string, unknown>) => {
      const r = runBin(['hook', 'claude-code'], {
        cwd: repo.dir,
        env: repo.env,
        stdin: JSON.stringify(payload),
      });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      return r;
    };
    hook({ ...base, hookEventName: 'SessionStart', source: 'startup' });
    hook({ ...base, hookEventName: 'UserPromptSubmit', prompt: 'add a health check endpoint' });
    hook({
      ...base,
      hookEventName: 'PostToolUse',
      toolName: 'Create',
      toolInput: { file_path: `${repo.dir}/src/health.ts`, content: 'export const ok = () => true;\n' },
      toolResponse: { success: true },
    });
    hook({
      ...base,
      hookEventName: 'PostToolUse',
      toolName: 'Execute',
      toolInput: { command: 'npm test' },
      toolResponse: { stdout: '12 passing', exitCode: 0 },
    });
    // read before the session ends: the finaliser deletes the buffer once the summary is written
    const events = readFileSync(join(repo.dir, '.git', 'mem', 'events', 'droid-1.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(events.map((l) => JSON.parse(l).event)).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PostToolUse',
      'PostToolUse',
    ]);
    hook({ ...base, hookEventName: 'SessionEnd', reason: 'exit' });
    const shown = await until(async () => {
      const s = await repo.mem(['sessions', 'show', 'droid-1', '--json']);
      return s.code === 0 ? JSON.parse(s.stdout) : undefined;
    });
    await until(() =>
      existsSync(join(repo.dir, '.git', 'mem', 'events', 'droid-1.jsonl')) ? undefined : true,
    );
    expect(shown.body).toContain('src/health.ts (created');
    expect(shown.body).toContain('`npm test` (exit 0)');
    expect(existsSync(join(repo.dir, '.git', 'mem', 'logs', 'hooks.log'))).toBe(false);
  });
});
