#!/usr/bin/env node
// Embeddings: what the optional vector layer costs. Bundles src/search/embed
// with esbuild (internals are not reachable from dist/), generates the tiny
// BERT-type model, and measures in fresh processes (cold) and in-process (warm):
//   - transformers.js import time vs a bare `node -e 0` (the floor)
//   - model load (pipeline creation) of the tiny 384-d model
//   - embed time per text, batch 1 and batch 32, vs sha-256 of the same text (floor)
//   - vector cache: write and reload N 384-d vectors, file size vs JSON
//   - fallback: how long embedWithFallback takes to give up on a stalled server
// Texts are memories from ../shared/bench/gen.mjs when present (else synthetic).
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { fmt, hasSharedGen, median, ROOT, SHARED_GEN, timeMs } from './lib.mjs';

const RUNS = Number(process.env.EMBED_BENCH_RUNS ?? 7);
const CACHE_N = Number(process.env.EMBED_BENCH_CACHE_N ?? 10000);
const out = join(ROOT, 'node_modules', '.cache', 'gm-bench-embed');
rmSync(out, { recursive: true, force: true });
await build({
  entryPoints: { embed: join(ROOT, 'src/search/embed/index.ts'), tiny: join(ROOT, 'test/support/tiny-model.ts') },
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  outdir: out,
  external: ['@huggingface/transformers', 'onnxruntime-node', 'onnxruntime-web', 'sharp'],
  logLevel: 'warning',
  banner: { js: "import { createRequire as __gmCreateRequire } from 'node:module'; const require = __gmCreateRequire(import.meta.url);" },
});
const embedMod = join(out, 'embed.js');
const tinyMod = join(out, 'tiny.js');
const { writeTinyModel } = await import(tinyMod);
const E = await import(embedMod);

const work = mkdtempSync(join(tmpdir(), 'gm-bench-embed-'));
const modelDir = join(work, 'tiny-bert');
writeTinyModel(modelDir);

// texts: real-looking memories
let texts;
if (hasSharedGen()) {
  const lines = execFileSync(process.execPath, [SHARED_GEN, 'memories', '256'], { encoding: 'utf8', maxBuffer: 64 << 20 })
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  texts = lines.map((m) => `${m.title}\n${m.body}\n${(m.tags ?? []).join(' ')}`);
} else {
  texts = Array.from({ length: 256 }, (_, i) => `memory ${i}: the database connection pool fails with ECONNREFUSED on CI run ${i}`);
}
const avgChars = Math.round(texts.reduce((s, t) => s + t.length, 0) / texts.length);
// gen.mjs words are synthetic: the tiny vocabulary splits them into characters, so a memory
// is hundreds of tokens (truncated at 512) and per-memory figures are an upper bound
const tokLens = await (async () => {
  const tf = await import('@huggingface/transformers');
  const tok = await tf.AutoTokenizer.from_pretrained(modelDir);
  return texts.map((t) => tok.encode(t).length).sort((a, b) => a - b);
})();

// ---- cold: import and load in fresh processes ----
function nodeMs(code) {
  const xs = [];
  for (let i = 0; i < RUNS; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    xs.push(JSON.parse(r.stdout.trim().split('\n').pop()));
  }
  return xs;
}
const floorNode = median(Array.from({ length: RUNS }, () => timeMs(() => spawnSync(process.execPath, ['-e', '0']))));
const cold = nodeMs(`
  const t0 = performance.now();
  const E = await import(${JSON.stringify(embedMod)});
  const t1 = performance.now();
  const p = await E.getEmbeddingProvider({ 'embedding-provider': 'local', 'embedding-model-path': ${JSON.stringify(modelDir)} }, process.env, { strict: true });
  const t2 = performance.now();
  await E.loadTransformers();
  const t3 = performance.now();
  await p.load();
  const t4 = performance.now();
  await p.embed(['first text']);
  const t5 = performance.now();
  console.log(JSON.stringify({ mod: t1 - t0, provider: t2 - t1, lib: t3 - t2, load: t4 - t3, first: t5 - t4, total: t5 - t0 }));
`);
const med = (k) => median(cold.map((c) => c[k]));
const processTotal = median(
  Array.from({ length: RUNS }, () =>
    timeMs(() =>
      spawnSync(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `const E = await import(${JSON.stringify(embedMod)}); const p = await E.getEmbeddingProvider({ 'embedding-provider': 'local', 'embedding-model-path': ${JSON.stringify(modelDir)} }); await p.embed(['q']);`,
        ],
        { cwd: ROOT },
      ),
    ),
  ),
);

// ---- warm: embed per text in-process ----
const p = await E.getEmbeddingProvider({ 'embedding-provider': 'local', 'embedding-model-path': modelDir }, process.env, { strict: true });
await p.embed(texts.slice(0, 8)); // warm up
const one = [];
for (let r = 0; r < 3; r++) {
  for (let i = 0; i < 64; i++) {
    const t = performance.now();
    await p.embed([texts[i]]);
    one.push(performance.now() - t);
  }
}
const batch = [];
for (let r = 0; r < RUNS; r++) {
  for (let i = 0; i + 32 <= texts.length; i += 32) {
    const t = performance.now();
    await p.embed(texts.slice(i, i + 32));
    batch.push((performance.now() - t) / 32);
  }
}
const queries = ['why does the db suite fail with ECONNREFUSED on CI', 'use pnpm not npm', 'redis cache timeout on deploy', 'how do we run migrations'];
const shortOne = [];
for (let r = 0; r < 50; r++) {
  const t = performance.now();
  await p.embed([queries[r % queries.length]]);
  shortOne.push(performance.now() - t);
}
const shortTexts = Array.from({ length: 32 }, (_, i) => `${queries[i % 4]} in package ${i}`);
const shortBatch = [];
for (let r = 0; r < 20; r++) {
  const t = performance.now();
  await p.embed(shortTexts);
  shortBatch.push((performance.now() - t) / 32);
}
const hashFloor = [];
for (let r = 0; r < RUNS; r++) {
  const t = performance.now();
  for (const s of texts) createHash('sha256').update(s).digest('hex');
  hashFloor.push((performance.now() - t) / texts.length);
}

// ---- vector cache ----
const vdir = join(work, 'vectors');
mkdirSync(vdir, { recursive: true });
const lin = p.lineage;
const vecs = Array.from({ length: CACHE_N }, (_, i) => {
  const v = new Float32Array(384);
  for (let j = 0; j < 384; j++) v[j] = Math.sin(i * 7 + j);
  return v;
});
const keys = vecs.map((_, i) => E.contentHash(`memory ${i}`));
const writeMs = timeMs(() => {
  const c = new E.VectorCache(vdir, lin);
  for (let i = 0; i < CACHE_N; i++) c.put(keys[i], vecs[i]);
  c.flush();
});
const fileBytes = E.VectorCache.list(vdir)[0].bytes;
const loadRuns = [];
for (let r = 0; r < RUNS; r++) loadRuns.push(timeMs(() => new E.VectorCache(vdir, lin).many(keys)));
const jsonFile = join(work, 'vectors.json');
const jsonWriteMs = timeMs(() => writeFileSync(jsonFile, JSON.stringify(Object.fromEntries(keys.map((k, i) => [k, Array.from(vecs[i])])))));
const jsonBytes = statSync(jsonFile).size;
const jsonLoad = [];
const { readFileSync } = await import('node:fs');
for (let r = 0; r < 3; r++) jsonLoad.push(timeMs(() => JSON.parse(readFileSync(jsonFile, 'utf8'))));

// ---- fallback on a stalled server ----
const server = createServer(() => {});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}`;
const op = await E.getEmbeddingProvider({ 'embedding-provider': 'ollama', 'embedding-model': 'm', 'embedding-url': url, 'embedding-dimension': 8 });
const fb = [];
for (let r = 0; r < 5; r++) {
  const t = performance.now();
  const v = await E.embedWithFallback(op, ['x'], 100);
  if (v !== null) throw new Error('expected null');
  fb.push(performance.now() - t);
}
server.closeAllConnections();
server.close();
rmSync(work, { recursive: true, force: true });

const mib = (n) => `${(n / 2 ** 20).toFixed(1)} MiB`;
const lines = [
  '## embed',
  '',
  `Tiny generated BERT-type model (384-d, vocab ~380, Gather+mask graph, fp32) through the real transformers.js pipeline;`,
  `texts: ${texts.length} memories from ${hasSharedGen() ? '../shared/bench/gen.mjs' : 'a synthetic template'} (avg ${avgChars} chars, ${tokLens[Math.floor(tokLens.length / 2)]} tokens median, the synthetic words split into characters; truncated at 512). Medians of ${RUNS} runs.`,
  'The tiny graph has no transformer layers: per-text figures are the pipeline overhead (tokenizer, ONNX session, pooling), a lower bound for a real model such as all-MiniLM-L6-v2 (6 layers), which cannot be downloaded here.',
  '',
  '| measure | median | floor | ratio |',
  '|---|---:|---:|---:|',
  `| fresh process: import embed module | ${fmt(med('mod'))} ms | | |`,
  `| fresh process: getEmbeddingProvider (reads config, fingerprints files; no library) | ${fmt(med('provider'))} ms | | |`,
  `| fresh process: import @huggingface/transformers | ${fmt(med('lib'))} ms | \`node -e 0\` ${fmt(floorNode)} ms | ${(med('lib') / floorNode).toFixed(1)}× |`,
  `| fresh process: model load (pipeline) | ${fmt(med('load'))} ms | | |`,
  `| fresh process: first embed | ${fmt(med('first'))} ms | | |`,
  `| fresh process: whole run (spawn → one query vector) | ${fmt(processTotal)} ms | \`node -e 0\` ${fmt(floorNode)} ms | ${(processTotal / floorNode).toFixed(1)}× |`,
  `| warm: embed one short query (≈ 10–20 tokens) | ${fmt(median(shortOne))} ms | sha-256 ${(median(hashFloor) * 1000).toFixed(1)} µs | ${(median(shortOne) / median(hashFloor)).toFixed(0)}× |`,
  `| warm: embed per short text in batches of 32 | ${fmt(median(shortBatch))} ms | | |`,
  `| warm: embed 1 memory (batch of 1) | ${fmt(median(one))} ms | sha-256 ${(median(hashFloor) * 1000).toFixed(1)} µs | ${(median(one) / median(hashFloor)).toFixed(0)}× |`,
  `| warm: embed per memory in batches of 32 (padded to the longest) | ${fmt(median(batch))} ms | sha-256 ${(median(hashFloor) * 1000).toFixed(1)} µs | ${(median(batch) / median(hashFloor)).toFixed(0)}× |`,
  `| vector cache: write ${CACHE_N} × 384-d (one flush) | ${fmt(writeMs)} ms | JSON.stringify+write ${fmt(jsonWriteMs)} ms | ${(writeMs / jsonWriteMs).toFixed(2)}× |`,
  `| vector cache: open + read ${CACHE_N} | ${fmt(median(loadRuns))} ms | JSON.parse ${fmt(median(jsonLoad))} ms | ${(median(loadRuns) / median(jsonLoad)).toFixed(2)}× |`,
  `| vector cache: file size at ${CACHE_N} | ${mib(fileBytes)} | JSON ${mib(jsonBytes)} | ${(fileBytes / jsonBytes).toFixed(2)}× |`,
  `| embedWithFallback on a stalled server, budget 100 ms | ${fmt(median(fb))} ms | budget 100 ms | ${(median(fb) / 100).toFixed(2)}× |`,
];
process.stdout.write(`${lines.join('\n')}\n`);
