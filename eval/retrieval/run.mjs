#!/usr/bin/env node
// Retrieval eval for git mem search (issue 4). Builds a scratch repository
// holding every anchored path of the corpus (with enough lines), commits it,
// imports the corpus with `git mem import --jsonl` (source ids become
// aliases, e.g. m042), runs every query through `git mem search --json`
// (with --file where the query has one), writes a run file of ranked aliases
// and scores it with the shared scorer.
//
//   node eval/retrieval/run.mjs [--eval DIR] [--queries FILE] [--spawn] [--out RUN.jsonl] [--keep]
//                               [--config KEY=VALUE]…   (git config mem.KEY in the scratch repo, e.g.
//                                                       embedding-provider=none for text only)
//
// By default the queries run in this process through the CLI's own entry
// point (main() of dist/cli.js, the same code path as the binary, minus 80
// process starts); --spawn runs bin/git-mem.js once per query instead.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const evalDir = resolve(opt('--eval', join(ROOT, '..', 'shared', 'eval')));
const corpusFile = join(evalDir, 'corpus.jsonl');
const queriesFile = resolve(opt('--queries', join(evalDir, 'queries-dev.jsonl')));
const spawnMode = args.includes('--spawn');
const keep = args.includes('--keep');
const readJsonl = (f) => readFileSync(f, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));

const corpus = readJsonl(corpusFile);
const queries = readJsonl(queriesFile);
const dir = mkdtempSync(join(tmpdir(), 'gm-eval-'));
const repo = join(dir, 'repo');
const env = {
  PATH: process.env.PATH,
  HOME: dir,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: join(dir, '.gitconfig'),
  GIT_MEM_HOME: join(dir, 'git-mem'),
  GIT_AUTHOR_NAME: 'Eval',
  GIT_AUTHOR_EMAIL: 'eval@example.com',
  GIT_COMMITTER_NAME: 'Eval',
  GIT_COMMITTER_EMAIL: 'eval@example.com',
  LANG: 'C',
};
const git = (...a) => execFileSync('git', a, { cwd: repo, env, encoding: 'utf8' });
mkdirSync(repo);
git('init', '-q');
// every anchored path, long enough for its line ranges
const need = new Map();
for (const m of corpus) for (const a of m.anchors ?? []) need.set(a.path, Math.max(need.get(a.path) ?? 0, (a.lines?.[1] ?? 1) + 20));
for (const [p, n] of need) {
  mkdirSync(dirname(join(repo, p)), { recursive: true });
  writeFileSync(join(repo, p), Array.from({ length: n }, (_, i) => `// ${p} line ${i + 1}`).join('\n') + '\n');
}
writeFileSync(join(repo, 'README.md'), '# Harbor (eval scratch repo)\n');
git('add', '-A');
git('commit', '-q', '-m', 'eval: anchored files');
args.forEach((a, i) => {
  if (a !== '--config') return;
  const [k, ...v] = String(args[i + 1]).split('=');
  git('config', `mem.${k}`, v.join('='));
});

const bin = join(ROOT, 'bin', 'git-mem.js');
const { main } = await import(pathToFileURL(join(ROOT, 'dist', 'cli.js')).href);
async function mem(argv) {
  if (spawnMode) {
    const r = spawnSync(process.execPath, [bin, ...argv], { cwd: repo, env, encoding: 'utf8', maxBuffer: 64 << 20 });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }
  let stdout = '';
  let stderr = '';
  const io = { out: (s) => (stdout += s), err: (s) => (stderr += s), readStdin: async () => undefined, isTTY: false, stdinIsTTY: true };
  const code = await main(argv, io, { cwd: repo, env });
  return { code, stdout, stderr };
}

const t0 = performance.now();
// no --allow-secret: the corpus is what users write, and the scanner must let it through
const imp = await mem(['import', '--jsonl', corpusFile, '--json']);
if (imp.code !== 0) throw new Error(`import failed: ${imp.stderr}`);
const tImport = performance.now() - t0;

const run = [];
const times = [];
for (const q of queries) {
  const argv = ['search', '--json', '--limit', '100', '--no-daemon', '--', q.query];
  if (q.file) argv.splice(1, 0, '--file', q.file);
  const t = performance.now();
  const r = await mem(argv);
  times.push(performance.now() - t);
  if (r.code !== 0) throw new Error(`search failed for ${q.qid}: ${r.stderr}`);
  const hits = JSON.parse(r.stdout);
  run.push({ qid: q.qid, ranked: hits.map((h) => h.alias ?? h.id) });
}
const out = resolve(opt('--out', join(dir, 'run.jsonl')));
writeFileSync(out, run.map((r) => JSON.stringify(r)).join('\n') + '\n');
const score = spawnSync(process.execPath, [join(evalDir, 'score.mjs'), queriesFile, out], { encoding: 'utf8' });
const scoreJson = JSON.parse(spawnSync(process.execPath, [join(evalDir, 'score.mjs'), queriesFile, out, '--json'], { encoding: 'utf8' }).stdout.split('\n')[0]);
times.sort((a, b) => a - b);
process.stdout.write(score.stdout);
process.stdout.write(
  `mode=${spawnMode ? 'process per query' : 'in-process via main()'} memories=${corpus.length} queries=${queries.length} import=${tImport.toFixed(0)}ms query p50=${times[times.length >> 1].toFixed(1)}ms\n`,
);
if (args.includes('--json')) process.stdout.write(`${JSON.stringify(scoreJson)}\n`);
if (!keep) rmSync(dir, { recursive: true, force: true });
else process.stderr.write(`kept ${dir}\n`);
