#!/usr/bin/env node
// LSP benchmark (issue #33): `git mem lsp` (the built CLI, a real process over stdio) in a
// generated repository with N anchored memories (default 10 000: 5 per file over 2 000 files) and
// a few scoped rules. Measured from a JSON-RPC client in this script:
//   * the first view of a file: didOpen → its diagnostics published (blame, records, rules: the
//     background work), cold (first file) and warm (another file, stores and indexes warm);
//   * textDocument/hover and textDocument/codeLens on an open file with 5 anchored memories:
//     p50 / p95 over BENCH_RUNS requests each, as the buffer is (a) saved and (b) edited (2 lines
//     inserted on top, so every range is mapped through the buffer's text);
//   * the same hover while another file's first view is computed (background work in progress).
// A new feature: there is no old build to compare with. Goal: hover and codeLens p50 <= 50 ms.
// BENCH_LSP_MEMORIES=10000 BENCH_LSP_FILES=2000 BENCH_RUNS=200 (env).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BIN, ROOT, benchEnv, fmt, median, pct, scratchRepo } from './lib.mjs';

const N = Number(process.env.BENCH_LSP_MEMORIES ?? 10000);
const FILES = Number(process.env.BENCH_LSP_FILES ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 200);

// the store generator the anchors benchmark uses (eval/anchors/harness.ts: bulk anchored records)
const outDir = join(ROOT, 'node_modules', '.cache', 'git-mem-eval');
mkdirSync(outDir, { recursive: true });
await build({
  entryPoints: [join(ROOT, 'eval', 'anchors', 'harness.ts')],
  outfile: join(outDir, 'harness.mjs'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  external: ['web-tree-sitter', 'tree-sitter-wasms'],
  banner: { js: "import { createRequire as __c } from 'node:module'; const require = __c(import.meta.url);" },
});
const H = await import(join(outDir, 'harness.mjs'));

const fileText = (i) => {
  const lines = [`// file ${i}`, `import { dep${i % 97} } from './dep';`, ''];
  for (let f = 0; f < 5; f++) {
    lines.push(`export function f${i}_${f}(a: number) {`);
    for (let k = 0; k < 5; k++) lines.push(`  const v${k} = dep${i % 97}(a, ${i * 31 + f * 7 + k});`);
    lines.push(`  return v0 + v4 + ${f};`, '}', '');
  }
  return `${lines.join('\n')}\n`;
};
const pathOf = (i) => `src/m${String(i % 100).padStart(3, '0')}/f${i}.ts`;

const t0 = Date.now();
// BENCH_LSP_KEEP=DIR keeps the generated repository there (and reuses it on the next run)
const KEEP = process.env.BENCH_LSP_KEEP;
const s = KEEP ? { dir: KEEP, repo: join(KEEP, 'repo'), env: benchEnv(KEEP) } : scratchRepo('gm-bench-lsp-');
const mem = (...a) => execFileSync(process.execPath, [BIN, ...a], { cwd: s.repo, env: s.env, encoding: 'utf8' });
if (!KEEP || !existsSync(join(s.repo, '.git', 'refs', 'memory'))) {
  if (KEEP) {
    mkdirSync(KEEP, { recursive: true });
    execFileSync('git', ['init', '-q', '-b', 'main', s.repo], { env: s.env });
  }
  const chunks = [];
  const msg = 'code';
  chunks.push(`commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata ${msg.length}\n${msg}\n`);
  for (let i = 0; i < FILES; i++) {
    const t = fileText(i);
    chunks.push(`M 100644 inline ${pathOf(i)}\ndata ${Buffer.byteLength(t)}\n${t}\n`);
  }
  execFileSync('git', ['fast-import', '--quiet'], { cwd: s.repo, env: s.env, input: chunks.join(''), maxBuffer: 1 << 30 });
  execFileSync('git', ['reset', '-q', '--hard', 'main'], { cwd: s.repo, env: s.env });
  const store = await H.openStore(s.repo, s.env);
  await H.init(store);
  const perFile = Math.max(1, Math.ceil(N / FILES));
  const items = [];
  for (let j = 0; j < N; j++) {
    const file = Math.floor(j / perFile) % FILES;
    const start = 4 + (j % perFile) * 9;
    items.push({ title: `memory ${j} about f${file}_${j % perFile}`, anchors: [`${pathOf(file)}:${start}-${start + 7}`] });
  }
  for (let i = 0; i < items.length; i += 5000) await H.bulkAnchored(store, items.slice(i, i + 5000));
  store.close();
  for (let k = 0; k < 5; k++)
    mem('add', '--type', 'rule', '--title', `rule ${k}`, '--content', `rule ${k} body`, '--scope', `src/m00${k}/**`);
}
const setup = Date.now() - t0;

// ---------------------------------------------------------------- the client
const proc = spawn(process.execPath, [BIN, 'lsp'], { cwd: s.repo, env: s.env });
let buf = Buffer.alloc(0);
let nextId = 0;
const waiting = new Map();
const diags = [];
proc.stdout.on('data', (d) => {
  buf = Buffer.concat([buf, d]);
  for (;;) {
    const h = buf.indexOf('\r\n\r\n');
    if (h < 0) return;
    const n = Number(/Content-Length: (\d+)/i.exec(buf.toString('ascii', 0, h))[1]);
    if (buf.length < h + 4 + n) return;
    const m = JSON.parse(buf.toString('utf8', h + 4, h + 4 + n));
    buf = buf.subarray(h + 4 + n);
    if (m.method === 'textDocument/publishDiagnostics') diags.push({ at: performance.now(), uri: m.params.uri });
    else if (m.id !== undefined && !m.method) waiting.get(m.id)?.(m);
  }
});
proc.stderr.on('data', (d) => process.stderr.write(d));
const send = (m) => {
  const body = JSON.stringify(m);
  proc.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
};
const request = (method, params) =>
  new Promise((resolve, reject) => {
    const id = ++nextId;
    waiting.set(id, (m) => (m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result)));
    send({ jsonrpc: '2.0', id, method, params });
  });
const notify = (method, params) => send({ jsonrpc: '2.0', method, params });
const uriOf = (i) => pathToFileURL(join(s.repo, pathOf(i))).href;
const textOf = (i) => readFileSync(join(s.repo, pathOf(i)), 'utf8');

async function opened(i) {
  const uri = uriOf(i);
  const t = performance.now();
  notify('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text: textOf(i) } });
  for (;;) {
    const d = diags.find((x) => x.uri === uri && x.at >= t);
    if (d) return d.at - t;
    await new Promise((r) => setTimeout(r, 1));
  }
}

async function timed(method, params, runs = RUNS) {
  const xs = [];
  for (let k = 0; k < runs; k++) {
    const t = performance.now();
    const r = await request(method, params);
    xs.push(performance.now() - t);
    if (!r || (Array.isArray(r) && !r.length)) throw new Error(`${method} answered nothing`);
  }
  return xs;
}

await request('initialize', { processId: process.pid, rootUri: pathToFileURL(s.repo).href, capabilities: {} });
notify('initialized', {});
const cold = await opened(0);
const warm = await opened(1);
const hoverAt = (i) => ({ textDocument: { uri: uriOf(i) }, position: { line: 5, character: 4 } });
const lensOf = (i) => ({ textDocument: { uri: uriOf(i) } });
const saved = { hover: await timed('textDocument/hover', hoverAt(0)), lens: await timed('textDocument/codeLens', lensOf(0)) };
notify('textDocument/didChange', {
  textDocument: { uri: uriOf(0), version: 2 },
  contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '// a\n// b\n' }],
});
const editedHover = { textDocument: { uri: uriOf(0) }, position: { line: 7, character: 4 } };
const edited = { hover: await timed('textDocument/hover', editedHover), lens: await timed('textDocument/codeLens', lensOf(0)) };
// a hover while another file's first view is being computed
const during = [];
for (let k = 2; k < 2 + Math.min(20, FILES - 2); k++) {
  const uri = uriOf(k);
  notify('textDocument/didOpen', { textDocument: { uri, languageId: 'typescript', version: 1, text: textOf(k) } });
  const t = performance.now();
  await request('textDocument/hover', editedHover);
  during.push(performance.now() - t);
}
await request('shutdown');
notify('exit');
proc.stdin.end();
await new Promise((r) => proc.once('exit', r));

const row = (name, xs) => `| ${name} | ${fmt(median(xs))} | ${fmt(pct(xs, 95))} | ${xs.length} |`;
const lines = [
  `## git mem lsp (${N} anchored memories, ${FILES} files, 5 rules; set-up ${(setup / 1000).toFixed(1)} s)`,
  '',
  `First view of a file (didOpen → diagnostics published: blame, records, rules, in the background): cold ${fmt(cold)} ms, warm ${fmt(warm)} ms.`,
  '',
  '| request | p50 ms | p95 ms | runs |',
  '|---|---:|---:|---:|',
  row('hover, buffer as saved', saved.hover),
  row('codeLens, buffer as saved', saved.lens),
  row('hover, buffer edited (ranges mapped through it)', edited.hover),
  row('codeLens, buffer edited', edited.lens),
  row('hover while another file\'s first view is computed', during),
  '',
  'Goal: hover and codeLens p50 <= 50 ms at 10k memories (a new command: no old build to compare).',
  '',
];
console.log(lines.join('\n'));
if (!KEEP)
  try {
  rmSync(s.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
} catch {
  // a query daemon the adds started may still be writing its files: the folder is left in the temp dir
}
