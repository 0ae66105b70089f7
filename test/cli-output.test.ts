/**
 * Colour and the pager, as git does them: colour only on a terminal, never with
 * NO_COLOR or --no-color; list/history/search on a terminal go through GIT_PAGER,
 * core.pager or PAGER when they do not fit the screen, never with --no-pager.
 * The terminal is an IO that says it is one (the pager writes to a file).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { bufferIO } from '../src/cli/context.js';
import { main } from '../src/cli/main.js';
import { makeRepo, type TestRepo, tmpDir } from './helpers.js';

let repo: TestRepo;
beforeAll(async () => {
  repo = makeRepo({ commit: true });
  const topics = [
    'ports in use',
    'retry budget',
    'lock files',
    'schema migrations',
    'flaky clocks',
    'cache keys',
  ];
  for (let i = 1; i <= 6; i++) {
    const body = `${topics[i - 1]}: something learned the hard way`;
    const r = await repo.mem(['add', '--title', `note number ${i}`, '--content', body, '--force']);
    expect(r.code, r.stderr).toBe(0);
  }
}, 60_000);

/** Runs the CLI on a pretend terminal `rows` high. */
async function onTerminal(args: string[], env: NodeJS.ProcessEnv = {}, rows = 40) {
  const io = Object.assign(bufferIO(), { isTTY: true, rows });
  const code = await main(args, io, { cwd: repo.dir, env: { ...repo.env, ...env } });
  return { code, stdout: io.stdout, stderr: io.stderr };
}

const ESC = '\x1b[';

describe('colour', () => {
  it('on a terminal, ids are coloured', async () => {
    const r = await onTerminal(['list']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${ESC}33m`);
    expect(r.stdout).toMatch(/note number 1/);
  });

  it('never with NO_COLOR, --no-color, or when stdout is not a terminal', async () => {
    for (const r of [
      await onTerminal(['list'], { NO_COLOR: '1' }),
      await onTerminal(['list', '--no-color']),
    ]) {
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/note number 1/);
      expect(r.stdout).not.toContain(ESC);
    }
    const piped = await repo.mem(['list']);
    expect(piped.stdout).toMatch(/note number 1/);
    expect(piped.stdout).not.toContain(ESC);
    // an explicit --color wins over NO_COLOR and a pipe
    const forced = await repo.mem(['list', '--color'], { env: { ...repo.env, NO_COLOR: '1' } });
    expect(forced.stdout).toContain(`${ESC}33m`);
  });
});

/** `git …` as a person types it (git runs git-mem from PATH), its stdout a pipe or, with `tty`, a pseudo-terminal. */
function gitRun(args: string[], o: { tty?: boolean; env?: NodeJS.ProcessEnv } = {}): string {
  const env = { ...repo.env, GIT_PAGER: 'cat', ...o.env };
  const q = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
  const r = o.tty
    ? spawnSync('script', ['-qec', ['git', ...args].map(q).join(' '), '/dev/null'], {
        cwd: repo.dir,
        env,
        encoding: 'utf8',
      })
    : spawnSync('git', args, { cwd: repo.dir, env, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  expect(r.stdout).toMatch(/note number \d/);
  return r.stdout;
}

describe('colour settings, as git reads them (color.mem, then color.ui)', () => {
  const YELLOW = `${ESC}33m`;
  it('git -c color.ui=never: no colour on a terminal; color.ui=always: colour into a pipe', async () => {
    const [first] = await repo.memJson<Array<{ id: string }>>(['list']);
    expect(gitRun(['mem', 'list'], { tty: true })).toContain(YELLOW);
    expect(gitRun(['-c', 'color.ui=never', 'mem', 'list'], { tty: true })).not.toContain(ESC);
    expect(gitRun(['-c', 'color.ui=false', 'mem', 'show', first.id], { tty: true })).not.toContain(ESC);
    expect(gitRun(['-c', 'color.ui=always', 'mem', 'show', first.id])).toContain(YELLOW);
    expect(gitRun(['mem', 'list'])).not.toContain(ESC);
    expect(gitRun(['-c', 'color.ui=always', 'mem', 'list'])).toContain(YELLOW);
    // auto (and true, which git reads as auto) colour a terminal only
    expect(gitRun(['-c', 'color.ui=auto', 'mem', 'list'])).not.toContain(ESC);
    expect(gitRun(['-c', 'color.ui=true', 'mem', 'list'], { tty: true })).toContain(YELLOW);
  });

  it('color.mem wins over color.ui; the flags win over both; an explicit setting wins over NO_COLOR', () => {
    expect(gitRun(['-c', 'color.ui=always', '-c', 'color.mem=never', 'mem', 'list'])).not.toContain(ESC);
    expect(gitRun(['-c', 'color.ui=never', '-c', 'color.mem=always', 'mem', 'list'])).toContain(YELLOW);
    expect(gitRun(['-c', 'color.ui=always', 'mem', 'list', '--no-color'])).not.toContain(ESC);
    expect(gitRun(['-c', 'color.ui=never', 'mem', 'list', '--color'])).toContain(YELLOW);
    expect(gitRun(['-c', 'color.mem=always', 'mem', 'list'], { env: { NO_COLOR: '1' } })).toContain(YELLOW);
    expect(
      gitRun(['-c', 'color.mem=auto', 'mem', 'list'], { tty: true, env: { NO_COLOR: '1' } }),
    ).not.toContain(ESC);
  });

  it("reads the repository's config files too, and --json never colours", async () => {
    repo.git('config', 'color.mem', 'never');
    try {
      expect(gitRun(['mem', 'list'], { tty: true })).not.toContain(ESC);
      const r = await onTerminal(['list']);
      expect(r.stdout).not.toContain(ESC);
    } finally {
      repo.git('config', '--unset', 'color.mem');
    }
    expect(gitRun(['-c', 'color.ui=always', 'mem', 'list', '--json'])).not.toContain(ESC);
  });
});

describe('the pager', () => {
  const sink = () => join(tmpDir('gm-pager-'), 'paged.txt');

  it('pages a listing taller than the terminal through GIT_PAGER', async () => {
    const file = sink();
    const r = await onTerminal(['list'], { GIT_PAGER: `cat > '${file}'` }, 4);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    const paged = readFileSync(file, 'utf8');
    for (let i = 1; i <= 6; i++) expect(paged).toContain(`note number ${i}`);
  });

  it('follows git: GIT_PAGER, then core.pager, then PAGER; "cat" means none', async () => {
    const fromConfig = sink();
    const fromPager = sink();
    repo.git('config', 'core.pager', `cat > '${fromConfig}'`);
    try {
      await onTerminal(['history'], { PAGER: `cat > '${fromPager}'` }, 2);
      expect(readFileSync(fromConfig, 'utf8')).toMatch(/add/);
      expect(existsSync(fromPager)).toBe(false);
    } finally {
      repo.git('config', '--unset', 'core.pager');
    }
    await onTerminal(['search', 'note'], { PAGER: `cat > '${fromPager}'` }, 2);
    expect(readFileSync(fromPager, 'utf8')).toMatch(/note number/);
    const direct = await onTerminal(['list'], { GIT_PAGER: 'cat' }, 2);
    expect(direct.stdout).toMatch(/note number 6/);
  });

  it('not with --no-pager, not for output that fits, not for --json, not off a terminal', async () => {
    const file = sink();
    const env = { GIT_PAGER: `cat > '${file}'` };
    const none = await onTerminal(['list', '--no-pager'], env, 2);
    expect(none.stdout).toMatch(/note number 6/);
    const fits = await onTerminal(['list'], env, 40);
    expect(fits.stdout).toMatch(/note number 6/);
    const json = await onTerminal(['list', '--json'], env, 2);
    expect(JSON.parse(json.stdout)).toHaveLength(6);
    const piped = await repo.mem(['list'], { env: { ...repo.env, ...env } });
    expect(piped.stdout).toMatch(/note number 6/);
    expect(existsSync(file)).toBe(false);
  });
});
