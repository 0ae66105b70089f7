/**
 * Ollama and OpenAI-compatible providers against small HTTP servers on
 * 127.0.0.1 that speak the real request and response shapes, including HTTP
 * errors, malformed replies and servers that never answer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  dot,
  type EmbeddingError,
  embedWithFallback,
  getEmbeddingProvider,
} from '../src/search/embed/index.js';
import type { Json } from './helpers.js';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Json;
}

type Handler = (req: Seen, res: ServerResponse) => void;

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

/** A server whose behaviour each test sets; records every request and whether the client hung up. */
async function fakeServer(): Promise<{
  url: string;
  seen: Seen[];
  closed: number[];
  handle: (h: Handler) => void;
}> {
  let handler: Handler = (_q, res) => res.end();
  const seen: Seen[] = [];
  const closed: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // keep text
      }
      const q = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body };
      const n = seen.push(q);
      res.on('close', () => {
        if (!res.writableEnded) closed.push(n);
      });
      handler(q, res);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, closed, handle: (h) => (handler = h) };
}

/** A deterministic fake embedding: letter counts, so texts sharing letters are close. */
function fakeVec(text: string, dim: number): number[] {
  const v = new Array(dim).fill(0);
  for (const ch of text.toLowerCase()) v[ch.charCodeAt(0) % dim] += 1;
  v[0] += 0.5;
  return v;
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

describe('ollama provider (POST /api/embed)', () => {
  let srv: Awaited<ReturnType<typeof fakeServer>>;
  beforeEach(async () => {
    srv = await fakeServer();
    srv.handle((q, res) => {
      if (q.method !== 'POST' || q.url !== '/api/embed') return json(res, 404, '404 page not found');
      if (q.body.model !== 'tiny-embed')
        return json(res, 404, { error: `model "${q.body.model}" not found, try pulling it first` });
      json(res, 200, {
        model: q.body.model,
        embeddings: q.body.input.map((t: string) => fakeVec(t, 8)),
        total_duration: 1,
      });
    });
  });

  it('probes the size of an unknown model, embeds in batches and normalises', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'ollama',
        'embedding-model': 'tiny-embed',
        'embedding-url': srv.url,
        'embedding-batch-size': '2',
      },
      {},
      { strict: true },
    );
    expect(p!.lineage).toEqual({
      provider: 'ollama',
      model: 'tiny-embed',
      dimension: 8,
      normalize: true,
      version: '1',
    });
    expect(srv.seen).toHaveLength(1); // the probe
    const v = await p!.embed(['alpha', 'alphabet', 'zzz', 'alpha beta', 'omega']);
    expect(v).toHaveLength(5);
    for (const x of v) expect(Math.sqrt(dot(x, x))).toBeCloseTo(1, 6);
    expect(srv.seen.slice(1).map((s) => s.body.input)).toEqual([
      ['alpha', 'alphabet'],
      ['zzz', 'alpha beta'],
      ['omega'],
    ]);
    expect(srv.seen[1]).toMatchObject({ method: 'POST', url: '/api/embed', body: { model: 'tiny-embed' } });
    expect(srv.seen[1].headers['content-type']).toBe('application/json');
    expect(dot(v[0], v[1])).toBeGreaterThan(dot(v[0], v[2]));
    // the size is probed once per process: a second provider for the same endpoint and model asks nothing
    const n = srv.seen.length;
    const again = await getEmbeddingProvider(
      { 'embedding-provider': 'ollama', 'embedding-model': 'tiny-embed', 'embedding-url': srv.url },
      {},
      { strict: true },
    );
    expect(again!.lineage.dimension).toBe(8);
    expect(srv.seen.length).toBe(n);
  });

  it('uses a known model size without a probe request and checks the size of replies', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'ollama',
        'embedding-model': 'nomic-embed-text',
        'embedding-url': `${srv.url}/`,
      },
      {},
      { strict: true },
    );
    expect(p!.lineage.dimension).toBe(768);
    expect(srv.seen).toHaveLength(0);
    srv.handle((q, res) => json(res, 200, { embeddings: q.body.input.map((t: string) => fakeVec(t, 8)) }));
    const errors: EmbeddingError[] = [];
    expect(await embedWithFallback(p, ['x'], 2000, (e) => errors.push(e as EmbeddingError))).toBeNull();
    expect(errors[0]).toMatchObject({ name: 'EmbeddingError', reason: 'dimension' });
  });

  it('reads OLLAMA_HOST when no URL is configured', async () => {
    const host = srv.url.replace('http://', '');
    const p = await getEmbeddingProvider(
      { 'embedding-provider': 'ollama', 'embedding-model': 'tiny-embed' },
      { OLLAMA_HOST: host },
      { strict: true },
    );
    expect(p!.lineage.dimension).toBe(8);
    expect(srv.seen).toHaveLength(1);
  });

  it('falls back (null) on an HTTP error and names it', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'ollama',
        'embedding-model': 'missing-model',
        'embedding-url': srv.url,
        'embedding-dimension': 8,
      },
      {},
      { strict: true },
    );
    const errors: EmbeddingError[] = [];
    expect(await embedWithFallback(p, ['hello'], 2000, (e) => errors.push(e as EmbeddingError))).toBeNull();
    expect(errors[0]).toMatchObject({ reason: 'http', status: 404 });
    // the server's own words, which name the model
    expect(errors[0].message).toContain('missing-model');
  });

  it('falls back (null) on malformed replies', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'ollama',
        'embedding-model': 'tiny-embed',
        'embedding-url': srv.url,
        'embedding-dimension': 8,
      },
      {},
      { strict: true },
    );
    const bad: Array<[string, unknown]> = [
      ['not json', '<html>oops</html>'],
      ['no list', { embedding: [1, 2, 3] }],
      ['too few', { embeddings: [fakeVec('a', 8)] }],
      ['not numbers', { embeddings: [['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], fakeVec('b', 8)] }],
      ['empty vector', { embeddings: [[], []] }],
    ];
    for (const [label, body] of bad) {
      srv.handle((_q, res) => json(res, 200, body));
      const errors: EmbeddingError[] = [];
      const r = await embedWithFallback(p, ['a', 'b'], 2000, (e) => errors.push(e as EmbeddingError));
      expect(r, label).toBeNull();
      expect(errors[0], label).toMatchObject({ name: 'EmbeddingError', reason: 'malformed' });
    }
  });

  it('times out on a server that never answers: null, and the request is aborted', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'ollama',
        'embedding-model': 'tiny-embed',
        'embedding-url': srv.url,
        'embedding-dimension': 8,
      },
      {},
      { strict: true },
    );
    srv.handle(() => {}); // hold the request forever
    const errors: EmbeddingError[] = [];
    expect(await embedWithFallback(p, ['slow'], 150, (e) => errors.push(e as EmbeddingError))).toBeNull();
    expect(errors[0]).toMatchObject({ name: 'EmbeddingError', reason: 'timeout' });
    await expect.poll(() => srv.closed).toEqual([1]); // the client hung up: nothing keeps running
  });

  it('uses embedding-timeout-ms as the default budget', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'ollama',
        'embedding-model': 'tiny-embed',
        'embedding-url': srv.url,
        'embedding-dimension': 8,
        'embedding-timeout-ms': '120',
      },
      {},
      { strict: true },
    );
    expect(p!.timeoutMs).toBe(120);
    srv.handle(() => {});
    expect(await embedWithFallback(p, ['slow'])).toBeNull();
  });

  it('gives no provider (null, warning) when the size probe cannot reach the server', async () => {
    const url = await closedPortUrl();
    const warnings: string[] = [];
    const p = await getEmbeddingProvider(
      { 'embedding-provider': 'ollama', 'embedding-model': 'tiny-embed', 'embedding-url': url },
      {},
      { onWarning: (m) => warnings.push(m) },
    );
    expect(p).toBeNull();
    expect(warnings[0]).toMatch(
      /cannot learn the vector size of ollama model tiny-embed: .*cannot reach .*ECONNREFUSED/,
    );
    await expect(
      getEmbeddingProvider(
        { 'embedding-provider': 'ollama', 'embedding-model': 'tiny-embed', 'embedding-url': url },
        {},
        { strict: true },
      ),
    ).rejects.toMatchObject({ code: 'E_REMOTE' });
  });

  it('needs a model name', async () => {
    await expect(
      getEmbeddingProvider({ 'embedding-provider': 'ollama' }, {}, { strict: true }),
    ).rejects.toMatchObject({
      code: 'E_INVALID_ARG',
      message: expect.stringMatching(/needs embedding-model/),
    });
  });
});

describe('openai-compatible provider (POST /v1/embeddings)', () => {
  let srv: Awaited<ReturnType<typeof fakeServer>>;
  const KEY = 'sk-test-0123456789abcdef';
  beforeEach(async () => {
    srv = await fakeServer();
    srv.handle((q, res) => {
      if (q.method !== 'POST' || q.url !== '/v1/embeddings')
        return json(res, 404, { error: { message: 'Not found', type: 'invalid_request_error' } });
      if (q.headers.authorization !== `Bearer ${KEY}`) {
        return json(res, 401, {
          error: {
            message: 'Incorrect API key provided.',
            type: 'invalid_request_error',
            code: 'invalid_api_key',
          },
        });
      }
      const dim = q.body.dimensions ?? 6;
      const data = q.body.input.map((t: string, index: number) => ({
        object: 'embedding',
        index,
        embedding: fakeVec(t, dim),
      }));
      data.reverse(); // the index field, not the order, says which text a vector belongs to
      json(res, 200, {
        object: 'list',
        data,
        model: q.body.model,
        usage: { prompt_tokens: 1, total_tokens: 1 },
      });
    });
  });

  it('sends the key from the environment and orders vectors by index', async () => {
    for (const url of [srv.url, `${srv.url}/v1`, `${srv.url}/v1/`]) {
      const p = await getEmbeddingProvider(
        { 'embedding-provider': 'openai', 'embedding-model': 'tiny-3', 'embedding-url': url },
        { GIT_MEM_OPENAI_API_KEY: KEY },
        { strict: true },
      );
      expect(p!.lineage).toMatchObject({
        provider: 'openai',
        model: 'tiny-3',
        dimension: 6,
        normalize: true,
      });
      const v = await p!.embed(['abc', 'xyz']);
      const expectA = fakeVec('abc', 6);
      const n = Math.sqrt(dot(expectA, expectA));
      expect(v[0].map((x) => +x.toFixed(6))).toEqual(expectA.map((x) => +(x / n).toFixed(6)));
    }
    const last = srv.seen[srv.seen.length - 1];
    expect(last).toMatchObject({
      url: '/v1/embeddings',
      body: { model: 'tiny-3', input: ['abc', 'xyz'], encoding_format: 'float' },
    });
    expect(last.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('accepts OPENAI_API_KEY and sends dimensions when embedding-dimension is set (no probe)', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'openai',
        'embedding-model': 'text-embedding-3-small',
        'embedding-url': srv.url,
        'embedding-dimension': '4',
      },
      { OPENAI_API_KEY: KEY },
      { strict: true },
    );
    expect(p!.lineage.dimension).toBe(4);
    expect(srv.seen).toHaveLength(0);
    expect(await embedWithFallback(p, ['hello'])).toHaveLength(1);
    expect(srv.seen[0].body.dimensions).toBe(4);
  });

  it('does not follow redirects (the key must not travel to another host)', async () => {
    const other = await fakeServer();
    srv.handle((_q, res) => {
      res.writeHead(307, { location: `${other.url}/v1/embeddings` });
      res.end();
    });
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'openai',
        'embedding-model': 'tiny-3',
        'embedding-url': srv.url,
        'embedding-dimension': 6,
      },
      { GIT_MEM_OPENAI_API_KEY: KEY },
      { strict: true },
    );
    expect(await embedWithFallback(p, ['a'], 2000)).toBeNull();
    expect(other.seen).toHaveLength(0);
  });

  it('falls back (null) on 401 without leaking the key into the message', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'openai',
        'embedding-model': 'tiny-3',
        'embedding-url': srv.url,
        'embedding-dimension': 6,
      },
      { GIT_MEM_OPENAI_API_KEY: 'sk-wrong-key-xyz' },
      { strict: true },
    );
    const errors: EmbeddingError[] = [];
    expect(await embedWithFallback(p, ['a'], 2000, (e) => errors.push(e as EmbeddingError))).toBeNull();
    expect(errors[0]).toMatchObject({ reason: 'http', status: 401 });
    expect(errors[0].message).toContain('Incorrect API key provided');
    expect(errors[0].message).not.toContain('sk-wrong-key-xyz');
  });

  it('falls back (null) on malformed replies', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'openai',
        'embedding-model': 'tiny-3',
        'embedding-url': srv.url,
        'embedding-dimension': 6,
      },
      { GIT_MEM_OPENAI_API_KEY: KEY },
      { strict: true },
    );
    const bad: Array<[string, unknown]> = [
      ['truncated json', '{"data": [{"embedding": [1,2'],
      ['no data', { object: 'list' }],
      [
        'repeated index',
        {
          data: [
            { index: 0, embedding: fakeVec('a', 6) },
            { index: 0, embedding: fakeVec('b', 6) },
          ],
        },
      ],
      [
        'index out of range',
        {
          data: [
            { index: 0, embedding: fakeVec('a', 6) },
            { index: 5, embedding: fakeVec('b', 6) },
          ],
        },
      ],
      ['missing one', { data: [{ index: 0, embedding: fakeVec('a', 6) }] }],
    ];
    for (const [label, body] of bad) {
      srv.handle((_q, res) => json(res, 200, body));
      const errors: EmbeddingError[] = [];
      expect(
        await embedWithFallback(p, ['a', 'b'], 2000, (e) => errors.push(e as EmbeddingError)),
        label,
      ).toBeNull();
      expect(errors[0], label).toMatchObject({ name: 'EmbeddingError', reason: 'malformed' });
    }
  });

  it('times out when the server stalls mid-body: null and the connection is dropped', async () => {
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'openai',
        'embedding-model': 'tiny-3',
        'embedding-url': srv.url,
        'embedding-dimension': 6,
      },
      { GIT_MEM_OPENAI_API_KEY: KEY },
      { strict: true },
    );
    srv.handle((_q, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"object":"list","data":['); // and never finish
    });
    expect(await embedWithFallback(p, ['a'], 150)).toBeNull();
    await expect.poll(() => srv.closed).toEqual([1]);
  });

  it('needs a key for api.openai.com, and never sends one to a URL from the shared config', async () => {
    await expect(
      getEmbeddingProvider(
        { 'embedding-provider': 'openai', 'embedding-model': 'text-embedding-3-small' },
        {},
        { strict: true },
      ),
    ).rejects.toMatchObject({ code: 'E_INVALID_ARG', message: expect.stringMatching(/needs an API key/) });
    const warnings: string[] = [];
    const p = await getEmbeddingProvider(
      {
        'embedding-provider': 'openai',
        'embedding-model': 'tiny-3',
        'embedding-url': srv.url,
        'embedding-dimension': 6,
      },
      { GIT_MEM_OPENAI_API_KEY: KEY },
      { origin: { 'embedding-url': 'shared' }, onWarning: (m) => warnings.push(m) },
    );
    expect(p).toBeNull();
    expect(warnings[0]).toMatch(
      /refusing to send an API key to http:\/\/127\.0\.0\.1:\d+, set by the shared config/,
    );
    expect(srv.seen).toHaveLength(0);
    // a local endpoint without a key is fine (vLLM, llama.cpp, TEI)
    srv.handle((q, res) =>
      json(res, 200, {
        data: q.body.input.map((t: string, index: number) => ({ index, embedding: fakeVec(t, 6) })),
      }),
    );
    const open = await getEmbeddingProvider(
      { 'embedding-provider': 'openai', 'embedding-model': 'local-model', 'embedding-url': srv.url },
      {},
      { strict: true },
    );
    expect(await embedWithFallback(open, ['a'])).toHaveLength(1);
    expect(srv.seen[srv.seen.length - 1].headers.authorization).toBeUndefined();
  });
});

describe('settings', () => {
  it('rejects unknown providers and bad numbers with one line naming the key', async () => {
    await expect(
      getEmbeddingProvider({ 'embedding-provider': 'fastembed' }, {}, { strict: true }),
    ).rejects.toMatchObject({
      code: 'E_INVALID_ARG',
      message: 'embedding-provider must be one of none, local, ollama, openai, not "fastembed"',
    });
    await expect(
      getEmbeddingProvider(
        { 'embedding-provider': 'ollama', 'embedding-model': 'm', 'embedding-timeout-ms': 'soon' },
        {},
        { strict: true },
      ),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/^embedding-timeout-ms must be a positive whole number/),
    });
    const warnings: string[] = [];
    expect(
      await getEmbeddingProvider(
        { 'embedding-provider': 'fastembed' },
        {},
        { onWarning: (m) => warnings.push(m) },
      ),
    ).toBeNull();
    expect(warnings).toHaveLength(1);
  });

  it('is off by default and with provider none', async () => {
    expect(await getEmbeddingProvider({}, { OPENAI_API_KEY: 'sk-x' })).toBeNull();
    expect(await getEmbeddingProvider({ 'embedding-provider': 'none' })).toBeNull();
    expect(await embedWithFallback(null, ['a'])).toBeNull();
  });
});
