/**
 * Embeddings as `git mem search` uses them: the local tiny model fills the
 * vector cache under .git/mem/vectors, and a provider that never answers
 * leaves search on text, with a normal answer.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { VectorCache } from '../src/search/embed/index.js';
import { makeRepo, type TestRepo, tmpDir } from './helpers.js';
import { hasLocalEmbeddings, LOCAL_EMBEDDINGS, needs } from './support/needs.js';
import { writeTinyModel } from './support/tiny-model.js';

const servers: Server[] = [];
afterAll(() => {
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

/** An Ollama on 127.0.0.1 giving vec(text) for each text after delayMs, configured in r (this clone). */
async function useOllama(
  r: TestRepo,
  vec: (text: string) => number[],
  delayMs: number,
  more: Record<string, string>,
): Promise<void> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const input: string[] = [JSON.parse(body).input].flat();
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ model: 'm', embeddings: input.map(vec) }));
      }, delayMs);
    });
  });
  servers.push(server);
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const settings = { 'embedding-provider': 'ollama', 'embedding-model': 'm', 'embedding-url': url, ...more };
  for (const [k, v] of Object.entries(settings)) await r.mem(['config', 'set', k, v, '--local']);
}

async function seed(r: TestRepo): Promise<void> {
  await r.memJson(['init']);
  await r.memJson([
    'add',
    '--type',
    'known_fix',
    '--title',
    'Postgres connection refused on CI',
    '--content',
    'The db test suite fails with ECONNREFUSED when the database container starts late; wait for the port.',
  ]);
  await r.memJson([
    'add',
    '--type',
    'convention',
    '--title',
    'Tabs in CSS',
    '--content',
    'Stylesheets use tabs for indentation.',
  ]);
}

// the tests that run the local provider's real runtime (not in the contributor install)
const local = needs(LOCAL_EMBEDDINGS, hasLocalEmbeddings());

describe('search with embeddings', () => {
  it('embeds every memory once with the local model and keeps the vectors in .git/mem/vectors', async (t) => {
    local.skip(t);
    const r = makeRepo({ commit: true });
    await seed(r);
    const model = join(tmpDir('gm-tiny-'), 'tiny');
    writeTinyModel(model);
    await r.mem(['config', 'set', 'embedding-provider', 'local', '--local']);
    await r.mem(['config', 'set', 'embedding-model-path', model, '--local']);
    const hits = await r.memJson(['search', 'database connection refused', '--no-daemon']);
    expect(hits[0].title).toBe('Postgres connection refused on CI');
    const status = await r.memJson(['models', 'status']);
    expect(status.cache).toEqual([expect.objectContaining({ count: 2, current: true })]);
    expect(status.lineage).toMatchObject({ provider: 'local', dimension: 384 });
    const dir = join(r.dir, '.git', 'mem', 'vectors');
    expect(VectorCache.list(dir).map((c) => c.key)).toEqual([status.lineageKey]);
  });

  it('answers from text when the embedding server never replies', async () => {
    const r = makeRepo({ commit: true });
    await seed(r);
    let requests = 0;
    const server = createServer(() => {
      requests++; // accept and never answer
    });
    servers.push(server);
    await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (const [k, v] of [
      ['embedding-provider', 'ollama'],
      ['embedding-model', 'stuck-model'],
      ['embedding-url', url],
      ['embedding-dimension', '8'],
      ['embedding-timeout-ms', '200'],
    ]) {
      await r.mem(['config', 'set', k, v, '--local']);
    }
    const res = await r.mem(['search', 'ECONNREFUSED', '--no-daemon', '--json']);
    expect(res.code).toBe(0);
    const hits = JSON.parse(res.stdout);
    expect(hits.map((h: { title: string }) => h.title)).toEqual(['Postgres connection refused on CI']);
    expect(requests).toBeGreaterThan(0); // the provider was tried, and search did not wait for it
  });

  it('lists no memory for a query whose vector points nowhere near any of theirs', async () => {
    const r = makeRepo({ commit: true });
    await seed(r);
    // the query's vector is orthogonal to every memory's (cosine 0)
    await useOllama(r, (t) => (/xylophonist/.test(t) ? [0, 1, 0, 0] : [1, 0, 0, 0]), 0, {
      'embedding-dimension': '4',
    });
    await r.mem(['reindex']);
    const none = await r.mem(['search', 'xylophonist', '--no-daemon', '--json']);
    expect(none.code, none.stderr).toBe(0);
    expect(JSON.parse(none.stdout)).toEqual([]);
    // and a word of a memory still finds it, with the vectors on
    const hit = JSON.parse((await r.mem(['search', 'ECONNREFUSED', '--no-daemon', '--json'])).stdout);
    expect(hit[0].title).toBe('Postgres connection refused on CI');
  });

  it('gives the query the embedding-timeout-ms budget, not a shorter one of its own', async () => {
    const r = makeRepo({ commit: true });
    await seed(r);
    // an Ollama that answers every request correctly, after 1.7 s (a slow local model)
    await useOllama(r, (t) => Array.from({ length: 8 }, (_, i) => ((t.length * (i + 1)) % 7) + 1), 1700, {
      'embedding-dimension': '8',
      'embedding-timeout-ms': '5000',
    });
    await r.mem(['reindex']); // the memories' vectors, so that the search below waits only for its query's
    const res = await r.mem(['search', 'ECONNREFUSED', '--no-daemon', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const hits = JSON.parse(res.stdout) as Array<{ title: string; why: string }>;
    expect(hits[0].title).toBe('Postgres connection refused on CI');
    expect(hits[0].why).toMatch(/vector/);
  }, 60_000);
});
