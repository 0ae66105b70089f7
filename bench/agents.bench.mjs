// Agent hook path: each figure is a one-shot `git mem hook claude-code`
// process (as Claude Code runs it), reported as overhead above a bare
// `node -e 0` measured in the same run with the same environment (an
// inherited NODE_EXTRA_CA_CERTS alone adds tens of ms to node's start).
//  - PostToolUse (the bin/ fast path that only appends to .git/mem/events/)
//  - UserPromptSubmit at 10k memories (gen.mjs data, queries from gen.mjs), cold process,
//    with the catalog cache on disk; and the very first prompt after the cache is dropped
//  - SessionStart at 10k for reference
import { execFileSync, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, SHARED_GEN, fmt, hasSharedGen, median, pct, scratchRepo, timeMs } from './lib.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 15);
const N = Number(process.env.BENCH_N ?? 10_000);

const out = ['## agents', ''];
const { dir, repo, env } = scratchRepo('gm-bench-agents-');
const opts = { cwd: repo, env };
writeFileSync(join(repo, 'README.md'), '# bench\n');
execFileSync('git', ['add', '-A'], opts);
execFileSync('git', ['commit', '-qm', 'init'], opts);

function hook(payload, extraEnv = {}) {
  const input = JSON.stringify(payload);
  let stdout = '';
  const ms = timeMs(() => {
    const r = spawnSync(process.execPath, [BIN, 'hook', 'claude-code'], { ...opts, env: { ...env, ...extraEnv }, input, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`hook exited ${r.status}: ${r.stderr}`);
    stdout = r.stdout;
  });
  return { ms, stdout };
}

const floor = [];
const post = [];
/** Median of paired differences (each hook run minus the floor run just before it): robust to drift. */
const paired = (xs, fs) => median(xs.map((x, i) => x - fs[i]));
const postFloor = [];
const promptFloor = [];
const warmFloor = [];
const base = { session_id: 'bench-session', transcript_path: '/tmp/t.jsonl', cwd: repo };
// interleave floor and hook runs so drift hits both alike
for (let i = 0; i < RUNS * 2; i++) {
  const fl0 = timeMs(() => spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore', env }));
  floor.push(fl0);
  postFloor.push(fl0);
  post.push(
    hook({
      ...base,
      // a new session every 9 events: no checkpoint is triggered (its detached process would load the CPU the next runs share)
      session_id: `bench-post-${Math.floor(i / 9)}`,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: `ls -la src/${i}`, description: 'List files' },
      tool_response: { stdout: 'total 0\n'.repeat(40), stderr: '', interrupted: false, isImage: false },
      tool_use_id: `toolu_${i}`,
    }).ms,
  );
}

let promptRows = [];
let startMs;
let firstPrompt;
let hits = 0;
let queriesRun = 0;
const warmRows = [];
let warmHits = 0;
let daemonNote = '';
if (hasSharedGen()) {
  const jsonl = join(dir, 'mem.jsonl');
  writeFileSync(jsonl, execFileSync(process.execPath, [SHARED_GEN, 'memories', String(N)], { maxBuffer: 1 << 30 }));
  const imp = spawnSync(process.execPath, [BIN, 'import', '--jsonl', jsonl], { ...opts, encoding: 'utf8' });
  if (imp.status !== 0) throw new Error(`import failed: ${imp.stderr}`);
  const queries = execFileSync(process.execPath, [SHARED_GEN, 'queries', String(RUNS)], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l).q);
  // the very first prompt: no catalog cache yet (it is built and saved by this process)
  rmSync(join(repo, '.git', 'mem', 'cache'), { recursive: true, force: true });
  firstPrompt = hook({ ...base, session_id: 'bench-first', hook_event_name: 'UserPromptSubmit', prompt: `How do we handle ${queries[0]}?` }).ms;
  const floor2 = [];
  const times = [];
  for (let i = 0; i < queries.length; i++) {
    const fl2 = timeMs(() => spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore', env }));
    floor2.push(fl2);
    promptFloor.push(fl2);
    // a fresh session each time, so earlier injections are not excluded
    const r = hook({ ...base, session_id: `bench-p${i}`, hook_event_name: 'UserPromptSubmit', prompt: `How do we handle ${queries[i]}?` });
    times.push(r.ms);
    queriesRun++;
    if (r.stdout.trim()) hits++;
  }
  floor.push(...floor2);
  promptRows = times;
  // warm: the search daemon holds the index in memory and answers the whole prompt (op `prompt`)
  // build the search index snapshot first (a one-off), so the daemon only loads it
  spawnSync(process.execPath, [BIN, 'search', queries[0]], { ...opts, stdio: 'ignore', env: { ...env, GIT_MEM_DAEMON: 'off' }, timeout: 600_000 });
  const started = spawnSync(process.execPath, [BIN, 'daemon', 'start'], { ...opts, encoding: 'utf8', timeout: 300_000 });
  if (started.status === 0) {
    for (let i = 0; i < queries.length; i++) {
      const fl3 = timeMs(() => spawnSync(process.execPath, ['-e', '0'], { stdio: 'ignore', env }));
      floor.push(fl3);
      warmFloor.push(fl3);
      const r = hook({ ...base, session_id: `bench-w${i}`, hook_event_name: 'UserPromptSubmit', prompt: `How do we handle ${queries[i]}?` });
      warmRows.push(r.ms);
      if (r.stdout.trim()) warmHits++;
    }
    spawnSync(process.execPath, [BIN, 'daemon', 'stop'], { ...opts, stdio: 'ignore' });
  } else daemonNote = `daemon did not start (${(started.stderr || '').trim().split('\n').pop()})`;
  const starts = [];
  // (GIT_MEM_DAEMON=off: measure the pack alone, without starting the search daemon in the background)
  for (let i = 0; i < 5; i++) starts.push(hook({ ...base, session_id: `bench-s${i}`, hook_event_name: 'SessionStart', source: 'startup' }, { GIT_MEM_DAEMON: 'off' }).ms);
  startMs = median(starts);
}

const fl = median(floor);
out.push(
  `Floor: \`node -e 0\` median ${fmt(fl)} ms (${floor.length} runs, each just before a hook run). Overhead = median of the paired differences (hook run minus the floor run before it), and fastest hook run minus fastest floor run (less sensitive to other load on the machine); one-shot processes.`,
);
out.push('');
const minOver = (xs, fs) => Math.min(...xs) - Math.min(...fs);
out.push('| hook event | median | p90 | overhead above node -e 0 (median of pairs) | overhead (fastest run − fastest floor) | goal |');
out.push('|---|---|---|---|---|---|');
out.push(`| PostToolUse (fast path, append to .git/mem/events) | ${fmt(median(post))} ms | ${fmt(pct(post, 90))} ms | +${fmt(paired(post, postFloor))} ms | +${fmt(minOver(post, postFloor))} ms | ≤ +15 ms |`);
if (promptRows.length) {
  out.push(`| UserPromptSubmit at ${N / 1000}k memories, cold process, catalog cache on disk | ${fmt(median(promptRows))} ms | ${fmt(pct(promptRows, 90))} ms | +${fmt(paired(promptRows, promptFloor))} ms | +${fmt(minOver(promptRows, promptFloor))} ms | ≤ +200 ms |`);
  out.push(`| UserPromptSubmit at ${N / 1000}k, first ever (catalog built from the ref) | ${fmt(firstPrompt)} ms | – | +${fmt(firstPrompt - fl)} ms | – | – |`);
  out.push(`| SessionStart at ${N / 1000}k memories (context pack) | ${fmt(startMs)} ms | – | +${fmt(startMs - fl)} ms | – | – |`);
  if (warmRows.length) out.push(`| UserPromptSubmit at ${N / 1000}k memories, warm search daemon | ${fmt(median(warmRows))} ms | ${fmt(pct(warmRows, 90))} ms | +${fmt(paired(warmRows, warmFloor))} ms | +${fmt(minOver(warmRows, warmFloor))} ms | ≤ +30 ms |`);
  out.push('');
  out.push(
    `Relevance on gen.mjs queries (two rare body words each, phrased as a question): ${hits} of ${queriesRun} injected cold, ${warmHits} of ${warmRows.length} with the daemon (one pass over the catalog summaries either way: titles, tags, aliases, scopes, anchors; a memory met only by words of its body is not injected).`,
  );
  if (daemonNote) out.push(daemonNote);
} else {
  out.push('');
  out.push('UserPromptSubmit at 10k skipped: ../shared/bench/gen.mjs not found.');
}
out.push('');
out.push(`Runs: ${RUNS} per figure (BENCH_RUNS; PostToolUse twice that), ${N} memories (BENCH_N). PostToolUse runs use a fresh session every 9 events, so none triggers a checkpoint; the tenth event of a session also spawns a detached \`git mem checkpoint\` (not in the figure).`);
console.log(out.join('\n'));
spawnSync(process.execPath, [BIN, 'daemon', 'stop'], { ...opts, stdio: 'ignore' });
rmSync(dir, { recursive: true, force: true });
