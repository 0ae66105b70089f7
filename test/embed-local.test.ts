/**
 * The local provider through the real transformers.js pipeline, on a tiny
 * BERT-type model generated at test setup (no model can be downloaded here).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  contentHash,
  dot,
  type EmbeddingProvider,
  embedMissing,
  embedWithFallback,
  getEmbeddingProvider,
  lineageKey,
  loadTransformers,
  VectorCache,
} from '../src/search/embed/index.js';
import { tmpDir } from './helpers.js';
import { hasLocalEmbeddings, LOCAL_EMBEDDINGS, needs } from './support/needs.js';
import { tinyModelFiles, writeTinyModel } from './support/tiny-model.js';

let modelDir: string;
let provider: EmbeddingProvider;
// the local provider's real runtime (not in the contributor install)
const local = needs(LOCAL_EMBEDDINGS, hasLocalEmbeddings());

beforeAll(async () => {
  modelDir = join(tmpDir('gm-tiny-'), 'tiny-bert');
  writeTinyModel(modelDir);
  if (!local.present) return;
  const p = await getEmbeddingProvider(
    { 'embedding-provider': 'local', 'embedding-model-path': modelDir },
    {},
    { strict: true },
  );
  if (!p) throw new Error('no provider');
  provider = p;
});

const norm = (v: number[]) => Math.sqrt(dot(v, v));

describe('tiny model generator', () => {
  it('is deterministic and writes a BERT-type folder with an IR 7 / opset 13 ONNX graph', () => {
    const a = tinyModelFiles();
    const b = tinyModelFiles();
    expect([...a.keys()].sort()).toEqual([
      'config.json',
      'onnx/model.onnx',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    expect(
      Buffer.from(a.get('onnx/model.onnx') as Uint8Array).equals(
        Buffer.from(b.get('onnx/model.onnx') as Uint8Array),
      ),
    ).toBe(true);
    const cfg = JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8'));
    expect(cfg).toMatchObject({ model_type: 'bert', hidden_size: 384 });
    const tok = JSON.parse(readFileSync(join(modelDir, 'tokenizer.json'), 'utf8'));
    expect(tok.model.type).toBe('WordPiece');
    const onnx = readFileSync(join(modelDir, 'onnx', 'model.onnx'));
    // ModelProto field 1 (ir_version) = 7 comes first; the opset import (field 8) ends with version 13
    expect([onnx[0], onnx[1]]).toEqual([0x08, 7]);
    expect([...onnx.subarray(-2)]).toEqual([0x10, 13]);
    const again = writeTinyModel(modelDir);
    expect(again.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });
});

describe('local provider (transformers.js)', () => {
  beforeEach((t) => local.skip(t));
  it('has a 384-d normalised lineage keyed to the model files', () => {
    expect(provider.lineage).toMatchObject({ provider: 'local', dimension: 384, normalize: true });
    expect(provider.lineage.model).toContain('git-mem/tiny-bert');
    expect(provider.lineage.version).toMatch(/^[0-9a-f]{16}$/);
  });

  it('embeds through the real pipeline: 384 dims, unit length, deterministic, similar texts closer', async () => {
    const texts = [
      'database connection refused on CI',
      'the db connection pool was refused in ci',
      'use tabs for css indentation',
      'Database connection refused on CI',
    ];
    const v = await provider.embed(texts);
    expect(v).toHaveLength(4);
    for (const x of v) {
      expect(x).toHaveLength(384);
      expect(norm(x)).toBeCloseTo(1, 5);
    }
    const again = await provider.embed([texts[0]]);
    expect(again[0]).toEqual(v[0]);
    // lower-casing normaliser: same text up to case → same vector
    expect(dot(v[0], v[3])).toBeCloseTo(1, 5);
    expect(dot(v[0], v[1])).toBeGreaterThan(dot(v[0], v[2]) + 0.2);
    expect(dot(v[1], v[0])).toBeGreaterThan(dot(v[1], v[2]));
  });

  it('never downloads: remote models stay off after loading', async () => {
    const tf = await loadTransformers();
    expect(tf.env.allowRemoteModels).toBe(false);
  });

  it('changes lineage version when the weights change', async () => {
    const other = join(tmpDir('gm-tiny2-'), 'tiny-bert');
    writeTinyModel(other, { seed: 7 });
    const p2 = await getEmbeddingProvider(
      { 'embedding-provider': 'local', 'embedding-model-path': other },
      {},
      { strict: true },
    );
    expect(p2!.lineage.model).toBe(provider.lineage.model);
    expect(p2!.lineage.version).not.toBe(provider.lineage.version);
    expect(lineageKey(p2!.lineage)).not.toBe(lineageKey(provider.lineage));
    const p3 = await getEmbeddingProvider(
      { 'embedding-provider': 'local', 'embedding-model-path': modelDir, 'embedding-version': '2' },
      {},
      { strict: true },
    );
    expect(p3!.lineage.version).toBe(`${provider.lineage.version}+2`);
  });

  it('falls back (null) when the weights are broken', async () => {
    const broken = join(tmpDir('gm-broken-'), 'tiny-bert');
    writeTinyModel(broken);
    writeFileSync(join(broken, 'onnx', 'model.onnx'), 'not an onnx file');
    const p = await getEmbeddingProvider(
      { 'embedding-provider': 'local', 'embedding-model-path': broken },
      {},
      { strict: true },
    );
    const errors: unknown[] = [];
    expect(await embedWithFallback(p, ['hello'], 10_000, (e) => errors.push(e))).toBeNull();
    expect(errors).toHaveLength(1);
  });

  it('finds a model by id under the models directory', async () => {
    const home = tmpDir('gm-home-');
    writeTinyModel(join(home, 'models', 'acme', 'tiny'));
    const p = await getEmbeddingProvider(
      { 'embedding-provider': 'local', 'embedding-model': 'acme/tiny' },
      { GIT_MEM_HOME: home },
      { strict: true },
    );
    expect(p!.lineage.dimension).toBe(384);
    expect(p!.lineage.model).toContain('acme/tiny');
  });

  it('reports a missing model folder: null with a warning, or a one-line error when strict', async () => {
    const warnings: string[] = [];
    const home = tmpDir('gm-home-');
    const p = await getEmbeddingProvider(
      { 'embedding-provider': 'local' },
      { GIT_MEM_HOME: home },
      { onWarning: (m) => warnings.push(m) },
    );
    expect(p).toBeNull();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /no local embedding model at .*Xenova.*all-MiniLM-L6-v2.*git mem models pull/,
    );
    await expect(
      getEmbeddingProvider(
        { 'embedding-provider': 'local', 'embedding-model-path': join(home, 'nope') },
        {},
        { strict: true },
      ),
    ).rejects.toMatchObject({ code: 'E_NOT_FOUND' });
  });

  it('fills a vector cache through embedMissing and reuses it', async () => {
    const dir = tmpDir('gm-vec-');
    const items = ['use pnpm not npm', 'redis cache timeout on deploy', 'use pnpm not npm'].map((text) => ({
      key: contentHash(text),
      text,
    }));
    const cache = new VectorCache(dir, provider.lineage);
    const r = await embedMissing(provider, cache, items);
    expect(r).toMatchObject({ missed: 2, embedded: 2, complete: true });
    expect(r.vectors.size).toBe(2);
    const reopened = new VectorCache(dir, provider.lineage);
    expect(reopened.size).toBe(2);
    const direct = await embedWithFallback(provider, [items[1].text]);
    const cached = reopened.get(items[1].key)!;
    expect(cached).toHaveLength(384);
    direct![0].forEach((x, i) => {
      expect(cached[i]).toBeCloseTo(x, 6);
    });
    const r2 = await embedMissing(provider, reopened, items);
    expect(r2).toMatchObject({ missed: 0, embedded: 0, complete: true });
  });
});
