/**
 * One-shot commands run by a running daemon (src/cli/via-daemon.ts,
 * src/cli/daemon-run.ts), as real processes of the built binary: `add`,
 * `check` and the post-commit hook go to the daemon of their worktree and
 * answer exactly as they do in process; whatever could make the daemon's
 * process differ from the client's (stdin, another worktree, another
 * environment) stays in the client.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envKey, runsInDaemon } from '../src/cli/via-daemon.js';
import { BIN, daemonPids, makeRepo, runBinAsync, tmpDir } from './helpers.js';

const pids = daemonPids();

const ANSWERED = 'via daemon: answered';

/** The pid of the daemon a command started in the background, once it runs (stopped after the file). */
async function startedDaemon(r: { dir: string; env: NodeJS.ProcessEnv }): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const s = JSON.parse(
      (await runBinAsync(['daemon', 'status', '--json'], { cwd: r.dir, env: r.env })).stdout,
    );
    if (s.running) {
      pids.push(s.pid);
      return s.pid;
    }
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`no daemon started in ${r.dir}`);
}

function lines(n: number, tag: string): string {
  return `${Array.from({ length: n }, (_, i) => `export const ${tag}${i} = ${i * 7} + compute('${tag}', ${i});`).join('\n')}\n`;
}

/** A repository with one committed file and a daemon serving it. */
async function withDaemon() {
  const r = makeRepo({ commit: true });
  r.write('f.js', lines(12, 'f'));
  r.commitAll('f.js');
  const env = { ...r.env, GIT_MEM_TRACE: '1' };
  const bin = (args: string[], o: { cwd?: string; env?: NodeJS.ProcessEnv; stdin?: string } = {}) =>
    runBinAsync(args, { cwd: o.cwd ?? r.dir, env: o.env ?? env, stdin: o.stdin });
  const started = await bin(['daemon', 'start', '--json']);
  expect(started.code, started.stderr).toBe(0);
  pids.push(JSON.parse(started.stdout).pid);
  return { r, env, bin };
}

/** A repository with one anchored memory (f.js:3-5), and its environment outside CI (hooks start a daemon). */
async function anchoredRepo() {
  const r = makeRepo({ commit: true });
  r.write('f.js', lines(12, 'f'));
  r.commitAll('f.js');
  await r.memJson(['add', '--title', 'Anchored', '--content', 'x', '--anchor', 'f.js:3-5']);
  const { CI: _ci, ...interactive } = r.env;
  return { r, interactive };
}

/** Stdout and stderr without the trace lines (what a user sees). */
const seen = (x: { stdout: string; stderr: string }) => ({
  stdout: x.stdout,
  stderr: x.stderr
    .split('\n')
    .filter((l) => !l.startsWith('git-mem trace:'))
    .join('\n'),
});

describe('commands run by a running daemon', () => {
  it('add, check and the post-commit hook, each twice, answer as they do in process', async () => {
    const { r, env, bin } = await withDaemon();
    const off = { ...env, GIT_MEM_DAEMON: 'off' };
    for (const title of ['Parse the header first', 'Cache the parsed header']) {
      const a = await bin(['add', '--title', title, '-c', `${title}: why.`, '--anchor', 'f.js:2-4']);
      expect(a.code, a.stderr).toBe(0);
      expect(a.stderr).toContain(ANSWERED);
      expect(a.stdout).toMatch(
        new RegExp(`^Added [0-9A-Z]{12} decision "${title}" \\([0-9a-f]{12}\\)\\n  anchor f\\.js:2-4\\n$`),
      );
    }
    // a refusal of the command itself comes back as the CLI's own: same exit code, same line
    const dupArgs = ['add', '--title', 'Parse the header first', '-c', 'Parse the header first: why.'];
    const dup = await bin(dupArgs);
    expect(dup.stderr).toContain(ANSWERED);
    const dupHere = await bin(dupArgs, { env: off });
    expect(dupHere.stderr).not.toContain('via daemon');
    expect(dup.code).toBe(2);
    expect(seen(dup)).toEqual(seen(dupHere));
    // git config read afresh for each command, as by a new process
    r.git('config', 'user.name', 'Renamed Person');
    const later = await bin(['add', '--title', 'Headers are case-insensitive', '-c', 'Compare lowercased.']);
    expect(later.stderr).toContain(ANSWERED);
    expect(r.git('log', '-1', '--format=%an', 'refs/memory').trim()).toBe('Renamed Person');

    // the code moves on: the daemon's check reports what the CLI's own reports
    r.git('mv', 'f.js', 'g.js');
    r.git('commit', '-q', '-m', 'rename f to g');
    const dry = await bin(['check', '--dry-run', '--json']);
    expect(dry.stderr).toContain(ANSWERED);
    const dryHere = await bin(['check', '--dry-run', '--json'], { env: off });
    expect(JSON.parse(dry.stdout)).toEqual(JSON.parse(dryHere.stdout));
    expect(JSON.stringify(JSON.parse(dry.stdout))).toContain('g.js');
    const tip = r.git('rev-parse', 'refs/memory').trim();
    const check = await bin(['check']);
    expect(check.code, check.stderr).toBe(0);
    expect(check.stderr).toContain(ANSWERED);
    expect(r.git('rev-parse', 'refs/memory').trim()).not.toBe(tip);
    expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(
      /^mem: check [0-9a-f]{12}: 2 records updated/,
    );
    const again = await bin(['check']);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(ANSWERED);
    expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(/^mem: check /);

    // the post-commit hook, installed and run by git (which gives it the commit's author and date,
    // its index and editor in the environment), under another author than the daemon's
    const installed = await bin(['hooks', 'install', '--post-commit']);
    expect(installed.code, installed.stderr).toBe(0);
    const hookEnv = {
      ...env,
      GIT_MEM_CMD: `"${process.execPath}" "${BIN}"`,
      GIT_AUTHOR_NAME: 'Code Author',
      GIT_AUTHOR_EMAIL: 'code@example.com',
    };
    for (const [from, to] of [
      ['g.js', 'h.js'],
      ['h.js', 'k.js'],
    ]) {
      r.git('mv', from, to);
      const c = spawnSync('git', ['commit', '-q', '-m', `rename ${from}`], {
        cwd: r.dir,
        env: hookEnv,
        encoding: 'utf8',
      });
      expect(c.status, c.stderr).toBe(0);
      expect(c.stderr).toContain(ANSWERED);
      expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(
        /^mem: post-commit [0-9a-f]{12}: 2 records updated \(0 went stale, 2 moved\)/,
      );
      expect(r.git('log', '-1', '--format=%an', 'refs/memory').trim()).toBe('Code Author');
    }
    const shown = JSON.parse((await bin(['list', '--json'], { env: off })).stdout) as Array<{
      id: string;
      title: string;
    }>;
    expect(shown.map((m) => m.title).sort()).toEqual([
      'Cache the parsed header',
      'Headers are case-insensitive',
      'Parse the header first',
    ]);
    // and after the hook's moves, the two still judge alike
    const last = await bin(['check', '--dry-run', '--json']);
    expect(last.stderr).toContain(ANSWERED);
    const lastHere = await bin(['check', '--dry-run', '--json'], { env: off });
    expect(JSON.parse(last.stdout)).toEqual(JSON.parse(lastHere.stdout));
  }, 60_000);

  it('leaves to the client what it must not run: stdin, another worktree, another environment', async () => {
    const { r, env, bin } = await withDaemon();
    // content on stdin: the client reads it and adds it itself
    const piped = await bin(['add', '--title', 'Piped in'], { stdin: 'Body from stdin.\n' });
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stderr).toContain('via daemon: refused (E_DAEMON_STDIN)');
    expect(piped.stderr).not.toContain(ANSWERED);
    const list = JSON.parse((await bin(['list', '--json'])).stdout) as Array<{ id: string; title: string }>;
    const shown = await bin(['show', list.find((m) => m.title === 'Piped in')!.id]);
    expect(shown.stdout).toContain('Body from stdin.');

    // a linked worktree on another branch: its HEAD has a file main's does not
    const wt = join(tmpDir('gm-wt-'), 'wt');
    r.git('worktree', 'add', '-q', '-b', 'feature', wt);
    writeFileSync(join(wt, 'only-here.js'), lines(6, 'o'));
    r.git('-C', wt, 'add', 'only-here.js');
    r.git('-C', wt, 'commit', '-q', '-m', 'only here');
    const inWt = await bin(
      ['add', '--title', 'Only on the feature', '-c', 'x', '--anchor', 'only-here.js:1-2'],
      {
        cwd: wt,
      },
    );
    expect(inWt.code, inWt.stderr).toBe(0);
    expect(inWt.stderr).toContain('via daemon: refused (E_DAEMON_ELSEWHERE)');
    // and its status there says whose it is and what it does for this worktree
    const st = await bin(['daemon', 'status'], { cwd: wt });
    expect(st.stdout).toMatch(
      new RegExp(
        `; it was started in ${r.dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: it answers searches here, and runs add, check and the git hooks of that worktree only\n$`,
      ),
    );

    // another identity in the environment (as git gives a post-commit hook): the daemon writes under it
    const other = await bin(['add', '--title', 'Written by another', '-c', 'y'], {
      env: { ...env, GIT_AUTHOR_NAME: 'Someone Else', GIT_AUTHOR_EMAIL: 'else@example.com' },
    });
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toContain(ANSWERED);
    expect(r.git('log', '-1', '--format=%an <%ae>', 'refs/memory').trim()).toBe(
      'Someone Else <else@example.com>',
    );
    // and the next command is its own again
    const mine = await bin(['add', '--title', 'Written by me', '-c', 'w']);
    expect(mine.stderr).toContain(ANSWERED);
    expect(r.git('log', '-1', '--format=%an', 'refs/memory').trim()).toBe('Test User');

    // another git configuration: the client writes, with its own
    const cfg = join(tmpDir('gm-cfg-'), 'gitconfig');
    writeFileSync(cfg, '[user]\n\tname = From Another Config\n\temail = cfg@example.com\n');
    const elsewhere = await bin(['add', '--title', 'Another config', '-c', 'v'], {
      env: { ...env, GIT_CONFIG_GLOBAL: cfg },
    });
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(elsewhere.stderr).toContain('via daemon: refused (E_DAEMON_ELSEWHERE)');

    // declined: the CLI opens the repository the client found, so git's finder runs once in the
    // process, as without a daemon (counted by a git on PATH that logs its arguments, then runs git)
    const wrap = tmpDir('gm-gitlog-');
    const log = join(wrap, 'calls');
    const realGit = spawnSync('sh', ['-c', 'command -v git'], { env, encoding: 'utf8' }).stdout.trim();
    writeFileSync(join(wrap, 'git'), `#!/bin/sh\necho "$*" >> '${log}'\nexec '${realGit}' "$@"\n`, {
      mode: 0o755,
    });
    const logged = await bin(['add', '--title', 'Counted', '-c', 't'], {
      env: { ...env, PATH: `${wrap}:${r.env.PATH}`, GIT_MEM_HOME: join(wrap, 'home') },
    });
    expect(logged.code, logged.stderr).toBe(0);
    expect(logged.stderr).toContain('via daemon: refused (E_DAEMON_ELSEWHERE)');
    const finds = readFileSync(log, 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('rev-parse --path-format=absolute'));
    expect(finds).toHaveLength(1);

    // switched off: never asked
    const off = await bin(['add', '--title', 'Not asked', '-c', 'z'], {
      env: { ...env, GIT_MEM_DAEMON: 'off' },
    });
    expect(off.code).toBe(0);
    expect(off.stderr).not.toContain('via daemon');
    // and commands it does not run are not sent
    const listed = await bin(['list']);
    expect(listed.stderr).not.toContain('via daemon');
  }, 60_000);

  it('with none running, starts one for the next commands (GIT_MEM_DAEMON=on, or a large index) without waiting for it', async () => {
    const r = makeRepo({ commit: true });
    r.write('f.js', lines(12, 'f'));
    r.commitAll('f.js');
    await r.memJson([
      'add',
      '--title',
      'Anchored before the daemon',
      '--content',
      'x',
      '--anchor',
      'f.js:3-5',
    ]);
    const env = { ...r.env, GIT_MEM_DAEMON: 'on', GIT_MEM_TRACE: '1' };
    const hook = async (from: string, to: string) => {
      r.git('mv', from, to);
      r.git('commit', '-q', '-m', `rename ${from}`);
      const h = await runBinAsync(['hook', 'post-commit'], { cwd: r.dir, env });
      expect(h.code, h.stderr).toBe(0);
      expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(/^mem: post-commit .*1 moved\)/);
      return h.stderr;
    };
    // this one runs here, and leaves a daemon starting
    const first = await hook('f.js', 'g.js');
    expect(first).toContain('via daemon: one started for the next commands');
    expect(first).not.toContain(ANSWERED);
    expect(await startedDaemon(r)).toBeGreaterThan(0);
    // the next one goes to it
    expect(await hook('g.js', 'h.js')).toContain(ANSWERED);
  }, 60_000);

  it('a repository whose git hooks run git-mem gets a daemon from its first hook, whatever its size; not in CI', async () => {
    const { r, interactive } = await anchoredRepo();
    const traced = (t: typeof r) => ({ ...t.env, CI: undefined, GIT_MEM_TRACE: '1' });
    const hook = async (from: string, to: string, env: NodeJS.ProcessEnv) => {
      r.git('mv', from, to);
      r.git('commit', '-q', '-m', `rename ${from}`);
      // what git gives a hook: the commit's identity and index, which the daemon must not keep
      const h = await runBinAsync(['hook', 'post-commit'], {
        cwd: r.dir,
        env: {
          ...env,
          GIT_MEM_TRACE: '1',
          GIT_INDEX_FILE: join(r.dir, '.git', 'index'),
          GIT_AUTHOR_DATE: '@1 +0000',
        },
      });
      expect(h.code, h.stderr).toBe(0);
      expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(/^mem: post-commit .*1 moved\)/);
      return h.stderr;
    };
    // a repository without a memory store (hooks committed with husky run in every clone): no daemon
    const bare = makeRepo({ commit: true });
    const none = await runBinAsync(['hook', 'post-commit'], { cwd: bare.dir, env: traced(bare) });
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).not.toContain('via daemon');
    // an automated run (CI set) commits and goes: no daemon
    const ci = await hook('f.js', 'g.js', r.env);
    expect(ci).not.toContain('via daemon');
    // otherwise the first hook runs here and leaves a daemon starting, though the store is small
    // started by a hook of a rebase, under `git -c`: what git gives that one command stays with it
    const first = await hook('g.js', 'h.js', {
      ...interactive,
      GIT_SEQUENCE_EDITOR: ':',
      GIT_CHERRY_PICK_HELP: 'resolve the conflicts',
      GIT_CONFIG_PARAMETERS: "'user.dummy=1'",
    });
    expect(first).toContain('via daemon: one started for the next commands');
    expect(first).not.toContain(ANSWERED);
    const pid = await startedDaemon(r);
    const daemonEnv = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(
      daemonEnv.filter((v) =>
        /^GIT_(INDEX_FILE|AUTHOR_DATE|SEQUENCE_EDITOR|CHERRY_PICK_HELP|CONFIG_PARAMETERS)=/.test(v),
      ),
    ).toEqual([]);
    // the next hooks go to it, CI or not (it serves the repository once it runs)
    expect(await hook('h.js', 'i.js', interactive)).toContain(ANSWERED);
    expect(await hook('i.js', 'j.js', r.env)).toContain(ANSWERED);
  }, 60_000);

  it('a daemon of an earlier build is replaced by the next hook, not kept up by its refusals; a later one is left', async () => {
    const { r, interactive } = await anchoredRepo();
    const env = { ...interactive, GIT_MEM_TRACE: '1' };
    const sock = join(r.dir, '.git', 'mem', 'search', 'refs_memory', 'daemon.sock');
    mkdirSync(dirname(sock), { recursive: true });
    // a daemon of another build, as the wire shows it: it refuses to run commands, and stops when asked
    const fake = async (build: string) => {
      const asked: string[] = [];
      const server = createServer((c) => {
        let buf = '';
        c.on('data', (d) => {
          buf += d;
          if (!buf.includes('\n')) return;
          const op = JSON.parse(buf.slice(0, buf.indexOf('\n'))).op as string;
          asked.push(op);
          if (op !== 'stop') {
            const error = { code: 'E_DAEMON_ELSEWHERE', message: 'run: the daemon is another build' };
            c.end(`${JSON.stringify({ ok: false, error, build })}\n`);
            return;
          }
          c.end(`${JSON.stringify({ ok: true, build, pid: process.pid })}\n`);
          server.close();
          rmSync(sock, { force: true });
        });
      });
      rmSync(sock, { force: true });
      await new Promise<void>((res) => server.listen(sock, res));
      return { asked, close: () => new Promise((res) => server.close(res)) };
    };
    let n = 0;
    const hook = async () => {
      n++;
      r.write('f.js', `// ${n}\n${readFileSync(join(r.dir, 'f.js'), 'utf8')}`);
      r.commitAll(`edit ${n}`);
      const h = await runBinAsync(['hook', 'post-commit'], { cwd: r.dir, env });
      expect(h.code, h.stderr).toBe(0);
      expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(/^mem: post-commit .*1 moved\)/);
      return h.stderr;
    };
    // a later build's daemon (another installation): its refusal is answered in process, and it stays
    const later = await fake('zzzzzzzzzz-1');
    const kept = await hook();
    expect(kept).toContain('via daemon: refused (E_DAEMON_ELSEWHERE)');
    expect(kept).not.toContain('via daemon: one of this build started');
    expect(later.asked).toEqual(['run']);
    await later.close();
    // an earlier build's: stopped, and one of this build started for the next hooks
    const earlier = await fake('0-1');
    const replaced = await hook();
    expect(replaced).toContain('via daemon: refused (E_DAEMON_ELSEWHERE)');
    expect(replaced).toContain('via daemon: one of this build started for the next commands');
    expect(earlier.asked).toEqual(['run', 'stop']);
    expect(await startedDaemon(r)).not.toBe(process.pid);
    expect(await hook()).toContain(ANSWERED);
  }, 60_000);

  it('writes what a command wrote in its order, stderr and stdout interleaved as in process', async () => {
    const { r, env } = await withDaemon();
    await r.memJson([
      'add',
      '--title',
      'Cache invalidation policy',
      '--content',
      'We invalidate on every write',
    ]);
    // one stream for both, as a terminal shows them
    const both = (e: NodeJS.ProcessEnv) =>
      spawnSync(
        'sh',
        [
          '-c',
          `"${process.execPath}" "${BIN}" add --force --title 'Cache invalidation policy' --content 'We invalidate on every write, too' 2>&1`,
        ],
        { cwd: r.dir, env: e, encoding: 'utf8' },
      )
        .stdout.split('\n')
        .filter((l) => l && !l.startsWith('git-mem trace:') && !l.includes('via daemon'))
        .map((l) => (l.startsWith('git-mem: note: likely duplicate') ? 'note' : l.split(' ')[0]));
    const daemon = both(env);
    const inProcess = both({ ...env, GIT_MEM_DAEMON: 'off' });
    expect(daemon).toEqual(['note', 'Added']);
    expect(inProcess).toEqual(daemon);
  }, 60_000);

  it('a daemon that refuses every command (another environment) idles out all the same', async () => {
    const r = makeRepo({ commit: true });
    const env = { ...r.env, GIT_MEM_DAEMON_IDLE_MS: '1500' };
    const started = await runBinAsync(['daemon', 'start', '--json'], { cwd: r.dir, env });
    expect(started.code, started.stderr).toBe(0);
    const pid = JSON.parse(started.stdout).pid as number;
    pids.push(pid);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // refused (`git -c` makes another environment) every 300 ms until it is gone: were refusals
    // to keep it up, it would be there at the deadline (ten times its idle time)
    const other = { ...r.env, GIT_MEM_TRACE: '1', GIT_CONFIG_PARAMETERS: "'user.dummy=1'" };
    const t0 = Date.now();
    while (alive() && Date.now() - t0 < 15_000) {
      const c = await runBinAsync(['check', '--dry-run'], { cwd: r.dir, env: other });
      expect(c.stderr).not.toContain('via daemon: answered');
      await new Promise((res) => setTimeout(res, 300));
    }
    expect(alive()).toBe(false);
  }, 60_000);

  it('a daemon killed without removing its socket: the command runs here, and the socket goes', async () => {
    const { r, bin } = await withDaemon();
    const pid = pids[pids.length - 1];
    process.kill(pid, 'SIGKILL');
    for (let i = 0; i < 100; i++) {
      try {
        process.kill(pid, 0);
        await new Promise((res) => setTimeout(res, 50));
      } catch {
        break;
      }
    }
    const sock = join(r.dir, '.git', 'mem', 'search', 'refs_memory', 'daemon.sock');
    expect(existsSync(sock)).toBe(true);
    const a = await bin(['add', '--title', 'After the daemon died', '-c', 'x']);
    expect(a.code, a.stderr).toBe(0);
    expect(a.stderr).toContain('via daemon: connect ECONNREFUSED');
    expect(a.stderr).not.toContain(ANSWERED);
    expect(existsSync(sock)).toBe(false);
    expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(/^mem: add .*"After the daemon died"/);
  }, 60_000);

  it('sends only add, check and the re-anchoring git hooks; compares the environment where the store reads it', () => {
    expect(runsInDaemon(['add', '--title', 't'])).toBe(true);
    expect(runsInDaemon(['--json', 'check'])).toBe(true);
    expect(runsInDaemon(['hook', 'post-commit'])).toBe(true);
    expect(runsInDaemon(['hook', 'post-merge'])).toBe(true);
    expect(runsInDaemon(['hook', 'pre-push'])).toBe(false);
    expect(runsInDaemon(['hook', 'claude-code'])).toBe(false);
    expect(runsInDaemon(['add', '--store', 'team', '--title', 't'])).toBe(false);
    expect(runsInDaemon(['add', '--store=team'])).toBe(false);
    expect(runsInDaemon(['add', '--help'])).toBe(false);
    expect(runsInDaemon(['list'])).toBe(false);
    expect(runsInDaemon([])).toBe(false);
    const base = { HOME: '/h', PATH: '/bin', GIT_CONFIG_GLOBAL: '/h/.gitconfig', TERM: 'xterm' };
    // what a git hook adds, the trace, the daemon switch and unrelated variables change nothing
    expect(envKey({ ...base, GIT_INDEX_FILE: '.git/index', GIT_EDITOR: ':', GIT_PREFIX: '' })).toBe(
      envKey(base),
    );
    expect(
      envKey({
        ...base,
        GIT_MEM_TRACE: '1',
        GIT_MEM_DAEMON: 'off',
        GIT_MEM_CMD: 'node x',
        PATH: '/usr/bin',
        TERM: 'dumb',
      }),
    ).toBe(envKey(base));
    // nor identities and the agent (the command gets the client's whole environment)
    expect(
      envKey({
        ...base,
        GIT_AUTHOR_NAME: 'X',
        GIT_AUTHOR_DATE: '@1 +0000',
        GIT_COMMITTER_EMAIL: 'c@d',
        CLAUDECODE: '1',
      }),
    ).toBe(envKey(base));
    // where git finds the repository and its configuration, and git-mem's settings, do
    for (const extra of [
      { GIT_DIR: '/elsewhere' },
      { GIT_CONFIG_GLOBAL: '/other' },
      { HOME: '/other' },
      { XDG_CONFIG_HOME: '/x' },
      { GIT_MEM_HOME: '/m' },
    ])
      expect(envKey({ ...base, ...extra })).not.toBe(envKey(base));
  });
});
