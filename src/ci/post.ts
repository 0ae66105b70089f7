/**
 * Keeps one comment up to date on a pull request (GitHub) or merge request
 * (GitLab): the comments are listed (every page, following the `Link`
 * header), the one whose body starts with the marker is edited, and a new
 * one is posted only when there is none. So a pull request carries one
 * git-mem comment however many times CI runs.
 *
 * The providers differ only in data — where the API is, which environment
 * variables name the token and the request, the header the token goes in,
 * the verb that edits — so they are rows of one table, not two clients.
 * Plain `fetch`; the token is sent in a header and never printed.
 */
import { readFileSync } from 'node:fs';
import { err, isGitMemError } from '../errors.js';
import { MARKER } from './comment.js';

export const PROVIDERS = ['github', 'gitlab'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** Where one comment thread is, and how to reach it. */
interface Target {
  api: string;
  token: string;
  /** e.g. "pull request #12 of acme/app" */
  what: string;
  /** the comments, first page */
  list: string;
  /** POST here to add one */
  create: string;
  /** the URL that edits comment `id` */
  update: (id: number) => string;
}

interface Provider {
  label: string;
  /** the environment variable that names the API, for error hints */
  apiVar: string;
  edit: 'PATCH' | 'PUT';
  target(env: NodeJS.ProcessEnv): Target;
  headers(token: string): Record<string, string>;
  /** comments the poster may take as its own (GitLab lists system notes too) */
  mine(c: ApiComment): boolean;
  /** the fix for a 403 */
  forbidden: string;
}

interface ApiComment {
  id: number;
  body?: string;
  system?: boolean;
  html_url?: string;
}

const need = (env: NodeJS.ProcessEnv, name: string, hint: string): string => {
  const v = env[name]?.trim();
  if (!v) throw err('E_INVALID_ARG', `${name} is not set`, hint);
  return v;
};

/** The pull request number of a GitHub Actions event (pull_request, pull_request_target, issue_comment). */
function githubPullNumber(env: NodeJS.ProcessEnv): number {
  const file = need(env, 'GITHUB_EVENT_PATH', 'run in a GitHub Actions job triggered by pull_request');
  let ev: {
    number?: unknown;
    pull_request?: { number?: unknown };
    issue?: { number?: unknown; pull_request?: unknown };
  };
  try {
    ev = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw err(
      'E_INVALID_ARG',
      `cannot read the event payload GITHUB_EVENT_PATH: ${(e as Error).message.split('\n')[0]}`,
      'run in a GitHub Actions job',
    );
  }
  const n = ev.pull_request?.number ?? (ev.issue?.pull_request ? ev.issue.number : undefined);
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1)
    throw err(
      'E_INVALID_ARG',
      'not a pull request: the event payload (GITHUB_EVENT_PATH) has no pull_request number',
      'run the job on: pull_request (or leave the comment off for other events)',
    );
  return n;
}

const TABLE: Record<ProviderName, Provider> = {
  github: {
    label: 'GitHub',
    apiVar: 'GITHUB_API_URL',
    edit: 'PATCH',
    target(env) {
      const token = env.GITHUB_TOKEN?.trim() || env.GH_TOKEN?.trim();
      if (!token)
        throw err(
          'E_INVALID_ARG',
          'no GitHub token: GITHUB_TOKEN is not set',
          'set GITHUB_TOKEN on the step to the workflow token, github.token (the action passes its github-token input)',
        );
      const repo = need(env, 'GITHUB_REPOSITORY', 'set it to OWNER/NAME (GitHub Actions sets it)');
      if (!/^[\w.-]+\/[\w.-]+$/.test(repo))
        throw err('E_INVALID_ARG', `GITHUB_REPOSITORY "${repo}" is not OWNER/NAME`, 'GitHub Actions sets it');
      const n = githubPullNumber(env);
      const api = (env.GITHUB_API_URL?.trim() || 'https://api.github.com').replace(/\/+$/, '');
      const base = `${api}/repos/${repo}/issues`;
      return {
        api,
        token,
        what: `pull request #${n} of ${repo}`,
        list: `${base}/${n}/comments?per_page=100`,
        create: `${base}/${n}/comments`,
        update: (id) => `${base}/comments/${id}`,
      };
    },
    headers: (token) => ({
      authorization: `Bearer ${token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
    }),
    mine: () => true,
    forbidden:
      "the token may not comment: a pull request from a fork gets a read-only GITHUB_TOKEN, and a workflow needs permissions: pull-requests: write; the check itself still ran (see docs/ci.md, 'Pull requests from forks')",
  },
  gitlab: {
    label: 'GitLab',
    apiVar: 'CI_API_V4_URL',
    edit: 'PUT',
    target(env) {
      const token = env.GITLAB_TOKEN?.trim();
      if (!token)
        throw err(
          'E_INVALID_ARG',
          'no GitLab token: GITLAB_TOKEN is not set',
          'add a project access token (api scope, Reporter role) as a masked CI/CD variable GITLAB_TOKEN; CI_JOB_TOKEN cannot post notes',
        );
      const project = need(env, 'CI_PROJECT_ID', 'run in a GitLab CI job (it sets CI_PROJECT_ID)');
      const iid = need(
        env,
        'CI_MERGE_REQUEST_IID',
        'run the job in merge request pipelines: rules: - if: $CI_PIPELINE_SOURCE == "merge_request_event"',
      );
      if (!/^\d+$/.test(iid))
        throw err('E_INVALID_ARG', `CI_MERGE_REQUEST_IID "${iid}" is not a number`, 'GitLab CI sets it');
      const api = (env.CI_API_V4_URL?.trim() || 'https://gitlab.com/api/v4').replace(/\/+$/, '');
      const base = `${api}/projects/${encodeURIComponent(project)}/merge_requests/${iid}/notes`;
      return {
        api,
        token,
        what: `merge request !${iid} of project ${project}`,
        list: `${base}?per_page=100&sort=asc&order_by=created_at`,
        create: base,
        update: (id) => `${base}/${id}`,
      };
    },
    headers: (token) => ({ 'private-token': token, accept: 'application/json' }),
    mine: (c) => !c.system,
    forbidden:
      'the token may not post notes: use a project access token with the api scope and at least the Reporter role (CI_JOB_TOKEN cannot)',
  },
};

export function isProvider(s: string): s is ProviderName {
  return (PROVIDERS as readonly string[]).includes(s);
}

/** The URL of rel="next" in a `Link` header, if any. */
export function nextLink(link: string | null): string | null {
  if (!link) return null;
  for (const part of link.split(',')) {
    const m = /<([^>]+)>\s*;(.*)/.exec(part.trim());
    if (m && /\brel="?next"?/.test(m[2])) return m[1];
  }
  return null;
}

const MAX_PAGES = 200;
const TIMEOUT_MS = 30_000;

/** When a rate limit lifts, from the headers GitHub and GitLab send. */
function resetAt(h: Headers): string | null {
  const retry = Number(h.get('retry-after'));
  if (retry > 0) return `in ${retry} s`;
  const reset = Number(h.get('x-ratelimit-reset') ?? h.get('ratelimit-reset'));
  if (reset > 0) return `at ${new Date(reset * 1000).toISOString().slice(11, 16)} UTC`;
  return null;
}

class Client {
  constructor(
    private p: Provider,
    private t: Target,
  ) {}

  /** One request; every failure becomes one line naming the problem and the fix. */
  async call(method: string, url: string, body?: unknown): Promise<{ data: unknown; headers: Headers }> {
    const { p, t } = this;
    // the token goes only where the API is (a Link header could name another host)
    if (new URL(url).origin !== new URL(t.api).origin)
      throw err(
        'E_REMOTE',
        `${p.label} sent a link to another host (${new URL(url).origin})`,
        'not followed',
      );
    const path = new URL(url).pathname;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          ...p.headers(t.token),
          'user-agent': 'git-mem',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (e) {
      const c = (e as { cause?: { code?: string; message?: string } }).cause;
      throw err(
        'E_REMOTE',
        `cannot reach ${p.label} at ${new URL(t.api).origin}: ${c?.code ?? c?.message ?? (e as Error).message}`,
        `check ${p.apiVar} and the network`,
      );
    }
    const text = await res.text();
    let data: unknown = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = null;
    }
    if (res.ok) return { data, headers: res.headers };
    const said =
      (data as { message?: unknown; error?: unknown } | null)?.message ??
      (data as { error?: unknown })?.error;
    const msg = said
      ? `: ${String(typeof said === 'string' ? said : JSON.stringify(said))
          .replace(/\s+/g, ' ')
          .slice(0, 200)}`
      : '';
    const where = `${method} ${path}`;
    const limited =
      res.status === 429 ||
      (res.status === 403 &&
        (res.headers.get('x-ratelimit-remaining') === '0' ||
          !!res.headers.get('retry-after') ||
          /rate limit/i.test(msg)));
    if (limited) {
      const when = resetAt(res.headers);
      throw err(
        'E_REMOTE',
        `${p.label} rate limit reached (${res.status} on ${where}${msg})`,
        when ? `run the job again ${when}` : 'run the job again later',
      );
    }
    if (res.status === 401)
      throw err(
        'E_REMOTE',
        `${p.label} rejected the token (401 on ${where}${msg})`,
        'the token is wrong, expired or revoked: give the step a valid one',
      );
    if (res.status === 403)
      throw err('E_FORBIDDEN', `${p.label} refused ${where} on ${t.what} (403${msg})`, p.forbidden);
    if (res.status === 404)
      // the comment could not be posted: exit 1, as docs/ci.md says (not 3, which a job would read as ours)
      throw err(
        'E_REMOTE',
        `${p.label} found no ${t.what} (404 on ${where}${msg})`,
        `check the repository and number the job sees, and that the token can read it (${p.label} answers 404 to a token without access)`,
      );
    throw err(
      'E_REMOTE',
      `${p.label} answered ${res.status} to ${where}${msg}`,
      res.status >= 500 ? `${p.label} had a problem: run the job again` : `report this with the job's log`,
    );
  }

  /** Every comment of the thread, page after page. */
  async list(): Promise<ApiComment[]> {
    const all: ApiComment[] = [];
    let url: string | null = this.t.list;
    for (let page = 0; url; page++) {
      if (page === MAX_PAGES)
        throw err(
          'E_REMOTE',
          `more than ${MAX_PAGES} pages of comments on ${this.t.what}`,
          'not followed further',
        );
      const { data, headers } = await this.call('GET', url);
      if (!Array.isArray(data))
        throw err('E_REMOTE', `${this.p.label} did not answer a list of comments`, `check ${this.p.apiVar}`);
      all.push(...(data as ApiComment[]));
      url = nextLink(headers.get('link'));
    }
    return all;
  }
}

export interface PostResult {
  action: 'created' | 'updated' | 'unchanged';
  id: number;
  /** the comment's page, when the API says */
  url?: string;
  /** "pull request #12 of acme/app" */
  what: string;
}

/** Redacts the token from a message, wherever it came from. */
function scrub(e: unknown, token: string | undefined): unknown {
  // (a real token is long; a short one would redact ordinary words)
  if (!token || token.length < 8 || !isGitMemError(e)) return e;
  const clean = (s?: string) => s?.split(token).join('***');
  if (!e.message.includes(token) && !e.hint?.includes(token)) return e;
  return err(e.code, clean(e.message)!, clean(e.hint));
}

/** Where the comment goes, read from the environment. */
export interface CommentTarget {
  provider: ProviderName;
  target: Target;
}

/** Reads what the provider needs from the environment, before any work: a job set up wrong fails at once, in one line. */
export function commentTarget(provider: ProviderName, env: NodeJS.ProcessEnv): CommentTarget {
  return { provider, target: TABLE[provider].target(env) };
}

/**
 * Creates the comment that starts with MARKER, or edits it: one comment per
 * pull request, however many runs. `body` must start with MARKER.
 */
export async function upsertComment(to: CommentTarget, body: string): Promise<PostResult> {
  if (!body.startsWith(MARKER))
    throw err('E_INVALID_ARG', 'a comment body must start with the git-mem marker');
  const p = TABLE[to.provider];
  const t = to.target;
  const c = new Client(p, t);
  try {
    const existing = (await c.list()).find(
      (x) => p.mine(x) && typeof x.body === 'string' && x.body.trimStart().startsWith(MARKER),
    );
    if (existing && existing.body === body)
      return { action: 'unchanged', id: existing.id, url: existing.html_url, what: t.what };
    const { data } = existing
      ? await c.call(p.edit, t.update(existing.id), { body })
      : await c.call('POST', t.create, { body });
    const d = data as ApiComment | null;
    return {
      action: existing ? 'updated' : 'created',
      id: d?.id ?? existing?.id ?? 0,
      url: d?.html_url,
      what: t.what,
    };
  } catch (e) {
    throw scrub(e, t.token);
  }
}
