// The one-shot paths that the command daemon used to run (issue #29 item 3), two builds side
// by side: `node bench/daemon-paths.mjs OLD_ROOT [N] [RUNS] [NEW_ROOT]` times
//   - a commit whose post-commit hook re-anchors (it touches an anchored file), and
//   - `git mem add` of a new memory (its duplicate check against N memories),
//   - the agent hook (`hook claude-code`) on a tool event and on a prompt naming an anchored file,
// for the build in OLD_ROOT (a checkout with dist/ built) and this one, each with a daemon
// running (`git mem daemon start`: the old build's runs the whole command in it, this build's
// answers add's duplicate check and runs the post-commit hook's work) and without one (GIT_MEM_DAEMON=off). Each build and mode
// has its own copy of the same store of N memories (default 1000), 10 of them anchored; runs
// alternate between the four, RUNS rounds (default 11), medians printed with node's floor and a
// commit without hook. NEW_ROOT (default this checkout): the new build's copy, so that a build
// made meanwhile does not change it mid-run. Prints a markdown section (bench/RESULTS-daemon-paths.md).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN, fmt, median, scratchRepo, timeMs } from './lib.mjs';

const OLD = process.argv[2];
if (!OLD) throw new Error('usage: node bench/daemon-paths.mjs OLD_ROOT [N] [RUNS]');
const N = Number(process.argv[3] ?? 1000);
const RUNS = Number(process.argv[4] ?? 11);
const ANCHORED = 10;

// the same store for every copy: N memories of made-up words (deterministic), as JSON lines
let seed = 42;
const rnd = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const SYL = ['ka', 'lo', 'mi', 'tre', 'sha', 'vu', 'po', 'ne', 'dri', 'gol', 'fen', 'zu', 'rin', 'tas', 'bel', 'cho'];
const word = () => Array.from({ length: 2 + Math.floor(rnd() * 3) }, () => SYL[Math.floor(rnd() * SYL.length)]).join('');
const words = (n) => Array.from({ length: n }, word).join(' ');
const TYPES = ['decision', 'convention', 'known_fix', 'constraint', 'environment'];
const jsonl = Array.from({ length: N - ANCHORED }, (_, i) =>
  JSON.stringify({ id: `mem-${i}`, title: words(5), body: `${words(40)}.\n\n${words(30)}.`, tags: [], type: TYPES[i % TYPES.length] }),
).join('\n');
const fileText = (i, shift = 0) =>
  `${'// moved\n'.repeat(shift)}${Array.from({ length: 40 }, (_, l) => `export const v${i}_${l} = ${l} * ${i + 1};`).join('\n')}\n`;

const builds = [
  { name: 'old', bin: join(OLD, 'bin', 'git-mem.js') },
  { name: 'new', bin: process.argv[5] ? join(process.argv[5], 'bin', 'git-mem.js') : BIN },
];
const modes = [];
const dirs = [];
for (const b of builds)
  for (const daemon of [true, false]) {
    const { dir, repo, env } = scratchRepo();
    dirs.push(dir);
    delete env.NODE_EXTRA_CA_CERTS;
    delete env.CI;
    // the installed hook runs $GIT_MEM_CMD: this build's
    env.GIT_MEM_CMD = `"${process.execPath}" "${b.bin}"`;
    if (!daemon) env.GIT_MEM_DAEMON = 'off';
    const opts = { cwd: repo, env, stdio: 'ignore', maxBuffer: 1 << 30 };
    const mem = (...args) => execFileSync(process.execPath, [b.bin, ...args], opts);
    for (let i = 0; i < ANCHORED; i++) writeFileSync(join(repo, `f${i}.ts`), fileText(i));
    execFileSync('git', ['add', '.'], opts);
    execFileSync('git', ['commit', '-qm', 'files'], opts);
    writeFileSync(join(dir, 'mem.jsonl'), jsonl);
    mem('import', '--jsonl', join(dir, 'mem.jsonl'));
    for (let i = 0; i < ANCHORED; i++)
      mem('add', '--title', `Anchored ${i} ${words(3)}`, '--content', words(20), '--anchor', `f${i}.ts:5-9`);
    mem('hooks', 'install');
    mem('search', 'warm the index'); // the index snapshot, as after a first search
    if (daemon) mem('daemon', 'start');
    modes.push({ name: `${b.name}, ${daemon ? 'daemon running' : 'no daemon'}`, b, repo, opts, mem, commit: [], add: [], plain: [], tool: [], prompt: [] });
  }

let shift = 0;
const commit = (m, hooks) => {
  const i = shift % ANCHORED;
  const p = join(m.repo, `f${i}.ts`);
  writeFileSync(p, `// moved ${shift}\n${readFileSync(p, 'utf8')}`);
  return timeMs(() =>
    spawnSync('git', [...(hooks ? [] : ['-c', 'core.hooksPath=/dev/null']), 'commit', '-qam', `change ${shift}`], m.opts),
  );
};
const floor = [];
// one warm-up round (the daemons' first answers, the compile cache), then RUNS rounds, builds alternating
for (let i = -1; i < RUNS; i++) {
  shift++;
  const order = i % 2 ? [...modes].reverse() : modes;
  const nodeMs = timeMs(() => spawnSync(process.execPath, ['-e', '0'], modes[0].opts));
  for (const m of order) {
    const plain = commit(m, false);
    const c = commit(m, true);
    const a = timeMs(() =>
      spawnSync(process.execPath, [m.b.bin, 'add', '--title', `Bench add ${i} ${words(4)}`, '--content', words(30)], m.opts),
    );
    const hook = (ev) =>
      timeMs(() =>
        spawnSync(process.execPath, [m.b.bin, 'hook', 'claude-code'], {
          ...m.opts,
          input: JSON.stringify({ session_id: `bench-${m.b.name}-${i}`, cwd: m.repo, ...ev }),
        }),
      );
    const t = hook({ hook_event_name: 'PostToolUse', tool_name: 'Read', tool_input: { file_path: 'f1.ts' }, tool_response: {} });
    const p = hook({ hook_event_name: 'UserPromptSubmit', prompt: `please look at f${i & 7}.ts before the release` });
    if (i < 0) continue;
    m.tool.push(t);
    m.prompt.push(p);
    m.plain.push(plain);
    m.commit.push(c);
    m.add.push(a);
  }
  if (i >= 0) floor.push(nodeMs);
}
for (const m of modes) if (m.name.includes('daemon running')) spawnSync(process.execPath, [m.b.bin, 'daemon', 'stop'], m.opts);
for (const d of dirs) rmSync(d, { recursive: true, force: true });

const f = median(floor);
const out = [
  `## One-shot add and post-commit hook at ${N} memories, old build beside new`,
  '',
  `\`node bench/daemon-paths.mjs ${OLD} ${N} ${RUNS}\`: medians of ${RUNS} rounds, the four set-ups alternating within each round. \`node -e 0\` ${fmt(f)} ms. "Commit" is \`git commit\` of a change that moves an anchored file, its post-commit hook re-anchoring; "hook adds" is that minus the same commit without the hook (core.hooksPath=/dev/null), measured in the same round.`,
  '',
  '| build, daemon | commit (hook adds) | add | agent hook: tool event | agent hook: prompt |',
  '|---|---:|---:|---:|---:|',
  ...modes.map(
    (m) =>
      `| ${m.name} | ${fmt(median(m.commit))} ms (+${fmt(median(m.commit) - median(m.plain))}) | ${fmt(median(m.add))} ms | ${fmt(median(m.tool))} ms | ${fmt(median(m.prompt))} ms |`,
  ),
];
process.stdout.write(`${out.join('\n')}\n`);
