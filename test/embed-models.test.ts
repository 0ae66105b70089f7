/** `git mem models list|pull|status`: local models, the explicit download opt-in, provider status. */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorOf, makeRepo, type TestRepo, tmpDir } from './helpers.js';
import { hasLocalEmbeddings, LOCAL_EMBEDDINGS, needs } from './support/needs.js';
import { tinyModelFiles, writeTinyModel } from './support/tiny-model.js';

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

async function closedPortUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}/`;
}

/** A model hub on 127.0.0.1 serving the tiny model at /{model}/resolve/main/{file}, like huggingface.co. */
async function fakeHub(model: string): Promise<{ url: string; requests: string[] }> {
  const files = tinyModelFiles();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const prefix = `/${model}/resolve/main/`;
    const body = req.url?.startsWith(prefix)
      ? files.get(decodeURIComponent(req.url.slice(prefix.length)))
      : undefined;
    if (body === undefined) {
      res.writeHead(404).end('Entry not found');
      return;
    }
    const buf = Buffer.from(body as Uint8Array | string);
    res.writeHead(200, { 'content-length': buf.length, 'content-type': 'application/octet-stream' });
    res.end(req.method === 'HEAD' ? undefined : buf);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, requests };
}

let r: TestRepo;
let home: string;

beforeAll(async () => {
  r = makeRepo({ commit: true });
  home = r.env.GIT_MEM_HOME!;
  await r.memJson(['init']);
});

// the tests that run the local provider's real runtime (not in the contributor install)
const local = needs(LOCAL_EMBEDDINGS, hasLocalEmbeddings());

describe('git mem models', () => {
  it('status: embeddings are off by default', async () => {
    const s = await r.memJson(['models', 'status']);
    expect(s).toMatchObject({ provider: 'none', enabled: false, lineage: null, settings: {}, cache: [] });
    const human = await r.mem(['models', 'status']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('provider: none (embeddings off; search uses text only)');
  });

  it('pull fails with one clear line when the hub cannot be reached, and leaves nothing behind', async (t) => {
    local.skip(t);
    const host = await closedPortUrl();
    const res = await r.mem(['models', 'pull', 'acme/some-model', '--host', host]);
    expect(res.code).toBe(1);
    // one line, naming the model, the hub and what went wrong (the error carries no data field)
    const line = res.stderr.trim().split('\n').at(-1)!;
    expect(line).toMatch(/^git-mem: error: /);
    expect(line).toContain('acme/some-model');
    expect(line).toContain(host);
    expect(line).toMatch(/ECONNREFUSED|fetch failed/);
    expect(line).toContain('(check the network'); // the hint
    expect(existsSync(join(home, 'models', 'acme', 'some-model'))).toBe(false);
    const json = await r.mem(['models', 'pull', 'acme/some-model', '--host', host, '--json']);
    expect(JSON.parse(json.stdout).error.code).toBe('E_REMOTE');
  });

  it('pull gives up on a stalled hub after --timeout and switches remote downloads off again', async (t) => {
    local.skip(t);
    const server = createServer(() => {}); // accepts, never answers
    servers.push(server);
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    const host = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const res = await r.mem(['models', 'pull', 'acme/slow', '--host', host, '--timeout', '0.3', '--json']);
    expect(res.code).toBe(1);
    const e = errorOf(res);
    expect(e.code).toBe('E_REMOTE');
    // names the model and the time it waited (no data field holds them)
    expect(e.message).toContain('acme/slow');
    expect(e.message).toContain('0.3 s');
    const { loadTransformers } = await import('../src/search/embed/index.js');
    const tf = await loadTransformers();
    expect(tf.env.allowRemoteModels).toBe(false);
    expect(tf.env.useFSCache).toBe(false);
  });

  it('pull takes the hub from embedding-model-host and rejects bad model ids', async (t) => {
    local.skip(t);
    const host = await closedPortUrl();
    await r.mem(['config', 'set', 'embedding-model-host', host, '--local']);
    const res = await r.mem(['models', 'pull', 'acme/other', '--json']);
    expect(errorOf(res).code).toBe('E_REMOTE');
    expect(errorOf(res).message).toContain(host); // the hub it tried: the configured one
    await r.mem(['config', 'unset', 'embedding-model-host', '--local']);
    const bad = await r.mem(['models', 'pull', '../../etc', '--json']);
    expect(bad.code).toBe(2);
    expect(errorOf(bad).code).toBe('E_INVALID_ARG');
    expect(errorOf(bad).message).toContain('"../../etc"'); // the id it refused
  });

  it('pull downloads from a reachable hub into the models dir, then list and status see it', async (t) => {
    local.skip(t);
    const hub = await fakeHub('acme/tiny');
    const pulled = await r.memJson(['models', 'pull', 'acme/tiny', '--host', hub.url]);
    expect(pulled).toMatchObject({ model: 'acme/tiny', dimension: 384, dtype: 'fp32', modelType: 'bert' });
    expect(pulled.dir).toBe(join(home, 'models', 'acme', 'tiny'));
    expect(existsSync(join(pulled.dir, 'onnx', 'model.onnx'))).toBe(true);
    expect(hub.requests.some((q) => q.endsWith('/acme/tiny/resolve/main/onnx/model.onnx'))).toBe(true);

    const list = await r.memJson(['models', 'list']);
    expect(list).toEqual([expect.objectContaining({ name: 'acme/tiny', dimension: 384, modelType: 'bert' })]);

    await r.mem(['config', 'set', 'embedding-provider', 'local', '--local']);
    await r.mem(['config', 'set', 'embedding-model', 'acme/tiny', '--local']);
    const s = await r.memJson(['models', 'status', '--check']);
    expect(s).toMatchObject({
      provider: 'local',
      enabled: true,
      lineage: { provider: 'local', dimension: 384, normalize: true },
      check: { ok: true },
      settings: { 'embedding-provider': { value: 'local', origin: 'local' } },
    });
    // the local provider never downloads: a second status makes no request to the hub
    const before = hub.requests.length;
    await r.memJson(['models', 'status', '--check']);
    expect(hub.requests.length).toBe(before);
  });

  it('status names the problem and exits 1 when the configured model is missing', async () => {
    const repo = makeRepo({ commit: true });
    await repo.memJson(['init']);
    await repo.mem(['config', 'set', 'embedding-provider', 'local', '--local']);
    await repo.mem([
      'config',
      'set',
      'embedding-model-path',
      join(tmpDir('gm-nomodel-'), 'missing'),
      '--local',
    ]);
    const res = await repo.mem(['models', 'status']);
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/problem: no local embedding model at .*missing \(fix embedding-model-path\)/);
  });

  it('a local model id that climbs out of the models folder is refused, by code, before anything is read', async () => {
    const { getEmbeddingProvider } = await import('../src/search/embed/index.js');
    const e = await getEmbeddingProvider(
      { 'embedding-provider': 'local', 'embedding-model': '../../etc/x' },
      { GIT_MEM_HOME: tmpDir('gm-home-') },
      { strict: true },
    ).catch((x) => x);
    expect(e).toMatchObject({
      code: 'E_INVALID_ARG',
      data: { setting: 'embedding-model', value: '../../etc/x' },
    });
    const warnings: string[] = [];
    const off = await getEmbeddingProvider(
      { 'embedding-provider': 'local', 'embedding-model': '../../etc/x' },
      { GIT_MEM_HOME: tmpDir('gm-home-') },
      { onWarning: (w) => warnings.push(w) },
    );
    expect(off).toBeNull();
    expect(warnings).toHaveLength(1);
  });

  it('status lists the cached vector lineages of the repository', async () => {
    const repo = makeRepo({ commit: true });
    await repo.memJson(['init']);
    const model = join(tmpDir('gm-m-'), 'tiny');
    writeTinyModel(model);
    await repo.mem(['config', 'set', 'embedding-provider', 'local', '--local']);
    await repo.mem(['config', 'set', 'embedding-model-path', model, '--local']);
    const { getEmbeddingProvider, VectorCache, contentHash } = await import('../src/search/embed/index.js');
    const p = await getEmbeddingProvider(
      { 'embedding-provider': 'local', 'embedding-model-path': model },
      {},
      { strict: true },
    );
    const c = new VectorCache(join(repo.dir, '.git', 'mem', 'vectors'), p!.lineage);
    c.put(contentHash('x'), new Array(384).fill(0.05));
    c.flush();
    const s = await repo.memJson(['models', 'status']);
    expect(s.cache).toEqual([{ lineage: s.lineageKey, count: 1, bytes: expect.any(Number), current: true }]);
  });

  it('list is empty without models and rejects unknown actions', async () => {
    const repo = makeRepo();
    expect(await repo.memJson(['models', 'list'])).toEqual([]);
    const bad = await repo.mem(['models', 'download']);
    expect(bad.code).toBe(2);
  });
});
