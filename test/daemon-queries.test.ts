/**
 * The daemon answers queries only (issue #29 item 3): its folder imports
 * nothing from the CLI and knows no command; a git hook never starts it; and
 * the agent hooks have one dispatcher, the same module whether the launcher
 * loads it alone (`git mem hook claude-code`, the line the agent hooks run) or
 * the CLI's `hook claude-code` calls it. Real processes of the built binary.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { socketPath } from '../src/daemon/client.js';
import { openRepo } from '../src/gitstore/repo.js';
import { daemonPids, makeRepo, runBinAsync } from './helpers.js';

const ROOT = join(import.meta.dirname, '..');
const pids = daemonPids();

/** The relative imports of a source file (static and dynamic), as written. */
function importsOf(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  return [...src.matchAll(/(?:from\s+|import\()\s*'(\.[^']+)'/g)].map((m) => m[1]);
}

describe('the daemon is a query service', () => {
  it('src/daemon imports nothing from src/cli, and no module runs a command line in it', () => {
    const dir = join(ROOT, 'src', 'daemon');
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    expect(files.sort()).toEqual(['client.ts', 'server.ts', 'wire.ts']);
    for (const f of files) for (const i of importsOf(join(dir, f))) expect(i, f).not.toMatch(/\/cli\//);
    // the command forwarding is gone: no client that sends a command line, no server side that runs main()
    expect(existsSync(join(ROOT, 'src', 'cli', 'via-daemon.ts'))).toBe(false);
    expect(existsSync(join(ROOT, 'src', 'cli', 'daemon-run.ts'))).toBe(false);
    const server = readFileSync(join(dir, 'server.ts'), 'utf8');
    expect(server).not.toMatch(/case 'run'/);
  });

  it('refuses an op that runs a command: unknown op', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['add', '--title', 'One memory', '--content', 'x']);
    const started = await runBinAsync(['daemon', 'start', '--json'], { cwd: r.dir, env: r.env });
    expect(started.code, started.stderr).toBe(0);
    pids.push(JSON.parse(started.stdout).pid);
    const { ask } = await import('../src/daemon/wire.js');
    const sock = socketPath({ repo: await openRepo(r.dir, r.env), ref: 'refs/memory' });
    // a whole command line, as the command-forwarding client sent it (argv, directory, environment,
    // repository, terminals, build): an op the daemon does not know
    const repo = await openRepo(r.dir, r.env);
    const q = {
      argv: ['add', '--title', 'Sent to the daemon', '--content', 'x'],
      cwd: r.dir,
      env: r.env,
      gitDir: repo.gitDir,
      workTree: repo.workTree ?? null,
      isTTY: false,
      stdinIsTTY: true,
      build: JSON.parse(started.stdout).build ?? '',
    };
    const reply = await ask(sock, { op: 'run' as never, q }, 10_000);
    expect(reply.ok).toBe(false);
    expect(reply.error?.code).toBe('E_INVALID_ARG');
    expect(r.git('log', '--format=%s', 'refs/memory').trim().split('\n')).toHaveLength(1);
    await runBinAsync(['daemon', 'stop'], { cwd: r.dir, env: r.env });
  }, 60_000);
});

describe('the git hooks never start the daemon', () => {
  it('post-commit and post-merge re-anchor in their own process, outside CI, with GIT_MEM_DAEMON=on too', async () => {
    const r = makeRepo({ commit: true });
    r.write('f.js', `${Array.from({ length: 12 }, (_, i) => `export const f${i} = ${i};`).join('\n')}\n`);
    r.commitAll('f.js');
    await r.memJson(['add', '--title', 'Anchored', '--content', 'x', '--anchor', 'f.js:3-5']);
    expect((await runBinAsync(['hooks', 'install'], { cwd: r.dir, env: r.env })).code).toBe(0);
    // outside CI, where the first hook used to start one, and with a daemon asked for
    const { CI: _ci, ...interactive } = r.env;
    const sock = socketPath({ repo: await openRepo(r.dir, r.env), ref: 'refs/memory' });
    for (const [n, env] of [interactive, { ...interactive, GIT_MEM_DAEMON: 'on' }].entries()) {
      r.write('f.js', `// moved ${n}\n${readFileSync(join(r.dir, 'f.js'), 'utf8')}`);
      const before = r.git('rev-parse', 'refs/memory').trim();
      // the installed hook, run by git
      execFileSync('git', ['commit', '-qam', `move ${n}`], { cwd: r.dir, env, stdio: 'ignore' });
      expect(r.git('rev-parse', 'refs/memory').trim(), 'the hook re-anchored').not.toBe(before);
      const merge = await runBinAsync(['hook', 'post-merge', '0'], { cwd: r.dir, env });
      expect(merge.code, merge.stderr).toBe(0);
      // time for a daemon that a hook would have left starting in the background
      await new Promise((res) => setTimeout(res, 1500));
      expect(existsSync(sock), `run ${n}`).toBe(false);
      expect(existsSync(join(sock, '..', 'starting')), `run ${n}`).toBe(false);
      const status = await runBinAsync(['daemon', 'status', '--json'], { cwd: r.dir, env });
      expect(JSON.parse(status.stdout).running).toBe(false);
    }
  }, 120_000);
});

describe('one dispatcher for the agent hooks', () => {
  it('the launcher loads the module the CLI calls, and nothing else reads the hook', () => {
    const bin = readFileSync(join(ROOT, 'bin', 'git-mem.js'), 'utf8');
    // store-start: the store's git processes, started early for add and the post-commit hook
    // (src/gitstore/store-start.ts); git-hook: the post-commit hook's way to a running daemon
    // (src/hooks/git-hook.ts); neither reads an agent hook's payload
    expect([...bin.matchAll(/import\('([^']+)'\)/g)].map((m) => m[1]).sort()).toEqual([
      '../dist/agent-hook.js',
      '../dist/cli.js',
      '../dist/git-hook.js',
      '../dist/store-start.js',
    ]);
    expect(readFileSync(join(ROOT, 'scripts', 'build.mjs'), 'utf8')).toContain(
      "'agent-hook': 'src/hooks/claude-code.ts'",
    );
    expect(importsOf(join(ROOT, 'src', 'cli', 'hook.ts'))).toContain('../hooks/claude-code.js');
    expect(existsSync(join(ROOT, 'src', 'hooks', 'claude-fast.ts'))).toBe(false);
  });

  it('every event gets the same answer and leaves the same trace through the launcher and through the CLI', async () => {
    const r = makeRepo({ commit: true });
    r.write('src/db/pool.ts', 'export const pool = 1;\n');
    r.commitAll('pool');
    await r.memJson([
      'add',
      '--title',
      'Connection limits for Postgres',
      '--content',
      'Every service goes through pgbouncer; never more than twenty connections per pod.',
      '--anchor',
      'src/db/pool.ts:1',
    ]);
    await r.memJson(['add', '--title', 'Tabs in Makefiles', '--content', 'Recipes need tabs.']);
    const env = { ...r.env, GIT_MEM_DAEMON: 'off', GIT_MEM_HOOK_INLINE: '1' };
    // the exact line the agent hooks run (the launcher's entry), and one the launcher leaves to the CLI
    const entries = { launcher: ['hook', 'claude-code'], cli: ['--no-color', 'hook', 'claude-code'] };
    const events = (session: string) => [
      {
        hook_event_name: 'UserPromptSubmit',
        session_id: session,
        cwd: r.dir,
        prompt: 'Please check src/db/pool.ts before you touch it',
      },
      { hook_event_name: 'SessionStart', source: 'startup', session_id: session, cwd: r.dir },
      {
        hook_event_name: 'PostToolUse',
        session_id: session,
        cwd: r.dir,
        tool_name: 'Bash',
        tool_input: { command: 'npm test' },
        tool_response: { stdout: 'ok', stderr: '', exit_code: 0 },
      },
      { hook_event_name: 'NoSuchEvent', session_id: session },
    ];
    const seen: Record<string, unknown[]> = {};
    for (const [name, argv] of Object.entries(entries)) {
      const session = `s-${name}`;
      const outs: unknown[] = [];
      for (const ev of events(session)) {
        const res = await runBinAsync(argv, { cwd: r.dir, env, stdin: JSON.stringify(ev) });
        expect(res.code, res.stderr).toBe(0);
        outs.push(res.stdout.trim() ? JSON.parse(res.stdout).hookSpecificOutput : null);
      }
      // a payload that is not JSON: exit 0, nothing on stdout
      const bad = await runBinAsync(argv, { cwd: r.dir, env, stdin: 'not json' });
      expect(bad.code).toBe(0);
      expect(bad.stdout).toBe('');
      const dir = join(r.dir, '.git', 'mem', 'events');
      const buffer = readFileSync(join(dir, `${session}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => {
          const { ts: _ts, session: _s, ...rest } = JSON.parse(l);
          return rest;
        });
      outs.push(buffer, readFileSync(join(dir, `${session}.injected`), 'utf8'));
      seen[name] = outs;
    }
    expect(seen.cli).toEqual(seen.launcher);
    // and the answers are the ones wanted: the anchored file's memory for the prompt naming it, a start pack
    const [prompt, start, tool, unknown, buffer] = seen.launcher as [
      { additionalContext: string },
      { additionalContext: string },
      null,
      null,
      Array<{ event: string }>,
    ];
    expect(start.additionalContext).toContain('Tabs in Makefiles');
    expect(prompt.additionalContext).toContain('Connection limits for Postgres');
    expect(prompt.additionalContext).not.toContain('Tabs in Makefiles');
    expect(tool).toBeNull();
    expect(unknown).toBeNull();
    expect(buffer.map((e) => e.event)).toEqual(['UserPromptSubmit', 'SessionStart', 'PostToolUse']);
    const log = readFileSync(join(r.dir, '.git', 'mem', 'logs', 'hooks.log'), 'utf8');
    expect(log.match(/unknown hook event "NoSuchEvent"/g)).toHaveLength(2);
    expect(log.match(/malformed payload/g)).toHaveLength(2);
  }, 120_000);
});
