/**
 * The hook as Claude Code runs it: a real process per event (bin/git-mem.js,
 * the PostToolUse fast path, detached checkpoints and finalisers, recovery of
 * a session whose finaliser died). Needs `npm run build`.
 */
import { existsSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, ROOT, runBin, type TestRepo, until } from './helpers.js';

function hook(repo: TestRepo, payload: Record<string, unknown>) {
  const r = runBin(['hook', 'claude-code'], { cwd: repo.dir, env: repo.env, stdin: JSON.stringify(payload) });
  expect(r.code).toBe(0);
  expect(r.stderr).toBe('');
  return r;
}

describe('hook processes', { timeout: 120_000 }, () => {
  it('replays the recorded session with one real process per event and ends with the same summary and proposals', async () => {
    const repo = makeRepo();
    repo.write(
      'src/sum.js',
      'export function sum(values) {\n  let total = 0;\n  for (const v of values) total = total - v;\n  return total;\n}\n',
    );
    repo.commitAll('initial');
    const lines = readFileSync(join(ROOT, 'test', 'fixtures', 'claude-session', 'session.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean);
    for (const raw of lines) {
      let line = raw.replaceAll('{{CWD}}', repo.dir).replaceAll('{{HOME}}', String(repo.env.HOME));
      if (line.includes('{{HEAD_SHORT}}')) {
        repo.write(
          'src/sum.js',
          'export function sum(values) {\n  return values.reduce((total, v) => total + v, 0);\n}\n',
        );
        repo.git(
          'commit',
          '-qam',
          'Fix sum() for negative numbers',
          '-m',
          'Decision: sum() uses Array.prototype.reduce; no lodash in src/',
        );
        line = line.replaceAll('{{HEAD_SHORT}}', repo.git('rev-parse', '--short', 'HEAD').trim());
      }
      const r = runBin(['hook', 'claude-code'], { cwd: repo.dir, env: repo.env, stdin: line });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
    }
    const dir = join(repo.dir, '.git', 'mem', 'events');
    const session = '7f3c2a91-5b6e-4d0a-9c1f-2e8b4a6d0c13';
    // the detached finaliser of SessionEnd is done when its marker is gone
    await until(() =>
      existsSync(join(dir, `${session}.end`)) || existsSync(join(dir, `${session}.lock`)) ? undefined : true,
    );
    const shown = await repo.memJson(['sessions', 'show', session]);
    expect(shown.body).toContain('- `npm test` (exit 1 → 0) ×2');
    expect(shown.body).toContain('## Outcome\n- completed: 1 of 1 error fixed');
    const pending = await repo.memJson(['review']);
    expect(pending.map((p: { method: string }) => p.method).sort()).toEqual([
      'tier0:correction',
      'tier0:error_fix',
      'tier0:marker',
      'tier0:trailer',
    ]);
    expect(existsSync(join(repo.dir, '.git', 'mem', 'logs', 'hooks.log'))).toBe(false);
  });

  it('buffers tool events in the fast path and checkpoints in a detached process when a failing command passes', async () => {
    const repo = makeRepo({ commit: true });
    const base = { session_id: 'proc-1', transcript_path: '/tmp/t.jsonl', cwd: repo.dir };
    hook(repo, { ...base, hook_event_name: 'SessionStart', source: 'startup', model: 'claude-test-1' });
    hook(repo, {
      ...base,
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'Bash',
      tool_input: { command: 'npm run lint', description: 'Lint' },
      tool_use_id: 'toolu_1',
      error:
        'Exit code 1\nsrc/app.ts:4:7 lint/style/useConst: This let declares a variable that is only assigned once.',
      is_interrupt: false,
    });
    const r = hook(repo, {
      ...base,
      hook_event_name: 'PostToolUse',
      tool_name: 'Edit',
      tool_input: {
        file_path: `${repo.dir}/src/app.ts`,
        old_string: 'let port = 8080;',
        new_string: 'const port = 8080;',
        replace_all: false,
      },
      tool_response: {
        filePath: `${repo.dir}/src/app.ts`,
        structuredPatch: [
          {
            oldStart: 4,
            oldLines: 1,
            newStart: 4,
            newLines: 1,
            lines: ['-let port = 8080;', '+const port = 8080;'],
          },
        ],
      },
      tool_use_id: 'toolu_2',
    });
    expect(r.stdout).toBe('');
    hook(repo, {
      ...base,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'npm run lint', description: 'Lint' },
      tool_response: { stdout: 'Checked 12 files', stderr: '', interrupted: false, isImage: false },
      tool_use_id: 'toolu_3',
    });
    const events = readFileSync(join(repo.dir, '.git', 'mem', 'events', 'proc-1.jsonl'), 'utf8')
      .trim()
      .split('\n');
    expect(events.map((l) => JSON.parse(l).event)).toEqual([
      'SessionStart',
      'PostToolUseFailure',
      'PostToolUse',
      'PostToolUse',
    ]);
    const pending = await until(async () => {
      const p = await repo.memJson(['review']);
      return p.length ? p : undefined;
    });
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ type: 'known_fix', method: 'tier0:error_fix', session: 'proc-1' });
    // provenance: the agent, its session and the model SessionStart named, on the record and the commit
    const by = { kind: 'agent', agent: 'claude-code', session: 'proc-1', model: 'claude-test-1' };
    expect((await repo.memJson(['show', pending[0].id])).by).toEqual(by);
    expect(repo.git('log', '-1', '--format=%(trailers:only,unfold)', 'refs/memory')).toBe(
      `Mem-Operation: propose\nMem-Id: ${pending[0].id}\nMem-Agent: claude-code\nMem-Session: proc-1\nMem-Model: claude-test-1\n\n`,
    );
    expect(pending[0].title).toBe(
      'src/app.ts:4:7 lint/style/useConst: This let declares a variable that is only assigned once. (fixed in src/app.ts)',
    );
    // the detached checkpoint released its lock and recorded its progress
    const ckpt = JSON.parse(
      readFileSync(join(repo.dir, '.git', 'mem', 'events', 'proc-1.ckpt.json'), 'utf8'),
    );
    expect(ckpt).toMatchObject({ total: 4, proposed: 1 });
    await until(() =>
      existsSync(join(repo.dir, '.git', 'mem', 'events', 'proc-1.lock')) ? undefined : true,
    );
    expect(existsSync(join(repo.dir, '.git', 'mem', 'logs', 'hooks.log'))).toBe(false);
  });

  it('hands SessionEnd to a detached finaliser that commits the summary, and recovers a session whose finaliser died', async () => {
    const repo = makeRepo({ commit: true });
    const base = { session_id: 'proc-2', transcript_path: '/tmp/t.jsonl', cwd: repo.dir };
    hook(repo, { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'Bump the version to 2.0' });
    hook(repo, {
      ...base,
      hook_event_name: 'PostToolUse',
      tool_name: 'Write',
      tool_input: { file_path: `${repo.dir}/VERSION`, content: '2.0.0\n' },
      tool_response: { type: 'create', filePath: `${repo.dir}/VERSION`, content: '2.0.0\n' },
      tool_use_id: 'toolu_9',
    });
    const end = hook(repo, { ...base, hook_event_name: 'SessionEnd', reason: 'logout' });
    expect(end.stdout).toBe('');
    const sessions = await until(async () => {
      const s = await repo.memJson(['sessions']);
      return s.length ? s : undefined;
    });
    expect(sessions[0]).toMatchObject({ session: 'proc-2', outcome: 'completed' });
    const shown = await repo.memJson(['sessions', 'show', 'proc-2']);
    expect(shown.body).toContain('- VERSION (created, +1 −0)');
    expect(shown.body).toContain('(session ended: logout)');
    await until(() => (existsSync(join(repo.dir, '.git', 'mem', 'events', 'proc-2.end')) ? undefined : true));

    // a session that ended while its finaliser could not run: events and the end marker on disk only
    const dir = join(repo.dir, '.git', 'mem', 'events');
    const old = new Date(Date.now() - 60_000);
    const lines = [
      { ts: old.toISOString(), event: 'UserPromptSubmit', session: 'lost-1', prompt: 'Rotate the API keys' },
      {
        ts: old.toISOString(),
        event: 'PostToolUse',
        session: 'lost-1',
        tool: 'Bash',
        input: { command: 'make rotate' },
        response: { stdout: 'ok' },
        exit: 0,
      },
      { ts: old.toISOString(), event: 'SessionEnd', session: 'lost-1', reason: 'other' },
    ];
    writeFileSync(join(dir, 'lost-1.jsonl'), `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    writeFileSync(join(dir, 'lost-1.end'), '{}');
    utimesSync(join(dir, 'lost-1.jsonl'), old, old);
    utimesSync(join(dir, 'lost-1.end'), old, old);
    hook(repo, {
      session_id: 'proc-3',
      transcript_path: '/tmp/t.jsonl',
      cwd: repo.dir,
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    const recovered = await until(async () => {
      const s = await repo.memJson(['sessions']);
      return s.find((x: { session: string }) => x.session === 'lost-1');
    });
    expect(recovered.title).toMatch(/Rotate the API keys/);
    expect(existsSync(join(dir, 'lost-1.end'))).toBe(false);
    // recovered and summarised: its raw events are deleted too
    await until(() => (existsSync(join(dir, 'lost-1.jsonl')) ? undefined : true));
    expect(existsSync(join(repo.dir, '.git', 'mem', 'logs', 'hooks.log'))).toBe(false);
  });

  it('exits 0 and prints nothing for garbage on stdin', () => {
    const repo = makeRepo();
    for (const stdin of [
      '',
      'garbage',
      '{"hook_event_name":"PostToolUse","session_id":"../../etc/passwd","tool_name":"Bash"}',
    ]) {
      const r = runBin(['hook', 'claude-code'], { cwd: repo.dir, env: repo.env, stdin });
      expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
    }
    // an odd session id never escapes the events directory
    expect(existsSync(join(repo.dir, '.git', 'mem', 'events'))).toBe(true);
    expect(existsSync(join(repo.dir, '.git', 'etc'))).toBe(false);
  });
});
