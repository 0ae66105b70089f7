/**
 * Secrets, everywhere text heads for refs/memory: a corpus of real-format fake
 * secrets (test/secrets-corpus.ts) through every field and every writing path (CLI add,
 * update and import, MCP tools in-process and over stdio, agent sessions
 * replayed through the hook, proposals from extraction or an LLM). Human input
 * is refused with the store unchanged; agent text is redacted. After each path,
 * every object reachable from refs/memory (blobs and commit messages) is read
 * and none may hold a corpus secret.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { ERROR_META, type ToolResult } from '../src/agents/mcp-env.js';
import { layer } from '../src/gitstore/config.js';
import { unframe } from '../src/safety/frame.js';
import {
  assertRecordClean,
  redactRecord,
  redactText,
  scanRecord,
  scanSecrets,
} from '../src/safety/secrets.js';
import { BIN, errorOf, makeRepo, ROOT, sh, type TestRepo, thrown } from './helpers.js';
import { HARMLESS, secretsCorpus } from './secrets-corpus.js';
import { fresh, type MemResult, template } from './support/template.js';
import { bareRemote, clone } from './sync-helpers.js';

const CORPUS = secretsCorpus();
const WORDS =
  'billing search ingest mailer scheduler gateway ledger invoices reports exports uploads thumbnails webhooks sessions'.split(
    ' ',
  );

/** A repository: a test's own, or a template's copy (test/support/template.ts). */
type Repo = Pick<TestRepo, 'dir' | 'env' | 'git'>;

/** Every object reachable from refs/memory (blobs, trees, commit messages), as one text. */
function storeText(repo: Repo): string {
  const oids = repo
    .git('rev-list', '--objects', 'refs/memory')
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter(Boolean);
  return sh('git', ['cat-file', '--batch'], repo.dir, repo.env, `${oids.join('\n')}\n`);
}

/** The corpus entries whose secret (in any letter case) is found in refs/memory. */
function leaks(repo: Repo): string[] {
  const all = storeText(repo).toLowerCase();
  return CORPUS.filter((c) => all.includes(c.secret.toLowerCase())).map((c) => c.name);
}

const tip = (repo: TestRepo) => repo.git('rev-parse', 'refs/memory').trim();

/**
 * Each secret of the corpus once, in the fields taken in turn (secret i in field i mod n): every
 * secret crosses the boundary and every field meets several kinds of secret, in one process
 * start per case rather than corpus × fields. The full cross product is the scanner's test above.
 */
function inTurn<F>(
  fields: (c: (typeof CORPUS)[number]) => F[],
  perSecret = 1,
): Array<[(typeof CORPUS)[number], F]> {
  return CORPUS.flatMap((c, i) => {
    const fs = fields(c);
    const stride = Math.ceil(fs.length / perSecret);
    return Array.from({ length: perSecret }, (_, k): [(typeof CORPUS)[number], F] => [
      c,
      fs[(i + k * stride) % fs.length],
    ]);
  });
}

describe('the scanner', () => {
  it('holds at least 50 real-format secrets, finds each and redacts each, and passes harmless text', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(50);
    for (const c of CORPUS) {
      expect(scanSecrets(c.text).length, c.name).toBeGreaterThan(0);
      const red = redactText(c.text);
      expect(red, c.name).not.toContain(c.secret);
      expect(red, c.name).toContain('[REDACTED]');
      expect(scanSecrets(red), c.name).toEqual([]);
    }
    for (const h of HARMLESS) expect(scanSecrets(h), h).toEqual([]);
  });

  it('redacts only the secret: the rest of a line still says what happened', () => {
    const pw = CORPUS.find((c) => c.name === 'postgres URL password')!;
    expect(redactText(pw.text)).toBe(
      'error: could not connect to postgres://admin:[REDACTED]@db0.internal:5432/app',
    );
    const curl = CORPUS.find((c) => c.name === 'curl -u')!;
    expect(redactText(curl.text)).toBe('curl -u admin:[REDACTED] https://ci.internal/api/jobs');
    const env = CORPUS.find((c) => c.name === 'DB_PASS= assignment')!;
    expect(redactText(env.text)).toBe('export DB_PASS=[REDACTED]');
  });

  it('walks every field of a record, unknown keys and their names included, and names the field', () => {
    const s = CORPUS[0].secret;
    const base = { title: 't', body: 'b', tags: ['a'], scope: [], anchors: [{ path: 'a.ts' }], extra: {} };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ ...base, tags: ['a', s] }, 'tags'],
      [{ ...base, scope: [`src/${s}/**`] }, 'scope'],
      [{ ...base, alias: s }, 'alias'],
      [{ ...base, source: s }, 'source'],
      [{ ...base, author: `${s} <a@b>` }, 'author'],
      [{ ...base, anchors: [{ path: 'a.ts', symbol: s }] }, 'anchors[0].symbol'],
      [{ ...base, extra: { ticket: { note: s } } }, 'ticket.note'],
      [{ ...base, extra: { [s]: 1 } }, ''],
      [{ ...base, extra: { meta: { [s]: 1 } } }, 'meta'],
      [{ ...base, links: { related: [s] } }, 'links.related'],
    ];
    for (const [r, field] of cases) {
      expect(scanRecord(r)[0]?.field, field).toBe(field);
      // the message names where the secret is, never the secret (a key is reported by its place)
      expect(() => assertRecordClean(r)).toThrow(
        expect.objectContaining({ message: expect.not.stringContaining(s) }),
      );
      expect(
        thrown(() => assertRecordClean(r)),
        field,
      ).toMatchObject({ code: 'E_SECRET', data: { field } });
      const red = redactRecord(r);
      expect(JSON.stringify(red), field).not.toContain(s);
      expect(scanRecord(red), field).toEqual([]);
    }
    expect(() => assertRecordClean({ ...base, tags: [s] }, { allow: true })).not.toThrow();
  });
});

/** Deterministic characters for the cases below (built at run time: no literal secret in this file). */
function fake(alphabet: string, n: number, seed: number): string {
  let x = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out += alphabet[(x >>> 8) % alphabet.length];
  }
  return out;
}
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const B64 = `${ALNUM}+/`;
const PW = () => `Qz${fake(ALNUM, 10, 7)}!9`;

describe('issue 28: the shapes the scanner missed', () => {
  const pw = PW();
  const b64 = (n: number, seed: number) => fake(B64, n, seed);
  const keyLines = (magic: string) => [magic + b64(64 - magic.length, 11), b64(64, 12), b64(64, 13)];
  const cases: Array<[string, string, string]> = [
    ['PGPASSWORD=', `PGPASSWORD=${pw} psql -h db.internal -U app`, pw],
    ['dbPassword = "…"', `const dbPassword = "${pw}";`, pw],
    ['refreshToken', `  refreshToken: '${pw}',`, pw],
    ['secretAccessKey:', `  secretAccessKey: ${b64(40, 2)}`, b64(40, 2)],
    [
      'Azure SharedAccessKey=',
      `Endpoint=sb://acme.servicebus.windows.net/;SharedAccessKeyName=send;Shared${'Access'}Key=${b64(43, 3)}=`,
      b64(43, 3),
    ],
    [
      'Azure SAS sig=',
      `https://acme.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&se=2027-01-01&s${'ig'}=${fake(ALNUM, 43, 4)}%3D`,
      fake(ALNUM, 43, 4),
    ],
    ['mysql -pPASS', `mysql -u root -p${pw.replace('!', 'x')} -h db app`, pw.replace('!', 'x')],
    ['sshpass -p', `sshpass -p '${pw}' ssh deploy@10.0.0.7`, pw],
    [
      'Authorization: Token',
      `Authorization: Token ${fake('0123456789abcdef', 40, 5)}`,
      fake('0123456789abcdef', 40, 5),
    ],
    ['Slack xoxe-', `xo${'xe'}-1-${fake('ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789', 140, 6)}`, ''],
    [
      'Stripe whsec_',
      `the endpoint signs with wh${'sec'}_${fake(ALNUM, 32, 8)} now`,
      `wh${'sec'}_${fake(ALNUM, 32, 8)}`,
    ],
    ['Stripe sk_test_', `Stripe("s${'k_te'}st_${fake(ALNUM, 24, 9)}")`, `s${'k_te'}st_${fake(ALNUM, 24, 9)}`],
    [
      'Google ya29.',
      `curl -H "X-Goog: ya${'29'}.${fake(`${ALNUM}_-`, 120, 10)}"`,
      `ya${'29'}.${fake(`${ALNUM}_-`, 120, 10)}`,
    ],
    [
      'Docker "auth": base64 pair',
      `{"auths": {"ghcr.io": {"auth": "${btoa(`ci:${pw}`)}"}}}`,
      btoa(`ci:${pw}`),
    ],
    ['DB_PW=', `DB_PW=${pw}`, pw],
    ['a note in prose', `Staging: the admin password is ${pw} until Friday.`, pw],
    ['passcode:', `passcode: ${pw}`, pw],
    [
      'private key split across lines',
      // the body of a key in a string built over several lines, without its header
      `const key =\n  '${keyLines('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC')[0]}\\n' +\n  '${b64(64, 14)}\\n' +\n  '${b64(40, 21)}';`,
      [keyLines('MIIEvQIBADANBgkqhkiG9w0BAQEFAASC')[0], b64(64, 14), b64(40, 21)].join('\n'),
    ],
    [
      'private key without its header',
      keyLines('MIIEowIBAAKCAQEA').join('\n'),
      keyLines('MIIEowIBAAKCAQEA').join('\n'),
    ],
    [
      'SSH2 private key',
      `---- BEGIN SSH2 ENCRYPTED ${'PRIVATE'} KEY ----\nComment: "rsa-key"\nP2/56wAAA${b64(55, 15)}\n${b64(64, 16)}\n---- END SSH2 ENCRYPTED PRIVATE KEY ----`,
      `P2/56wAAA${b64(55, 15)}`,
    ],
    [
      'PuTTY private key',
      `PuTTY-User-Key-File-2: ssh-rsa\nEncryption: none\nComment: k\nPublic-Lines: 1\nAAAAB3NzaC1yc2E${b64(40, 17)}\nPrivate-Lines: 2\nAAABAQ${b64(58, 18)}\n${b64(40, 19)}\nPrivate-MAC: ${fake('0123456789abcdef', 40, 20)}`,
      `AAABAQ${b64(58, 18)}`,
    ],
  ];
  for (const [name, text, secret] of cases) {
    it(`finds and redacts ${name}`, () => {
      expect(scanSecrets(text).length, text).toBeGreaterThan(0);
      const red = redactText(text);
      for (const piece of (secret || text).split('\n')) expect(red, name).not.toContain(piece);
      expect(scanSecrets(red), name).toEqual([]);
    });
  }
});

describe('issue 28: code that holds no secret is not refused', () => {
  it("SECRET_KEY = os.environ['…'] and api_key = config['api_key'] are lookups, not values", () => {
    for (const t of [
      "SECRET_KEY = os.environ['DJANGO_SECRET_KEY']",
      'SECRET_KEY = env("DJANGO_SECRET_KEY", default="")',
      "api_key = config['api_key']",
      'api_key = config.get("api_key")',
      '  password = var.db_password',
      'secret_key_base = Rails.application.credentials.secret_key_base',
      '          valueFrom:\n            secretKeyRef:\n              name: db\n              key: password',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a workflow expression, as CI files hold it
      '  NPM_TOKEN: ${{ secrets.NPM_TOKEN }}',
    ])
      expect(scanSecrets(t), t).toEqual([]);
  });

  it("this project's own code and docs about secrets pass: the scanner's source, the threat model", () => {
    // an anchor into either file, or a note quoting a line of them, must not be refused
    for (const file of ['src/safety/secrets.ts', 'docs/security.md']) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(
        scanSecrets(text).map((f) => `${file}:${f.line} ${f.kind}`),
        file,
      ).toEqual([]);
    }
    for (const t of [
      "await ok(project, ['config', 'unset', 'secret-scan', '--global']);",
      "plant(r, 'config.yaml', 'context-budget: banana\\nsecret-scan: block\\n');",
      'Every request without the token is refused** (`403`)',
      'anchor path "/etc/passwd" is absolute',
      'if the password is None: the token is valid for reset/changed users',
    ])
      expect(scanSecrets(t), t).toEqual([]);
  });

  it('an anchor into a real Go file with tokens in its context lines is stored', () => {
    // golang/oauth2's internal/token.go and jwt/jwt.go, as an anchor keeps them
    const anchor = {
      path: 'internal/token.go',
      lines: [291, 296],
      text: '\t\ttoken = &Token{\n\t\t\tAccessToken: vals.Get("access_token"),\n\t\t\tTokenType:   vals.Get("token_type"),\n\t\t\tRefreshToken: vals.Get("refresh_token"),\n\t\t\tRaw:          vals,\n\t\t}',
      before: ['\tvar token *Token', '\tcontent, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))'],
      after: ['\t\te := vals.Get("expires_in")', '\ttok := &oauth2.Token{RefreshToken: f.RefreshToken}'],
    };
    const record = {
      title: 'Token parsing',
      body: 'Where the token endpoint reply is read.',
      anchors: [anchor],
    };
    expect(scanRecord(record)).toEqual([]);
    expect(() => assertRecordClean(record)).not.toThrow();
  });
});

describe('human input is refused, every field, the store unchanged', () => {
  // each command's run function on one open store (test/support/template.ts): the operation a
  // person's command reaches, without a store opened per case; the CLI's framing of the refusal
  // (one line, exit 2) is test/installed.test.ts's and test/cli-commands.test.ts's
  const TEMPLATE = template('secrets-human', {
    commands: [['add', '--title', 'Staging database', '--content', 'It resets nightly.', '--json']],
  });

  /** E_SECRET, exit 2, naming the field (`inKey`: the secret is the name of a field in it). */
  const refused = (r: MemResult, field: string, what: string, inKey?: true) => {
    expect(r.code, `${what}: ${r.stderr}`).toBe(2);
    expect(r.error, what).toBe('E_SECRET');
    expect(r.data, what).toMatchObject({ field });
    expect(r.data?.inKey, what).toBe(inKey);
  };

  it('git mem add: title, body, source, tags, scope, alias', async () => {
    const f = await fresh(TEMPLATE);
    const before = f.tip();
    const base = ['add', '--title', 'A note', '--content', 'Nothing secret.'];
    const cases = inTurn(
      (c): Array<[string, string[]]> => [
        ['title', ['add', '--title', `Note ${c.text}`, '--content', 'x']],
        ['body', ['add', '--title', 'A note', '--content', `Context:\n${c.text}`]],
        ['source', [...base, `--source=${c.text}`]],
        ['tags', [...base, `--tags=ops,${c.text}`]],
        ['scope', [...base, `--scope=src/${c.text}/**`]],
        ['alias', [...base, `--alias=${c.text}`]],
      ],
    );
    for (const [c, [field, args]] of cases) refused(await f.mem(args), field, `${c.name} in ${field}`);
    expect(f.tip()).toBe(before);
    expect(leaks(f)).toEqual([]);
  });

  it('git mem update: title, body, source, tags, add-tag, scope', async () => {
    const f = await fresh(TEMPLATE);
    const before = f.tip();
    const cases = inTurn(
      (c): Array<[string, string[]]> => [
        ['title', [`--title=Note ${c.text}`]],
        ['body', [`--content=${c.text}`]],
        ['source', [`--source=${c.text}`]],
        ['tags', [`--tags=${c.text}`]],
        // a tag added lands in tags, and is named so
        ['tags', [`--add-tag=${c.text}`]],
        ['scope', [`--scope=src/${c.text}`]],
      ],
    );
    for (const [c, [field, args]] of cases)
      refused(await f.mem(['update', f.ids[0], ...args]), field, `${c.name} in ${field}`);
    expect(f.tip()).toBe(before);
    expect(leaks(f)).toEqual([]);
  });

  it('git mem import: every key of a line, foreign ids, unknown keys and their names, anchors', async () => {
    const f = await fresh(TEMPLATE);
    const before = f.tip();
    const ok = { type: 'decision', title: 'Imported', body: 'Fine.' };
    // 17 ways in a line: each secret in two of them, each way meeting seven or eight secrets;
    // [field the error names, the line, whether the secret is the name of a field there]
    const cases = inTurn(
      (c): Array<[string, Record<string, unknown>, true?]> => [
        ['title', { ...ok, title: `Note ${c.text}` }],
        ['body', { ...ok, body: c.text }],
        ['content', { type: 'decision', title: 'Imported', content: c.text }],
        ['source', { ...ok, source: c.text }],
        ['author', { ...ok, author: `Someone <a@example.org> ${c.text}` }],
        ['tags', { ...ok, tags: ['ops', c.text] }],
        ['tags', { ...ok, tags: `ops,${c.text}` }],
        ['scope', { ...ok, scope: [`src/${c.text}`] }],
        ['alias', { ...ok, alias: c.text }],
        ['id', { ...ok, id: c.text }],
        ['id', { ...ok, id: c.text, alias: 'ops/db' }],
        ['ticket', { ...ok, ticket: c.text }],
        ['meta.note', { ...ok, meta: { note: c.text } }],
        ['', { ...ok, [c.text]: 'x' }, true],
        ['meta', { ...ok, meta: { [c.text]: 'x' } }, true],
        ['anchors[0].path', { ...ok, anchors: [{ path: `docs/${c.text}.md` }] }],
        ['anchors[0].symbol', { ...ok, anchors: [{ path: 'a.ts', symbol: c.text }] }],
      ],
      2,
    );
    for (const [c, [field, line, inKey]] of cases) {
      const r = await f.mem(['import', '-'], { stdin: `${JSON.stringify(ok)}\n${JSON.stringify(line)}\n` });
      refused(r, field, `${c.name} in ${field || 'a key'}`, inKey);
      // the line it is on (no data field holds it): the first line of the file is a good one
      expect(r.message, c.name).toMatch(/\bline 2\b/);
    }
    expect(f.tip()).toBe(before);
    expect(leaks(f)).toEqual([]);
  });

  it('--allow-secret still stores what the user confirms (so the check above can fail)', async () => {
    const f = await fresh(TEMPLATE);
    const c = CORPUS[0];
    const r = await f.mem([
      'add',
      '--title',
      'Confirmed',
      '--content',
      'x',
      '--tags',
      c.text,
      '--allow-secret',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(leaks(f)).toEqual([c.name]);
    // and a later update of other fields is not blocked by it
    const id = (await f.memJson(['list'])).find((m: { title: string }) => m.title === 'Confirmed').id;
    expect((await f.mem(['update', id, '--status', 'archived'])).code).toBe(0);
    expect(await f.mem(['rm', id, '--reason', `leaked ${CORPUS[1].text}`])).toMatchObject({
      code: 2,
      error: 'E_SECRET',
    });
  });
});

/** A tool error's code and data, as the MCP server gives them under `_meta` (src/agents/mcp-env.ts). */
const toolErrorOf = (r: ToolResult): Record<string, unknown> | undefined =>
  (r._meta as Record<string, Record<string, unknown>> | undefined)?.[ERROR_META];

describe('MCP tools refuse a secret in any field (an error the agent can act on), the store unchanged', () => {
  it('add and update through the tool functions, every field', async () => {
    const repo = makeRepo({ commit: true });
    const target = (
      await repo.memJson(['add', '--title', 'Staging database', '--content', 'Resets nightly.'])
    ).id;
    const before = tip(repo);
    const { Store } = await import('../src/gitstore/store.js');
    const { openRepo } = await import('../src/gitstore/repo.js');
    const { callTool } = await import('../src/agents/mcp-tools.js');
    const store = new Store(await openRepo(repo.dir, repo.env));
    const env = { store, cwd: repo.dir };
    try {
      // every secret through one field of each tool, every field meeting ten secrets or more (as
      // the CLI's cases above); the scan is one function of the field's text, tested whole above
      const ok = { type: 'decision', title: 'Agent note', body: 'Fine.' };
      const adds = inTurn(
        (c): Array<[string, Record<string, unknown>]> => [
          ['title', { ...ok, title: `Note ${c.text}` }],
          ['body', { ...ok, body: c.text }],
          ['source', { ...ok, source: c.text }],
          ['tags', { ...ok, tags: ['ops', c.text] }],
          ['scope', { ...ok, scope: [`src/${c.text}/**`] }],
          ['alias', { ...ok, alias: c.text }],
        ],
      );
      for (const [c, [field, args]] of adds) {
        const res = await callTool(env, 'add', args);
        expect(res.isError, `${c.name} in ${field}`).toBe(true);
        // the code and the field as data (what --json gives), and the code first in the model's line
        expect(toolErrorOf(res), `${c.name} in ${field}`).toMatchObject({ code: 'E_SECRET', field });
        expect(unframe(res.content[0].text), `${c.name} in ${field}`).toMatch(/^E_SECRET: /);
      }
      const updates = inTurn(
        (c): Array<[string, Record<string, unknown>]> => [
          ['title', { title: `Note ${c.text}` }],
          ['body', { body: c.text }],
          ['tags', { tags: [c.text] }],
          ['tags', { add_tags: [c.text] }],
          ['scope', { scope: [c.text] }],
        ],
      );
      for (const [c, [field, args]] of updates) {
        const res = await callTool(env, 'update', { id: target, ...args });
        expect(res.isError, `${c.name} in ${field}`).toBe(true);
        expect(toolErrorOf(res), `${c.name} in ${field}`).toMatchObject({ code: 'E_SECRET', field });
      }
    } finally {
      store.close();
    }
    expect(tip(repo)).toBe(before);
    expect(leaks(repo)).toEqual([]);
  });

  it('over stdio with the SDK client: tags and scope', async () => {
    const repo = makeRepo({ commit: true });
    await repo.memJson(['add', '--title', 'Staging database', '--content', 'Resets nightly.']);
    const before = tip(repo);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: repo.dir,
      env: repo.env as Record<string, string>,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'secrets-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      for (const c of CORPUS) {
        for (const field of ['tags', 'scope']) {
          const res = (await client.callTool({
            name: 'add',
            arguments: { type: 'decision', title: 'Agent note', body: 'Fine.', [field]: [c.text] },
          })) as { isError?: boolean; content: Array<{ text: string }> };
          expect(res.isError, `${c.name} in ${field}`).toBe(true);
          expect(res.content[0].text, `${c.name} in ${field}`).toContain(`in ${field}`);
        }
      }
    } finally {
      await client.close();
    }
    expect(tip(repo)).toBe(before);
    expect(leaks(repo)).toEqual([]);
  });
});

describe('agent text is redacted: sessions replayed through the hook, proposals, LLM replies', () => {
  it('session summaries and their proposals hold no secret from prompts, commands, errors or output', async () => {
    const repo = makeRepo({ commit: true });
    await repo.memJson([
      'add',
      '--title',
      'Deploys go through deploy.sh',
      '--content',
      'Run it from the root.',
    ]);
    const env = { ...repo.env, GIT_MEM_HOOK_INLINE: '1' };
    const send = async (p: Record<string, unknown>) => {
      const r = await repo.mem(['hook', 'claude-code'], { stdin: JSON.stringify(p), env });
      expect(r.code).toBe(0);
    };
    // eight sessions of eight secrets each: every secret is in the first prompt (the title), a failing
    // command and its error, the same command passing with it in its output, and a "remember:" prompt;
    // four secrets to an event, a line each (a redaction must find every one in a text, not the first)
    const GROUP = 8;
    const PER_EVENT = 4;
    let n = 0;
    for (let g = 0; g < CORPUS.length; g += GROUP) {
      const group = CORPUS.slice(g, g + GROUP);
      const base = { session_id: `secret-${g}`, transcript_path: '/tmp/t.jsonl', cwd: repo.dir };
      const bash = (command: string, extra: Record<string, unknown>) => ({
        ...base,
        tool_name: 'Bash',
        tool_input: { command, description: 'run' },
        tool_use_id: `toolu_${n++}`,
        ...extra,
      });
      await send({ ...base, hook_event_name: 'SessionStart', source: 'startup' });
      await send({
        ...base,
        hook_event_name: 'UserPromptSubmit',
        prompt: group.map((c) => c.text).join(' ; '),
      });
      for (let e = 0; e < group.length; e += PER_EVENT) {
        const texts = group.slice(e, e + PER_EVENT).map((c) => c.text);
        const command = texts.join('\n');
        await send({
          ...bash(command, {}),
          hook_event_name: 'PostToolUseFailure',
          error: `Exit code 1\n${texts.join('\n')}\nconnection refused`,
        });
        await send({
          ...bash(command, {
            tool_response: { stdout: texts.map((t) => `done; ${t}`).join('\n'), stderr: '', exit_code: 0 },
          }),
          hook_event_name: 'PostToolUse',
        });
        await send({
          ...base,
          hook_event_name: 'UserPromptSubmit',
          prompt: `remember: staging uses ${texts.join(' ; ')}`,
        });
      }
      await send({ ...base, hook_event_name: 'SessionEnd', reason: 'exit' });
    }
    const sessions = await repo.memJson(['sessions', '--limit', '1000']);
    expect(sessions).toHaveLength(Math.ceil(CORPUS.length / GROUP));
    // the path wrote agent text, redacted: every title still says what the session was about
    for (const s of sessions) expect(s.title, s.session).toContain('[REDACTED]');
    const pending = await repo.memJson(['review']);
    expect(pending.length).toBeGreaterThan(0);
    expect(pending.some((p: { body: string }) => p.body.includes('[REDACTED]'))).toBe(true);
    expect(leaks(repo)).toEqual([]);
    // the raw buffers are gone once each session's extraction is done
    const { readdirSync } = await import('node:fs');
    expect(readdirSync(join(repo.dir, '.git', 'mem', 'events')).filter((f) => f.endsWith('.jsonl'))).toEqual(
      [],
    );
  }, 240_000);

  it('proposals from tier 0 or an LLM reply are redacted in every field before they are written', async () => {
    const repo = makeRepo({ commit: true });
    await repo.memJson(['add', '--title', 'Staging database', '--content', 'Resets nightly.']);
    const { Store } = await import('../src/gitstore/store.js');
    const { openRepo } = await import('../src/gitstore/repo.js');
    const { gateProposalsDetailed, writeProposals } = await import('../src/agents/proposal.js');
    const store = new Store(await openRepo(repo.dir, repo.env));
    try {
      for (let i = 0; i < CORPUS.length; i += 5) {
        const batch = CORPUS.slice(i, i + 5).map((c, k) => ({
          type: (['known_fix', 'decision', 'environment', 'convention', 'dependency'] as const)[k],
          // distinct words, so the gate's duplicate check keeps them apart once the secrets are redacted
          title: `${WORDS[(i + k) % WORDS.length]} ${WORDS[(i + k + 7) % WORDS.length]} needs care: ${c.text}`,
          body: `When it fails:\n${c.text}\nrestart the pool.`,
          tags: ['ops', c.text],
          source: `tier1:llm ${c.text}`,
          evidence: c.text,
        }));
        const verdicts = await gateProposalsDetailed(store, batch, { max: 100 });
        const accepted = verdicts.filter((v) => v.accepted).map((v) => v.proposal);
        await writeProposals(store, accepted, { session: `llm-${i}`, agent: 'claude-code' });
      }
    } finally {
      store.close();
    }
    const pending = await repo.memJson(['review']);
    // (once redacted, some are duplicates of others and the gate drops them: nothing is written for those)
    expect(pending.length).toBeGreaterThanOrEqual(10);
    for (const p of pending) expect(p.title, p.title).toContain('[REDACTED]');
    expect(leaks(repo)).toEqual([]);
  });
});

describe('security settings cannot be weakened by the shared layer', () => {
  it('a shared secret-scan: off may tighten, never loosen', () => {
    const shared = (v: string) =>
      layer([
        ['default', { 'secret-scan': 'block' }],
        ['shared', { 'secret-scan': v }],
      ]);
    expect(shared('off').values['secret-scan']).toBe('block');
    expect(shared('off').warnings).toHaveLength(1);
    expect(shared('warn').values['secret-scan']).toBe('block');
    const tighten = layer([
      ['global', { 'secret-scan': 'off' }],
      ['shared', { 'secret-scan': 'warn' }],
    ]);
    expect(tighten.values['secret-scan']).toBe('warn');
    expect(tighten.warnings).toEqual([]);
    const local = layer([
      ['shared', { 'secret-scan': 'off' }],
      ['local', { 'secret-scan': 'off' }],
    ]);
    expect(local.values['secret-scan']).toBe('off');
    expect(local.warnings).toEqual([]);
  });

  it('a teammate pushing secret-scan: off does not switch off the scan of a clone that syncs it', async () => {
    const remote = bareRemote();
    const mallory = clone(remote.url);
    const alice = clone(remote.url);
    await mallory.memJson(['add', '--title', 'Staging database', '--content', 'Resets nightly.']);
    await mallory.memJson(['config', 'set', 'secret-scan', 'off', '--shared']);
    expect((await mallory.mem(['sync'])).code).toBe(0);
    expect((await alice.mem(['sync'])).code).toBe(0);
    expect(alice.git('show', 'refs/memory:config.yaml')).toMatch(/secret-scan: "?off/);
    const before = tip(alice);
    const r = await alice.mem(['add', '--title', 'Creds', '--content', `key ${CORPUS[0].secret}`, '--json']);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^git-mem: warning: ignoring secret-scan: off from the shared config in refs\/memory .*stays block/,
    );
    expect(errorOf(r)).toMatchObject({ code: 'E_SECRET', kind: 'AWS access key id', field: 'body' });
    expect(tip(alice)).toBe(before);
    expect(leaks(alice)).toEqual([]);
  });
});

describe('local event buffers', () => {
  it('are 0600 in a 0700 folder, also when an older version made them 0644 in 0755', async () => {
    const repo = makeRepo({ commit: true });
    const dir = join(repo.dir, '.git', 'mem', 'events');
    const send = (session: string, hook_event_name: string) =>
      repo.mem(['hook', 'claude-code'], {
        stdin: JSON.stringify({
          session_id: session,
          transcript_path: '/tmp/t.jsonl',
          cwd: repo.dir,
          hook_event_name,
          prompt: 'hello',
        }),
        env: { ...repo.env, GIT_MEM_HOOK_INLINE: '1' },
      });
    await send('modes-1', 'UserPromptSubmit');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'modes-1.jsonl')).mode & 0o777).toBe(0o600);
    const { chmodSync, writeFileSync } = await import('node:fs');
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'modes-2.jsonl'), '', { mode: 0o644 });
    chmodSync(join(dir, 'modes-2.jsonl'), 0o644);
    await send('modes-2', 'UserPromptSubmit');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, 'modes-2.jsonl')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'modes-2.jsonl'), 'utf8')).toContain('"prompt":"hello"');
    // the ids of what the session was given (SessionStart's pack): the same 0600
    await repo.mem(['add', '--type', 'convention', '--title', 'hello rule', '--content', 'say hello\n']);
    await send('modes-3', 'SessionStart');
    expect(statSync(join(dir, 'modes-3.injected')).mode & 0o777).toBe(0o600);
  });
});
