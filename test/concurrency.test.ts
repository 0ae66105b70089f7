import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, makeRepo, ROOT, until } from './helpers.js';

function run(
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number | null; stderr: string }> {
  return new Promise((res) => {
    const c = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (code) => res({ code, stderr }));
  });
}

describe('concurrent writers', () => {
  it('8 processes adding 25 records each leave exactly 200 records and a linear history', async () => {
    const r = makeRepo();
    await r.memJson(['init']);
    const worker = join(ROOT, 'test', 'fixtures', 'add-worker.mjs');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => run([worker, '25', `w${i}`], r.dir, r.env)),
    );
    for (const res of results) expect(res.code, res.stderr).toBe(0);
    const list = await r.memJson(['list']);
    expect(list.length).toBe(200);
    for (let i = 0; i < 8; i++)
      expect(list.filter((m: { tags: string[] }) => m.tags.includes(`w${i}`)).length).toBe(25);
    expect(r.git('rev-list', '--count', 'refs/memory').trim()).toBe('201'); // init + 200 adds
    expect(r.git('rev-list', '--merges', 'refs/memory').trim()).toBe('');
    expect(r.git('rev-list', '--max-parents=0', 'refs/memory').trim().split('\n').length).toBe(1);
    expect(r.git('for-each-ref', 'refs/mem-tmp/')).toBe('');
  }, 300_000); // 8 processes × 25 adds racing on 2 cores: 200 commits through compare-and-swap

  it('a process killed with SIGKILL in the middle of add leaves the ref at a valid commit', async () => {
    const r = makeRepo();
    await r.memJson(['add', '--title', 'before', '--content', 'x']);
    const body = 'lorem ipsum '.repeat(4000);
    let killedMidway = 0;
    for (let i = 0; i < 8; i++) {
      const before = r.git('rev-parse', 'refs/memory').trim();
      const child = spawn(process.execPath, [BIN, 'add', '--title', `victim ${i}`, '--content', body], {
        cwd: r.dir,
        env: r.env,
        stdio: 'ignore',
      });
      // listen before killing: a fast add may already have exited
      const closed = new Promise((res) => child.on('close', res));
      await new Promise((res) => setTimeout(res, 40 + i * 25));
      child.kill('SIGKILL');
      await closed;
      const after = r.git('rev-parse', 'refs/memory').trim();
      if (after === before) killedMidway++;
      // whatever happened, the ref names a complete commit whose tree lists and parses
      expect(r.git('cat-file', '-t', after).trim()).toBe('commit');
      r.git('fsck', '--no-dangling', '--connectivity-only', 'refs/memory');
      const doctor = await r.mem(['doctor', '--json']);
      const findings = JSON.parse(doctor.stdout).findings.filter(
        (f: { level: string }) => f.level === 'error',
      );
      expect(findings).toEqual([]);
      const titles = (await r.memJson(['list'])).map((m: { title: string }) => m.title);
      expect(titles).toContain('before');
    }
    expect(killedMidway).toBeGreaterThan(0);
    // and deterministically: killed after its objects are written, before the ref moves
    const before = r.git('rev-parse', 'refs/memory').trim();
    const child = spawn(process.execPath, [BIN, 'add', '--title', 'in the window', '--content', 'x'], {
      cwd: r.dir,
      env: { ...r.env, GIT_MEM_TEST_PAUSE_BEFORE_CAS: '10000' },
      stdio: 'ignore',
    });
    const closed = new Promise((res) => child.on('close', res));
    const marker = join(r.dir, '.git', 'mem', 'test-paused');
    await until(() => existsSync(marker) || undefined, 60_000); // a busy machine starts node slowly
    const written = readFileSync(marker, 'utf8').trim();
    expect(r.git('cat-file', '-t', written).trim()).toBe('commit'); // its objects are on disk
    child.kill('SIGKILL');
    await closed;
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(before);
    // git never got to lock a ref, and no temporary ref was written
    expect(existsSync(join(r.dir, '.git', 'refs', 'memory.lock'))).toBe(false);
    expect(r.git('for-each-ref', 'refs/mem-tmp/')).toBe('');
    const doctor = JSON.parse((await r.mem(['doctor', '--json'])).stdout);
    expect(doctor.findings.filter((f: { level: string }) => f.level === 'error')).toEqual([]);
    expect((await r.memJson(['list'])).map((m: { title: string }) => m.title)).not.toContain('in the window');
    const again = await r.mem(['add', '--title', 'after', '--content', 'y']);
    expect(again.code).toBe(0);
  }, 120_000);
});
