/**
 * Issue #28, item 2: a setting that sends data to a network address or chooses what this clone
 * downloads, loads or runs (PERSONAL in src/gitstore/config.ts) is read only from this person's
 * layers, never from config.yaml in refs/memory, which any teammate can push. A teammate's
 * config.yaml pointing every such setting at a recording server on 127.0.0.1 gets nothing from a
 * clone that syncs it; `config set --shared` refuses them; a shared value may tighten a security
 * setting, never loosen it.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { layer, PERSONAL, SETTING_NAMES } from '../src/gitstore/config.js';
import { stringify } from '../src/model/yaml.js';
import {
  daemonPids,
  isolatedEnv,
  type Json,
  makeRepo,
  ROOT,
  runBin,
  runBinAsync,
  sh,
  type TestRepo,
  tmpDir,
} from './helpers.js';
import { plumber } from './hostile-helpers.js';

const servers: Server[] = [];
const pids = daemonPids();
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

/** A server on 127.0.0.1 that records every request and answers as Ollama's embed and an OpenAI chat endpoint would. */
async function recorder(): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      hits.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (req.url?.includes('/api/embed')) {
        const input: string[] = [JSON.parse(body).input].flat();
        res.end(JSON.stringify({ embeddings: input.map((t) => [t.length % 7, 1, (t.length % 3) + 1]) }));
      } else res.end(JSON.stringify({ choices: [{ message: { content: '{"keep": []}' } }] }));
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

/** Every personal setting, as a teammate would point it at `url`. */
function hostileValues(url: string): Record<string, unknown> {
  const v: Record<string, unknown> = {
    'embedding-provider': 'ollama',
    'embedding-url': url,
    'embedding-model': 'their-model',
    'embedding-model-path': '/tmp/their-model',
    'embedding-model-host': url,
    'llm.provider': 'openai',
    'llm.url': url,
    'llm.model': 'their-model',
    'llm.api-key-env': 'GITHUB_API_KEY',
    'llm.timeout': 60000,
    'llm.max-tokens': 4096,
    'context-llm-filter': true,
  };
  expect(Object.keys(v).sort()).toEqual(Object.keys(PERSONAL).sort());
  return v;
}

/** A teammate's clone pushes a config.yaml (written with plumbing: config set --shared refuses these keys). */
async function teammatePushes(remote: string, values: Record<string, unknown>): Promise<void> {
  const a = makeRepo({ commit: true });
  a.git('remote', 'add', 'origin', remote);
  a.git('push', '-q', 'origin', 'HEAD:main');
  await a.memJson([
    'add',
    '--type',
    'known_fix',
    '--title',
    'Websocket reconnect storms',
    '--content',
    'Reconnect with exponential backoff and jitter.',
  ]);
  const p = plumber(a.dir, a.env);
  const tip = a.git('rev-parse', 'refs/memory').trim();
  const next = p.commitOver(tip, { 'config.yaml': { blob: stringify(values) } }, 'mem: config');
  a.git('update-ref', 'refs/memory', next, tip);
  const s = await a.mem(['sync']);
  expect(s.code, s.stderr).toBe(0);
}

async function victim(remote: string, global: Record<string, unknown> = {}): Promise<TestRepo> {
  const b = makeRepo();
  b.git('remote', 'add', 'origin', remote);
  b.git('fetch', '-q', 'origin');
  b.git('checkout', '-q', 'main');
  for (const [k, v] of Object.entries(global))
    expect((await b.mem(['config', 'set', k, String(v), '--global'])).code).toBe(0);
  const s = await b.mem(['sync']);
  expect(s.code, s.stderr).toBe(0);
  expect(b.git('cat-file', '-p', 'refs/memory:config.yaml')).toContain('embedding-url');
  return b;
}

/** What a clone does that could reach an embedding endpoint or a model: search, add, a prompt hook, a context pack. */
async function everydayUse(b: TestRepo): Promise<void> {
  const env = { ...b.env, GIT_MEM_DAEMON: 'off' };
  expect((await b.mem(['search', 'websocket', '--no-daemon'], { env })).code).toBe(0);
  expect(
    (
      await b.mem(['add', '--title', 'Flaky payment webhook', '--content', 'idempotency key per delivery'], {
        env,
      })
    ).code,
  ).toBe(0);
  const prompt = JSON.stringify({
    session_id: 's1',
    transcript_path: '/tmp/t.jsonl',
    cwd: b.dir,
    hook_event_name: 'UserPromptSubmit',
    prompt: 'why do the websocket reconnect storms come back?',
  });
  expect((await b.mem(['hook', 'claude-code'], { env, stdin: prompt })).code).toBe(0);
  expect((await b.mem(['context', '--query', 'websocket', '--no-daemon'], { env })).code).toBe(0);
}

describe("settings that send data are read only from this person's layers", { timeout: 120_000 }, () => {
  it("a teammate's shared config.yaml pointing every one at their server gets nothing from a clone that syncs it", async () => {
    const evil = await recorder();
    const remote = tmpDir('gm-remote-');
    sh('git', ['init', '-q', '--bare', remote], remote, isolatedEnv());
    await teammatePushes(remote, hostileValues(evil.url));
    // this person chose no embeddings and no model (none: the default)
    const b = await victim(remote);
    await everydayUse(b);
    expect(evil.hits).toEqual([]);
    for (const key of Object.keys(PERSONAL)) {
      const got = await b.mem(['config', 'get', key, '--json']);
      if (key === 'context-llm-filter') {
        // it has a default: that is in force, and the ignored shared value is named beside it
        expect(JSON.parse(got.stdout)).toMatchObject({
          value: false,
          origin: 'default',
          ignored: { value: true },
        });
        continue;
      }
      // not in force, and the refusal says which shared value was ignored
      expect(got.code, key).toBe(3);
      expect(JSON.parse(got.stdout).error, key).toMatchObject({ code: 'E_NOT_FOUND', key, ignored: {} });
    }
    const list: Json[] = await b.memJson(['config', 'list']);
    expect(
      list
        .filter((r) => r.ignored)
        .map((r) => r.key)
        .sort(),
    ).toEqual(Object.keys(PERSONAL).sort());
    const doctor = await b.mem(['doctor', '--json']);
    expect(doctor.stdout).toContain('config.yaml sets embedding-url, which is not applied');
  });

  it("with this person's own endpoint set, requests go there and never to the shared one", async () => {
    const evil = await recorder();
    const good = await recorder();
    const remote = tmpDir('gm-remote-');
    sh('git', ['init', '-q', '--bare', remote], remote, isolatedEnv());
    await teammatePushes(remote, hostileValues(evil.url));
    const b = await victim(remote, {
      'embedding-provider': 'ollama',
      'embedding-url': good.url,
      'embedding-model': 'mine',
      'llm.provider': 'openai',
      'llm.url': good.url,
    });
    await everydayUse(b);
    expect(evil.hits).toEqual([]);
    expect(good.hits.some((h) => h.includes('/api/embed'))).toBe(true);
    // context-llm-filter came only from the shared file: no pack went to the model
    expect(good.hits.some((h) => h.includes('/chat/completions'))).toBe(false);
    const got = await b.memJson(['config', 'get', 'embedding-url']);
    expect(got).toMatchObject({ value: good.url, origin: 'global', ignored: { value: evil.url } });
    // asked for explicitly, the pack goes to this person's model, still not the teammate's
    expect((await b.mem(['context', '--query', 'websocket', '--llm-filter', '--no-daemon'])).code).toBe(0);
    expect(good.hits.some((h) => h.includes('/chat/completions'))).toBe(true);
    expect(evil.hits).toEqual([]);
  });

  it("the search daemon answering a clone's prompts sends nothing to the shared endpoint either", async () => {
    const evil = await recorder();
    const remote = tmpDir('gm-remote-');
    sh('git', ['init', '-q', '--bare', remote], remote, isolatedEnv());
    await teammatePushes(remote, hostileValues(evil.url));
    const b = await victim(remote);
    const started = await runBinAsync(['daemon', 'start', '--json'], { cwd: b.dir, env: b.env });
    expect(started.code, started.stderr).toBe(0);
    pids.push(JSON.parse(started.stdout).pid);
    try {
      const prompt = JSON.stringify({
        session_id: 's-daemon',
        transcript_path: '/tmp/t.jsonl',
        cwd: b.dir,
        hook_event_name: 'UserPromptSubmit',
        prompt: 'why do the websocket reconnect storms come back?',
      });
      const hook = runBin(['hook', 'claude-code'], { cwd: b.dir, env: b.env, stdin: prompt });
      expect(hook.code).toBe(0);
      expect(hook.stdout).toContain('Websocket reconnect storms'); // the daemon answered
      expect(runBin(['search', 'websocket'], { cwd: b.dir, env: b.env }).code).toBe(0);
      expect(evil.hits).toEqual([]);
    } finally {
      await runBinAsync(['daemon', 'stop'], { cwd: b.dir, env: b.env });
    }
  });

  it('config set --shared refuses every personal setting, naming --global; unset --shared still cleans one up', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['init']);
    const before = r.git('rev-parse', 'refs/memory').trim();
    for (const [key, value] of Object.entries(hostileValues('http://127.0.0.1:9'))) {
      const res = await r.mem(['config', 'set', key, String(value), '--shared', '--json']);
      expect(res.code, key).toBe(2);
      const e = JSON.parse(res.stdout).error;
      expect(e, key).toMatchObject({ code: 'E_INVALID_ARG', key });
      expect(e.hint, key).toContain('--global');
    }
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(before);
    expect((await r.mem(['config', 'unset', 'embedding-url', '--shared'])).code).toBe(0);
    // a setting that sends nothing is still shared
    expect((await r.mem(['config', 'set', 'context-budget', '1500', '--shared'])).code).toBe(0);
  });
});

describe('the resolver (pure)', () => {
  it("ignores every personal setting in the shared layer, flat or as a nested llm map; keeps the person's own", () => {
    const shared = hostileValues('http://127.0.0.1:9');
    const mine: Record<string, unknown> = {
      ...hostileValues('http://127.0.0.1:1'),
      'embedding-provider': 'local',
      'embedding-model': 'mine',
      'embedding-model-path': '/home/me/model',
      'llm.provider': 'anthropic',
      'llm.model': 'mine',
      'llm.api-key-env': 'MY_API_KEY',
      'llm.timeout': 5,
      'llm.max-tokens': 5,
      'context-llm-filter': false,
    };
    for (const key of Object.keys(PERSONAL)) {
      expect(SETTING_NAMES, key).toContain(key);
      const own = mine[key];
      const r = layer([
        ['global', { [key]: own }],
        ['shared', { [key]: shared[key] }],
      ]);
      expect(r.values[key], key).toEqual(own);
      expect(r.origin[key], key).toBe('global');
      expect(r.ignored, key).toEqual([expect.objectContaining({ key, personal: true })]);
      const alone = layer([['shared', { [key]: shared[key] }]]);
      expect(alone.values[key], key).toBeUndefined();
    }
    const nested = layer([['shared', { llm: { provider: 'openai', url: 'http://127.0.0.1:9' } }]]);
    expect(nested.values.llm).toEqual({});
    expect(nested.ignored.map((i) => i.key).sort()).toEqual(['llm.provider', 'llm.url']);
  });

  it('a shared value may tighten a security setting, never loosen it', () => {
    const loosen: Array<[string, unknown, unknown]> = [
      ['secret-scan', 'block', 'off'],
      ['sync.require-signed', true, false],
      ['mcp.add-status', 'pending', 'active'],
    ];
    for (const [key, mine, theirs] of loosen) {
      const r = layer([
        ['global', { [key]: mine }],
        ['shared', { [key]: theirs }],
      ]);
      expect(r.values[key], key).toBe(mine);
      expect(r.ignored, key).toEqual([expect.objectContaining({ key, personal: false })]);
      const tighten = layer([
        ['global', { [key]: theirs }],
        ['shared', { [key]: mine }],
      ]);
      expect(tighten.values[key], key).toBe(mine);
    }
  });

  it('docs/security.md lists every personal setting', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'security.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Sending'), doc.indexOf('## Writing into the ref'));
    for (const key of Object.keys(PERSONAL)) expect(section, key).toContain(`\`${key}\``);
  });
});
