/**
 * action.yml run as GitHub runs a composite action: each `run:` step in order,
 * with `bash --noprofile --norc -eo pipefail {0}`, its `${{ }}` expressions
 * substituted from the inputs and the `github` context (an expression this
 * runner does not know fails the test), `if:` evaluated, and the runner's
 * environment: GITHUB_ACTION_PATH (a clean clone of this repository's committed
 * HEAD: no dist/, no node_modules, as `uses: OWNER/git-mem@v0` checks out a tag),
 * RUNNER_TEMP, GITHUB_EVENT_PATH (a real pull_request payload), GITHUB_API_URL
 * (a server on 127.0.0.1 answering GitHub's REST wire format for issue comments).
 * The workspace is a full clone of a bare remote that holds main, the pull
 * request's branch and refs/mem/memory.
 *
 * npm is the real npm, offline (npm_config_offline): `npm ci` installs the lock
 * file's packages from npm's cache, which CI's own `npm ci` fills (.ci/run) — no
 * network, and the exact tarballs the lock names, as on a runner. `npm install -g`
 * goes to a temp prefix on PATH, like setup-node's. A `uses:` step (the SARIF
 * upload) is recorded with its evaluated inputs, not run.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { MARKER } from '../src/ci/comment.js';
import { makeRepo, ROOT, type TestRepo, tmpDir } from './helpers.js';
import { bareRemote, type Remote } from './sync-helpers.js';

const TOKEN = 'ghs_ActionTestToken0123456789abcdef';
const OWNER_REPO = 'acme/app';
const PR = 17;

interface Comment {
  id: number;
  body: string;
  created_at: string;
  updated_at: string;
}

/** GitHub's REST API for one pull request's issue comments, as api.github.com answers them. */
class GitHub {
  server!: Server;
  url = '';
  comments: Comment[] = [];
  requests: Array<{ method: string; path: string; accept?: string; version?: string }> = [];
  perPage = 2;
  private next = 9000;

  async start() {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  add(body: string): Comment {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    const c = { id: this.next++, body, created_at: now, updated_at: now };
    this.comments.push(c);
    return c;
  }

  private send(res: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'x-github-media-type': 'github.v3; format=json',
      'x-github-api-version-selected': '2022-11-28',
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': '4990',
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
      'x-ratelimit-resource': 'core',
      ...headers,
    });
    res.end(JSON.stringify(data));
  }

  private json(c: Comment) {
    return {
      url: `${this.url}/repos/${OWNER_REPO}/issues/comments/${c.id}`,
      html_url: `https://github.com/${OWNER_REPO}/pull/${PR}#issuecomment-${c.id}`,
      issue_url: `${this.url}/repos/${OWNER_REPO}/issues/${PR}`,
      id: c.id,
      node_id: `IC_kwDO${c.id}`,
      user: { login: 'github-actions[bot]', id: 41898282, type: 'Bot' },
      created_at: c.created_at,
      updated_at: c.updated_at,
      author_association: 'NONE',
      body: c.body,
      reactions: { url: `${this.url}/repos/${OWNER_REPO}/issues/comments/${c.id}/reactions`, total_count: 0 },
      performed_via_github_app: { id: 15368, slug: 'github-actions' },
    };
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const u = new URL(req.url ?? '/', this.url);
    this.requests.push({
      method: req.method ?? '',
      path: u.pathname + u.search,
      accept: req.headers.accept,
      version: req.headers['x-github-api-version'] as string | undefined,
    });
    let raw = '';
    for await (const c of req) raw += c;
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return this.send(res, 401, {
        message: 'Bad credentials',
        documentation_url: 'https://docs.github.com/rest',
        status: '401',
      });
    if (!req.headers['user-agent'])
      return this.send(res, 403, { message: 'Request forbidden by administrative rules.' });
    const list = u.pathname === `/repos/${OWNER_REPO}/issues/${PR}/comments`;
    const one = new RegExp(`^/repos/${OWNER_REPO}/issues/comments/(\\d+)$`).exec(u.pathname);
    if (list && req.method === 'GET') {
      const per = Math.min(Number(u.searchParams.get('per_page') ?? 30), this.perPage);
      const page = Number(u.searchParams.get('page') ?? 1);
      const last = Math.max(1, Math.ceil(this.comments.length / per));
      const at = (p: number) => {
        const v = new URL(u);
        v.searchParams.set('page', String(p));
        return `<${v}>`;
      };
      const links = [
        ...(page < last ? [`${at(page + 1)}; rel="next"`, `${at(last)}; rel="last"`] : []),
        ...(page > 1 ? [`${at(1)}; rel="first"`, `${at(page - 1)}; rel="prev"`] : []),
      ];
      const slice = this.comments.slice((page - 1) * per, page * per).map((c) => this.json(c));
      return this.send(res, 200, slice, links.length ? { link: links.join(', ') } : {});
    }
    if ((list && req.method === 'POST') || (one && req.method === 'PATCH')) {
      const body = JSON.parse(raw || '{}').body;
      if (typeof body !== 'string')
        return this.send(res, 422, {
          message: 'Invalid request.\n\nNo subschema in "anyOf" matched.',
          documentation_url: 'https://docs.github.com/rest/issues/comments',
          status: '422',
        });
      if (list) return this.send(res, 201, this.json(this.add(body)));
      const c = this.comments.find((x) => x.id === Number(one?.[1]));
      if (!c) return this.send(res, 404, { message: 'Not Found', status: '404' });
      c.body = body;
      c.updated_at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      return this.send(res, 200, this.json(c));
    }
    this.send(res, 404, {
      message: 'Not Found',
      documentation_url: 'https://docs.github.com/rest',
      status: '404',
    });
  }
}

// ------------------------------------------------------------------ the runner

type Ctx = { inputs: Record<string, string>; github: Record<string, unknown> };

/** A value of the `github` or `inputs` context, as a path. Only what action.yml uses. */
function lookup(path: string, ctx: Ctx): unknown {
  const [head, ...rest] = path.split('.');
  if (head === 'inputs') {
    if (rest.length !== 1 || !(rest[0] in ctx.inputs)) throw new Error(`unknown input in \${{ ${path} }}`);
    return ctx.inputs[rest[0]];
  }
  if (head === 'github') {
    const known = ['token', 'action_path', 'event', 'repository', 'workspace', 'sha'];
    if (!known.includes(rest[0])) throw new Error(`this runner does not know \${{ ${path} }}`);
    let v: unknown = ctx.github;
    for (const k of rest) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
    return v ?? null;
  }
  throw new Error(`this runner does not know the context of \${{ ${path} }}`);
}

const truthy = (v: unknown) => v !== null && v !== undefined && v !== '' && v !== false && v !== 0;
const str = (v: unknown) => (v === null || v === undefined ? '' : String(v));

/**
 * GitHub's expression language, the part action.yml uses: context paths, '…'
 * literals, ==, != (strings compare case-insensitively), && and || (the first
 * truthy / falsy operand, as GitHub returns it). Anything else throws.
 */
function evaluate(expr: string, ctx: Ctx): unknown {
  const tokens = expr.match(/'(?:[^']|'')*'|\|\||&&|[!=]=|[A-Za-z_][\w.-]*|\S/g) ?? [];
  let i = 0;
  const primary = (): unknown => {
    const t = tokens[i++];
    if (t === undefined) throw new Error(`expression ends early: ${expr}`);
    if (t.startsWith("'")) return t.slice(1, -1).replace(/''/g, "'");
    if (/^[A-Za-z_]/.test(t)) return lookup(t, ctx);
    throw new Error(`this runner does not know "${t}" in \${{ ${expr} }}`);
  };
  const equality = (): unknown => {
    let a = primary();
    while (tokens[i] === '==' || tokens[i] === '!=') {
      const op = tokens[i++];
      const b = primary();
      const eq = str(a).toLowerCase() === str(b).toLowerCase();
      a = op === '==' ? eq : !eq;
    }
    return a;
  };
  const and = (): unknown => {
    let a = equality();
    while (tokens[i] === '&&') {
      i++;
      const b = equality();
      a = truthy(a) ? b : a;
    }
    return a;
  };
  const or = (): unknown => {
    let a = and();
    while (tokens[i] === '||') {
      i++;
      const b = and();
      a = truthy(a) ? a : b;
    }
    return a;
  };
  const v = or();
  if (i !== tokens.length) throw new Error(`this runner does not know "${tokens[i]}" in \${{ ${expr} }}`);
  return v;
}

/** `${{ … }}` in a string replaced by their values. */
const substitute = (s: string, ctx: Ctx) =>
  s.replace(/\$\{\{(.*?)\}\}/gs, (_m, e: string) => str(evaluate(e, ctx)));

interface StepRun {
  name: string;
  code: number | null;
  stdout: string;
  stderr: string;
  uses?: { action: string; with: Record<string, string> };
  skipped?: boolean;
}

interface Job {
  steps: StepRun[];
  /** the exit status of the step that ended the job (0 when every step passed) */
  code: number;
  out: string;
}

function runStep(script: string, cwd: string, env: NodeJS.ProcessEnv): Promise<StepRun> {
  const file = join(
    env.RUNNER_TEMP as string,
    `step-${Date.now()}-${Math.random().toString(36).slice(2)}.sh`,
  );
  writeFileSync(file, script);
  return new Promise((res) => {
    const c = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', file], { cwd, env });
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('close', (code) => res({ name: '', code, stdout, stderr }));
  });
}

/** Runs action.yml of `actionPath` as the job step `uses: OWNER/git-mem@v0` with `with`. */
async function runAction(o: {
  actionPath: string;
  with: Record<string, string>;
  event: Record<string, unknown>;
  workspace: string;
  env: NodeJS.ProcessEnv;
}): Promise<Job> {
  const action = parseYaml(readFileSync(join(o.actionPath, 'action.yml'), 'utf8'));
  expect(action.runs.using).toBe('composite');
  const runnerTemp = tmpDir('gm-runner-temp-');
  const eventPath = join(tmpDir('gm-event-'), 'event.json');
  writeFileSync(eventPath, JSON.stringify(o.event));
  const github = {
    token: TOKEN,
    action_path: o.actionPath,
    event: o.event,
    repository: OWNER_REPO,
    workspace: o.workspace,
    sha: (o.event.pull_request as { head: { sha: string } }).head.sha,
  };
  // the inputs: given ones, else the defaults (a default may hold an expression: ${{ github.token }})
  const inputs: Record<string, string> = {};
  for (const k of Object.keys(o.with))
    if (!(k in action.inputs)) throw new Error(`action.yml has no input "${k}"`);
  for (const [k, v] of Object.entries(action.inputs as Record<string, { default?: string }>))
    inputs[k] = k in o.with ? o.with[k] : substitute(String(v.default ?? ''), { inputs: {}, github });
  const ctx: Ctx = { inputs, github };
  const env: NodeJS.ProcessEnv = {
    ...o.env,
    CI: 'true',
    GITHUB_ACTIONS: 'true',
    GITHUB_ACTION_PATH: o.actionPath,
    GITHUB_WORKSPACE: o.workspace,
    GITHUB_EVENT_NAME: 'pull_request',
    GITHUB_EVENT_PATH: eventPath,
    GITHUB_REPOSITORY: OWNER_REPO,
    GITHUB_SERVER_URL: 'https://github.com',
    GITHUB_API_URL: o.env.GITHUB_API_URL,
    GITHUB_SHA: github.sha,
    RUNNER_TEMP: runnerTemp,
  };
  const steps: StepRun[] = [];
  let code = 0;
  for (const s of action.runs.steps as Array<Record<string, unknown>>) {
    const name = String(s.name ?? s.uses ?? s.run);
    // `if:` (default success()): a step after a failed one does not run
    if (code !== 0 || (s.if !== undefined && !truthy(evaluate(String(s.if), ctx)))) {
      steps.push({ name, code: null, stdout: '', stderr: '', skipped: true });
      continue;
    }
    if (s.uses) {
      const w = Object.fromEntries(
        Object.entries((s.with ?? {}) as Record<string, string>).map(([k, v]) => [
          k,
          substitute(String(v), ctx),
        ]),
      );
      steps.push({ name, code: 0, stdout: '', stderr: '', uses: { action: String(s.uses), with: w } });
      continue;
    }
    expect(s.shell, `step "${name}"`).toBe('bash');
    const stepEnv = { ...env };
    for (const [k, v] of Object.entries((s.env ?? {}) as Record<string, string>))
      stepEnv[k] = substitute(String(v), ctx);
    const r = await runStep(substitute(String(s.run), ctx), o.workspace, stepEnv);
    steps.push({ ...r, name });
    code = r.code ?? 1;
  }
  const out = steps
    .map((s) => `--- ${s.name} (${s.skipped ? 'skipped' : s.code})\n${s.stdout}${s.stderr}`)
    .join('\n');
  return { steps, code, out };
}

// ------------------------------------------------------------------ the pull request

const SRC = [
  'def alpha(x):',
  '    y = x * 2',
  '    return y + 1',
  '',
  'def beta():',
  "    return 'b'",
  '',
].join('\n');

let gh: GitHub;
let remote: Remote;
let dev: TestRepo;
let actionPath: string;
let npmEnv: NodeJS.ProcessEnv;
let memoryId: string;

/** The pull_request event GitHub writes to GITHUB_EVENT_PATH for a push to the pull request. */
function prEvent(base: string, head: string, action: 'opened' | 'synchronize'): Record<string, unknown> {
  const repo = {
    id: 4242,
    name: 'app',
    full_name: OWNER_REPO,
    owner: { login: 'acme', type: 'Organization' },
    private: false,
    html_url: `https://github.com/${OWNER_REPO}`,
    default_branch: 'main',
  };
  return {
    action,
    number: PR,
    ...(action === 'synchronize' ? { before: base, after: head } : {}),
    pull_request: {
      url: `https://api.github.com/repos/${OWNER_REPO}/pulls/${PR}`,
      id: 1_900_000_017,
      number: PR,
      state: 'open',
      title: 'alpha triples',
      user: { login: 'octocat', type: 'User' },
      head: { label: 'acme:feature', ref: 'feature', sha: head, repo },
      base: { label: 'acme:main', ref: 'main', sha: base, repo },
      draft: false,
    },
    repository: repo,
    sender: { login: 'octocat', type: 'User' },
  };
}

/** A pushed commit on the pull request's branch, and the workspace actions/checkout (fetch-depth: 0) makes of it. */
function push(content: string, msg: string): { head: string; workspace: string } {
  dev.write('src/m.py', content);
  const head = dev.commitAll(msg);
  dev.git('push', '-q', 'origin', 'feature');
  const workspace = join(tmpDir('gm-workspace-'), 'app');
  execFileSync('git', ['clone', '-q', '--no-checkout', remote.url, workspace], { env: dev.env });
  execFileSync('git', ['checkout', '-q', '--detach', head], { cwd: workspace, env: dev.env });
  return { head, workspace };
}

beforeAll(async () => {
  gh = new GitHub();
  await gh.start();
  // others' comments come first: the action's comment is found past the first page
  gh.add('LGTM');
  gh.add('please rebase');
  gh.add('quoting <!-- git-mem:ci --> is not the marker');
  remote = bareRemote();
  dev = makeRepo();
  dev.write('src/m.py', SRC);
  dev.commitAll('init');
  dev.git('remote', 'add', 'origin', remote.url);
  await dev.memJson(['init']);
  memoryId = (
    await dev.memJson([
      'add',
      '--title',
      'alpha doubles',
      '--content',
      'x * 2, then one',
      '--anchor',
      'src/m.py:1-3',
    ])
  ).id;
  dev.git('push', '-q', 'origin', 'main', 'refs/memory:refs/mem/memory');
  dev.git('checkout', '-q', '-b', 'feature');
  // the action as `uses: OWNER/git-mem@v0` gets it: a clean checkout of committed files
  actionPath = join(tmpDir('gm-actions-'), 'git-mem');
  execFileSync('git', ['clone', '-q', '--no-hardlinks', ROOT, actionPath]);
  // npm as on a runner, offline: the lock file's tarballs from npm's cache, -g into a prefix on PATH
  const cache = execFileSync('npm', ['config', 'get', 'cache'], { encoding: 'utf8' }).trim();
  const prefix = tmpDir('gm-npm-prefix-');
  npmEnv = {
    ...dev.env,
    // no git-mem of this checkout on PATH: only the one the action installs
    PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH ?? ''}`,
    npm_config_cache: cache,
    npm_config_offline: 'true',
    npm_config_prefix: prefix,
    npm_config_update_notifier: 'false',
    GITHUB_API_URL: gh.url,
  };
  mkdirSync(join(prefix, 'bin'), { recursive: true });
});

afterAll(() => gh?.server.close());

describe('action.yml, run as GitHub runs it', () => {
  it('installs from a clean checkout, comments once and edits it on the next push, writes SARIF, exits by fail-on', async () => {
    expect(existsSync(join(actionPath, 'dist'))).toBe(false);
    expect(existsSync(join(actionPath, 'node_modules'))).toBe(false);
    const which = () =>
      execFileSync('bash', ['-c', 'command -v git-mem || true'], { env: npmEnv, encoding: 'utf8' }).trim();
    const base = dev.git('rev-parse', 'main').trim();

    // push 1: the anchored lines are edited: the memory goes stale
    const p1 = push(SRC.replace('x * 2', 'x * 3'), 'alpha triples');
    const run1 = await runAction({
      actionPath,
      with: { 'fail-on': 'stale', sarif: 'git-mem.sarif' },
      event: prEvent(base, p1.head, 'opened'),
      workspace: p1.workspace,
      env: npmEnv,
    });
    const names = run1.steps.map((s) => [s.name, s.skipped ? 'skipped' : s.code]);
    expect(names, run1.out).toEqual([
      ['Install git-mem', 0],
      ['Fetch the memory and the base', 0],
      ['SARIF report', 0],
      ['Upload SARIF', 0],
      ['git mem ci', 1], // fail-on stale: the job fails
    ]);
    expect(which()).toBe(join(String(npmEnv.npm_config_prefix), 'bin', 'git-mem'));
    expect(existsSync(join(actionPath, 'dist', 'cli.js'))).toBe(true); // built in the action's folder
    // with the runtime's packages and the build's (web/package.json), not a contributor's tools
    for (const [pkg, there] of [
      ['esbuild', true],
      ['preact', true],
      ['yaml', true],
      ['@biomejs', false],
      ['typescript', false],
      ['vitest', false],
    ] as const)
      expect(existsSync(join(actionPath, 'node_modules', pkg)), pkg).toBe(there);
    expect(run1.steps[0].stdout, run1.out).toMatch(/^git-mem \d+\.\d+\.\d+/m);
    expect(run1.steps[3].uses?.with).toEqual({ sarif_file: 'git-mem.sarif', category: 'git-mem' });
    expect(run1.steps[4].stdout, run1.out).toMatch(/^::warning file=src\/m.py,line=1,endLine=3,/m);
    // the SARIF: the stale memory, and the run names the repository and the head
    const sarif = JSON.parse(readFileSync(join(p1.workspace, 'git-mem.sarif'), 'utf8'));
    expect(sarif.runs[0].results.map((r: { ruleId: string }) => r.ruleId)).toEqual(['git-mem/changed']);
    expect(sarif.runs[0].results[0].properties.memoryId).toBe(memoryId);
    expect(sarif.runs[0].versionControlProvenance).toEqual([
      { repositoryUri: `https://github.com/${OWNER_REPO}`, revisionId: p1.head },
    ]);
    // the comment: listed page by page (others' comments first), then created
    const writes1 = gh.requests.filter((q) => q.method !== 'GET');
    expect(writes1.map((q) => `${q.method} ${q.path}`)).toEqual([
      `POST /repos/${OWNER_REPO}/issues/${PR}/comments`,
    ]);
    expect(
      gh.requests.every((q) => q.accept === 'application/vnd.github+json' && q.version === '2022-11-28'),
    ).toBe(true);
    expect(gh.comments).toHaveLength(4);
    const mine = gh.comments[3];
    expect(mine.body.startsWith(MARKER)).toBe(true);
    expect(mine.body).toContain(`\`${memoryId.slice(0, 12)}\` **alpha doubles**`);
    expect(mine.body).toContain(p1.head.slice(0, 12));

    // push 2 undoes the edit: the same comment is edited to all fresh, and the job passes.
    // The runner reuses the action's folder (dist/ built now): its install takes the other branch.
    gh.requests = [];
    const p2 = push(SRC, 'alpha doubles again');
    const run2 = await runAction({
      actionPath,
      with: {},
      event: prEvent(base, p2.head, 'synchronize'),
      workspace: p2.workspace,
      env: npmEnv,
    });
    expect(
      run2.steps.map((s) => [s.name, s.skipped ? 'skipped' : s.code]),
      run2.out,
    ).toEqual([
      ['Install git-mem', 0],
      ['Fetch the memory and the base', 0],
      ['SARIF report', 'skipped'],
      ['Upload SARIF', 'skipped'],
      ['git mem ci', 0],
    ]);
    expect(run2.code).toBe(0);
    // that install took the runtime dependencies only: git-mem ran without the build's packages
    expect(existsSync(join(actionPath, 'node_modules', 'preact'))).toBe(false);
    expect(existsSync(join(actionPath, 'node_modules', 'yaml'))).toBe(true);
    const lists = gh.requests.filter((q) => q.method === 'GET').map((q) => q.path);
    expect(lists[0]).toBe(`/repos/${OWNER_REPO}/issues/${PR}/comments?per_page=100`);
    expect(lists.length).toBe(2); // the marker comment is on the second page
    expect(gh.requests.filter((q) => q.method !== 'GET').map((q) => `${q.method} ${q.path}`)).toEqual([
      `PATCH /repos/${OWNER_REPO}/issues/comments/${mine.id}`,
    ]);
    expect(gh.comments).toHaveLength(4);
    expect(gh.comments[3].body).toContain('All fresh');
    expect(gh.comments[3].body).toContain(p2.head.slice(0, 12));

    // push 3 edits it again under fail-on never (git-mem already on PATH): reported, the job passes
    gh.requests = [];
    const p3 = push(SRC.replace('x * 2', 'x * 4'), 'alpha quadruples');
    const run3 = await runAction({
      actionPath,
      with: { version: 'installed', 'fail-on': 'never' },
      event: prEvent(base, p3.head, 'synchronize'),
      workspace: p3.workspace,
      env: npmEnv,
    });
    expect(run3.code, run3.out).toBe(0);
    expect(run3.steps[4].stdout).toMatch(/^::warning file=src\/m.py,line=1,endLine=3,/m);
    expect(gh.requests.filter((q) => q.method !== 'GET').map((q) => q.method)).toEqual(['PATCH']);
    expect(gh.comments).toHaveLength(4);
    expect(gh.comments[3].body).toContain(memoryId.slice(0, 12));

    // and fail-on any with a value it does not know: one line, exit 2
    const run4 = await runAction({
      actionPath,
      with: { version: 'installed', 'fail-on': 'sometimes' },
      event: prEvent(base, p3.head, 'synchronize'),
      workspace: p3.workspace,
      env: npmEnv,
    });
    expect(run4.code).toBe(2);
    expect(run4.steps[4].stdout).toMatch(/^::error::git-mem: fail-on is never, stale or any/m);
  }, 600_000);

  it('knows only the expressions action.yml uses', () => {
    const ctx: Ctx = { inputs: { a: '', b: 'x' }, github: { event: { pull_request: { number: 3 } } } };
    expect(evaluate('inputs.a || github.event.pull_request.number', ctx)).toBe(3);
    expect(evaluate("inputs.b != '' && inputs.b == 'X'", ctx)).toBe(true);
    expect(evaluate("inputs.a != '' && inputs.b == 'x'", ctx)).toBe(false);
    expect(() => evaluate('secrets.TOKEN', ctx)).toThrow(/does not know/);
    expect(() => evaluate('inputs.nope', ctx)).toThrow(/unknown input/);
    expect(() => evaluate("contains(inputs.b, 'x')", ctx)).toThrow(/does not know/);
    // every expression of action.yml is one this runner knows
    const text = readFileSync(join(ROOT, 'action.yml'), 'utf8');
    const action = parseYaml(text);
    const full: Ctx = {
      inputs: Object.fromEntries(Object.keys(action.inputs).map((k) => [k, ''])),
      github: { token: 't', action_path: '/a', event: {}, repository: OWNER_REPO, workspace: '/w', sha: 'h' },
    };
    for (const m of text.matchAll(/\$\{\{(.*?)\}\}/g)) evaluate(m[1], full);
    for (const s of action.runs.steps) if (s.if) evaluate(String(s.if), full);
  });
});
