/**
 * bin/git-mem.js runs the CLI from dist/cli.cjs with a V8 code cache per
 * command (src/v8cache.ts). Run from a copy of bin/ and dist/, so the caches
 * it writes are this test's own.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, ROOT, tmpDir } from './helpers.js';

describe('the CLI loader', () => {
  it('keeps a code cache per command that exists, uses it, and recovers from a bad one', async () => {
    const home = tmpDir('gm-install-');
    cpSync(join(ROOT, 'bin'), join(home, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'dist'), join(home, 'dist'), {
      recursive: true,
      filter: (f) => !f.endsWith('.v8cache') && !f.endsWith('.map'),
    });
    cpSync(join(ROOT, 'package.json'), join(home, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(home, 'node_modules'));
    const dist = join(home, 'dist');
    const r = makeRepo({ commit: true });
    const { id } = await r.memJson(['add', '--title', 'one', '--content', 'body']);
    const env = { ...r.env, GIT_MEM_TRACE: '1', GIT_MEM_DAEMON: 'off' };
    const run = (...args: string[]) => {
      const p = spawnSync(process.execPath, [join(home, 'bin', 'git-mem.js'), ...args], {
        cwd: r.dir,
        env,
        encoding: 'utf8',
      });
      return { code: p.status, out: p.stdout, trace: p.stderr };
    };
    const caches = () => readdirSync(dist).filter((f) => f.endsWith('.v8cache'));
    const first = run('stats', '--json');
    expect(first.code).toBe(0);
    expect(first.trace).toMatch(/code cache cli-[0-9a-f]{20}-stats: none/);
    expect(caches()).toEqual([expect.stringMatching(/^cli-[0-9a-f]{20}-stats\.v8cache$/)]);
    const second = run('stats', '--json');
    expect(second.trace).toMatch(/code cache cli-[0-9a-f]{20}-stats: used/);
    expect(second.out).toBe(first.out);
    expect(JSON.parse(second.out).records).toBe(1);
    // another command gets its own; a command that does not exist gets none
    expect(run('history', id, '--json').code).toBe(0);
    expect(run('stat').code).not.toBe(0);
    expect(caches().sort()).toEqual([
      expect.stringMatching(/-history\.v8cache$/),
      expect.stringMatching(/-stats\.v8cache$/),
    ]);
    // a cache V8 refuses costs the compile, and is replaced
    const file = join(dist, caches().find((f) => f.endsWith('-stats.v8cache'))!);
    writeFileSync(file, Buffer.alloc(4096, 7));
    const third = run('stats', '--json');
    expect(third.trace).toMatch(/code cache cli-[0-9a-f]{20}-stats: rejected/);
    expect(third.out).toBe(first.out);
    expect(readFileSync(file).equals(Buffer.alloc(4096, 7))).toBe(false);
    // a new build (another dist/cli.cjs) leaves the old caches behind, removed by its first cache
    const cli = join(dist, 'cli.cjs');
    writeFileSync(cli, `${readFileSync(cli, 'utf8')}\n`);
    expect(run('stats', '--json').out).toBe(first.out);
    expect(caches()).toEqual([expect.stringMatching(/-stats\.v8cache$/)]);
    // without the CommonJS build, the ES module build answers
    rmSync(cli);
    const esm = run('stats', '--json');
    expect(esm.code).toBe(0);
    expect(esm.out).toBe(first.out);
    expect(esm.trace).not.toMatch(/code cache/);
  });
});
