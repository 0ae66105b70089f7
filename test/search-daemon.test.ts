/**
 * The query daemon as real processes (needs the bundle: npm run build).
 * It answers on a Unix socket in .git/mem, applies a changed tip before
 * answering, exits when idle, and the CLI falls back to in-process search
 * when there is none.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { queryViaDaemon, socketPath } from '../src/daemon/client.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { readStamp } from '../src/search/store-index.js';
import { BIN, daemonPids, errorOf, makeRepo, runBinAsync } from './helpers.js';

/** Whether process `pid` has ended (a zombie no init has reaped yet counts as ended). */
function exited(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

const pids = daemonPids();

function out(r: { code: number; stdout: string; stderr: string }) {
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`exit ${r.code}, stdout ${JSON.stringify(r.stdout)}, stderr ${r.stderr}`);
  }
}

async function waitFor(cond: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

describe('query daemon', () => {
  it('serves search and context from memory and never answers from an old tip', async () => {
    const r = makeRepo({ commit: true });
    const env = { ...r.env, GIT_MEM_DAEMON: 'on' };
    const bin = (args: string[]) => runBinAsync(args, { cwd: r.dir, env });
    await r.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'Pooling through pgbouncer',
      '--content',
      'Transaction mode.',
    ]);
    const started = await bin(['daemon', 'start', '--json']);
    expect(started.code).toBe(0);
    const info = out(started);
    pids.push(info.pid);
    expect(info).toMatchObject({ running: true, memories: 1 });
    const store = new Store(await openRepo(r.dir, r.env));
    try {
      expect(existsSync(socketPath(store))).toBe(true);
      const hits = out(await bin(['search', '--json', 'pgbouncer']));
      expect(hits.map((h: { title: string }) => h.title)).toEqual(['Pooling through pgbouncer']);
      // the store moves on (another process): the next answer includes the change
      await r.memJson([
        'add',
        '--type',
        'known_fix',
        '--title',
        'Websocket reconnect storms',
        '--content',
        'Reconnect with jitter.',
      ]);
      const ws = out(await bin(['search', '--json', 'websocket', 'jitter']));
      expect(ws.map((h: { title: string }) => h.title)).toEqual(['Websocket reconnect storms']);
      const pack = out(await bin(['context', '--format', 'json', '--query', 'websocket']));
      expect(pack.items.map((i: { title: string }) => i.title)).toContain('Websocket reconnect storms');
      // bad input is reported by the daemon as the CLI would
      const bad = await bin(['search', '--type', 'nope', 'x', '--json']);
      expect(bad.code).toBe(2);
      expect(errorOf(bad).code).toBe('E_INVALID_ARG');
      // the human output, and the same hits as the CLI's own search without the daemon
      const human = await bin(['search', 'pgbouncer']);
      expect(human.stdout).toMatch(
        /^[0-9A-Z]{12} {2}decision {7}Pooling through pgbouncer {2}\d\.\d{3}\n {4}text: pgbouncer/,
      );
      const viaCli = await runBinAsync(['search', '--json', '--no-daemon', 'pgbouncer'], { cwd: r.dir, env });
      expect(out(viaCli).map((h: { id: string }) => h.id)).toEqual(
        out(await bin(['search', '--json', 'pgbouncer'])).map((h: { id: string }) => h.id),
      );
      // an unknown option is refused before the daemon is asked
      const unknown = await bin(['search', '--bogus', 'x']);
      expect(unknown.code).toBe(2);
      // the duplicate check of add asks the daemon too
      const dup = await bin([
        'add',
        '--type',
        'known_fix',
        '--title',
        'Websocket reconnect storms',
        '--content',
        'Reconnect with jitter.',
        '--json',
      ]);
      expect(dup.code).toBe(2);
      expect(errorOf(dup)).toMatchObject({
        code: 'E_DUPLICATE',
        duplicates: [{ title: 'Websocket reconnect storms' }],
      });
      const status = out(await bin(['daemon', 'status', '--json']));
      expect(status).toMatchObject({ running: true, pid: info.pid, memories: 2 });
      expect((await bin(['daemon', 'stop'])).code).toBe(0);
      // stop returns once the daemon has ended: nothing of it still writes under .git/mem, and
      // its last snapshot holds the add it applied
      expect(existsSync(socketPath(store))).toBe(false);
      expect(exited(info.pid)).toBe(true);
      expect(readStamp(store)).toMatchObject({ tip: r.git('rev-parse', 'refs/memory').trim(), docs: 2 });
      expect(out(await bin(['daemon', 'status', '--json'])).running).toBe(false);
      // with no daemon (and a small store) the CLI answers in-process and starts none
      expect(await queryViaDaemon(store, { op: 'search', q: { query: 'pgbouncer' } }, r.env)).toBeUndefined();
      const off = await runBinAsync(['search', '--json', 'pgbouncer'], { cwd: r.dir, env: r.env });
      expect(out(off)[0].title).toBe('Pooling through pgbouncer');
      expect(existsSync(socketPath(store))).toBe(false);
    } finally {
      store.close();
    }
  }, 30_000);

  it('exits by itself when idle and removes its socket', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['add', '--title', 'Something', '--content', 'x']);
    const env = { ...r.env, GIT_MEM_DAEMON_IDLE_MS: '400' };
    const s = await runBinAsync(['daemon', 'start', '--json'], { cwd: r.dir, env });
    const { pid } = out(s);
    pids.push(pid);
    const store = new Store(await openRepo(r.dir, r.env));
    try {
      const gone = await waitFor(() => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, 8000);
      expect(gone).toBe(true);
      expect(existsSync(socketPath(store))).toBe(false);
    } finally {
      store.close();
    }
  }, 20_000);

  it('run in the foreground stops cleanly on SIGTERM or Ctrl-C: exit 0, socket removed', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['add', '--title', 'Something', '--content', 'x']);
    const store = new Store(await openRepo(r.dir, r.env));
    try {
      for (const signal of ['SIGTERM', 'SIGINT'] as const) {
        const child = spawn(process.execPath, [BIN, 'daemon', 'run'], { cwd: r.dir, env: r.env });
        let err = '';
        child.stderr.on('data', (d) => (err += d));
        const exited = new Promise<[number | null, string | null]>((res) =>
          child.on('exit', (code, sig) => res([code, sig])),
        );
        expect(await waitFor(() => existsSync(socketPath(store)), 15_000), err).toBe(true);
        child.kill(signal);
        expect(await exited, `${signal}: ${err}`).toEqual([0, null]);
        expect(existsSync(socketPath(store))).toBe(false);
      }
    } finally {
      store.close();
    }
  }, 40_000);
});

describe('a daemon started on demand', () => {
  it('is not waited for: the call that starts it answers in process, later ones go to it', async () => {
    const r = makeRepo({ commit: true });
    // enough memories for the index snapshot to pass AUTO_START_BYTES (512 KiB)
    const lines: string[] = [];
    for (let i = 0; i < 700; i++) {
      const words = Array.from({ length: 120 }, (_, k) => `w${(i * 131 + k * 7) % 997}`).join(' ');
      lines.push(JSON.stringify({ type: 'convention', title: `convention ${i} w${i % 97}`, body: words }));
    }
    lines.push(
      JSON.stringify({ type: 'decision', title: 'Pooling through pgbouncer', body: 'Transaction mode.' }),
    );
    const { writeFileSync, statSync } = await import('node:fs');
    const { join } = await import('node:path');
    const jsonl = join(r.dir, '..', `${Date.now()}-mem.jsonl`);
    writeFileSync(jsonl, `${lines.join('\n')}\n`);
    expect((await r.mem(['import', '--jsonl', jsonl])).code).toBe(0);
    const store = new Store(await openRepo(r.dir, r.env));
    const { daemonDir, launchDaemon, startingFile } = await import('../src/daemon/client.js');
    try {
      // (a daemon that takes 4 s more to load than it does: the start must not be waited for)
      const env = { ...r.env, GIT_MEM_TEST_DAEMON_LOAD_MS: '4000' };
      const search = () => runBinAsync(['search', '--json', 'pgbouncer'], { cwd: r.dir, env });
      // the first search builds and keeps the index snapshot (no daemon yet: nothing says it is worth one)
      expect(out(await search())[0].title).toBe('Pooling through pgbouncer');
      expect(statSync(join(daemonDir(store), 'index.json')).size).toBeGreaterThan(512 * 1024);
      expect(existsSync(socketPath(store))).toBe(false);
      // the next one starts a daemon and answers without waiting for it: the daemon is still
      // loading when the answer is printed
      expect(out(await search())[0].title).toBe('Pooling through pgbouncer');
      expect(existsSync(startingFile(store))).toBe(true);
      expect(existsSync(socketPath(store))).toBe(false);
      // while it starts, nobody starts another
      expect(launchDaemon(store, r.env)).toBe(false);
      expect(out(await search())[0].title).toBe('Pooling through pgbouncer');
      // listening, then the marker goes (daemon.ts removes it right after listen())
      expect(await waitFor(() => existsSync(socketPath(store)), 20_000)).toBe(true);
      expect(await waitFor(() => !existsSync(startingFile(store)), 5_000)).toBe(true);
      const status = out(await runBinAsync(['daemon', 'status', '--json'], { cwd: r.dir, env: r.env }));
      expect(status).toMatchObject({ running: true, memories: 701 });
      pids.push(status.pid);
      expect(out(await search())[0].title).toBe('Pooling through pgbouncer');
      // an add the daemon applies, then stop: it returns once the daemon has written its last
      // snapshot and ended (a script may remove the repository next)
      const add = await runBinAsync(['add', '--title', 'Pool size is 20', '--content', 'Per pod.'], {
        cwd: r.dir,
        env: r.env,
      });
      expect(add.code).toBe(0);
      expect(out(await search())[0].title).toBe('Pooling through pgbouncer');
      expect((await runBinAsync(['daemon', 'stop'], { cwd: r.dir, env: r.env })).code).toBe(0);
      expect(exited(status.pid)).toBe(true);
      expect(readStamp(store)).toMatchObject({ tip: r.git('rev-parse', 'refs/memory').trim(), docs: 702 });
    } finally {
      store.close();
    }
  }, 60_000);
});
