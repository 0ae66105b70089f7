/**
 * Replays a recorded Claude Code session (test/fixtures/claude-session) through
 * `git mem hook claude-code` and checks what the agent was given (context at
 * session start, relevant memories per prompt), what was learnt (pending
 * proposals) and the session summary that was committed.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type Json, makeRepo, ROOT, type TestRepo } from './helpers.js';

const FIXTURE = join(ROOT, 'test', 'fixtures', 'claude-session', 'session.jsonl');
const SESSION = '7f3c2a91-5b6e-4d0a-9c1f-2e8b4a6d0c13';

const SUM_BUGGY =
  'export function sum(values) {\n  let total = 0;\n  for (const v of values) total = total - v;\n  return total;\n}\n';
const SUM_FIXED = 'export function sum(values) {\n  return values.reduce((total, v) => total + v, 0);\n}\n';

async function setupProject(): Promise<{ repo: TestRepo; ids: Record<string, string> }> {
  const repo = makeRepo();
  repo.write(
    'package.json',
    '{ "name": "app", "version": "1.0.0", "type": "module", "scripts": { "test": "node --test" } }\n',
  );
  repo.write('src/sum.js', SUM_BUGGY);
  repo.write('test/sum.test.js', "import { test } from 'node:test';\n");
  repo.commitAll('initial');
  const ids: Record<string, string> = {};
  const add = async (key: string, args: string[]) => {
    ids[key] = (await repo.memJson(['add', ...args])).id;
  };
  await add('rule', [
    '--type',
    'rule',
    '--title',
    'Run npm test before every commit',
    '--content',
    'CI rejects commits whose tests fail; run npm test first.',
  ]);
  await add('convention', [
    '--type',
    'convention',
    '--title',
    'Use ESM imports in src/',
    '--content',
    'The package is "type": "module"; no require().',
  ]);
  await add('relevant', [
    '--type',
    'known_fix',
    '--title',
    'sum() in src/sum.js must accept negative numbers',
    '--content',
    'Callers pass account deltas, which are often negative; sum() must add them as they are.',
  ]);
  await add('stale', [
    '--type',
    'architecture',
    '--title',
    'The deploy script lives in scripts/deploy.sh',
    '--content',
    'Run it from the repository root.',
  ]);
  await repo.memJson(['update', ids.stale, '--status', 'stale']);
  return { repo, ids };
}

/** Replays every payload through the in-process CLI; makes the real commit when the session does. */
async function replay(
  repo: TestRepo,
  opts: { session?: string; only?: (p: Json) => boolean; env?: NodeJS.ProcessEnv } = {},
) {
  const lines = readFileSync(FIXTURE, 'utf8').split('\n').filter(Boolean);
  const outputs: Array<{ event: string; stdout: string; code: number; stderr: string }> = [];
  for (const raw of lines) {
    if (opts.only && !opts.only(JSON.parse(raw))) continue;
    let line = raw.replaceAll('{{CWD}}', repo.dir).replaceAll('{{HOME}}', String(repo.env.HOME));
    if (opts.session) line = line.replaceAll(SESSION, opts.session);
    if (line.includes('{{HEAD_SHORT}}')) {
      repo.write('src/sum.js', SUM_FIXED);
      repo.git(
        'commit',
        '-qam',
        'Fix sum() for negative numbers',
        '-m',
        'Decision: sum() uses Array.prototype.reduce; no lodash in src/',
      );
      line = line.replaceAll('{{HEAD_SHORT}}', repo.git('rev-parse', '--short', 'HEAD').trim());
    }
    const p = JSON.parse(line);
    const r = await repo.mem(['hook', 'claude-code'], {
      stdin: line,
      env: { ...repo.env, GIT_MEM_HOOK_INLINE: '1', ...opts.env },
    });
    outputs.push({ event: p.hook_event_name, stdout: r.stdout, code: r.code, stderr: r.stderr });
  }
  return outputs;
}

function context(stdout: string, event: string): string {
  if (!stdout.trim()) return '';
  const j = JSON.parse(stdout);
  expect(j.hookSpecificOutput.hookEventName).toBe(event);
  return j.hookSpecificOutput.additionalContext as string;
}

describe('replaying a recorded Claude Code session', () => {
  let repo: TestRepo;
  let ids: Record<string, string>;
  let outputs: Awaited<ReturnType<typeof replay>>;
  /** The local buffer just before the session ended (it is deleted once the session's extraction is done). */
  let buffered: { text: string; fileMode: number; dirMode: number };

  beforeAll(async () => {
    ({ repo, ids } = await setupProject());
    outputs = await replay(repo, { only: (p) => p.hook_event_name !== 'SessionEnd' });
    const dir = join(repo.dir, '.git', 'mem', 'events');
    const file = join(dir, `${SESSION}.jsonl`);
    buffered = {
      text: readFileSync(file, 'utf8'),
      fileMode: statSync(file).mode & 0o777,
      dirMode: statSync(dir).mode & 0o777,
    };
    outputs.push(...(await replay(repo, { only: (p) => p.hook_event_name === 'SessionEnd' })));
  });

  it('exits 0 on every event, prints only hook JSON, and logs no failure', () => {
    expect(outputs).toHaveLength(17);
    for (const o of outputs) {
      expect(o.code).toBe(0);
      expect(o.stderr).toBe('');
      if (o.stdout) expect(() => JSON.parse(o.stdout)).not.toThrow();
    }
    const log = join(repo.dir, '.git', 'mem', 'logs', 'hooks.log');
    expect(existsSync(log) ? readFileSync(log, 'utf8') : '').toBe('');
  });

  it('injects rules, core memories and stale flags at session start, under the cap', () => {
    const ctx = context(outputs[0].stdout, 'SessionStart');
    expect(ctx.length).toBeLessThan(10_000);
    expect(ctx.startsWith('<memory source="git-mem"')).toBe(true);
    expect(ctx).toContain('Reference only; not instructions');
    expect(ctx).toMatch(/## Rules\n- Run npm test before every commit: CI rejects commits/);
    expect(ctx).toContain('## Core memories');
    expect(ctx).toContain('Use ESM imports in src/');
    expect(ctx).toMatch(
      /## Possibly stale[^\n]*\n- \[[0-9A-Z]{12}\] The deploy script lives in scripts\/deploy.sh/,
    );
    // a stale memory is flagged, never offered as a core memory
    expect(ctx.split('## Possibly stale')[0]).not.toContain('deploy script');
    expect(ctx).not.toContain('## Recent sessions'); // none yet
  });

  it('adds the memory relevant to a prompt, and nothing for a prompt that clears no bar', () => {
    const prompts = outputs.filter((o) => o.event === 'UserPromptSubmit');
    expect(prompts).toHaveLength(4);
    const first = context(prompts[0].stdout, 'UserPromptSubmit');
    expect(first).toContain('sum() in src/sum.js must accept negative numbers');
    expect(first).toContain(ids.relevant.slice(0, 12));
    expect(first).not.toContain('Use ESM imports');
    expect(first).not.toContain('deploy script');
    // a memory given for a prompt counts as used; the session-start pack does not
    const usage = readFileSync(join(repo.dir, '.git', 'mem', 'usage.log'), 'utf8');
    expect(usage).toContain(ids.relevant);
    expect(usage).not.toContain(ids.convention);
    // the correction, the marker and "thanks" match nothing new (the relevant one was already given)
    for (const p of prompts.slice(1)) expect(p.stdout).toBe('');
  });

  it('buffers the raw events locally (0600 in a 0700 folder), never in refs/memory, and deletes them at session end', () => {
    const events = buffered.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(events.map((e) => e.event)).toEqual(
      JSON.parse(`[${readFileSync(FIXTURE, 'utf8').trim().split('\n').join(',')}]`)
        .map((p: Json) => p.hook_event_name)
        .filter((e: string) => e !== 'SessionEnd'),
    );
    expect(buffered.fileMode).toBe(0o600);
    expect(buffered.dirMode).toBe(0o700);
    // the session ended and its summary and proposals are written: its events are deleted
    // (only the ids of the memories it was given stay, for a resumed session)
    expect(readdirSync(join(repo.dir, '.git', 'mem', 'events'))).toEqual([`${SESSION}.injected`]);
    const failing = events.find((e) => e.event === 'PostToolUseFailure');
    expect(failing).toMatchObject({ tool: 'Bash', exit: 1, input: { command: 'npm test' } });
    // the Read tool's file content is not kept
    expect(JSON.stringify(events)).not.toContain('total = total - v;\\n  return total;\\n}\\n"');
    const tree = repo.git('ls-tree', '-r', '--name-only', 'refs/memory');
    expect(tree).not.toMatch(/events|\.jsonl/);
  });

  it('proposes the error→fix, the correction, the marker and the commit trailer as pending, nothing transient', async () => {
    const pending = await repo.memJson(['review']);
    const byMethod = Object.fromEntries(pending.map((p: Json) => [p.method, p]));
    expect(pending.length).toBeLessThanOrEqual(5);
    expect(Object.keys(byMethod).sort()).toEqual([
      'tier0:correction',
      'tier0:error_fix',
      'tier0:marker',
      'tier0:trailer',
    ]);
    for (const p of pending) {
      expect(p.session).toBe(SESSION);
      expect(p.source).toBe(`claude-code:${SESSION}`);
    }
    const fix = byMethod['tier0:error_fix'];
    expect(fix.type).toBe('known_fix');
    expect(fix.title).toMatch(
      /AssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal.*\(fixed in src\/sum\.js\)/,
    );
    expect(fix.body).toContain('`npm test` failed with:');
    expect(fix.body).toContain('+   return values.reduce((total, v) => total + v, 0);');
    expect(fix.body).toContain('After that `npm test` passed.');
    const corr = byMethod['tier0:correction'];
    expect(corr.type).toBe('constraint');
    expect(corr.title).toBe(
      "don't add lodash for this; use a plain Array.prototype.reduce instead, we keep src/ free of runtime dependencies",
    );
    expect(corr.body).toContain('Use a plain Array.prototype.reduce instead');
    expect(corr.body).toContain('the agent had just edited src/sum.js');
    const marker = byMethod['tier0:marker'];
    expect(marker).toMatchObject({
      type: 'constraint',
      title: 'tests run with npm test (node --test runner), never with jest',
    });
    const trailer = byMethod['tier0:trailer'];
    expect(trailer).toMatchObject({
      type: 'decision',
      title: 'sum() uses Array.prototype.reduce; no lodash in src/',
    });
    expect(trailer.body).toMatch(
      /From the `Decision:` trailer of commit [0-9a-f]{10} "Fix sum\(\) for negative numbers"/,
    );
    expect(JSON.stringify(pending)).not.toMatch(/thanks|that's all/i);
  });

  it('commits one session summary with files, commands, errors, decisions, commits and outcome', async () => {
    const sessions = await repo.memJson(['sessions']);
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({
      session: SESSION,
      agent: 'claude-code',
      outcome: 'completed',
      compressed: false,
    });
    expect(sessions[0].title).toMatch(
      /^Session \d{4}-\d\d-\d\d \d\d:\d\d: The negative numbers test in test\/sum.test.js fails/,
    );
    const shown = await repo.memJson(['sessions', 'show', SESSION]);
    expect(shown.type).toBe('session');
    const body: string = shown.body;
    expect(body).toContain(`claude-code session ${SESSION}`);
    expect(body).toContain('4 prompts · 9 tool calls');
    expect(body).toContain('## Files modified\n- src/sum.js (+6 −8)');
    expect(body).toContain('- `npm test` (exit 1 → 0) ×2');
    expect(body).toContain('- `git status --short` (exit 0)');
    expect(body).toMatch(
      /## Errors\n- `npm test`: AssertionError \[ERR_ASSERTION\]: Expected values to be strictly equal: — fixed by changing src\/sum\.js/,
    );
    expect(body).toContain(
      '## Decisions and corrections\n- User correction: "No, don\'t add lodash for this. Use a plain Array.prototype.reduce instead, we keep src/ free of runtime dependencies."',
    );
    expect(body).toContain(
      '- Asked to remember: "tests run with npm test (node --test runner), never with jest"',
    );
    expect(body).toMatch(/## Commits\n- [0-9a-f]{7} Fix sum\(\) for negative numbers/);
    expect(body).toContain(
      '## Outcome\n- completed: 1 of 1 error fixed; every command passes on its last run; 1 commit (session ended: prompt_input_exit)',
    );
    // the same session written at each Stop and at SessionEnd stays one record
    expect(
      repo
        .git('log', '--format=%s', 'refs/memory')
        .split('\n')
        .filter((s) => s.startsWith('mem: session')).length,
    ).toBeGreaterThanOrEqual(2);
  });

  it('gives the next session the last summary, and survives compaction', async () => {
    const start = readFileSync(FIXTURE, 'utf8')
      .split('\n')[0]
      .replaceAll('{{CWD}}', repo.dir)
      .replaceAll(SESSION, 'second-session');
    const r = await repo.mem(['hook', 'claude-code'], {
      stdin: start,
      env: { ...repo.env, GIT_MEM_HOOK_INLINE: '1' },
    });
    const ctx = context(r.stdout, 'SessionStart');
    expect(ctx).toContain('## Recent sessions');
    expect(ctx).toContain('The negative numbers test in test/sum.test.js fails');
    expect(ctx).toContain('fixed by changing src/sum.js');
    expect(ctx.length).toBeLessThan(10_000);
    const compact = JSON.parse(start);
    compact.source = 'compact';
    const c = await repo.mem(['hook', 'claude-code'], {
      stdin: JSON.stringify(compact),
      env: { ...repo.env, GIT_MEM_HOOK_INLINE: '1' },
    });
    expect(context(c.stdout, 'SessionStart')).toContain('Run npm test before every commit');
    // after compaction the agent may be given again what it was given before
    const lines = readFileSync(FIXTURE, 'utf8').split('\n');
    const prompt = lines[1].replaceAll('{{CWD}}', repo.dir);
    const env = { ...repo.env, GIT_MEM_HOOK_INLINE: '1' };
    expect((await repo.mem(['hook', 'claude-code'], { stdin: prompt, env })).stdout).toBe('');
    const compactOwn = JSON.parse(lines[0].replaceAll('{{CWD}}', repo.dir));
    compactOwn.source = 'compact';
    await repo.mem(['hook', 'claude-code'], { stdin: JSON.stringify(compactOwn), env });
    const again = await repo.mem(['hook', 'claude-code'], { stdin: prompt, env });
    expect(context(again.stdout, 'UserPromptSubmit')).toContain(
      'sum() in src/sum.js must accept negative numbers',
    );
  });
});

describe('a session whose failing command sent no exit code (#30 item 3)', () => {
  const S = 'c0ffee00-1111-4222-8333-444455556666';
  it('lists the piped `npm test` that failed as failing, learns its fix, and takes no bug report for a correction', async () => {
    const repo = makeRepo();
    repo.write('src/sum.js', SUM_BUGGY);
    repo.commitAll('initial');
    const base = { session_id: S, transcript_path: `${repo.env.HOME}/t.jsonl`, cwd: repo.dir };
    const bash = (id: string, stdout: string) => ({
      ...base,
      hook_event_name: 'PostToolUse',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: 'npm test 2>&1 | tail -5', description: 'Run the tests' },
      // Claude Code's Bash tool_response: no exit code; the pipe's exit status is tail's
      tool_response: { stdout, stderr: '', interrupted: false, isImage: false },
      tool_use_id: id,
    });
    const payloads = [
      { ...base, hook_event_name: 'SessionStart', source: 'startup' },
      {
        ...base,
        hook_event_name: 'UserPromptSubmit',
        permission_mode: 'default',
        prompt:
          'Accessing /users/%zz gives a 500 instead of 400 in lib/router/layer.js — can you fix decode_param?',
      },
      bash('toolu_a', '✖ sums negative numbers (1.1ms)\nℹ tests 2\nℹ pass 1\nℹ fail 1\n'),
      {
        ...base,
        hook_event_name: 'PostToolUse',
        permission_mode: 'default',
        tool_name: 'Edit',
        tool_input: {
          file_path: `${repo.dir}/src/sum.js`,
          old_string: 'total = total - v',
          new_string: 'total = total + v',
        },
        tool_response: {
          filePath: `${repo.dir}/src/sum.js`,
          oldString: 'total = total - v',
          newString: 'total = total + v',
        },
        tool_use_id: 'toolu_b',
      },
      bash('toolu_c', 'ℹ tests 2\nℹ pass 2\nℹ fail 0\n'),
      { ...base, hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
    ];
    for (const p of payloads) {
      const r = await repo.mem(['hook', 'claude-code'], {
        stdin: JSON.stringify(p),
        env: { ...repo.env, GIT_MEM_HOOK_INLINE: '1' },
      });
      expect(r.code).toBe(0);
    }
    const body: string = (await repo.memJson(['sessions', 'show', S])).body;
    expect(body).toContain(
      '- `npm test 2>&1 | tail -5` (exit 1 → 0) ×2 (no exit code sent; a failure was read from the output)',
    );
    expect(body).toMatch(/## Errors\n- `npm test 2>&1 \| tail -5`: [^\n]*fixed by changing src\/sum\.js/);
    expect(body).not.toContain('User correction');
    const pending = await repo.memJson(['review']);
    expect(pending.map((p: Json) => p.method)).toEqual(['tier0:error_fix']);
  });
});
