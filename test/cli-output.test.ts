/**
 * Colour and the pager, as git does them: colour only on a terminal, never with
 * NO_COLOR or --no-color; list/history/search on a terminal go through GIT_PAGER,
 * core.pager or PAGER when they do not fit the screen, never with --no-pager.
 * The terminal is an IO that says it is one (the pager writes to a file).
 */
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
