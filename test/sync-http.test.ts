/**
 * Sync over smart HTTP with authentication: `git http-backend` behind a small
 * node HTTP server on 127.0.0.1 that demands basic auth. git-mem never sees
 * the credentials: git's own credential helper supplies them, and without
 * them the sync fails at once with a clear error (no prompt, no hang).
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMemory } from '../src/commands/memory.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { errorOf, isolatedEnv, sh, tmpDir } from './helpers.js';
import { clone, tipOf } from './sync-helpers.js';

const BACKEND = sh('git', ['--exec-path'], '/', process.env).trim() + '/git-http-backend';
const USER = 'alice';
const PASS = 's3cret-pass';

let server: Server;
let base: string;
let port: number;
let requests = 0;

function start(): Promise<void> {
  base = tmpDir('gm-http-');
  sh('git', ['init', '-q', '--bare', join(base, 'shared.git')], base, isolatedEnv());
  server = createServer((req, res) => {
    requests++;
    const auth = req.headers.authorization ?? '';
    if (auth !== `Basic ${Buffer.from(`${USER}:${PASS}`).toString('base64')}`) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
      res.end('auth required\n');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const cgi = spawn(BACKEND, [], {
      env: {
        PATH: process.env.PATH,
        GIT_PROJECT_ROOT: base,
        GIT_HTTP_EXPORT_ALL: '1',
        REMOTE_USER: USER,
        REQUEST_METHOD: req.method,
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        HTTP_CONTENT_ENCODING: req.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: String(req.headers['git-protocol'] ?? ''),
        ...(req.headers['content-length'] ? { CONTENT_LENGTH: String(req.headers['content-length']) } : {}),
      },
    });
    req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on('data', (d: Buffer) => {
      if (headersDone) {
        res.write(d);
        return;
      }
      head = Buffer.concat([head, d]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
        const i = line.indexOf(':');
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number.parseInt(v, 10);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.stdout.on('end', () => res.end());
    cgi.stderr.resume();
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      port = (server.address() as { port: number }).port;
      resolve();
    }),
  );
}

const stores: Store[] = [];
beforeAll(async () => {
  if (!existsSync(BACKEND)) throw new Error(`no git-http-backend at ${BACKEND}`);
  await start();
});
afterAll(() => {
  for (const s of stores) s.close();
  server?.close();
});

/** A clone whose git has the credentials in a `store` helper file (as a user's would). */
function authedClone(withCredentials: boolean) {
  const url = `http://127.0.0.1:${port}/shared.git`;
  const c = clone(url);
  if (withCredentials) {
    const file = join(tmpDir('gm-cred-'), 'credentials');
    writeFileSync(file, `http://${USER}:${encodeURIComponent(PASS)}@127.0.0.1:${port}\n`);
    c.git('config', 'credential.helper', `store --file=${file}`);
  }
  return c;
}

describe('sync over smart HTTP with git credentials', () => {
  it('authenticates through git credential helpers and converges two clones', async () => {
    const a = authedClone(true);
    const b = authedClone(true);
    const sa = new Store(await openRepo(a.dir, a.env));
    const sb = new Store(await openRepo(b.dir, b.env));
    stores.push(sa, sb);
    await addMemory(sa, { type: 'decision', title: 'over http from a', body: 'a\n' });
    await addMemory(sb, { type: 'decision', title: 'over http from b', body: 'b\n' });
    expect(await a.memJson(['sync'])).toMatchObject({ action: 'empty', pushed: true });
    expect(await b.memJson(['sync'])).toMatchObject({ action: 'merged', pushed: true });
    expect(await a.memJson(['sync'])).toMatchObject({ action: 'fast-forward' });
    expect(tipOf(a)).toBe(tipOf(b));
    expect((await a.memJson(['list'])).map((x: { title: string }) => x.title).sort()).toEqual([
      'over http from a',
      'over http from b',
    ]);
    expect(requests).toBeGreaterThan(4);
  });

  it('without credentials: a clear error at once, no prompt, the store untouched', async () => {
    const c = authedClone(false);
    const s = new Store(await openRepo(c.dir, c.env));
    stores.push(s);
    await addMemory(s, { type: 'decision', title: 'stays here', body: 'c\n' });
    const before = tipOf(c);
    const r = await c.mem(['sync', '--json'], { env: { ...c.env, GIT_TERMINAL_PROMPT: '0' } });
    expect(r.code).toBe(1);
    // the remote, its URL and git's own reason
    expect(errorOf(r)).toMatchObject({
      code: 'E_REMOTE',
      remote: 'origin',
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/shared\.git$/),
      stderr: expect.stringMatching(/Authentication|credentials|Username/i),
    });
    expect(tipOf(c)).toBe(before);
  });
});
