/**
 * `git mem ci --comment github|gitlab` and action.yml: one comment per pull
 * request, kept up to date. The forge is a small HTTP server on 127.0.0.1
 * that answers with the REST shapes GitHub and GitLab return (comment and
 * note JSON, `Link` pagination, the token checked in its header); the
 * repositories are real git repositories.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { MARKER, parseHunks } from '../src/ci/comment.js';
import { commentTarget, nextLink, upsertComment } from '../src/ci/post.js';
import { errorOf, makeRepo, ROOT, type TestRepo, tmpDir } from './helpers.js';

const TOKEN = 'ghs_TESTtokenDoNotPrint0123456789';

interface Note {
  id: number;
  body: string;
  system?: boolean;
}

/** A forge: GitHub's issue comments and GitLab's merge request notes, in memory. */
class Forge {
  server!: Server;
  url = '';
  /** thread key ("gh:7" or "gl:3") → comments, oldest first */
  threads = new Map<string, Note[]>();
  requests: string[] = [];
  /** answer writes with 403, as GitHub does to a fork's read-only token */
  readOnly = false;
  /** answer everything with GitHub's primary rate limit 403 */
  rateLimited = false;
  /** small pages, so that the marker comment is on a later one */
  perPage = 2;
  private next = 100;

  async start() {
    this.server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  seed(key: string, bodies: string[], extra: Partial<Note> = {}) {
    const t = this.threads.get(key) ?? [];
    for (const body of bodies) t.push({ id: this.next++, body, ...extra });
    this.threads.set(key, t);
  }

  private json(res: ServerResponse, status: number, data: unknown, headers: Record<string, string> = {}) {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
    res.end(JSON.stringify(data));
  }

  private page(res: ServerResponse, u: URL, list: unknown[]) {
    const per = Math.min(Number(u.searchParams.get('per_page') ?? 30), this.perPage);
    const page = Number(u.searchParams.get('page') ?? 1);
    const last = Math.max(1, Math.ceil(list.length / per));
    const at = (p: number) => {
      const v = new URL(u);
      v.searchParams.set('page', String(p));
      return `<${v}>`;
    };
    const links = [
      ...(page < last ? [`${at(page + 1)}; rel="next"`, `${at(last)}; rel="last"`] : []),
      ...(page > 1 ? [`${at(1)}; rel="first"`, `${at(page - 1)}; rel="prev"`] : []),
    ];
    this.json(
      res,
      200,
      list.slice((page - 1) * per, page * per),
      links.length ? { link: links.join(', ') } : {},
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const u = new URL(req.url ?? '/', this.url);
    this.requests.push(`${req.method} ${u.pathname}`);
    let raw = '';
    for await (const c of req) raw += c;
    const body = raw ? JSON.parse(raw) : undefined;
    const gh = /^\/api\/v3\/repos\/acme\/app\/issues\/(?:(\d+)\/comments|comments\/(\d+))$/.exec(u.pathname);
    const gl = /^\/api\/v4\/projects\/42\/merge_requests\/(\d+)\/notes(?:\/(\d+))?$/.exec(u.pathname);
    if (gh) {
      if (req.headers.authorization !== `Bearer ${TOKEN}`)
        return this.json(res, 401, {
          message: 'Bad credentials',
          documentation_url: 'https://docs.github.com/rest',
          status: '401',
        });
      if (!req.headers['user-agent'])
        return this.json(res, 403, { message: 'Request forbidden by administrative rules.' });
      if (this.rateLimited)
        return this.json(
          res,
          403,
          {
            message:
              'API rate limit exceeded for installation ID 1.\nIf you reach out to GitHub Support for help, please include the request ID.',
            documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
          },
          { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Date.UTC(2030, 0, 1, 14, 5) / 1000) },
        );
      if (req.method !== 'GET' && this.readOnly)
        return this.json(
          res,
          403,
          {
            message: 'Resource not accessible by integration',
            documentation_url: 'https://docs.github.com/rest/issues/comments#create-an-issue-comment',
            status: '403',
          },
          { 'x-ratelimit-remaining': '4999' },
        );
      const comment = (n: Note, issue: string) => ({
        id: n.id,
        node_id: `IC_${n.id}`,
        url: `${this.url}/api/v3/repos/acme/app/issues/comments/${n.id}`,
        html_url: `https://github.example/acme/app/pull/${issue}#issuecomment-${n.id}`,
        issue_url: `${this.url}/api/v3/repos/acme/app/issues/${issue}`,
        body: n.body,
        user: { login: 'github-actions[bot]', id: 41898282, type: 'Bot' },
        created_at: '2025-01-01T00:00:00Z',
        updated_at: '2025-01-01T00:00:00Z',
        author_association: 'NONE',
      });
      if (gh[1]) {
        const key = `gh:${gh[1]}`;
        const t = this.threads.get(key) ?? [];
        if (req.method === 'GET')
          return this.page(
            res,
            u,
            t.map((n) => comment(n, gh[1])),
          );
        if (req.method === 'POST') {
          const n = { id: this.next++, body: body.body };
          this.threads.set(key, [...t, n]);
          return this.json(res, 201, comment(n, gh[1]));
        }
      } else if (req.method === 'PATCH') {
        for (const [key, t] of this.threads) {
          const n = t.find((x) => x.id === Number(gh[2]));
          if (!n) continue;
          n.body = body.body;
          return this.json(res, 200, comment(n, key.slice(3)));
        }
        return this.json(res, 404, { message: 'Not Found', status: '404' });
      }
      return this.json(res, 404, { message: 'Not Found', status: '404' });
    }
    if (gl) {
      if (req.headers['private-token'] !== TOKEN) return this.json(res, 401, { message: '401 Unauthorized' });
      const key = `gl:${gl[1]}`;
      const t = this.threads.get(key) ?? [];
      const note = (n: Note) => ({
        id: n.id,
        type: null,
        body: n.body,
        author: { id: 1, username: 'project_42_bot', name: 'git-mem bot' },
        created_at: '2025-01-01T00:00:00.000Z',
        updated_at: '2025-01-01T00:00:00.000Z',
        system: !!n.system,
        noteable_id: 9,
        noteable_type: 'MergeRequest',
        noteable_iid: Number(gl[1]),
        resolvable: false,
      });
      if (!gl[2] && req.method === 'GET') return this.page(res, u, t.map(note));
      if (!gl[2] && req.method === 'POST') {
        const n = { id: this.next++, body: body.body };
        this.threads.set(key, [...t, n]);
        return this.json(res, 201, note(n));
      }
      const n = t.find((x) => x.id === Number(gl[2]));
      if (n && req.method === 'PUT') {
        n.body = body.body;
        return this.json(res, 200, note(n));
      }
      return this.json(res, 404, { message: '404 Not found' });
    }
    this.json(res, 404, { message: 'Not Found' });
  }
}

const SRC = [
  'def alpha(x):',
  '    y = x * 2',
  '    return y + 1',
  '',
  '',
  'def beta():',
  "    return 'b'",
  '',
].join('\n');

let forge: Forge;
let r: TestRepo;
const ids: Record<string, string> = {};

/** main: four anchored memories and two scoped rules; feature: edits one, moves two, renames the file of one. */
beforeAll(async () => {
  forge = new Forge();
  await forge.start();
  r = makeRepo();
  r.write('src/m.py', SRC);
  r.write('src/old.py', 'def gamma():\n    return 3\n');
  r.write('docs/x.md', '# x\n\nbody\n');
  r.commitAll('init');
  await r.memJson(['init']);
  const add = async (k: string, args: string[]) => {
    ids[k] = (await r.memJson(['add', '--content', 'x', ...args])).id;
  };
  await add('alpha', ['--title', 'alpha doubles @octocat', '--anchor', 'src/m.py:1-3']);
  await add('beta', ['--title', 'beta returns b', '--symbol', 'src/m.py#beta']);
  await add('gamma', ['--title', 'gamma is three', '--anchor', 'src/old.py:1-2']);
  // two anchors, one moved, one fresh in a touched file: its command names both (given anchors replace them all)
  await add('delta', ['--title', 'beta and the doc', '--anchor', 'src/m.py:6-7', '--anchor', 'docs/x.md:1']);
  await add('rule', ['--type', 'rule', '--scope', 'src/**', '--title', 'python in src is typed']);
  await add('web', ['--type', 'rule', '--scope', 'web/**', '--title', 'web copy uses sentence case']);
  r.git('checkout', '-q', '-b', 'feature');
  r.write('src/m.py', `# header\n${SRC.replace('x * 2', 'x * 3')}`);
  r.git('mv', 'src/old.py', 'src/new.py');
  r.write('docs/x.md', '# x\n\nbody\nmore\n'); // touched, its anchored line fresh
  r.commitAll('feature work');
});

afterAll(() => forge?.server.close());

function ghEnv(pr: number, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const event = join(tmpDir('gm-event-'), 'event.json');
  writeFileSync(event, JSON.stringify({ action: 'synchronize', number: pr, pull_request: { number: pr } }));
  return {
    ...r.env,
    GITHUB_API_URL: `${forge.url}/api/v3`,
    GITHUB_REPOSITORY: 'acme/app',
    GITHUB_EVENT_PATH: event,
    GITHUB_TOKEN: TOKEN,
    ...extra,
  };
}

const ci = (env: NodeJS.ProcessEnv, extra: string[] = []) =>
  r.mem(['ci', '--base', 'main', '--head', 'feature', ...extra], { env });

describe('git mem ci --comment', () => {
  it('creates one comment on GitHub, edits it on every push, and says so when all is fresh', async () => {
    // others' comments come first: the marker comment is found past the first page
    forge.seed('gh:7', ['LGTM', 'please rebase', 'quoting: <!-- git-mem:ci --> is not ours']);
    const first = await ci(ghEnv(7), ['--comment', 'github']);
    expect(first.code).toBe(1); // the stale memory fails under the default policy; the comment is posted anyway
    expect(first.stdout).toMatch(/^::warning file=src\/m.py,line=2,endLine=4/m); // annotations still on stdout
    expect(first.stderr).toMatch(/git-mem: created the comment on pull request #7 of acme\/app: https:\/\//);
    let t = forge.threads.get('gh:7')!;
    expect(t).toHaveLength(4);
    const mine = t[3];
    const body = mine.body;
    expect(body.startsWith('<!-- git-mem:ci -->\n')).toBe(true);
    // stale, with the hunk that did it
    expect(body).toContain(
      `\`${ids.alpha.slice(0, 12)}\` **alpha doubles @\u200boctocat** at \`src/m.py:1-3\``,
    );
    expect(body).toMatch(
      /```diff\n\s+@@ -1,\d+ \+1,\d+ @@[^\n]*\n(?:.*\n)*?\s+- {4}y = x \* 2\n\s+\+ {4}y = x \* 3\n/,
    );
    // moved and renamed, with the exact command
    expect(body).toContain(`git mem reanchor ${ids.beta.slice(0, 12)} --symbol src/m.py#beta`);
    expect(body).toContain(`git mem reanchor ${ids.gamma.slice(0, 12)} --anchor src/new.py:1-2`);
    expect(body).toMatch(/`src\/old.py:1-2` → `src\/new.py:1-2` \(renamed\)/);
    expect(body).toContain(
      `git mem reanchor ${ids.delta.slice(0, 12)} --anchor src/m.py:7-8 --anchor docs/x.md:1-1`,
    );
    // the rules whose scope covers the changed files, not the others
    expect(body).toContain('**python in src is typed**');
    expect(body).not.toContain('web copy uses sentence case');
    expect(body).toContain('❌ fails the check (`--fail-on stale`)');

    // another push: the same comment is edited, never a second one
    r.write('src/extra.py', 'X = 1\n');
    const head2 = r.commitAll('second push');
    forge.requests.length = 0;
    const second = await ci(ghEnv(7), ['--comment', 'github', '--fail-on', 'never']);
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/updated the comment on pull request #7/);
    t = forge.threads.get('gh:7')!;
    expect(t).toHaveLength(4);
    expect(t[3].id).toBe(mine.id);
    expect(t[3].body).toContain(`Updated for \`${head2.slice(0, 12)}\``);
    expect(forge.requests.filter((x) => !x.startsWith('GET'))).toEqual([
      `PATCH /api/v3/repos/acme/app/issues/comments/${mine.id}`,
    ]);
    expect(forge.requests.filter((x) => x.startsWith('GET')).length).toBe(2); // two pages, Link followed

    // the same run again: nothing to edit
    const again = await ci(ghEnv(7), ['--comment', 'github', '--fail-on', 'never']);
    expect(again.stderr).toMatch(/git-mem: the comment on pull request #7 of acme\/app: \S+ is up to date/);

    // the pull request no longer touches anchored code: the comment says all is fresh
    const pr = r.git('rev-parse', 'HEAD').trim();
    r.git('checkout', '-q', '-B', 'feature', 'main');
    r.write('web/y.md', '# y\n');
    r.commitAll('docs only');
    const clean = await ci(ghEnv(7), ['--comment', 'github']);
    expect(clean.code).toBe(0);
    t = forge.threads.get('gh:7')!;
    expect(t).toHaveLength(4);
    expect(t[3].body).toMatch(/✅ All fresh: no memory is anchored to the code `\w+\.\.\w+` changes/);
    expect(t[3].body).not.toContain('⚠️');
    expect(t[3].body).toContain('web copy uses sentence case'); // its scope covers what changed now
    r.git('checkout', '-q', '-B', 'feature', pr); // back to the pull request's code
    expect(JSON.stringify([first, second, clean])).not.toContain(TOKEN);
  });

  it('posts and edits a GitLab merge request note the same way (PRIVATE-TOKEN, system notes skipped)', async () => {
    forge.seed('gl:3', ['<!-- git-mem:ci --> but a system note'], { system: true });
    forge.seed('gl:3', ['a review']);
    const env = {
      ...r.env,
      CI_API_V4_URL: `${forge.url}/api/v4`,
      CI_PROJECT_ID: '42',
      CI_MERGE_REQUEST_IID: '3',
      GITLAB_TOKEN: TOKEN,
    };
    const one = await ci(env, ['--comment', 'gitlab', '--format', 'json', '--fail-on', 'never']);
    expect(one.code, one.stderr).toBe(0);
    expect(JSON.parse(one.stdout).items.length).toBeGreaterThan(0);
    expect(one.stderr).toMatch(/created the comment on merge request !3 of project 42 \(id \d+\)/);
    r.write('src/extra2.py', 'Y = 1\n');
    r.commitAll('another push');
    const two = await ci(env, ['--comment', 'gitlab', '--fail-on', 'never']);
    expect(two.stderr).toMatch(/updated the comment on merge request !3/);
    const t = forge.threads.get('gl:3')!;
    expect(t).toHaveLength(3);
    expect(t[0].body).toBe('<!-- git-mem:ci --> but a system note');
    expect(t[2].body).toMatch(/^<!-- git-mem:ci -->\n[\s\S]*git mem reanchor/);
    expect(forge.requests.filter((x) => x.startsWith('PUT'))).toEqual([
      `PUT /api/v4/projects/42/merge_requests/3/notes/${t[2].id}`,
    ]);
  });

  it('fails in one line, never printing the token: read-only token (exit 5), missing token, wrong token', async () => {
    forge.readOnly = true;
    try {
      const ro = await ci(ghEnv(8), ['--comment', 'github', '--fail-on', 'never']);
      expect(ro.code).toBe(5);
      const lines = ro.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^git-mem: error: /);
      // exit 5 is E_FORBIDDEN's alone; the line names the request, GitHub's answer (no data field
      // holds them) and, in the hint, the permission a workflow needs
      for (const named of [
        'POST /api/v3/repos/acme/app/issues/8/comments',
        '403',
        'Resource not accessible by integration',
        'pull-requests: write',
      ])
        expect(lines[0]).toContain(named);
      expect(ro.stdout).toMatch(/^git-mem: \d+ anchors? touched/m); // the report came out first
      expect(ro.stdout + ro.stderr).not.toContain(TOKEN);
    } finally {
      forge.readOnly = false;
    }
    const none = await ci(ghEnv(8, { GITHUB_TOKEN: '', GH_TOKEN: '' }), ['--comment', 'github', '--json']);
    expect(none.code).toBe(2);
    expect(none.stdout.trim().split('\n')).toHaveLength(1); // the refusal alone: before the work, not after it
    expect(errorOf(none)).toMatchObject({
      code: 'E_INVALID_ARG',
      hint: expect.stringContaining('set GITHUB_TOKEN'),
    });
    const bad = await ci(ghEnv(8, { GITHUB_TOKEN: `${TOKEN}x` }), ['--comment', 'github']);
    expect(bad.code).toBe(1);
    // one line naming GitHub's answer to the request (no data field holds it)
    expect(bad.stderr.trim()).toMatch(/^git-mem: error: [^\n]*$/);
    for (const named of ['401 on GET ', 'Bad credentials']) expect(bad.stderr).toContain(named);
    expect(bad.stderr).not.toContain(TOKEN);
    // a repository or number the token cannot see: GitHub says 404; the comment was not posted (1)
    const gone = await ci(ghEnv(8, { GITHUB_REPOSITORY: 'acme/nope' }), [
      '--comment',
      'github',
      '--fail-on',
      'never',
    ]);
    expect(gone.code).toBe(1);
    // one line naming the pull request and GitHub's answer (no data field holds them)
    expect(gone.stderr.trim()).toMatch(/^git-mem: error: [^\n]*$/);
    for (const named of ['#8', 'acme/nope', '404 on GET ']) expect(gone.stderr).toContain(named);
    forge.rateLimited = true;
    try {
      const target = commentTarget('github', ghEnv(8));
      const e = await upsertComment(target, `${MARKER}\nx`).catch((x) => x);
      expect(e.code).toBe('E_REMOTE');
      expect(e.exitCode).toBe(1);
      // the request and GitHub's answer (no data field holds them), and when to run the job again
      for (const named of [
        '403 on GET /api/v3/repos/acme/app/issues/8/comments',
        'API rate limit exceeded for installation ID 1',
      ])
        expect(e.message).toContain(named);
      expect(e.hint).toContain('14:05 UTC');
    } finally {
      forge.rateLimited = false;
    }
    const notPr = await ci(ghEnv(8, { GITHUB_EVENT_PATH: join(ROOT, 'package.json') }), [
      '--comment',
      'github',
      '--json',
    ]);
    expect(notPr.code).toBe(2);
    expect(errorOf(notPr).code).toBe('E_INVALID_ARG');
    expect(errorOf(notPr).message).toContain('GITHUB_EVENT_PATH'); // the payload it read (no data field)
    expect(forge.threads.get('gh:8') ?? []).toHaveLength(0);
  });

  it('reads hunks and Link headers as the forges write them', () => {
    const h = parseHunks(
      [
        '@@ -2,0 +3,2 @@ def a():',
        '+x',
        '+y',
        '@@ -5,2 +7 @@',
        ' k',
        '-gone',
        '\\ No newline at end of file',
      ].join('\n'),
    );
    expect(h.map((x) => [x.removed, x.inserted])).toEqual([
      [[], [3, 3]],
      [[6], []],
    ]);
    expect(
      nextLink(
        '<https://api.github.com/repositories/1/issues/7/comments?page=1>; rel="prev", <https://api.github.com/repositories/1/issues/7/comments?page=3>; rel="next"',
      ),
    ).toBe('https://api.github.com/repositories/1/issues/7/comments?page=3');
    expect(nextLink('<https://x/a?page=1>; rel="first"')).toBeNull();
  });
});

describe('action.yml', () => {
  it('is a composite action that parses as YAML and uses only the inputs it declares', () => {
    const text = readFileSync(join(ROOT, 'action.yml'), 'utf8');
    const action = parseYaml(text);
    expect(action.runs.using).toBe('composite');
    const declared = new Set(Object.keys(action.inputs));
    const used = new Set([...text.matchAll(/\binputs\.([\w-]+)/g)].map((m) => m[1]));
    expect([...used].filter((u) => !declared.has(u))).toEqual([]);
    for (const i of ['version', 'base', 'head', 'fail-on', 'sarif', 'comment', 'github-token'])
      expect(declared).toContain(i);
    for (const s of action.runs.steps) if (s.run) expect(s.shell).toBe('bash'); // composite run steps need a shell
    // no input is pasted into a script: they reach the shell as environment variables
    for (const s of action.runs.steps) if (s.run) expect(s.run).not.toMatch(/\$\{\{\s*inputs\./);
    expect(text).toContain('git mem ci');
  });
});
