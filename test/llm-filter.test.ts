/**
 * `context --llm-filter`: over-retrieve, then the configured model keeps what
 * bears on the task. Against a server on 127.0.0.1 speaking the OpenAI
 * chat-completions wire format: a good reply narrows the pack; a malformed
 * reply, ids it was not offered, an HTTP error and a slow reply all give the
 * ranked pack, with a note naming why.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKeep } from '../src/agents/llm-filter.js';
import { type Json, makeRepo, type TestRepo } from './helpers.js';

let server: Server;
let base = '';
let reply: (body: Json, res: ServerResponse) => void = () => {};
const bodies: Json[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      bodies.push(body);
      reply(body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const completion = (content: string) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1_760_000_000,
  model: 'test-model',
  choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
});
const send = (res: ServerResponse, status: number, doc: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(doc));
};

async function store(): Promise<{ r: TestRepo; fix: string; other: string[] }> {
  const r = makeRepo();
  const env = { GIT_MEM_LLM_PROVIDER: 'openai', GIT_MEM_LLM_URL: base, GIT_MEM_LLM_TIMEOUT: '400' };
  Object.assign(r.env, env);
  await r.memJson(['init']);
  const add = async (title: string, body: string) =>
    (await r.memJson(['add', '--type', 'known_fix', '--title', title, '--content', body])).id as string;
  const fix = await add(
    'Port 3000 already in use',
    'EADDRINUSE on npm run dev: kill the stale dev server (lsof -i :3000).',
  );
  const other = [
    await add(
      'Dev server port is set in vite.config.ts',
      'The port of the dev server comes from server.port.',
    ),
    await add(
      'Production listens on the PORT variable',
      'In production the port comes from the PORT env var.',
    ),
  ];
  return { r, fix, other };
}

const ids = (pack: { items: Array<{ id: string }> }) => pack.items.map((i) => i.id).sort();

describe('context --llm-filter', () => {
  it('keeps what the model keeps, and sends the task and the framed candidates', async () => {
    const { r, fix, other } = await store();
    const ranked = await r.memJson(['context', '-q', 'dev server port in use', '--format', 'json']);
    expect(ids(ranked)).toContain(fix);
    expect(ranked.items.length).toBeGreaterThan(1); // something for the model to leave out
    reply = (_b, res) => send(res, 200, completion(`{"keep": ["${fix}"]}`));
    const n = bodies.length;
    const res = await r.mem(['context', '-q', 'dev server port in use', '--format', 'json', '--llm-filter']);
    expect(res.code, res.stderr).toBe(0);
    expect(ids(JSON.parse(res.stdout))).toEqual([fix]);
    expect(res.stderr).toBe('');
    expect(bodies.length).toBe(n + 1);
    const prompt = bodies[n].messages[1].content as string;
    expect(prompt).toContain('question: dev server port in use');
    for (const id of [fix, ...other]) expect(prompt).toContain(`id: ${id}`);
    expect(prompt).toMatch(/<memory source="git-mem" kind="candidates">/);
    // the setting turns it on without the flag (the local layer: git config mem.*)
    r.git('config', 'mem.context-llm-filter', 'true');
    expect(ids(await r.memJson(['context', '-q', 'dev server port in use', '--format', 'json']))).toEqual([
      fix,
    ]);
  });

  it('gives the ranked pack on a malformed reply, ids it was not offered, an HTTP error or a slow reply', async () => {
    const { r, fix } = await store();
    const all = ids(await r.memJson(['context', '-q', 'dev server port in use', '--format', 'json']));
    expect(all.length).toBeGreaterThan(1);
    const cases: Array<[string, (b: Json, res: ServerResponse) => void, RegExp]> = [
      ['malformed', (_b, res) => send(res, 200, completion('Sure! Keep the first one.')), /malformed reply/],
      [
        'foreign id',
        (_b, res) => send(res, 200, completion('{"keep": ["01ZZZZZZZZZZZZZZZZZZZZZZZZ"]}')),
        /malformed/,
      ],
      ['http 500', (_b, res) => send(res, 500, { error: { message: 'boom' } }), /http 500/],
      [
        'slow',
        (_b, res) => setTimeout(() => send(res, 200, completion(`{"keep": ["${fix}"]}`)), 3000),
        /timeout/,
      ],
    ];
    for (const [what, behaviour, why] of cases) {
      reply = behaviour;
      const t0 = Date.now();
      const res = await r.mem([
        'context',
        '-q',
        'dev server port in use',
        '--format',
        'json',
        '--llm-filter',
      ]);
      expect(res.code, what).toBe(0);
      expect(ids(JSON.parse(res.stdout)), what).toEqual(all);
      expect(res.stderr, what).toMatch(why);
      expect(res.stderr.trim().split('\n'), what).toHaveLength(1);
      if (what === 'slow') expect(Date.now() - t0).toBeLessThan(2500);
    }
  });

  it('parses only a list of offered ids', () => {
    const offered = new Set(['A1', 'B2']);
    expect(parseKeep('{"keep": ["B2"]}', offered)).toEqual(new Set(['B2']));
    expect(parseKeep('here you go: {"keep": []}', offered)).toEqual(new Set());
    expect(parseKeep('{"keep": "A1"}', offered)).toBeNull();
    expect(parseKeep('{"keep": ["A1", "C3"]}', offered)).toBeNull();
    expect(parseKeep('no json', offered)).toBeNull();
  });
});
