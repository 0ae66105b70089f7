/**
 * UserPromptSubmit answered by a running search daemon (op `prompt`): the hook
 * process loads no store code and runs git only to find the repository
 * (`rev-parse`, the one finder), and its answer is the one the in-process
 * handler gives. Real processes; needs `npm run build`.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { daemonPids, makeRepo, runBin, runBinAsync, tmpDir } from './helpers.js';

const pids = daemonPids();

function injected(stdout: string): string {
  if (!stdout.trim()) return '';
  const o = JSON.parse(stdout);
  expect(o.hookSpecificOutput.hookEventName).toBe('UserPromptSubmit');
  return o.hookSpecificOutput.additionalContext;
}

describe('UserPromptSubmit through the search daemon', { timeout: 60_000 }, () => {
  it('injects what the in-process handler injects, with git able only to find the repository, and records the injection and the use', async () => {
    const repo = makeRepo({ commit: true });
    const { id } = await repo.memJson([
      'add',
      '--type',
      'known_fix',
      '--title',
      'Websocket reconnect storms',
      '--content',
      'Reconnect with exponential backoff and jitter; a fixed delay makes every client return at once.',
    ]);
    await repo.memJson([
      'add',
      '--type',
      'convention',
      '--title',
      'Tabs in Makefiles',
      '--content',
      'Recipes need tabs.',
    ]);
    const { id: anchored } = await repo.memJson([
      'add',
      '--type',
      'convention',
      '--title',
      'Release notes go first',
      '--content',
      'The top section lists what changed for users.',
      '--anchor',
      'README.md:1',
    ]);
    const prompt = 'Why do the websocket reconnect storms come back after a deploy?';
    const payload = (session: string) =>
      JSON.stringify({
        session_id: session,
        transcript_path: '/tmp/t.jsonl',
        cwd: repo.dir,
        hook_event_name: 'UserPromptSubmit',
        prompt,
      });
    const hook = (session: string, env: NodeJS.ProcessEnv) => {
      const r = runBin(['hook', 'claude-code'], { cwd: repo.dir, env, stdin: payload(session) });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      return injected(r.stdout);
    };

    // the in-process handler, no daemon
    const inProcess = hook('s-off', { ...repo.env, GIT_MEM_DAEMON: 'off' });
    expect(inProcess).toContain('Websocket reconnect storms');
    expect(inProcess).toContain(`[${id.slice(0, 12)}]`);
    expect(inProcess).not.toContain('Tabs in Makefiles');

    const started = await runBinAsync(['daemon', 'start', '--json'], { cwd: repo.dir, env: repo.env });
    expect(started.code).toBe(0);
    pids.push(JSON.parse(started.stdout).pid);

    // a git that only finds the repository (rev-parse, the one finder) and refuses everything
    // else: only the daemon can answer (the in-process handler needs git to read records)
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const bin = tmpDir('gm-gitbin-');
    writeFileSync(
      join(bin, 'git'),
      `#!/bin/sh\n[ "$1" = rev-parse ] && exec "${realGit}" "$@"\necho "git $1: not here" >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const noGit = { ...repo.env, PATH: bin };
    expect(runBin(['list'], { cwd: repo.dir, env: noGit }).code).not.toBe(0); // the wrapper really refuses reads
    expect(hook('s-daemon', noGit)).toBe(inProcess);
    // a prompt naming a file a memory is anchored to: that memory, with the daemon as without it
    const filePrompt = (session: string) =>
      JSON.stringify({
        session_id: session,
        transcript_path: '/tmp/t.jsonl',
        cwd: repo.dir,
        hook_event_name: 'UserPromptSubmit',
        prompt: 'look over README.md please',
      });
    const alone = runBin(['hook', 'claude-code'], {
      cwd: repo.dir,
      env: { ...repo.env, GIT_MEM_DAEMON: 'off' },
      stdin: filePrompt('s-file-off'),
    });
    expect(injected(alone.stdout)).toContain(`[${anchored.slice(0, 12)}]`);
    const served = runBin(['hook', 'claude-code'], {
      cwd: repo.dir,
      env: noGit,
      stdin: filePrompt('s-file-on'),
    });
    expect(injected(served.stdout)).toBe(injected(alone.stdout));
    const events = join(repo.dir, '.git', 'mem', 'events');
    expect(readFileSync(join(events, 's-daemon.injected'), 'utf8')).toBe(`${id}\n`);
    const logged = readFileSync(join(events, 's-daemon.jsonl'), 'utf8').trim().split('\n');
    expect(logged.map((l) => [JSON.parse(l).event, JSON.parse(l).prompt])).toEqual([
      ['UserPromptSubmit', prompt],
    ]);
    const usage = readFileSync(join(repo.dir, '.git', 'mem', 'usage.log'), 'utf8');
    expect(usage.split('\n').filter((l) => l.includes(id))).toHaveLength(2); // the in-process run and the daemon's

    // what a session was given once is not given again
    expect(hook('s-daemon', noGit)).toBe('');
    // and the daemon answers from the current tip: a memory added now is found
    await repo.memJson([
      'add',
      '--type',
      'known_fix',
      '--title',
      'Flaky payment webhook retries',
      '--content',
      'The payment webhook retries need an idempotency key per delivery.',
    ]);
    expect(hook('s-daemon', { ...noGit })).toBe('');
    const later = JSON.stringify({
      session_id: 's-daemon',
      transcript_path: '/tmp/t.jsonl',
      cwd: repo.dir,
      hook_event_name: 'UserPromptSubmit',
      prompt: 'the payment webhook retries are flaky again',
    });
    const r = runBin(['hook', 'claude-code'], { cwd: repo.dir, env: noGit, stdin: later });
    expect(r.code).toBe(0);
    expect(injected(r.stdout)).toContain('Flaky payment webhook retries');
    await runBinAsync(['daemon', 'stop'], { cwd: repo.dir, env: repo.env });
  });
});
