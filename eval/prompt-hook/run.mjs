#!/usr/bin/env node
// What the UserPromptSubmit hook injects (issue #30 item 9). Builds a scratch
// repository holding every anchored path of the shared corpus and every file a
// query names, imports the corpus (`git mem import --jsonl`: source ids become
// aliases, e.g. m042), then sends each dev query as a real Claude Code
// UserPromptSubmit payload to the built binary (`bin/git-mem.js hook claude-code`,
// stdin, cwd = the repo), the query's file in the prompt text ("<query> (in <file>)"),
// one fresh session per prompt. The injected ids are read from the framed
// additionalContext (`[<id, 12 hex>]`) and mapped back to the corpus ids.
//
// Reported per slice: the share of prompts given ≥ 1 relevant memory (grade ≥ 1),
// precision (injected with grade ≥ 1 / all injected), and content-free prompts
// ("ok continue", "thanks"…) that must be given nothing.
//
//   node eval/prompt-hook/run.mjs [--eval DIR] [--queries FILE] [--bin BIN] [--mode off|daemon|both]
//                                 [--per-query] [--keep]
//
//   --eval DIR   the shared eval (default ../shared/eval from the checkout, then /work/shared/eval,
//                or $GIT_MEM_EVAL)
//   --bin BIN    the git-mem launcher to measure (default bin/git-mem.js of this checkout):
//                measures another build with this script
//   --mode       off: in process (CI=1, GIT_MEM_DAEMON=off: no daemon starts or answers);
//                daemon: a search daemon started on the scratch repo answers every prompt (the
//                hook's git can only find the repository, so a prompt the daemon does not answer
//                gets nothing and is counted as a fallback); both (default): the two, and whether
//                they agree prompt by prompt.
// Prints a table per mode and a final JSON line.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const evalCandidates = [
  opt('--eval'),
  process.env.GIT_MEM_EVAL,
  join(ROOT, '..', 'shared', 'eval'),
  join(ROOT, '..', '..', 'shared', 'eval'),
  '/work/shared/eval',
].filter(Boolean);
const evalDir = resolve(evalCandidates.find((d) => existsSync(join(d, 'corpus.jsonl'))) ?? evalCandidates[0]);
const corpusFile = join(evalDir, 'corpus.jsonl');
const queriesFile = resolve(opt('--queries', join(evalDir, 'queries-dev.jsonl')));
const bin = resolve(opt('--bin', join(ROOT, 'bin', 'git-mem.js')));
const mode = opt('--mode', 'both');
const keep = args.includes('--keep');
const perQuery = args.includes('--per-query');
const readJsonl = (f) =>
  readFileSync(f, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));

/** Prompts with no content: an agent's user says them all day; none may be given a memory. */
export const CONTENT_FREE = [
  'ok continue',
  'fix it',
  'thanks',
  'yes',
  'go on',
  'looks good',
  'do it',
  'continue',
  'lgtm',
  'try again',
  'ok',
  'sounds good, go ahead',
  'please proceed',
  'yes please',
  'thanks, that works',
];

const corpus = readJsonl(corpusFile);
const queries = readJsonl(queriesFile).slice(0, Number(opt('--limit', 1e9)));
const dir = mkdtempSync(join(tmpdir(), 'gm-prompt-eval-'));
const repo = join(dir, 'repo');
mkdirSync(join(dir, 'home'));
writeFileSync(join(dir, 'home', '.gitconfig'), '[user]\n\tname = Eval\n\temail = eval@example.com\n');
const baseEnv = {
  PATH: process.env.PATH,
  HOME: join(dir, 'home'),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: join(dir, 'home', '.gitconfig'),
  GIT_MEM_HOME: join(dir, 'git-mem'),
  GIT_AUTHOR_NAME: 'Eval',
  GIT_AUTHOR_EMAIL: 'eval@example.com',
  GIT_COMMITTER_NAME: 'Eval',
  GIT_COMMITTER_EMAIL: 'eval@example.com',
  LANG: 'C',
  // the environment the tests use: git hooks start no daemon
  CI: '1',
};
const git = (...a) => execFileSync('git', a, { cwd: repo, env: baseEnv, encoding: 'utf8' });
const mem = (argv, env = baseEnv, input) => {
  const r = spawnSync(process.execPath, [bin, ...argv], {
    cwd: repo,
    env,
    input: input ?? '',
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

mkdirSync(repo);
git('init', '-q');
// every anchored path, long enough for its line ranges, and every file a query names
const need = new Map();
for (const m of corpus)
  for (const a of m.anchors ?? []) need.set(a.path, Math.max(need.get(a.path) ?? 0, (a.lines?.[1] ?? 1) + 20));
for (const q of queries) if (q.file && !need.has(q.file)) need.set(q.file, 40);
for (const [p, n] of need) {
  mkdirSync(dirname(join(repo, p)), { recursive: true });
  writeFileSync(join(repo, p), `${Array.from({ length: n }, (_, i) => `// ${p} line ${i + 1}`).join('\n')}\n`);
}
writeFileSync(join(repo, 'README.md'), '# Harbor (eval scratch repo)\n');
git('add', '-A');
git('commit', '-q', '-m', 'eval: anchored files');

const imp = mem(['import', '--jsonl', corpusFile, '--json']);
if (imp.code !== 0) throw new Error(`import failed: ${imp.stderr}`);
const listed = JSON.parse(mem(['list', '--json']).stdout);
const rows = Array.isArray(listed) ? listed : (listed.memories ?? listed.items ?? []);
/** git-mem id (its first 12 hex, as the framed text shows it) → corpus id */
const corpusId = new Map();
for (const r of rows) if (r.alias) corpusId.set(String(r.id).slice(0, 12), r.alias);
if (corpusId.size !== corpus.length)
  throw new Error(`expected ${corpus.length} imported memories with aliases, found ${corpusId.size}`);

const promptOf = (q) => (q.file ? `${q.query} (in ${q.file})` : q.query);
let sessionNo = 0;
function hook(prompt, env) {
  const session = `eval-${process.pid}-${++sessionNo}`;
  const payload = {
    session_id: session,
    transcript_path: join(dir, 'home', '.claude', 'projects', 'harbor', `${session}.jsonl`),
    cwd: repo,
    hook_event_name: 'UserPromptSubmit',
    permission_mode: 'default',
    prompt,
  };
  const r = mem(['hook', 'claude-code'], env, JSON.stringify(payload));
  if (r.code !== 0) throw new Error(`hook exited ${r.code}: ${r.stderr}`);
  if (process.env.PROMPT_EVAL_DEBUG) process.stderr.write(`${prompt}\n${r.stdout}${r.stderr}\n`);
  if (!r.stdout.trim()) return [];
  const o = JSON.parse(r.stdout);
  const text = o.hookSpecificOutput?.additionalContext ?? '';
  return [...text.matchAll(/\[([0-9A-Za-z]{12})\]/g)].map((m) => corpusId.get(m[1]) ?? `?${m[1]}`);
}

const hooksLog = () => {
  const f = join(repo, '.git', 'mem', 'logs', 'hooks.log');
  return existsSync(f) ? readFileSync(f, 'utf8').split('\n').filter(Boolean).length : 0;
};

function measure(env) {
  const logBefore = hooksLog();
  const per = [];
  const t0 = performance.now();
  for (const q of queries) {
    const got = hook(promptOf(q), env);
    const rel = got.filter((id) => (q.relevant[id] ?? 0) >= 1);
    per.push({ qid: q.qid, slice: q.slice, injected: got, relevant: rel.length });
  }
  const free = CONTENT_FREE.map((p) => ({ prompt: p, injected: hook(p, env) }));
  const ms = (performance.now() - t0) / (queries.length + CONTENT_FREE.length);
  const slices = {};
  for (const s of [...new Set(queries.map((q) => q.slice)), 'all']) {
    const qs = per.filter((p) => s === 'all' || p.slice === s);
    const inj = qs.reduce((n, p) => n + p.injected.length, 0);
    const rel = qs.reduce((n, p) => n + p.relevant, 0);
    slices[s] = {
      prompts: qs.length,
      withRelevant: qs.filter((p) => p.relevant > 0).length,
      hitRate: +(qs.filter((p) => p.relevant > 0).length / qs.length).toFixed(3),
      injected: inj,
      precision: inj ? +(rel / inj).toFixed(3) : null,
      silent: qs.filter((p) => !p.injected.length).length,
    };
  }
  const contentFree = {
    prompts: free.length,
    withAny: free.filter((f) => f.injected.length).length,
    offenders: free.filter((f) => f.injected.length).map((f) => f.prompt),
  };
  return { per, slices, contentFree, hookErrors: hooksLog() - logBefore, msPerPrompt: +ms.toFixed(0) };
}

function table(name, m) {
  const out = [`\n${name}`, '| slice | prompts | ≥1 relevant | injected | precision | nothing injected |'];
  out.push('|---|---|---|---|---|---|');
  for (const [s, v] of Object.entries(m.slices))
    out.push(
      `| ${s} | ${v.prompts} | ${v.withRelevant} (${v.hitRate.toFixed(2)}) | ${v.injected} | ${v.precision === null ? '–' : v.precision.toFixed(2)} | ${v.silent} |`,
    );
  out.push(
    `content-free: ${m.contentFree.withAny}/${m.contentFree.prompts} given something${m.contentFree.offenders.length ? ` (${m.contentFree.offenders.join(', ')})` : ''}; hook errors logged: ${m.hookErrors}; ${m.msPerPrompt} ms/prompt`,
  );
  if (perQuery)
    for (const p of m.per)
      out.push(`  ${p.qid} ${p.slice.padEnd(12)} rel ${p.relevant}/${p.injected.length} ${p.injected.join(' ')}`);
  return out.join('\n');
}

const results = {};
const daemonPids = [];
try {
  if (mode === 'off' || mode === 'both') {
    results.inProcess = measure({ ...baseEnv, GIT_MEM_DAEMON: 'off' });
    process.stdout.write(`${table('in process (CI=1, GIT_MEM_DAEMON=off)', results.inProcess)}\n`);
  }
  if (mode === 'daemon' || mode === 'both') {
    const started = mem(['daemon', 'start', '--json']);
    if (started.code !== 0) throw new Error(`daemon start failed: ${started.stderr}`);
    const pid = JSON.parse(started.stdout).pid;
    if (pid) daemonPids.push(pid);
    // warm it (its first prompt loads the catalog) until it answers within the hook's wait
    for (let i = 0; i < 5; i++) hook('warm up the websocket reconnect retry backoff', { ...baseEnv, GIT_MEM_DAEMON: 'on' });
    // a git that can only find the repository: a prompt the daemon does not answer gets nothing
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    const gitBin = join(dir, 'gitbin');
    mkdirSync(gitBin);
    writeFileSync(
      join(gitBin, 'git'),
      `#!/bin/sh\n[ "$1" = rev-parse ] && exec "${realGit}" "$@"\necho "git $1: not here" >&2\nexit 1\n`,
      { mode: 0o755 },
    );
    const env = { ...baseEnv, GIT_MEM_DAEMON: 'on', PATH: `${gitBin}:${dirname(process.execPath)}` };
    results.daemon = measure(env);
    process.stdout.write(`${table('search daemon (git in the hook: rev-parse only)', results.daemon)}\n`);
  }
} finally {
  if (daemonPids.length) mem(['daemon', 'stop']);
  for (const pid of daemonPids)
    try {
      process.kill(pid, 'SIGTERM');
    } catch {}
}
let agree;
if (results.inProcess && results.daemon) {
  const differ = results.inProcess.per
    .filter((p, i) => p.injected.join(' ') !== results.daemon.per[i].injected.join(' '))
    .map((p) => p.qid);
  agree = { prompts: queries.length, differ: differ.length, qids: differ };
  process.stdout.write(`\nin process vs daemon: ${queries.length - differ.length}/${queries.length} prompts given the same memories${differ.length ? ` (differ: ${differ.join(' ')})` : ''}\n`);
}
const summary = { bin, memories: corpus.length, queries: queries.length, agree };
for (const [k, m] of Object.entries(results))
  summary[k] = { slices: m.slices, contentFree: m.contentFree, hookErrors: m.hookErrors, msPerPrompt: m.msPerPrompt };
process.stdout.write(`${JSON.stringify(summary)}\n`);
if (!keep) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
else process.stderr.write(`kept ${dir}\n`);
