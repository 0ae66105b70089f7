#!/usr/bin/env node
// LSP benchmark (issue #33): `git mem lsp` (the built CLI, a real process over stdio) in a
// generated repository with N anchored memories (default 10 000: 5 per file over 2 000 files) and
// a few scoped rules. Measured from a JSON-RPC client in this script:
//   * the first view of a file: didOpen → its diagnostics published (blame, records, rules: the
//     background work), cold (the server's first file) and then FIRST other files opened one
//     after another (p50 / p95): each is that file's first view in a running server;
//   * textDocument/hover and textDocument/codeLens on an open file with 5 anchored memories:
//     p50 / p95 over BENCH_RUNS requests each, as the buffer is (a) saved and (b) edited (2 lines
//     inserted on top, so every range is mapped through the buffer's text);
//   * the same hover while another file's first view is computed (a didOpen sent just before).
// Old build beside new: `node bench/lsp.bench.mjs [OLD_ROOT]` (a checkout with bin/ and dist/
// built); servers of the two builds alternate, BENCH_ROUNDS of each, each on files of its own.
// Goals: hover and codeLens p50 <= 50 ms; a file's first view p50 <= 200 ms; hover while a view
// is computed p95 <= 100 ms. BENCH_LSP_MEMORIES=10000 BENCH_LSP_FILES=2000 BENCH_RUNS=200
// BENCH_ROUNDS=2 BENCH_LSP_FIRST=15 (env); BENCH_LSP_KEEP=DIR keeps (and reuses) the repository.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadHarness } from '../eval/anchors/load-harness.mjs';
import { BIN, benchEnv, fmt, median, pct, scratchRepo } from './lib.mjs';

const N = Number(process.env.BENCH_LSP_MEMORIES ?? 10000);
const FILES = Number(process.env.BENCH_LSP_FILES ?? 2000);
const RUNS = Number(process.env.BENCH_RUNS ?? 200);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const FIRST = Number(process.env.BENCH_LSP_FIRST ?? 15);
const OLD = process.argv[2];

// the store generator the anchors benchmark uses (eval/anchors/harness.ts: bulk anchored records)
const H = await loadHarness();

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
const uriOf = (i) => pathToFileURL(join(s.repo, pathOf(i))).href;
const textOf = (i) => readFileSync(join(s.repo, pathOf(i)), 'utf8');

/** One server of a build: its figures, on files base, base + 1, … (none opened by another server). */
async function serve(bin, base) {
  const proc = spawn(process.execPath, [bin, 'lsp'], { cwd: s.repo, env: s.env });
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
  const didOpen = (i) =>
    notify('textDocument/didOpen', { textDocument: { uri: uriOf(i), languageId: 'typescript', version: 1, text: textOf(i) } });

  async function opened(i) {
    const uri = uriOf(i);
    const t = performance.now();
    didOpen(i);
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
  const cold = await opened(base);
  const first = [];
  for (let k = 1; k <= FIRST; k++) first.push(await opened(base + k));
  const hoverAt = { textDocument: { uri: uriOf(base) }, position: { line: 5, character: 4 } };
  const lensOf = { textDocument: { uri: uriOf(base) } };
  const saved = { hover: await timed('textDocument/hover', hoverAt), lens: await timed('textDocument/codeLens', lensOf) };
  notify('textDocument/didChange', {
    textDocument: { uri: uriOf(base), version: 2 },
    contentChanges: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: '// a\n// b\n' }],
  });
  const editedHover = { textDocument: { uri: uriOf(base) }, position: { line: 7, character: 4 } };
  const edited = { hover: await timed('textDocument/hover', editedHover), lens: await timed('textDocument/codeLens', lensOf) };
  // a hover on the open file while another file's first view is being computed
  const during = [];
  for (let k = FIRST + 1; k <= FIRST + 20; k++) {
    didOpen(base + k);
    const t = performance.now();
    await request('textDocument/hover', editedHover);
    during.push(performance.now() - t);
  }
  await request('shutdown');
  notify('exit');
  proc.stdin.end();
  await new Promise((r) => proc.once('exit', r));
  return { cold, first, saved, edited, during };
}

const builds = [...(OLD ? [{ name: 'old', bin: join(OLD, 'bin', 'git-mem.js') }] : []), { name: 'new', bin: BIN }];
const per = FIRST + 21;
const res = new Map(builds.map((b) => [b.name, []]));
let base = 0;
for (let r = 0; r < ROUNDS; r++) {
  // alternate which build goes first, so neither always meets the warmer machine
  for (const b of r % 2 ? [...builds].reverse() : builds) {
    if (base + per > FILES) base = 0;
    res.get(b.name).push(await serve(b.bin, base));
    base += per;
  }
}
const all = (name, f) => res.get(name).flatMap(f);
const cell = (xs) => `${fmt(median(xs))} / ${fmt(pct(xs, 95))}`;
const row = (what, f) => `| ${what} | ${builds.map((b) => cell(all(b.name, f))).join(' | ')} | ${all(builds[0].name, f).length} |`;
const lines = [
  `## git mem lsp (${N} anchored memories, ${FILES} files, 5 rules; set-up ${(setup / 1000).toFixed(1)} s)`,
  '',
  `${ROUNDS} server${ROUNDS === 1 ? '' : 's'} per build${OLD ? `, old (${OLD}) and new alternating` : ''}; each opens its own files. p50 / p95 in ms.`,
  '',
  `| measure | ${builds.map((b) => b.name).join(' | ')} | samples per build |`,
  `|---|${builds.map(() => '---:').join('|')}|---:|`,
  row("first view, the server's first file (didOpen → diagnostics)", (x) => [x.cold]),
  row('first view of another file (didOpen → diagnostics)', (x) => x.first),
  row('hover, buffer as saved', (x) => x.saved.hover),
  row('codeLens, buffer as saved', (x) => x.saved.lens),
  row('hover, buffer edited (ranges mapped through it)', (x) => x.edited.hover),
  row('codeLens, buffer edited', (x) => x.edited.lens),
  row("hover while another file's first view is computed", (x) => x.during),
  '',
  `Load average at the end: ${loadavg().map((l) => l.toFixed(1)).join(' ')} (${cpus().length} CPUs).`,
  'Goals: hover and codeLens p50 <= 50 ms; first view of a file p50 <= 200 ms; hover while a view is computed p95 <= 100 ms.',
  '',
];
console.log(lines.join('\n'));
if (!KEEP)
  try {
  rmSync(s.dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
} catch {
  // a query daemon the adds started may still be writing its files: the folder is left in the temp dir
}
