/**
 * The search daemon under hostile or broken clients, as a real process on a
 * real Unix socket (needs the bundle: npm run build): a connection cap, a
 * request-size limit and a deadline for each request. 300 connections each
 * sending 1 MB without a newline once took it from 68 to 711 MB, never
 * released; now it holds at most cap × limit and keeps answering.
 */
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { socketPath } from '../src/daemon/client.js';
import { ask, MAX_CONNECTIONS, MAX_REQUEST_BYTES } from '../src/daemon/wire.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { daemonPids, makeRepo, runBinAsync } from './helpers.js';

const pids = daemonPids();

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

/** A connection that collects what the daemon says until it closes. */
function open(path: string): { sock: Socket; said: Promise<string> } {
  const sock = connect(path);
  const chunks: Buffer[] = [];
  sock.on('data', (d: Buffer) => chunks.push(d));
  sock.on('error', () => {});
  const said = new Promise<string>((resolve) =>
    sock.on('close', () => resolve(Buffer.concat(chunks).toString())),
  );
  return { sock, said };
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms)),
  ]);
}

const errorCode = (said: string) => {
  try {
    return (JSON.parse(said.split('\n')[0]) as { error?: { code?: string } }).error?.code;
  } catch {
    return `not JSON: ${said.slice(0, 80)}`;
  }
};

describe('daemon connection limits', () => {
  it('caps connections, refuses oversized and slow requests, and stays small under a flood', async () => {
    const REQUEST_MS = 3000;
    const r = makeRepo({ commit: true });
    const env = { ...r.env, GIT_MEM_DAEMON: 'on', GIT_MEM_DAEMON_REQUEST_MS: String(REQUEST_MS) };
    await r.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'Pooling through pgbouncer',
      '--content',
      'Tx mode.',
    ]);
    const started = await runBinAsync(['daemon', 'start', '--json'], { cwd: r.dir, env });
    expect(started.code, started.stderr).toBe(0);
    const pid = JSON.parse(started.stdout).pid as number;
    pids.push(pid);
    const store = new Store(await openRepo(r.dir, r.env));
    const path = socketPath(store);
    store.close();
    try {
      expect((await ask(path, { op: 'ping' })).ok).toBe(true);

      // a request line over the limit: one error line, then the connection is closed
      const big = open(path);
      big.sock.write(Buffer.alloc(MAX_REQUEST_BYTES + 10, 'a'));
      big.sock.write('\n');
      const bigSaid = await within(big.said, 10_000, 'oversized request');
      expect(errorCode(bigSaid)).toBe('E_DAEMON_TOO_LARGE');
      expect(bigSaid).toMatch(/over 1048576 bytes refused/);

      // a connection that sends nothing is closed after the request deadline
      const t0 = Date.now();
      const silent = open(path);
      const silentSaid = await within(silent.said, REQUEST_MS + 5000, 'silent connection');
      expect(errorCode(silentSaid)).toBe('E_DAEMON_TIMEOUT');
      expect(Date.now() - t0).toBeGreaterThanOrEqual(REQUEST_MS - 100);

      // the cap: with MAX_CONNECTIONS idle connections open, the next is refused at once as busy…
      const idle = Array.from({ length: MAX_CONNECTIONS }, () => open(path));
      await new Promise((res) => setTimeout(res, 300));
      const extra = open(path);
      expect(errorCode(await within(extra.said, 2000, 'busy refusal'))).toBe('E_DAEMON_BUSY');
      // …and the CLI answers in process meanwhile instead of failing
      const search = await runBinAsync(['search', '--json', 'pgbouncer'], { cwd: r.dir, env });
      expect(search.code, search.stderr).toBe(0);
      expect(JSON.parse(search.stdout).map((h: { title: string }) => h.title)).toEqual([
        'Pooling through pgbouncer',
      ]);
      for (const c of idle) c.sock.destroy();
      await within(Promise.all(idle.map((c) => c.said)), 5000, 'idle connections closing');

      // the flood: 300 connections, each sending 1 MB without a newline
      const before = rssMiB(pid);
      const mb = Buffer.alloc(1_000_000, 'x');
      const flood = Array.from({ length: 300 }, () => {
        const c = open(path);
        c.sock.write(mb);
        return c;
      });
      let peak = before;
      const sampler = setInterval(() => {
        peak = Math.max(peak, rssMiB(pid));
      }, 50);
      const said = await within(Promise.all(flood.map((c) => c.said)), REQUEST_MS + 20_000, 'flood');
      clearInterval(sampler);
      peak = Math.max(peak, rssMiB(pid));
      const codes = new Map<string, number>();
      for (const s of said) codes.set(String(errorCode(s)), (codes.get(String(errorCode(s))) ?? 0) + 1);
      // every connection got an answer and was closed: busy or timed out, nothing else
      expect([...codes.keys()].sort()).toEqual(['E_DAEMON_BUSY', 'E_DAEMON_TIMEOUT']);
      // the cap was reached (a timed-out connection frees its slot for a later one)
      expect(codes.get('E_DAEMON_BUSY')).toBeGreaterThan(100);
      // at most cap × 1 MB held at once, plus what the garbage collector has not caught up with (was +643 MB)
      expect(peak - before, `RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MiB`).toBeLessThan(200);

      // still serving, and a second flood does not ratchet memory up
      expect((await ask(path, { op: 'ping' })).ok).toBe(true);
      const again = Array.from({ length: 300 }, () => {
        const c = open(path);
        c.sock.write(mb);
        return c;
      });
      await within(Promise.all(again.map((c) => c.said)), REQUEST_MS + 20_000, 'second flood');
      expect(rssMiB(pid) - before).toBeLessThan(200);
      const hits = await ask(path, { op: 'search', q: { query: 'pgbouncer', limit: 5 } });
      expect(hits.ok).toBe(true);
      // the same daemon throughout: never replaced as if it had died
      expect((await ask(path, { op: 'ping' })).pid).toBe(pid);
    } finally {
      await ask(path, { op: 'stop' }, 5000).catch(() => {});
    }
  }, 120_000);
});
