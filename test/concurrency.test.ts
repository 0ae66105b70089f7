import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN, makeRepo, ROOT, runBin, type TestRepo, until, writerLeftovers } from './helpers.js';
import { bareRemote, clone } from './sync-helpers.js';

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
  it('8 processes adding 8 records each, racing for the ref, leave exactly 64 records and a linear history', async () => {
    const r = makeRepo();
    await r.memJson(['init']);
    const worker = join(ROOT, 'test', 'fixtures', 'add-worker.mjs');
    // traced, so the test can tell that the writers did race (a compare-and-swap lost, the change
    // rebuilt on the new tip), not that they happened to take turns
    const env = { ...r.env, GIT_MEM_TRACE: '1' };
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => run([worker, '8', `w${i}`], r.dir, env)),
    );
    for (const res of results) expect(res.code, res.stderr).toBe(0);
    const lost = results.map((res) => res.stderr.split('write: the ref moved meanwhile').length - 1);
    expect(lost.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const list = await r.memJson(['list']);
    expect(list.length).toBe(64);
    for (let i = 0; i < 8; i++)
      expect(list.filter((m: { tags: string[] }) => m.tags.includes(`w${i}`)).length).toBe(8);
    expect(r.git('rev-list', '--count', 'refs/memory').trim()).toBe('65'); // init + 64 adds
    expect(r.git('rev-list', '--merges', 'refs/memory').trim()).toBe('');
    expect(r.git('rev-list', '--max-parents=0', 'refs/memory').trim().split('\n').length).toBe(1);
    expect(writerLeftovers(r)).toEqual([]);
  }, 300_000); // 8 processes × 8 adds on 2 cores: 64 commits through compare-and-swap

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
    // and deterministically: killed after its objects are written, before the ref moves (a kill
    // above may have hit a writer between its temp file and git's answer: those files are its own)
    const left = writerLeftovers(r);
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
    expect(writerLeftovers(r)).toEqual(left);
    const doctor = JSON.parse((await r.mem(['doctor', '--json'])).stdout);
    expect(doctor.findings.filter((f: { level: string }) => f.level === 'error')).toEqual([]);
    expect((await r.memJson(['list'])).map((m: { title: string }) => m.title)).not.toContain('in the window');
    const again = await r.mem(['add', '--title', 'after', '--content', 'y']);
    expect(again.code).toBe(0);
  }, 120_000);
});

/** Every *.lock under .git/refs, and .git/packed-refs.lock. */
function refLocks(r: TestRepo): string[] {
  const walk = (d: string): string[] =>
    existsSync(d)
      ? readdirSync(d, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith('.lock') ? [join(d, e.name)] : [],
        )
      : [];
  const packed = join(r.dir, '.git', 'packed-refs.lock');
  return [...walk(join(r.dir, '.git', 'refs')), ...(existsSync(packed) ? [packed] : [])];
}

/** The writer's temp files left in .git/mem/tmp. */
const temps = (r: TestRepo) => {
  const d = join(r.dir, '.git', 'mem', 'tmp');
  return existsSync(d) ? readdirSync(d).filter((n) => n.startsWith('w-')) : [];
};

const tipOr = (r: TestRepo, ref: string) => {
  try {
    return r.git('rev-parse', '-q', '--verify', ref).trim();
  } catch {
    return null;
  }
};

/**
 * Starts `git mem …args` with a test pause, waits for its marker in .git/mem
 * (`test-paused`: objects written, before update-ref; `test-locked`: update-ref
 * prepared, the refs' locks held), SIGKILLs it and waits until git, orphaned,
 * has let go of every lock. Returns the marker's content.
 */
async function killAt(r: TestRepo, args: string[], at: 'test-paused' | 'test-locked'): Promise<string> {
  const marker = join(r.dir, '.git', 'mem', at);
  rmSync(marker, { force: true });
  const env = {
    ...r.env,
    [at === 'test-paused' ? 'GIT_MEM_TEST_PAUSE_BEFORE_CAS' : 'GIT_MEM_TEST_PAUSE_IN_CAS']: '30000',
  };
  const child = spawn(process.execPath, [BIN, ...args], { cwd: r.dir, env, stdio: 'ignore' });
  let exited = false;
  const closed = new Promise((res) =>
    child.on('close', (code) => {
      exited = true;
      res(code);
    }),
  );
  await until(() => {
    if (existsSync(marker)) return true;
    if (exited) throw new Error(`git mem ${args.join(' ')} exited before it reached ${at}`);
    return undefined;
  }, 60_000);
  const content = readFileSync(marker, 'utf8');
  if (at === 'test-locked') {
    // really inside the transaction: git holds the lock of every ref it moves
    for (const ref of content.split('\n'))
      expect(existsSync(join(r.dir, '.git', `${ref}.lock`)), ref).toBe(true);
  }
  child.kill('SIGKILL');
  await closed;
  // update-ref sees its stdin close and aborts the transaction, removing its locks
  await until(() => (refLocks(r).length ? undefined : true), 20_000);
  return content;
}

/** Every record id a note line on refs/notes/memory names. */
function noteIds(r: TestRepo): string[] {
  if (!tipOr(r, 'refs/notes/memory')) return [];
  const ids: string[] = [];
  for (const l of r.git('notes', '--ref=memory', 'list').trim().split('\n').filter(Boolean)) {
    const text = r.git('cat-file', 'blob', l.split(' ')[0]);
    for (const line of text.split('\n').filter(Boolean)) ids.push(JSON.parse(line).id);
  }
  return ids;
}

describe('SIGKILL around every ref move', () => {
  it('add killed while update-ref holds refs/memory.lock: the ref as it was, no lock, no temp file', async () => {
    const r = makeRepo();
    await r.memJson(['add', '--title', 'before', '--content', 'x']);
    const before = r.git('rev-parse', 'refs/memory').trim();
    await killAt(r, ['add', '--title', 'in the lock', '--content', 'y'], 'test-locked');
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(before);
    expect(refLocks(r)).toEqual([]);
    expect(temps(r)).toEqual([]);
    r.git('fsck', '--no-dangling', '--connectivity-only');
    expect((await r.mem(['add', '--title', 'after', '--content', 'z'])).code).toBe(0);
    const titles = (await r.memJson(['list'])).map((m: { title: string }) => m.title).sort();
    expect(titles).toEqual(['after', 'before']);
  }, 120_000);

  it('the post-commit hook killed before and inside its two-ref move: both refs as they were, then both move', async () => {
    const r = makeRepo();
    r.write('src/a.ts', 'export const a = 1;\nexport const b = 2;\n');
    r.commitAll('one');
    await r.memJson(['add', '--title', 'a is one', '--content', 'x', '--anchor', 'src/a.ts:1']);
    r.write('src/a.ts', 'export const a = 42;\nexport const b = 2;\n');
    const head = r.commitAll('two');
    const mem = r.git('rev-parse', 'refs/memory').trim();
    for (const at of ['test-paused', 'test-locked'] as const) {
      const moved = await killAt(r, ['hook', 'post-commit'], at);
      if (at === 'test-locked') expect(moved.split('\n')).toEqual(['refs/memory', 'refs/notes/memory']);
      expect(r.git('rev-parse', 'refs/memory').trim(), at).toBe(mem);
      expect(tipOr(r, 'refs/notes/memory'), at).toBeNull();
      expect(refLocks(r), at).toEqual([]);
      expect(temps(r), at).toEqual([]);
      r.git('fsck', '--no-dangling', '--connectivity-only');
    }
    expect(runBin(['hook', 'post-commit'], { cwd: r.dir, env: r.env }).code).toBe(0);
    expect(r.git('rev-parse', 'refs/memory^').trim()).toBe(mem);
    expect(r.git('notes', '--ref=memory', 'show', head)).toContain('"verdict":"changed"');
  }, 120_000);

  it('sync killed before, inside and at random points of its ref moves: refs consistent, the next sync completes', async () => {
    const remote = bareRemote();
    const a = clone(remote.url);
    const b = clone(remote.url);
    /** a writes a memory and a note naming it on its HEAD, and shares both */
    const share = async (n: number) => {
      const { id } = await a.memJson(['add', '--title', `from a ${n}`, '--content', 'a']);
      const line = JSON.stringify({ id, verdict: 'changed', reason: `note ${n}` });
      a.git('notes', '--ref=memory', 'append', '-m', line, 'HEAD');
      await a.memJson(['sync']);
      return id;
    };
    const consistent = async (what: string) => {
      const tip = r0(b);
      expect(b.git('cat-file', '-t', tip).trim(), what).toBe('commit');
      const notes = tipOr(b, 'refs/notes/memory');
      if (notes) expect(b.git('cat-file', '-t', notes).trim(), what).toBe('commit');
      b.git('fsck', '--no-dangling', '--connectivity-only');
      // a git the killed sync started (a fetch) may still run, holding its lock until it finishes:
      // no lock may outlive the processes that hold it
      await until(() => (refLocks(b).length ? undefined : true), 15_000).catch(() => {});
      expect(refLocks(b), what).toEqual([]);
      // a note is there only when the memory it names is
      const ids = new Set((await b.memJson(['list'])).map((m: { id: string }) => m.id));
      for (const id of noteIds(b)) expect(ids.has(id), `${what}: ${id}`).toBe(true);
    };
    const r0 = (r: TestRepo) => r.git('rev-parse', 'refs/memory').trim();
    await share(0);
    await b.memJson(['add', '--title', 'from b', '--content', 'b']);
    for (const at of ['test-paused', 'test-locked'] as const) {
      const mem = r0(b);
      await killAt(b, ['sync'], at);
      expect(r0(b), at).toBe(mem);
      expect(tipOr(b, 'refs/notes/memory'), at).toBeNull();
      await consistent(at);
    }
    // killed wherever it happens to be: fetch, validation, merge, the two ref moves, the push
    for (let i = 1; i <= 4; i++) {
      await share(i);
      await b.memJson(['add', '--title', `from b ${i}`, '--content', 'b']);
      const child = spawn(process.execPath, [BIN, 'sync'], { cwd: b.dir, env: b.env, stdio: 'ignore' });
      const closed = new Promise((res) => child.on('close', res));
      await new Promise((res) => setTimeout(res, 150 + i * 200));
      child.kill('SIGKILL');
      await closed;
      await until(() => (refLocks(b).length ? undefined : true), 20_000);
      await consistent(`random ${i}`);
    }
    const done = await b.memJson(['sync']);
    expect(done.pushed || done.action === 'up-to-date').toBe(true);
    await consistent('after');
    const titles = (await b.memJson(['list'])).map((m: { title: string }) => m.title);
    for (let i = 0; i <= 4; i++) expect(titles).toContain(`from a ${i}`);
    expect(noteIds(b).length).toBe(5);
  }, 300_000);

  it('the writer removes temp files a killed writer left, once they are an hour old, and nothing else', async () => {
    const r = makeRepo();
    // planted before anything of this process writes here (the writer sweeps once per repository)
    const tmp = join(r.dir, '.git', 'mem', 'tmp');
    mkdirSync(tmp, { recursive: true });
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    const planted = ['w-424242-1', 'w-424242-2', 'marks-424242-1', 'marks-424242-2', 'notes.txt'];
    for (const name of planted) writeFileSync(join(tmp, name), 'left\n');
    for (const name of ['w-424242-1', 'marks-424242-1', 'notes.txt']) utimesSync(join(tmp, name), old, old);
    await r.memJson(['add', '--title', 'writes', '--content', 'x']);
    // the old ones are gone (an object for hash-object, an import's marks); a fresh one may be a
    // live writer's; a file not the writer's stays
    expect(readdirSync(tmp).sort()).toEqual(['marks-424242-2', 'notes.txt', 'w-424242-2']);
  }, 60_000);
});
