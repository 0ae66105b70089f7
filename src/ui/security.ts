/**
 * Who may talk to `git mem ui`. The server listens on 127.0.0.1 only. Its key (32 random bytes
 * a run) is the API's credential, and it never travels in a cookie: a browser sends a cookie of
 * 127.0.0.1 to every port of 127.0.0.1, so any other local web server would get it. Instead:
 *   - the printed URL (and the one `--open` hands the browser, through a file) carries a
 *     one-time code, `?code=`; the page loaded with it holds the key, the code is spent, and the
 *     page keeps the key in its own storage (localStorage: per origin, port included) and drops
 *     the code from the address bar; a spent or unknown code is refused;
 *   - every API request carries the key in the `x-git-mem-token` header, which only script of
 *     the page's own origin can set, and its Origin and Sec-Fetch-Site, when given, must be this
 *     server (CSRF: a cross-site form or image can send neither);
 *   - the page without a code, and its script and styles, hold nothing secret: they are served
 *     to anyone on the machine (the page then reads the key from its storage);
 *   - the Host header must name this server (a DNS-rebinding page's host does not).
 * Pure: a request's method, URL and headers in, a verdict out.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

export const TOKEN_HEADER = 'x-git-mem-token';

export interface Gate {
  /** the API's key */
  token: string;
  port: number;
  /** the one-time codes not spent yet */
  codes: ReadonlySet<string>;
}

export type Verdict =
  | { ok: true /** a one-time code this request spends: the page it gets holds the key */; code?: string }
  | { ok: false; status: number; reason: string };

export interface RequestLike {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function newCode(): string {
  return randomBytes(18).toString('base64url');
}

/** The hosts this server answers to. */
function allowedHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

function same(a: string | undefined, b: string): boolean {
  if (typeof a !== 'string') return false;
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function header(req: RequestLike, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The Cross-Origin-Opener-Policy of a response: `same-origin` (the page gets a
 * browsing context group of its own, so no window of another origin keeps a
 * reference to it), except on a navigation the user made (`Sec-Fetch-Site:
 * none`: a link from another application, `--open`, a typed URL, a bookmark, a
 * reload). Such a tab has no opener unless some page opened it as a popup, and
 * the page cuts that one itself (web/main.tsx: it loads itself once more, a
 * navigation it starts, which gets the header). Chromium starts a second
 * renderer for a first page sent with the header: 85–145 ms of every new tab
 * here (bench/RESULTS-ui.md). A request without the header gets the policy.
 */
export function openerPolicy(req: RequestLike): string | undefined {
  return header(req, 'sec-fetch-site') === 'none' ? undefined : 'same-origin';
}

export function checkRequest(gate: Gate, req: RequestLike): Verdict {
  const host = header(req, 'host')?.toLowerCase();
  if (!host || !allowedHosts(gate.port).includes(host))
    return {
      ok: false,
      status: 403,
      reason: 'this server answers only to 127.0.0.1 and localhost (Host refused)',
    };
  const url = new URL(req.url ?? '/', `http://${host}`);
  const method = (req.method ?? 'GET').toUpperCase();
  const safe = method === 'GET' || method === 'HEAD';
  if (!url.pathname.startsWith('/api/')) {
    const code = url.searchParams.get('code');
    if (code === null || !safe) return { ok: true };
    // the link git mem ui printed (or handed the browser): once, and by GET only
    const known = method === 'GET' ? [...gate.codes].find((c) => same(code, c)) : undefined;
    if (known === undefined || url.pathname !== '/')
      return {
        ok: false,
        status: 403,
        reason: "this link was used already or is not this server's: open the newest one git mem ui printed",
      };
    return { ok: true, code: known };
  }
  if (!same(header(req, TOKEN_HEADER), gate.token))
    return {
      ok: false,
      status: 403,
      reason: `no valid key in the ${TOKEN_HEADER} header: open the link git mem ui printed`,
    };
  const origin = header(req, 'origin');
  if (origin !== undefined && !allowedHosts(gate.port).some((h) => origin === `http://${h}`))
    return { ok: false, status: 403, reason: `a request from another origin (${origin}) is refused` };
  const site = header(req, 'sec-fetch-site');
  if (site !== undefined && site !== 'same-origin')
    return { ok: false, status: 403, reason: `a request from a ${site} page is refused` };
  return { ok: true };
}
