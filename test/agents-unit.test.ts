/** Pieces of the agents capability: the gate, tier-0 rules, summaries, strategies, settings, review. */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../src/agents/events.js';
import { compactEvent, updateTrigger } from '../src/agents/events.js';
import { extractTier0, inferType } from '../src/agents/extract.js';
import { gateProposalsDetailed, isTransient, type Proposal } from '../src/agents/proposal.js';
import { outcomePatch, strategyConfidence } from '../src/agents/strategy.js';
import {
  compressSummaryBody,
  correctionOf,
  redactSecrets,
  renderSummary,
  summarizeSession,
} from '../src/agents/summary.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { HOOK_COMMAND, mergeHooks, removeHooks } from '../src/hooks/claude-settings.js';
import { errorOf, makeRepo, type TestRepo, tmpDir } from './helpers.js';
import { fresh, template } from './support/template.js';

/** a first commit and no store (the first write creates it): strategies and review run on copies of it */
const NO_STORE = template('no-store', { init: false });

let n = 0;
function ev(e: Partial<AgentEvent> & { event: string }): AgentEvent {
  n++;
  return {
    ts: new Date(Date.UTC(2026, 0, 1, 10, 0, n)).toISOString(),
    session: 's1',
    tool_use_id: `t${n}`,
    ...e,
  };
}
const bash = (command: string, exit: number, out = '') =>
  ev(
    exit === 0
      ? {
          event: 'PostToolUse',
          tool: 'Bash',
          input: { command },
          response: { stdout: out, stderr: '' },
          exit,
        }
      : {
          event: 'PostToolUseFailure',
          tool: 'Bash',
          input: { command },
          error: `Exit code ${exit}\n${out}`,
          exit,
        },
  );
const edit = (path: string, oldS: string, newS: string) =>
  ev({
    event: 'PostToolUse',
    tool: 'Edit',
    input: { file_path: path, old_string: oldS, new_string: newS },
    files: [{ path, added: 1, removed: 1 }],
  });
const prompt = (text: string) => ev({ event: 'UserPromptSubmit', prompt: text });

const P = (o: Partial<Proposal>): Proposal => ({
  type: 'convention',
  title: 'x',
  body: 'y',
  tags: [],
  source: 'test',
  ...o,
});

async function storeOf(repo: Pick<TestRepo, 'dir' | 'env'>): Promise<Store> {
  return new Store(await openRepo(repo.dir, repo.env));
}

describe('tier-0 extraction', () => {
  it('pairs a failing command with the same command passing after an edit, and ignores a flaky rerun', () => {
    const events = [
      bash('npm run build', 2, 'src/a.ts(3,1): error TS2304: Cannot find name "foo".'),
      edit('/w/src/a.ts', 'foo()', 'bar()'),
      bash('npm run build', 0),
      bash('npm test', 1, 'FAIL flaky.test.ts'),
      bash('npm test', 0),
    ];
    const c = extractTier0(events, { root: '/w' });
    expect(c).toHaveLength(1);
    expect(c[0]).toMatchObject({ type: 'known_fix', source: 'tier0:error_fix', at: 2 });
    expect(c[0].title).toBe('src/a.ts(3,1): error TS2304: Cannot find name "foo". (fixed in src/a.ts)');
    expect(c[0].body).toContain('- foo()\n+ bar()');
    // already checkpointed: nothing again
    expect(extractTier0(events, { root: '/w', since: 3 })).toHaveLength(0);
  });

  it('credits commands run between a failure and the pass when nothing was edited', () => {
    const c = extractTier0([
      bash('npm test', 1, "Error: Cannot find module 'zod'"),
      bash('npm install', 0),
      bash('npm test', 0),
    ]);
    expect(c).toHaveLength(1);
    expect(c[0].title).toBe("Cannot find module 'zod' (fixed by running `npm install`)");
  });

  it('finds corrections and markers in prompts, and not in ordinary requests', () => {
    expect(correctionOf("No, don't mock the database in these tests.")).toBe(
      "No, don't mock the database in these tests.",
    );
    expect(correctionOf('Use pnpm instead of npm here.')).toBe('Use pnpm instead of npm here.');
    expect(correctionOf('Actually, the API lives in services/api, not src/api.')).toBe(
      'Actually, the API lives in services/api, not src/api.',
    );
    expect(correctionOf('Please add a test for the parser.')).toBeUndefined();
    const c = extractTier0([
      prompt('Add a parser test.'),
      prompt('remember: the staging database is reset every night'),
      prompt('no, never push to main directly'),
    ]);
    expect(c.map((x) => [x.source, x.type, x.title])).toEqual([
      ['tier0:marker', 'convention', 'the staging database is reset every night'],
      ['tier0:correction', 'constraint', 'never push to main directly'],
    ]);
    // a request to remember that reads like a correction too is one record, in extraction and in the summary
    const both = 'Remember: never use lodash in src/, use reduce instead.';
    expect(extractTier0([prompt(both)]).map((x) => x.source)).toEqual(['tier0:marker']);
    expect(summarizeSession([prompt(both)]).decisions).toEqual([
      'Asked to remember: "never use lodash in src/, use reduce instead"',
    ]);
    expect(summarizeSession([prompt('no, never push to main directly')]).decisions).toEqual([
      'User correction: "no, never push to main directly"',
    ]);
    expect(inferType('We decided to use Postgres')).toBe('decision');
    expect(inferType('prefer small commits')).toBe('preference');
  });

  it('turns Memory:/Decision: trailers and revert commits into proposals', () => {
    const events = [
      bash('git commit -m x', 0, '[main abc1234] x'),
      bash('git revert abc1234', 0, '[main def5678] Revert "x"'),
    ];
    const c = extractTier0(events, {
      commits: [
        {
          sha: 'abc1234000',
          message:
            'Add retry to the uploader\n\nMemory: the S3 uploader must retry 3 times with backoff\nDecision: uploads go through the queue',
          at: 0,
        },
        {
          sha: 'def5678000',
          message:
            'Revert "Cache sessions in Redis"\n\nThis reverts commit 1234567890.\n\nRedis sessions broke logout across pods.',
          at: 1,
        },
      ],
    });
    expect(c.map((x) => [x.source, x.type, x.title])).toEqual([
      ['tier0:trailer', 'constraint', 'the S3 uploader must retry 3 times with backoff'],
      ['tier0:trailer', 'decision', 'uploads go through the queue'],
      ['tier0:revert', 'failed_attempt', 'Reverted: Cache sessions in Redis'],
    ]);
    expect(c[2].body).toContain('Why: Redis sessions broke logout across pods.');
  });
});

describe('buffered events and checkpoint triggers', () => {
  it('compacts payloads: clips output, drops file contents, derives exit codes and line counts', () => {
    const e = compactEvent({
      session_id: 's',
      hook_event_name: 'PostToolUse',
      tool_name: 'Write',
      tool_input: { file_path: '/w/a.txt', content: 'a\nb\nc\n' },
      tool_response: { type: 'create', filePath: '/w/a.txt', content: 'a\nb\nc\n' },
    });
    expect(e.files).toEqual([{ path: '/w/a.txt', added: 3, removed: 0, created: true }]);
    expect(JSON.stringify(e)).not.toContain('a\\nb\\nc');
    const f = compactEvent({
      session_id: 's',
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'Bash',
      tool_input: { command: 'make' },
      error: `Exit code 2\n${'x'.repeat(10_000)}`,
    });
    expect(f.exit).toBe(2);
    expect(f.error!.length).toBeLessThan(2100);
  });

  it('fires at 10 events, at a command passing after failing, and at a commit', () => {
    const st = { total: 0, failing: [] as string[] };
    const fired: Array<string | undefined> = [];
    for (let i = 0; i < 9; i++) fired.push(updateTrigger(st, ev({ event: 'PostToolUse', tool: 'Read' }), 0));
    expect(fired.every((x) => x === undefined)).toBe(true);
    expect(updateTrigger(st, ev({ event: 'PostToolUse', tool: 'Read' }), 0)).toBe('count');
    expect(updateTrigger(st, bash('npm test', 1), 10)).toBeUndefined();
    expect(updateTrigger(st, bash('npm test', 0), 10)).toBe('test-pass');
    expect(updateTrigger(st, bash('git commit -qm "x"', 0), 10)).toBe('commit');
  });
});

describe('session summaries', () => {
  it('reports an unfixed failure, redacts secrets and compresses older summaries', () => {
    const s = summarizeSession([
      prompt('deploy it'),
      bash('make deploy', 1, 'error: token=ghp_abcdefghijklmnopqrstuvwxyz0123456789 rejected'),
    ]);
    expect(s.outcome).toBe('failing');
    const body = redactSecrets(renderSummary(s));
    // only the secret goes; the rest of the line still says what failed
    expect(body).toMatch(/## Errors\n.*token=\[REDACTED\] rejected/);
    expect(body).not.toContain('ghp_');
    const long = renderSummary(
      summarizeSession([
        prompt('x'),
        edit('/w/a.ts', 'a', 'b'),
        edit('/w/b.ts', 'a', 'b'),
        bash('npm test', 0),
      ]),
    );
    const short = compressSummaryBody(long);
    expect(short).toContain('## Files modified\n- 2 files (+2 −2)');
    expect(short).toContain('## Commands run\n- 1 distinct command');
    expect(short).toContain('## Outcome');
    expect(short).not.toContain('/w/a.ts');
  });
});

describe('the proposal gate', () => {
  it('caps, dedups, redacts secrets, and refuses transient text and text git-mem injected', async () => {
    const repo = makeRepo();
    await repo.memJson([
      'add',
      '--type',
      'convention',
      '--title',
      'Use pnpm for every package install',
      '--content',
      'pnpm only.',
    ]);
    const store = await storeOf(repo);
    try {
      const v = await gateProposalsDetailed(
        store,
        [
          P({ title: 'Use pnpm for all package installs', body: 'dup of the store' }),
          P({ title: 'Build succeeded', body: 'ok' }),
          P({ title: 'Deploy key for staging servers', body: 'key: AKIAIOSFODNN7EXAMPLE' }),
          P({ title: 'The release branch is cut every Tuesday', body: 'from main' }),
          P({ title: 'Release branch cut every Tuesday', body: 'again' }),
          P({
            title: 'Logs go to the central collector',
            body: '<memory source="git-mem"> Logs go to the central collector',
          }),
          P({ title: 'Staging database resets nightly', body: 'Staging DB resets at 02:00 UTC.' }),
          P({ title: 'Feature flags live in flags.yaml', body: 'one file' }),
          P({ title: 'Never log request bodies', body: 'privacy' }),
          P({ title: 'Ports below 1024 need root here', body: 'use 8080' }),
          P({ title: 'Migrations run on deploy only', body: 'not at boot' }),
          P({ type: 'session' as never, title: 'A session', body: 'x' }),
        ],
        {
          alreadyProposed: 1,
          injected: ['Cache keys carry the tenant id', 'Every cache key is prefixed with the tenant id'],
        },
      );
      expect(v.map((x) => x.reason ?? 'ok')).toEqual([
        'duplicate-store',
        'transient',
        'ok',
        'ok',
        'duplicate-batch',
        'injected',
        'ok',
        'ok',
        'cap',
        'cap',
        'cap',
        'invalid',
      ]);
      // agent text is redacted, not dropped: the key is gone, what the proposal says stays
      expect(v[2].proposal).toMatchObject({
        title: 'Deploy key for staging servers',
        body: 'key: [REDACTED]',
      });
      const inj = await gateProposalsDetailed(
        store,
        [
          P({
            title: 'Cache keys carry the tenant id',
            body: 'Every cache key is prefixed with the tenant id.',
          }),
        ],
        {
          injected: ['Cache keys carry the tenant id', 'Every cache key is prefixed with the tenant id'],
        },
      );
      expect(inj[0].reason).toBe('injected');
      expect(isTransient(P({ title: 'All tests pass', body: '' }))).toBe(true);
    } finally {
      store.close();
    }
  });
});

describe('strategies', () => {
  it('computes confidence as (s+1)/(s+f+2) clamped to [0.1, 0.95], archives below 0.3 and reinstates', async () => {
    expect(strategyConfidence(0, 0)).toBe(0.5);
    // one success is not proof: 0.667, not 0.95 (and below the 0.7 of every session's core memories)
    expect(strategyConfidence(1, 0)).toBe(0.667);
    expect(strategyConfidence(2, 0)).toBe(0.75);
    expect(strategyConfidence(0, 5)).toBe(0.143);
    expect(strategyConfidence(0, 20)).toBe(0.1);
    expect(strategyConfidence(100, 0)).toBe(0.95);
    expect(strategyConfidence(6, 1)).toBe(0.778);
    const repo = await fresh(NO_STORE);
    const s = await repo.memJson([
      'strategy',
      'add',
      '--title',
      'Extract shared types before parallel work',
      '--content',
      'When modules share models.',
    ]);
    expect(s.confidence).toBe(0.5);
    expect((await repo.memJson(['strategy', 'record', s.id, '--success'])).confidence).toBe(0.667);
    // one success does not put it into every session's core memories; two do
    const s2 = (
      await repo.memJson([
        'strategy',
        'add',
        '--title',
        'Write the failing test first',
        '--content',
        'Then fix.',
      ])
    ).id;
    for (let i = 0; i < 2; i++) await repo.memJson(['strategy', 'record', s2, '--success']);
    const { sessionStartContext } = await import('../src/agents/inject.js');
    const ids = (await sessionStartContext(repo.store)).ids;
    expect(ids).toContain(s2);
    expect(ids).not.toContain(s.id);
    for (let i = 0; i < 3; i++) await repo.memJson(['strategy', 'record', s.id, '--failure']);
    const low = await repo.memJson(['strategy', 'record', s.id, '--failure']);
    expect(low).toMatchObject({ confidence: 0.286, status: 'archived', successes: 1, failures: 4 });
    expect((await repo.memJson(['strategy', 'list'])).map((x: { id: string }) => x.id)).toEqual([s2]);
    const back = await repo.memJson(['strategy', 'record', s.id, '--success']);
    expect(back).toMatchObject({ confidence: 0.375, status: 'active', successes: 2, failures: 4 });
    const shown = await repo.memJson(['show', s.id]);
    expect(shown.extra).toMatchObject({ successes: 2, failures: 4 });
    expect(shown.extra.archived_reason).toBeUndefined();
    const tip = repo.tip();
    const both = await repo.mem(['strategy', 'record', s.id, '--success', '--failure']);
    expect(both).toMatchObject({ code: 2, error: 'E_INVALID_ARG' });
    expect(repo.tip()).toBe(tip);
    const other = (
      await repo.memJson(['add', '--type', 'decision', '--title', 'Use Postgres', '--content', 'x'])
    ).id;
    const before = repo.tip();
    const wrong = await repo.mem(['strategy', 'record', other, '--success']);
    expect(wrong).toMatchObject({ code: 2, error: 'E_INVALID_ARG' });
    // names the memory and the type it has
    expect(wrong.message).toContain(other.slice(0, 12));
    expect(wrong.message).toContain('decision');
    expect(repo.tip()).toBe(before);
    expect(
      outcomePatch({ ...shown, extra: { successes: 'x' } } as never, 'failure', 'now').extra,
    ).toMatchObject({ successes: 0, failures: 1 });
  });
});

describe('Claude Code settings', () => {
  it('merges idempotently, keeps everything else and uninstall restores the file exactly', async () => {
    const repo = makeRepo();
    const file = join(repo.dir, '.claude', 'settings.json');
    const original = {
      permissions: { allow: ['Bash(npm test:*)'] },
      hooks: {
        PostToolUse: [
          {
            matcher: 'Edit|Write',
            hooks: [{ type: 'command', command: 'npx prettier --write "$CLAUDE_FILE_PATHS"' }],
          },
        ],
      },
      model: 'opus',
    };
    repo.write('.claude/settings.json', `${JSON.stringify(original, null, 2)}\n`);
    const first = await repo.memJson(['hooks', 'install', '--claude']);
    expect(first).toEqual([
      {
        hook: 'claude',
        action: 'installed',
        path: file,
        events: [
          'SessionStart',
          'UserPromptSubmit',
          'PostToolUse',
          'PostToolUseFailure',
          'Stop',
          'SessionEnd',
        ],
      },
    ]);
    const installed = readFileSync(file, 'utf8');
    const j = JSON.parse(installed);
    expect(j.permissions).toEqual(original.permissions);
    expect(j.model).toBe('opus');
    expect(j.hooks.PostToolUse).toHaveLength(2);
    expect(j.hooks.PostToolUse[1]).toEqual({
      matcher: '*',
      hooks: [
        {
          type: 'command',
          command: 'if command -v git-mem >/dev/null 2>&1; then git mem hook claude-code; fi',
          timeout: 5,
        },
      ],
    });
    expect(j.hooks.SessionStart).toEqual([
      {
        hooks: [
          {
            type: 'command',
            command: 'if command -v git-mem >/dev/null 2>&1; then git mem hook claude-code; fi',
            timeout: 15,
          },
        ],
      },
    ]);
    expect((await repo.memJson(['hooks', 'install', '--claude']))[0].action).toBe('already installed');
    expect(readFileSync(file, 'utf8')).toBe(installed);
    expect((await repo.memJson(['hooks', 'uninstall', '--claude']))[0].action).toBe('removed');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(original);
    expect((await repo.memJson(['hooks', 'uninstall', '--claude']))[0].action).toBe('not installed');
  });

  it('the hook command names no path of this machine, does nothing where git-mem is missing, and replaces an earlier command', async () => {
    const repo = makeRepo();
    const file = join(repo.dir, '.claude', 'settings.json');
    // what an earlier version wrote
    repo.write(
      '.claude/settings.json',
      `${JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: 'command', command: 'git mem hook claude-code', timeout: 10 }] }] } }, null, 2)}\n`,
    );
    await repo.memJson(['hooks', 'install', '--claude']);
    const text = readFileSync(file, 'utf8');
    const commands = new Set(
      Object.values(
        JSON.parse(text).hooks as Record<string, Array<{ hooks: Array<{ command: string }> }>>,
      ).flatMap((gs) => gs.flatMap((g) => g.hooks.map((h) => h.command))),
    );
    expect([...commands]).toEqual([HOOK_COMMAND]);
    expect(JSON.parse(text).hooks.Stop).toHaveLength(1);
    expect(text).not.toContain(process.execPath);
    expect(text).not.toContain(repo.dir);
    expect(text).not.toMatch(/"\/(usr|home|opt|tmp|Users)\//);
    // no git-mem on PATH: nothing printed, exit 0
    const bare = tmpDir('gm-path-');
    for (const tool of ['git', 'sh']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      symlinkSync(found, join(bare, tool));
    }
    const missing = spawnSync('/bin/sh', ['-c', HOOK_COMMAND], {
      cwd: repo.dir,
      env: { ...repo.env, PATH: bare },
      input: '{}',
      encoding: 'utf8',
    });
    expect(missing.status).toBe(0);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toBe('');
    // a git-mem on PATH gets `hook claude-code` (through git's `git mem`)
    const log = join(repo.dir, 'calls.txt');
    writeFileSync(join(bare, 'git-mem'), `#!/bin/sh\necho "$@" >> "${log}"\n`, { mode: 0o755 });
    const present = spawnSync('/bin/sh', ['-c', HOOK_COMMAND], {
      cwd: repo.dir,
      env: { ...repo.env, PATH: bare },
      input: '{}',
      encoding: 'utf8',
    });
    expect(present.status, present.stderr).toBe(0);
    expect(readFileSync(log, 'utf8')).toBe('hook claude-code\n');
  });

  it('creates settings.local.json with --local and removes it again; refuses a malformed file untouched', async () => {
    const repo = makeRepo();
    const local = join(repo.dir, '.claude', 'settings.local.json');
    await repo.memJson(['hooks', 'install', '--claude', '--local']);
    expect(Object.keys(JSON.parse(readFileSync(local, 'utf8')).hooks)).toHaveLength(6);
    await repo.memJson(['hooks', 'uninstall', '--claude', '--local']);
    expect(existsSync(local)).toBe(false);
    expect(existsSync(join(repo.dir, '.claude'))).toBe(false);
    repo.write('.claude/settings.json', '{ "hooks": [ oops');
    const bad = await repo.mem(['hooks', 'install', '--claude', '--json']);
    expect(bad.code).toBe(2);
    expect(errorOf(bad).code).toBe('E_INVALID_ARG');
    expect(errorOf(bad).message).toContain(join('.claude', 'settings.json')); // the file (no data field)
    expect(readFileSync(join(repo.dir, '.claude', 'settings.json'), 'utf8')).toBe('{ "hooks": [ oops');
    // pure helpers agree
    const s: Record<string, unknown> = {};
    expect(mergeHooks(s)).toHaveLength(6);
    expect(mergeHooks(s)).toHaveLength(0);
    expect(removeHooks(s)).toHaveLength(6);
    expect(s).toEqual({});
  });
});

describe('hook robustness', () => {
  it('exits 0 on malformed or unknown payloads with one log line each, printing nothing', async () => {
    const repo = makeRepo();
    const inputs = [
      'not json {',
      '[]',
      '{"hook_event_name":"Bogus","session_id":"s"}',
      '{"hook_event_name":"PostToolUse","tool_name":"Bash"}',
      '',
    ];
    for (const stdin of inputs) {
      const r = await repo.mem(['hook', 'claude-code'], { stdin });
      expect(r).toEqual({ code: 0, stdout: '', stderr: '' });
    }
    const log = readFileSync(join(repo.dir, '.git', 'mem', 'logs', 'hooks.log'), 'utf8')
      .trim()
      .split('\n');
    expect(log).toHaveLength(5);
    expect(log[0]).toMatch(/^\S+Z claude-code: malformed payload \(not JSON, 10 bytes\)$/);
    expect(log[2]).toMatch(/unknown hook event "Bogus" ignored$/);
    expect(log[3]).toMatch(/PostToolUse: payload without session_id ignored$/);
    // outside a repository: still exit 0, nothing printed
    const outside = await repo.mem(['hook', 'claude-code'], {
      stdin: '{"hook_event_name":"SessionStart","session_id":"s"}',
      cwd: repo.env.HOME,
    });
    expect(outside.code).toBe(0);
    expect(outside.stdout).toBe('');
  });
});

describe('review', () => {
  it('approves with an edit, rejects for good, and refuses what is not pending', async () => {
    const repo = await fresh(NO_STORE);
    await repo.memJson(['init']);
    const { writeProposals } = await import('../src/agents/proposal.js');
    const recs = await writeProposals(
      repo.store,
      [
        P({ title: 'Staging resets every night', body: 'at 02:00' }),
        P({ title: 'Flags live in flags.yaml', body: 'one file' }),
      ],
      { session: 'sx' },
    );
    const [a, b] = recs.map((r) => r.id);
    const listed = await repo.memJson(['review']);
    expect(listed.map((x: { id: string }) => x.id)).toEqual([a, b]);
    expect(listed[0]).toMatchObject({ method: 'test', session: 'sx', type: 'convention' });
    const done = await repo.memJson([
      'review',
      '--approve',
      a.slice(0, 12),
      '--title',
      'Staging database resets every night',
    ]);
    expect(done).toEqual([{ id: a, action: 'approved', title: 'Staging database resets every night' }]);
    expect(await repo.memJson(['show', a])).toMatchObject({
      status: 'active',
      extra: { review: { state: 'edited' } },
    });
    expect((await repo.memJson(['review', '--reject', b]))[0].action).toBe('rejected');
    expect(await repo.memJson(['review'])).toEqual([]);
    expect(await repo.mem(['show', b])).toMatchObject({ code: 3, error: 'E_NOT_FOUND' });
    const tip = repo.tip();
    const again = await repo.mem(['review', '--approve', a]);
    expect(again).toMatchObject({ code: 2, error: 'E_INVALID_ARG' });
    // names the memory and the status it has
    expect(again.message).toContain(a.slice(0, 12));
    expect(again.message).toContain('active');
    expect(await repo.mem(['review', '--reject', 'ZZZZZZZZZZZZ'])).toMatchObject({
      code: 3,
      error: 'E_NOT_FOUND',
    });
    expect(repo.tip()).toBe(tip);
    // a rejected proposal is not proposed again
    const s2 = await storeOf(repo);
    try {
      const { readRejectedKeys } = await import('../src/agents/proposal.js');
      const v = await gateProposalsDetailed(
        s2,
        [P({ title: 'Flags live in flags.yaml', body: 'one file' })],
        { rejectedKeys: readRejectedKeys(s2) },
      );
      expect(v[0].reason).toBe('rejected-before');
    } finally {
      s2.close();
    }
  });
});

describe('session retention and context limits', () => {
  it('keeps the last N summaries in full and compresses older ones', async () => {
    const repo = makeRepo();
    repo.git('config', 'mem.sessions-keep-full', '2');
    const env = { ...repo.env, GIT_MEM_HOOK_INLINE: '1' };
    for (const sid of ['s-one', 's-two', 's-three']) {
      const base = { session_id: sid, transcript_path: '/t', cwd: repo.dir };
      for (const p of [
        { ...base, hook_event_name: 'UserPromptSubmit', prompt: `work on ${sid}` },
        {
          ...base,
          hook_event_name: 'PostToolUse',
          tool_name: 'Edit',
          tool_input: { file_path: `${repo.dir}/a.txt`, old_string: 'a', new_string: 'b' },
          tool_response: {},
          tool_use_id: 'x',
        },
        { ...base, hook_event_name: 'SessionEnd', reason: 'other' },
      ]) {
        expect((await repo.mem(['hook', 'claude-code'], { stdin: JSON.stringify(p), env })).code).toBe(0);
      }
    }
    const sessions = await repo.memJson(['sessions']);
    expect(sessions.map((s: { session: string; compressed: boolean }) => [s.session, s.compressed])).toEqual([
      ['s-three', false],
      ['s-two', false],
      ['s-one', true],
    ]);
    const old = await repo.memJson(['sessions', 'show', 's-one']);
    expect(old.body).toContain('## Files modified\n- 1 file (+1 −1)');
    expect(old.body).not.toContain('a.txt');
    expect(existsSync(join(repo.dir, '.git', 'mem', 'events', 's-one.end'))).toBe(false);
    // the MCP tool takes the agent's own session id as well
    const { callTool } = await import('../src/agents/mcp-tools.js');
    const { unframe } = await import('../src/safety/frame.js');
    const store = await storeOf(repo);
    try {
      const res = await callTool({ store, cwd: repo.dir }, 'sessions', { id: 's-two' });
      expect(res.isError, res.content[0].text).toBeFalsy();
      const two = JSON.parse(unframe(res.content[0].text) ?? res.content[0].text);
      expect(two.id).toBe(sessions[1].id);
      expect(two.type).toBe('session');
    } finally {
      store.close();
    }
  });

  it('keeps the session-start context under 10,000 characters with a large store, and injects nothing for an unrelated prompt', async () => {
    const repo = makeRepo();
    await repo.memJson(['init']);
    const store = await storeOf(repo);
    try {
      const { addMemory } = await import('../src/commands/memory.js');
      const big = 'lorem ipsum dolor sit amet '.repeat(80);
      await store.write(async (tx) => {
        const { newRecord } = await import('../src/model/record.js');
        const { newId } = await import('../src/model/id.js');
        for (let i = 0; i < 150; i++) {
          const type = i % 3 === 0 ? 'rule' : i % 3 === 1 ? 'constraint' : 'known_fix';
          tx.putRecord(
            newRecord({
              id: newId(),
              type,
              title: `Memory number ${i} about widget ${i}`,
              body: big,
              now: new Date().toISOString(),
            }),
          );
        }
        return { message: 'bulk', value: null };
      });
      await addMemory(store, {
        type: 'known_fix',
        title: 'Kafka consumer lag alarms need the offsets reset',
        body: 'Reset offsets with the admin tool.',
      });
    } finally {
      store.close();
    }
    const base = { session_id: 'big', transcript_path: '/t', cwd: repo.dir };
    const start = await repo.mem(['hook', 'claude-code'], {
      stdin: JSON.stringify({ ...base, hook_event_name: 'SessionStart', source: 'startup' }),
    });
    const ctx = JSON.parse(start.stdout).hookSpecificOutput.additionalContext as string;
    expect(ctx.length).toBeLessThan(10_000);
    expect(ctx.length).toBeGreaterThan(5_000);
    expect(ctx.endsWith('</memory>')).toBe(true);
    const unrelated = await repo.mem(['hook', 'claude-code'], {
      stdin: JSON.stringify({
        ...base,
        hook_event_name: 'UserPromptSubmit',
        prompt: 'Rename the CSS class for the sidebar',
      }),
    });
    expect(unrelated.stdout).toBe('');
    const related = await repo.mem(['hook', 'claude-code'], {
      stdin: JSON.stringify({
        ...base,
        hook_event_name: 'UserPromptSubmit',
        prompt: 'The kafka consumer lag alarm fired again',
      }),
    });
    expect(JSON.parse(related.stdout).hookSpecificOutput.additionalContext).toContain(
      'Kafka consumer lag alarms need the offsets reset',
    );
  });
});

describe('tier 1 at session end', () => {
  it('asks the configured OpenAI-compatible endpoint once per session and gates its proposals like tier 0', async () => {
    const { createServer } = await import('node:http');
    const requests: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        requests.push(`${req.method} ${req.url}`);
        const memories = [
          {
            type: 'decision',
            title: 'Invoices are rounded half-even',
            body: 'Finance requires banker rounding on invoice totals.',
            confidence: 0.8,
          },
          { type: 'convention', title: 'Build succeeded', body: 'ok' },
        ];
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: JSON.stringify({ memories }) },
                finish_reason: 'stop',
              },
            ],
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    try {
      const port = (server.address() as { port: number }).port;
      const repo = makeRepo();
      const env = {
        ...repo.env,
        GIT_MEM_HOOK_INLINE: '1',
        GIT_MEM_LLM_PROVIDER: 'openai',
        GIT_MEM_LLM_URL: `http://127.0.0.1:${port}`,
        GIT_MEM_LLM_MODEL: 'tiny',
      };
      const base = { session_id: 'llm-1', transcript_path: '/t', cwd: repo.dir };
      const send = (p: Record<string, unknown>) =>
        repo.mem(['hook', 'claude-code'], { stdin: JSON.stringify({ ...base, ...p }), env });
      await send({
        hook_event_name: 'UserPromptSubmit',
        prompt: 'Round the invoice totals like finance wants',
      });
      await send({
        hook_event_name: 'PostToolUse',
        tool_name: 'Edit',
        tool_input: { file_path: `${repo.dir}/inv.ts`, old_string: 'a', new_string: 'b' },
        tool_response: {},
        tool_use_id: 't1',
      });
      await send({ hook_event_name: 'Stop', stop_hook_active: false });
      expect(requests).toEqual([]); // not at every turn
      await send({ hook_event_name: 'SessionEnd', reason: 'other' });
      expect(requests).toHaveLength(1);
      const pending = await repo.memJson(['review']);
      expect(pending.map((p: { title: string; method: string }) => [p.method, p.title])).toEqual([
        ['tier1:llm', 'Invoices are rounded half-even'],
      ]);
      // llm settings from the shared config (inside refs/memory, pushable by others) are never trusted
      const other = makeRepo();
      const st = await storeOf(other);
      try {
        await st.write(async (tx) => {
          tx.put('config.yaml', `llm.provider: openai\nllm.url: http://127.0.0.1:${port}\nllm.model: tiny\n`);
          return { message: 'shared llm config', value: null };
        });
      } finally {
        st.close();
      }
      const oenv = { ...other.env, GIT_MEM_HOOK_INLINE: '1' };
      const session = async (id: string) => {
        for (const p of [
          { hook_event_name: 'UserPromptSubmit', prompt: `Round the invoice totals (${id})` },
          { hook_event_name: 'SessionEnd', reason: 'other' },
        ]) {
          const r = await other.mem(['hook', 'claude-code'], {
            stdin: JSON.stringify({ session_id: id, transcript_path: '/t', cwd: other.dir, ...p }),
            env: oenv,
          });
          expect(r.code).toBe(0);
        }
      };
      await session('llm-2');
      expect(requests).toHaveLength(1);
      // the same settings in this clone's own git config are used
      other.git('config', 'mem.llm.provider', 'openai');
      other.git('config', 'mem.llm.url', `http://127.0.0.1:${port}`);
      await session('llm-3');
      expect(requests).toHaveLength(2);
    } finally {
      server.close();
    }
  });
});
