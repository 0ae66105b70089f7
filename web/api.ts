/** The page's calls to the server: GET reads, POST changes, each with the key in the header the server asks for. */
import type { ErrorAnswer } from '../src/ui/wire';

/**
 * The API's key (src/ui/security.ts). The page a one-time link opened holds it: it is kept in
 * this origin's storage (its port included, so no other local server's page can read it) for
 * the reloads and tabs that follow, and the spent code leaves the address bar. Never a cookie:
 * the browser would send that to every port of 127.0.0.1.
 */
const KEY = 'git-mem-ui-key';
const given = document.querySelector('meta[name="git-mem-token"]')?.getAttribute('content') ?? '';
function storage(): Storage | null {
  try {
    return localStorage;
  } catch {
    return null;
  }
}
if (given) storage()?.setItem(KEY, given);
const token = given || storage()?.getItem(KEY) || '';
if (new URLSearchParams(location.search).has('code')) history.replaceState(null, '', `/${location.hash}`);

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly hint?: string,
    readonly status = 0,
  ) {
    super(message);
  }
}

async function handle<T>(res: Response): Promise<T> {
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    throw new ApiError('E_HTTP', text.trim() || `HTTP ${res.status}`, undefined, res.status);
  }
  if (!res.ok) {
    // a failure's answer (or, from something between, any JSON)
    const e: Partial<ErrorAnswer['error']> = (body as Partial<ErrorAnswer> | null)?.error ?? {};
    throw new ApiError(e.code ?? 'E_HTTP', e.message ?? `HTTP ${res.status}`, e.hint, res.status);
  }
  return body as T;
}

export type Query = Record<string, string | number | string[] | undefined | null | false>;

export function qs(q: Query): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    if (Array.isArray(v)) {
      if (v.length) p.set(k, v.join(','));
    } else p.set(k, String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/**
 * The answers the server put into the page for its first requests (src/ui/server.ts FIRST),
 * by path and query as get() asks for them. Each is taken once, by the first render only
 * (main.tsx drops the rest after it): a later visit to a page asks the server again.
 */
let first: Record<string, unknown> = {};
try {
  first = JSON.parse(document.getElementById('git-mem-first')?.textContent || '{}') ?? {};
} catch {}

/** The answer the page came with for this request, if any (once). */
export function firstAnswer<T>(path: string, q: Query = {}): T | undefined {
  const key = `${path}${qs(q)}`;
  if (!Object.hasOwn(first, key)) return undefined;
  const v = first[key] as T;
  delete first[key];
  return v;
}

/** After the first render: what it did not take is not used later (it would be out of date). */
export function dropFirstAnswers(): void {
  first = {};
}

export async function get<T>(path: string, q: Query = {}, signal?: AbortSignal): Promise<T> {
  return handle<T>(
    await fetch(`/api/${path}${qs(q)}`, {
      signal,
      credentials: 'omit',
      headers: { 'x-git-mem-token': token },
    }),
  );
}

export async function post<T>(path: string, body: unknown = {}, q: Query = {}): Promise<T> {
  return handle<T>(
    await fetch(`/api/${path}${qs(q)}`, {
      method: 'POST',
      credentials: 'omit',
      headers: { 'content-type': 'application/json', 'x-git-mem-token': token },
      body: JSON.stringify(body),
    }),
  );
}
