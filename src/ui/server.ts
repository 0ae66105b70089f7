/**
 * `git mem ui`: a local web server for one repository's memory. node:http on
 * 127.0.0.1 only; every request passes the gate of ./security.ts first. It
 * serves the page (built from web/ into dist/ui-*) and the JSON API of
 * ./api.ts. The stores are long-lived, as in the MCP server: one running
 * cat-file and one set of git writers for the life of the server, the search
 * index kept in memory and brought to the tip before each search.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asGitMemError, err, type GitMemError } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { type ApiRequest, type Json, route } from './api.js';
import type { UiEnv } from './env.js';
import { warmSearch } from './search.js';
import { checkRequest, newCode, newToken, openerPolicy } from './security.js';
import type { ErrorAnswer } from './wire.js';

export interface UiOptions {
  /** 0 = a free port the system picks */
  port?: number;
  /** where ui-index.html, ui-app.js, ui-app.css and ui-chunk-*.js are (default: beside this module, i.e. dist/) */
  assets?: string;
  /** a fixed key (tests); default: 32 random bytes */
  token?: string;
  /** called when the printed link is spent, with the next one (for another browser, or a tab without the key) */
  onSpent?: (url: string) => void;
  /** where failures that are not the user's are reported (default stderr) */
  log?: (line: string) => void;
}

export interface UiServer {
  /** the link to print: the page with a one-time code */
  url: string;
  port: number;
  /** the API's key: never printed, never in a URL */
  token: string;
  /** a further one-time link (what `--open` hands the browser) */
  link(): string;
  close(): Promise<void>;
}

const BODY_LIMIT = 1 << 20;
/** The search index is readied this long after the first list was answered. */
const WARM_IDLE_MS = 300;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const COMMON: Record<string, string> = {
  'content-security-policy': CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

interface Asset {
  type: string;
  body: Buffer;
  etag: string;
}

function loadAssets(dir: string, token: string): { files: Map<string, Asset>; keyed: Buffer } {
  const read = (name: string) => {
    try {
      return readFileSync(join(dir, name));
    } catch {
      throw err(
        'E_IO',
        `the page is missing (${join(dir, name)})`,
        'run npm run build, or reinstall git-mem',
      );
    }
  };
  const asset = (type: string, body: Buffer): Asset => ({
    type,
    body,
    etag: `"${createHash('sha1').update(body).digest('hex').slice(0, 16)}"`,
  });
  const files = new Map<string, Asset>([
    ['/ui-app.js', asset('text/javascript; charset=utf-8', read('ui-app.js'))],
    ['/ui-app.css', asset('text/css; charset=utf-8', read('ui-app.css'))],
  ]);
  // the chunks the page loads later (the Markdown renderer; their names carry a hash of their content)
  for (const f of readdirSync(dir))
    if (/^ui-chunk-\w+\.js$/.test(f)) files.set(`/${f}`, asset('text/javascript; charset=utf-8', read(f)));
  // the page: the key for the API's header (in the page a one-time code opens, only), the
  // script and styles by a name with their hash, so a browser keeps them without asking again,
  // and the chunks the script imports from its first line, announced with it (no waterfall)
  const app = files.get('/ui-app.js')!.body.subarray(0, 4096).toString('utf8');
  const chunks = [...app.matchAll(/from\s*"\.\/(ui-chunk-\w+\.js)"/g)].map((m) => m[1]);
  const html = read('ui-index.html')
    .toString('utf8')
    .replace(
      '<link rel="modulepreload" href="/ui-app.js">',
      ['ui-app.js', ...chunks].map((f) => `<link rel="modulepreload" href="/${f}">`).join('\n'),
    )
    .replace(
      /"\/(ui-app\.(?:js|css))"/g,
      (_m, f: string) => `"/${f}?v=${files.get(`/${f}`)!.etag.slice(1, -1)}"`,
    );
  // without the key: the page reads it from its own storage, and holds no data of the store
  files.set(
    '/',
    asset(
      'text/html; charset=utf-8',
      Buffer.from(html.replace('__GIT_MEM_TOKEN__', '').replace(FIRST_MARK, '')),
    ),
  );
  return { files, keyed: Buffer.from(html.replace('__GIT_MEM_TOKEN__', token)) };
}

const FIRST_MARK = '<!--git-mem-first-->';

/**
 * The requests the landing page makes first (web/main.tsx, web/pages/memories.tsx), answered
 * in the page itself: a new tab then renders the list in its first render, with no request
 * after its script. Keys are what the page's get() asks for: path and query (web/api.ts qs()).
 */
const FIRST = ['info', 'memories?page=1&size=50', 'tags'];

/**
 * JSON that can stand inside a <script type="application/json"> element: no `<` (so no
 * `</script>` and no `<!--`), `>`, `&` or line separators, each written as its \u escape
 * (JSON.parse reads them back as they were). Memory text is untrusted.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The first answers as the API gives them (the same route handlers); one that fails is left out (the page asks for it, and shows the error). */
async function firstAnswers(env: UiEnv): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  await Promise.all(
    FIRST.map(async (key) => {
      const [path, query = ''] = key.split('?');
      const r = route('GET', `/api/${path}`);
      if ('status' in r) return;
      try {
        const api: ApiRequest = {
          method: 'GET',
          path: `/api/${path}`,
          query: new URLSearchParams(query),
          body: {},
        };
        out[key] = (await r.handler(env, r.params, api)) ?? null;
      } catch {}
    }),
  );
  return out;
}

function send(
  res: ServerResponse,
  status: number,
  type: string,
  body: Buffer | string,
  extra: Record<string, string> = {},
) {
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { ...COMMON, 'content-type': type, 'content-length': String(buf.length), ...extra });
  res.end(buf);
}

function sendJson(res: ServerResponse, status: number, value: unknown) {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value), {
    'cache-control': 'no-store',
  });
}

/** The HTTP status of an operation's failure: bad input 400, not found (or no store yet) 404, conflict 409, else 500. */
function statusOf(e: GitMemError): number {
  if (e.code === 'E_NOT_INITIALIZED') return 404;
  return e.exitCode === 2 ? 400 : e.exitCode === 3 ? 404 : e.exitCode === 4 ? 409 : 500;
}

async function readBody(req: IncomingMessage): Promise<Json> {
  const type = String(req.headers['content-type'] ?? '');
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > BODY_LIMIT) throw err('E_TOO_LARGE', 'the request is larger than 1 MiB');
    chunks.push(c as Buffer);
  }
  if (!size) return {};
  if (!/^application\/json\b/i.test(type))
    throw err('E_INVALID_ARG', 'send JSON (content-type application/json)');
  let v: unknown;
  try {
    v = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw err('E_INVALID_ARG', 'the request body is not valid JSON');
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw err('E_INVALID_ARG', 'the request body must be a JSON object');
  return v as Json;
}

function defaultAssets(): string {
  return fileURLToPath(new URL('.', import.meta.url));
}

/** A file of the page (the page itself, its script, styles and chunks), with its cache headers. */
function serveAsset(
  req: IncomingMessage,
  res: ServerResponse,
  method: string,
  url: URL,
  assets: ReturnType<typeof loadAssets>['files'],
  sendPage: (res: ServerResponse, page: Buffer, head: boolean) => Promise<unknown>,
) {
  if (method !== 'GET' && method !== 'HEAD')
    return send(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n');
  const a = assets.get(url.pathname);
  if (url.pathname === '/' && a) return sendPage(res, a.body, method === 'HEAD');
  if (!a) return send(res, 404, 'text/plain; charset=utf-8', 'not found\n');
  // the page is never stored; the rest is named by its content
  const cache =
    url.pathname === '/'
      ? 'no-store'
      : url.pathname.startsWith('/ui-chunk-') || url.searchParams.get('v') === a.etag.slice(1, -1)
        ? 'private, max-age=31536000, immutable'
        : 'no-cache';
  if (req.headers['if-none-match'] === a.etag)
    return send(res, 304, a.type, '', { etag: a.etag, 'cache-control': cache });
  return send(res, 200, a.type, method === 'HEAD' ? '' : a.body, {
    etag: a.etag,
    'cache-control': cache,
  });
}

/** Listens on 127.0.0.1 (port 0: a free one); a port in use or not allowed is one line (E_IO). */
async function listen(server: Server, port: number | undefined): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      reject(
        e.code === 'EADDRINUSE'
          ? err('E_IO', `port ${port} is in use`, 'pass another --port, or --port 0 for a free one')
          : e.code === 'EACCES'
            ? err('E_IO', `port ${port} is not allowed here`, 'pass a port above 1023, or --port 0')
            : err('E_IO', `cannot listen on 127.0.0.1:${port}: ${e.code ?? e.message}`),
      );
    };
    server.once('error', onError);
    server.listen(port ?? 0, '127.0.0.1', () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** Marks the stores long-lived, as the MCP server does (before their writers start). */
function serverStore(s: Store): Store {
  s.reflogMessage = 'mem: ui server';
  s.longLived = true;
  return s;
}

export async function startUi(env: UiEnv, opts: UiOptions = {}): Promise<UiServer> {
  serverStore(env.store);
  if (env.global) serverStore(env.global);
  const token = opts.token ?? newToken();
  const { files: assets, keyed } = loadAssets(opts.assets ?? defaultAssets(), token);
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const codes = new Set<string>();
  const gate = { token, port: 0, codes };
  let printed = '';
  const link = () => {
    const code = newCode();
    codes.add(code);
    return { code, url: `http://127.0.0.1:${gate.port}/?code=${code}` };
  };
  let warmSoon = (_ms: number) => {};

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const coop = openerPolicy(req);
    if (coop) res.setHeader('cross-origin-opener-policy', coop);
    const verdict = checkRequest(gate, req);
    if (!verdict.ok) {
      req.resume();
      return send(res, verdict.status, 'text/plain; charset=utf-8', `git-mem ui: ${verdict.reason}\n`, {
        'cache-control': 'no-store',
      });
    }
    if (verdict.code !== undefined) {
      // a one-time link: spent now, and its page holds the key
      req.resume();
      codes.delete(verdict.code);
      if (verdict.code === printed) {
        const next = link();
        printed = next.code;
        opts.onSpent?.(next.url);
      }
      return sendPage(res, keyed, false);
    }
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const method = (req.method ?? 'GET').toUpperCase();
    if (url.pathname.startsWith('/api/')) {
      const r = route(method === 'HEAD' ? 'GET' : method, url.pathname);
      if ('status' in r) {
        req.resume();
        return sendJson(res, r.status, {
          error:
            r.status === 400
              ? { code: 'E_INVALID_ARG', message: `${url.pathname} holds a malformed %-escape` }
              : { code: 'E_NOT_FOUND', message: `no ${method} ${url.pathname}` },
        } satisfies ErrorAnswer);
      }
      try {
        if (method !== 'POST') req.resume();
        const body = method === 'POST' ? await readBody(req) : {};
        const api: ApiRequest = { method, path: url.pathname, query: url.searchParams, body };
        sendJson(res, 200, (await r.handler(env, r.params, api)) ?? null);
        if (url.pathname === '/api/memories') warmSoon(WARM_IDLE_MS);
        return;
      } catch (e) {
        const ge = asGitMemError(e);
        if (ge) return sendJson(res, statusOf(ge), ge.toJSON());
        log(`git-mem ui: internal error on ${method} ${url.pathname}: ${(e as Error)?.stack ?? e}`);
        return sendJson(res, 500, {
          error: { code: 'E_INTERNAL', message: `internal error: ${(e as Error)?.message ?? String(e)}` },
        } satisfies ErrorAnswer);
      }
    }
    req.resume();
    return serveAsset(req, res, method, url, assets, sendPage);
  };

  // The page: its head at once (the browser asks for the script and styles while the rest
  // comes), then the answers to its first requests, then its end. Made per request, never stored.
  const sendPage = async (res: ServerResponse, page: Buffer, head: boolean) => {
    const html = page.toString('utf8');
    const at = html.indexOf(FIRST_MARK);
    res.writeHead(200, {
      ...COMMON,
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
    });
    if (head) return res.end();
    if (at < 0) return res.end(page);
    res.write(html.slice(0, at));
    const first = await firstAnswers(env);
    if ('memories?page=1&size=50' in first) warmSoon(WARM_IDLE_MS);
    res.end(
      `<script type="application/json" id="git-mem-first">${jsonForScript(first)}</script>${html.slice(at + FIRST_MARK.length)}`,
    );
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e) => {
      log(`git-mem ui: ${(e as Error)?.stack ?? e}`);
      if (!res.headersSent) send(res, 500, 'text/plain; charset=utf-8', 'internal error\n');
      else res.destroy();
    });
  });
  server.keepAliveTimeout = 5000;
  await listen(server, opts.port);
  const port = (server.address() as AddressInfo).port;
  gate.port = port;
  const first = link();
  printed = first.code;
  // The search index is readied (./search.ts) once the list of memories has been answered: the
  // first page never waits behind it, and the reader of that page has not typed yet. (A search
  // asked first, from elsewhere, readies it itself.)
  let warming = false;
  warmSoon = (ms: number) => {
    if (warming) return;
    warming = true;
    setTimeout(() => void warmSearch(env).catch(() => {}), ms).unref();
  };

  return {
    url: first.url,
    port,
    token,
    link: () => link().url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
