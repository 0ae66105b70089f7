/**
 * Who may talk to `git mem ui`. The server listens on 127.0.0.1 only, and
 * every request must also carry the random token of this run: the printed
 * URL has it as `?token=`, which is swapped for a cookie at once (and the
 * URL redirected to one without it). Any page on the machine could send
 * requests to 127.0.0.1, so:
 *   - the Host header must name this server (a DNS-rebinding page's host does not);
 *   - every request without the token (cookie or query) is refused;
 *   - a state-changing request (anything but GET/HEAD) must carry the token in
 *     a header too, which a cross-site form or image cannot send, and its
 *     Origin, when given, must be this server (CSRF).
 * Pure: a request's method, URL and headers in, a verdict out.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

export const TOKEN_HEADER = 'x-git-mem-token';

export interface Gate {
  token: string;
  port: number;
}

export type Verdict =
  | { ok: true; setCookie?: string; redirect?: string }
  | { ok: false; status: number; reason: string };

export interface RequestLike {
  method?: string;
  url?: string;
  headers: Record<string, string | string[] | undefined>;
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The cookie's name: one per port, since cookies are shared by every port of a host. */
export function cookieName(port: number): string {
  return `git-mem-ui-${port}`;
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

function cookieOf(req: RequestLike, name: string): string | undefined {
  const raw = header(req, 'cookie');
  if (!raw) return undefined;
  for (const part of raw.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
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
  const fromQuery = url.searchParams.get('token') ?? undefined;
  const fromCookie = cookieOf(req, cookieName(gate.port));
  const safe = method === 'GET' || method === 'HEAD';
  const viaCookie = same(fromCookie, gate.token);
  // the printed URL: its token becomes a cookie, and the address bar loses it
  if (safe && fromQuery !== undefined && same(fromQuery, gate.token)) {
    url.searchParams.delete('token');
    return {
      ok: true,
      setCookie: `${cookieName(gate.port)}=${gate.token}; HttpOnly; SameSite=Strict; Path=/`,
      redirect: `${url.pathname}${url.search}`,
    };
  }
  if (!viaCookie)
    return {
      ok: false,
      status: 403,
      reason: 'no valid token: open the URL git mem ui printed (it carries the token)',
    };
  if (!safe) {
    if (!same(header(req, TOKEN_HEADER), gate.token))
      return { ok: false, status: 403, reason: `a change needs the ${TOKEN_HEADER} header (CSRF)` };
    const origin = header(req, 'origin');
    if (origin !== undefined && !allowedHosts(gate.port).some((h) => origin === `http://${h}`))
      return { ok: false, status: 403, reason: `a change from another origin (${origin}) is refused` };
    const site = header(req, 'sec-fetch-site');
    if (site !== undefined && site !== 'same-origin')
      return { ok: false, status: 403, reason: `a change from a ${site} page is refused` };
  }
  return { ok: true };
}
