/**
 * One session record per agent session id (issue #30, item 1): Claude Code's hook payloads
 * (test/fixtures/claude-session) replayed through `git mem hook claude-code` in a clone, then the
 * session resumed, stopped and ended again and again, and a session with no activity; the
 * teammate's clone that syncs sees one record for the session and nothing of the idle one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../src/agents/events.js';
import { mergeSessionBody, writeSessionSummary } from '../src/agents/sessions.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { type Json, makeRepo, ROOT, runBinAsync, type TestRepo } from './helpers.js';
import { bareRemote, clone, tipOf } from './sync-helpers.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'claude-session', 'session.jsonl');
const SESSION = '7f3c2a91-5b6e-4d0a-9c1f-2e8b4a6d0c13';

/** Sends one payload to the hook, in process, the checkpoint inline (not detached). */
async function hook(repo: TestRepo, payload: Json): Promise<void> {
  const r = await repo.mem(['hook', 'claude-code'], {
    stdin: JSON.stringify(payload),
    env: { ...repo.env, GIT_MEM_HOOK_INLINE: '1' },
  });
  expect(r.code).toBe(0);
}

/** The recorded session, every payload, with the commit it makes made for real. */
async function replayFixture(repo: TestRepo): Promise<void> {
  repo.write('package.json', '{ "name": "app", "type": "module", "scripts": { "test": "node --test" } }\n');
  repo.write('src/sum.js', 'export const sum = (v) => v.reduce((t, x) => t - x, 0);\n');
  repo.commitAll('app');
  for (const raw of readFileSync(FIXTURE, 'utf8').split('\n').filter(Boolean)) {
    let line = raw.replaceAll('{{CWD}}', repo.dir).replaceAll('{{HOME}}', String(repo.env.HOME));
    if (line.includes('{{HEAD_SHORT}}')) {
      repo.write('src/sum.js', 'export const sum = (v) => v.reduce((t, x) => t + x, 0);\n');
      repo.git('commit', '-qam', 'Fix sum() for negative numbers');
      line = line.replaceAll('{{HEAD_SHORT}}', repo.git('rev-parse', '--short', 'HEAD').trim());
    }
    await hook(repo, JSON.parse(line));
  }
}

function base(repo: TestRepo, session: string) {
  return {
    session_id: session,
    transcript_path: `${repo.env.HOME}/.claude/projects/-work-app/${session}.jsonl`,
    cwd: repo.dir,
  };
}

async function sessionRecords(repo: TestRepo): Promise<Json[]> {
  const rows: Json[] = await repo.memJson(['list', '--type', 'session']);
  return Promise.all(rows.map((r: Json) => repo.memJson(['show', r.id])));
}

describe('one record per agent session', () => {
  it('a resumed session, repeated Stop and SessionEnd, keep one record; an idle session commits nothing, here or in a teammate clone', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    await replayFixture(a);
    expect(await sessionRecords(a)).toHaveLength(1);

    // the session resumes (same session_id, source: resume), works, and ends three times over
    const s = base(a, SESSION);
    await hook(a, { ...s, hook_event_name: 'SessionStart', source: 'resume' });
    await hook(a, {
      ...s,
      hook_event_name: 'UserPromptSubmit',
      permission_mode: 'default',
      prompt: 'Run the linter over src/ as well',
    });
    await hook(a, {
      ...s,
      hook_event_name: 'PostToolUse',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: 'npx eslint src/', description: 'Lint src/' },
      tool_response: { stdout: '', stderr: '', interrupted: false, isImage: false },
      tool_use_id: 'toolu_01LintRun0000000000000001',
    });
    for (const ev of ['Stop', 'Stop', 'SessionEnd', 'SessionEnd', 'Stop', 'SessionEnd'])
      await hook(a, { ...s, hook_event_name: ev, stop_hook_active: false, reason: 'prompt_input_exit' });
    // once more, resumed with nothing done
    await hook(a, { ...s, hook_event_name: 'SessionStart', source: 'resume' });
    await hook(a, { ...s, hook_event_name: 'Stop', stop_hook_active: false });
    await hook(a, { ...s, hook_event_name: 'SessionEnd', reason: 'other' });

    const records = await sessionRecords(a);
    expect(records).toHaveLength(1);
    const [rec] = records;
    // the first part's activity and the resumed part's, each once
    expect(rec.body.match(/^- `npm test` \(exit/gm)).toHaveLength(1);
    expect(rec.body.match(/^- `npx eslint src\/` \(exit/gm)).toHaveLength(1);
    expect(rec.body.match(/^## Resumed /gm)).toHaveLength(1);
    expect(rec.title).toContain('negative numbers');
    expect(rec.session ?? rec.extra?.session).toBeDefined();

    // a session with no prompt and no tool call: no commit at all
    const tip = tipOf(a);
    const idle = base(a, '0b6d1c2e-9a8f-4e7d-b3c1-5f2a7e9d4c60');
    for (const ev of ['SessionStart', 'Stop', 'SessionEnd', 'Stop', 'SessionEnd'])
      await hook(a, { ...idle, hook_event_name: ev, source: 'startup', reason: 'other' });
    expect(tipOf(a)).toBe(tip);

    // the teammate sees the one record, nothing of the idle session
    expect((await a.mem(['sync'])).code).toBe(0);
    expect((await b.mem(['sync'])).code).toBe(0);
    const theirs = await sessionRecords(b);
    expect(theirs.map((r) => r.id)).toEqual([rec.id]);
    expect(b.git('log', '--format=%s', 'refs/memory')).not.toContain('no-activity');
  });

  it('two writers of one session at once (a Stop and a resumed part) still make one record', async () => {
    const repo = makeRepo({ commit: true });
    const t0 = Date.parse('2026-12-01T10:00:00.000Z');
    const part = (start: number, cmd: string): AgentEvent[] => [
      { ts: new Date(start).toISOString(), event: 'SessionStart', session: 'sess-race', source: 'resume' },
      {
        ts: new Date(start + 1000).toISOString(),
        event: 'UserPromptSubmit',
        session: 'sess-race',
        prompt: 'go',
      },
      {
        ts: new Date(start + 2000).toISOString(),
        event: 'PostToolUse',
        session: 'sess-race',
        tool: 'Bash',
        input: { command: cmd },
        exit: 0,
      },
    ];
    const stores = await Promise.all([0, 1].map(async () => new Store(await openRepo(repo.dir, repo.env))));
    try {
      await Promise.all([
        writeSessionSummary(stores[0], part(t0, 'make one')),
        writeSessionSummary(stores[1], part(t0 + 3_600_000, 'make two')),
      ]);
    } finally {
      for (const s of stores) s.close();
    }
    const records = await sessionRecords(repo);
    expect(records).toHaveLength(1);
    expect(records[0].body).toContain('`make one`');
    expect(records[0].body).toContain('`make two`');
  });

  it('a Stop and a SessionEnd hook process at once, for a resumed session, leave one record', async () => {
    const repo = makeRepo({ commit: true });
    const s = base(repo, 'c41d2e7a-0f3b-4b8e-9d6a-1e2f3a4b5c6d');
    const work = async (prompt: string, command: string) => {
      await hook(repo, { ...s, hook_event_name: 'UserPromptSubmit', permission_mode: 'default', prompt });
      await hook(repo, {
        ...s,
        hook_event_name: 'PostToolUse',
        permission_mode: 'default',
        tool_name: 'Bash',
        tool_input: { command },
        tool_response: { stdout: 'ok', stderr: '', interrupted: false, isImage: false },
        tool_use_id: `toolu_${command.length}`,
      });
    };
    await hook(repo, { ...s, hook_event_name: 'SessionStart', source: 'startup' });
    await work('Build the docs', 'npm run docs');
    await hook(repo, { ...s, hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' });
    await hook(repo, { ...s, hook_event_name: 'SessionStart', source: 'resume' });
    await work('Now the changelog', 'npm run changelog');
    const env = { ...repo.env, GIT_MEM_HOOK_INLINE: '1' };
    const results = await Promise.all(
      ['Stop', 'SessionEnd'].map((ev) =>
        runBinAsync(['hook', 'claude-code'], {
          cwd: repo.dir,
          env,
          stdin: JSON.stringify({ ...s, hook_event_name: ev, stop_hook_active: false, reason: 'other' }),
        }),
      ),
    );
    for (const r of results) expect(r.code).toBe(0);
    const records = await sessionRecords(repo);
    expect(records).toHaveLength(1);
    expect(records[0].body).toContain('`npm run docs`');
    expect(records[0].body.match(/^- `npm run changelog` \(exit/gm)).toHaveLength(1);
  });

  it('a part is put in once, in its place, the other parts kept (pure)', () => {
    const p1 = (x: string) =>
      `> claude-code session s · T1 · 1 min · 1 prompt · 1 tool call\n\n## Commands run\n- \`${x}\` (exit 0)\n`;
    const p2 = (x: string) =>
      `> claude-code session s · T2 · 1 min · 1 prompt · 1 tool call\n\n## Commands run\n- \`${x}\` (exit 0)\n`;
    const p3 = `> claude-code session s · T3 · 1 min\n\n## Outcome\n- completed\n`;
    let body = p1('a');
    body = mergeSessionBody(body, 'T2', p2('b'));
    body = mergeSessionBody(body, 'T3', p3);
    expect(mergeSessionBody(body, 'T3', p3)).toBe(body);
    body = mergeSessionBody(body, 'T2', p2('b2'));
    body = mergeSessionBody(body, 'T1', p1('a2'));
    expect(body.match(/^## Resumed T2$/gm)).toHaveLength(1);
    expect(body.match(/^## Resumed T3$/gm)).toHaveLength(1);
    expect(body).toContain('`a2`');
    expect(body).toContain('`b2`');
    expect(body).not.toMatch(/`a`|`b`/);
    expect(body.indexOf('Resumed T2')).toBeLessThan(body.indexOf('Resumed T3'));
    expect(body.startsWith('> claude-code session s · T1')).toBe(true);
  });

  it('two clones that ran the same session id: the next write after a sync folds their records into one', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    const session = '5e8f0a1b-2c3d-4e5f-8a9b-0c1d2e3f4a5b';
    const run = async (repo: TestRepo, command: string) => {
      const s = base(repo, session);
      await hook(repo, { ...s, hook_event_name: 'SessionStart', source: 'startup' });
      await hook(repo, {
        ...s,
        hook_event_name: 'UserPromptSubmit',
        permission_mode: 'default',
        prompt: `run ${command}`,
      });
      await hook(repo, {
        ...s,
        hook_event_name: 'PostToolUse',
        tool_name: 'Bash',
        tool_input: { command },
        tool_response: { stdout: '', stderr: '', interrupted: false, isImage: false },
        tool_use_id: `toolu_${command.length}`,
      });
      await hook(repo, { ...s, hook_event_name: 'SessionEnd', reason: 'other' });
    };
    await run(a, 'make alpha');
    await run(b, 'make beta');
    expect((await a.mem(['sync'])).code).toBe(0);
    expect((await b.mem(['sync'])).code).toBe(0);
    expect(await sessionRecords(b)).toHaveLength(2);
    await run(b, 'make gamma');
    const folded = await sessionRecords(b);
    expect(folded).toHaveLength(1);
    for (const c of ['alpha', 'beta', 'gamma']) expect(folded[0].body).toContain(`\`make ${c}\``);
    expect((await b.mem(['sync'])).code).toBe(0);
    expect((await a.mem(['sync'])).code).toBe(0);
    expect((await sessionRecords(a)).map((r) => r.id)).toEqual([folded[0].id]);
  });
});
