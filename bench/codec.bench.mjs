#!/usr/bin/env node
// The record codec (issue #29 item 5): is the hand-written YAML reader and writer of
// src/model/record.ts worth its code against the simplest alternatives?
//
//   hand     serializeRecord / parseRecord as they are (one-line fields and the block part by
//            hand, the yaml library only for what they are not sure of)
//   library  the yaml library alone: stringify(frontmatter, BLOCK_OPTIONS) / parseDocument
//   json     every field written `key: <JSON>` (JSON is YAML flow: the library reads it as it is),
//            read by the yaml library
//   json+    the same files read by a JSON line reader (`key: ` then JSON.parse), the library only
//            for a line that is not JSON
//   mixed    the one-line fields as the hand codec writes and reads them, the block fields
//            (`by`, `links`, `anchors`) as one JSON flow line each: the hand codec without its
//            block writer and reader
//
// Records: 10k of ../shared/bench/gen.mjs (title, body, tags, type) with `by`, and every third
// anchored as `git mem add --anchor` anchors them (commit, blob, lines, hashes, source text,
// context). Figures are medians of BENCH_RUNS rounds over all records, in one process, all
// variants side by side. Then where it reaches a user: a cold `git mem list --json` (the catalog
// rebuilt from 10k records) measured with the build as it is, and the same with the parse time
// of each alternative put in place of the hand codec's (the rest of the command is the same
// whatever the codec: git reads, summaries, the cache write).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { BIN, ROOT, SHARED_GEN, cmdMedian, importEntry, median, scratchRepo, timeMs } from './lib.mjs';

const N = Number(process.env.BENCH_N ?? 10000);
const RUNS = Number(process.env.BENCH_RUNS ?? 7);
// the generator: ../shared/bench/gen.mjs beside the checkout, or BENCH_GEN (a worktree elsewhere)
const GEN = process.env.BENCH_GEN ?? SHARED_GEN;
if (!existsSync(GEN)) {
  console.log('## codec\n\nskipped: ../shared/bench/gen.mjs not found');
  process.exit(0);
}

const c = await importEntry(join(ROOT, 'bench', 'codec.entry.ts'));

// ---------------------------------------------------------------- the records
const gen = execFileSync(process.execPath, [GEN, 'memories', String(N)], { encoding: 'utf8', maxBuffer: 1 << 30 })
  .trim()
  .split('\n')
  .map((l) => JSON.parse(l));
const hex = (i, n) => (i.toString(16).padStart(8, '0').repeat(8)).slice(0, n);
const records = gen.map((g, i) =>
  c.newRecord({
    id: c.newId(),
    type: g.type,
    title: g.title,
    body: g.body,
    tags: g.tags,
    now: new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString(),
    author: 'Bench Person <bench@example.com>',
    by: { kind: 'person' },
    anchors:
      i % 3 === 0
        ? [
            {
              path: `src/mod${i % 97}/file${i % 13}.ts`,
              commit: hex(i + 1, 40),
              blob: hex(i + 2, 40),
              lines: [10 + (i % 50), 14 + (i % 50)],
              hash: hex(i + 3, 32),
              wshash: hex(i + 4, 32),
              text: `export function f${i}(n) {\n  const size = n * 2;\n  return new Pool({ size });\n}`,
              before: ['', `// pool ${i}`],
              after: ['', 'export const x = 1;'],
            },
          ]
        : [],
  }),
);

// ---------------------------------------------------------------- the variants
const bodyOf = (r) => (r.body.endsWith('\n') || r.body === '' ? r.body : `${r.body}\n`);
const byLibrary = (text) => {
  const { yaml, body } = c.splitFrontmatter(text);
  return c.recordFromParts(c.readFrontmatterByLibrary(yaml), body);
};
const jsonWrite = (r) =>
  `---\n${Object.entries(c.frontmatterOf(r))
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}\n`)
    .join('')}---\n${bodyOf(r)}`;
const JSON_LINE = /^([A-Za-z_][A-Za-z0-9_-]*): (.*)$/;
const jsonRead = (text) => {
  const { yaml, body } = c.splitFrontmatter(text);
  const fm = {};
  for (const line of yaml.split('\n')) {
    if (!line) continue;
    const m = JSON_LINE.exec(line);
    if (!m || Object.hasOwn(fm, m[1])) return byLibrary(text);
    try {
      fm[m[1]] = JSON.parse(m[2]);
    } catch {
      return byLibrary(text);
    }
  }
  return c.recordFromParts(fm, body);
};
const MACHINE = new Set(['by', 'links', 'anchors']);
const mixedWrite = (r) => {
  const head = c.serializeRecord({ ...r, by: undefined, extra: {}, links: { supersedes: [], superseded_by: [], related: [] }, anchors: [] });
  const fm = c.frontmatterOf(r);
  const json = Object.keys(fm)
    .filter((k) => MACHINE.has(k))
    .map((k) => `${k}: ${JSON.stringify(fm[k])}\n`)
    .join('');
  const end = head.indexOf('\n---\n', 3) + 1;
  return head.slice(0, end) + json + head.slice(end);
};
const mixedRead = (text) => {
  const { yaml, body } = c.splitFrontmatter(text);
  const lines = yaml.split('\n');
  const rest = [];
  const fm = {};
  for (const line of lines) {
    const m = /^(by|links|anchors): ([[{].*)$/.exec(line);
    if (m) fm[m[1]] = JSON.parse(m[2]);
    else rest.push(line);
  }
  const head = c.readFrontmatterFast(rest.join('\n'), true);
  if (!head) return byLibrary(text);
  return c.recordFromParts({ ...head, ...fm }, body);
};
const VARIANTS = {
  hand: { write: c.serializeRecord, read: c.parseRecord },
  library: { write: (r) => `---\n${c.stringify(c.frontmatterOf(r), c.BLOCK_OPTIONS)}---\n${bodyOf(r)}`, read: byLibrary },
  json: { write: jsonWrite, read: byLibrary },
  'json+': { write: jsonWrite, read: jsonRead },
  mixed: { write: mixedWrite, read: mixedRead },
};

// every variant gives back the record it was given (as the codec would write it)
for (const [name, v] of Object.entries(VARIANTS)) {
  for (const r of records.slice(0, 300)) {
    const back = v.read(v.write(r));
    if (c.serializeRecord(back) !== c.serializeRecord(r) || !isDeepStrictEqual(back, v.read(c.serializeRecord(back) && v.write(back))))
      throw new Error(`${name}: ${r.id} does not round-trip`);
  }
}
// the library writes the hand codec's bytes (what test/record.test.ts holds it to)
const sameBytes = records.slice(0, 300).every((r) => VARIANTS.library.write(r) === c.serializeRecord(r));

const texts = Object.fromEntries(Object.entries(VARIANTS).map(([k, v]) => [k, records.map(v.write)]));
const bytes = Object.fromEntries(Object.entries(texts).map(([k, t]) => [k, t.reduce((n, s) => n + Buffer.byteLength(s), 0)]));
const times = Object.fromEntries(Object.keys(VARIANTS).map((k) => [k, { write: [], read: [] }]));
for (let run = 0; run < RUNS; run++) {
  for (const [name, v] of Object.entries(VARIANTS)) {
    times[name].write.push(timeMs(() => records.forEach(v.write)));
    times[name].read.push(timeMs(() => texts[name].forEach((t) => v.read(t))));
  }
}
const med = Object.fromEntries(
  Object.entries(times).map(([k, t]) => [k, { write: median(t.write), read: median(t.read) }]),
);

// ---------------------------------------------------------------- where a user meets it
const { dir, repo, env } = scratchRepo();
execFileSync('git', ['commit', '-q', '--allow-empty', '-m', 'x'], { cwd: repo, env });
execFileSync(process.execPath, [BIN, 'init'], { cwd: repo, env, stdio: 'ignore' });
const jsonl = gen.map((g) => JSON.stringify({ title: g.title, body: g.body, tags: g.tags, type: g.type })).join('\n');
execFileSync(process.execPath, [BIN, 'import', '-'], { cwd: repo, env, input: jsonl, stdio: ['pipe', 'ignore', 'inherit'] });
const cache = join(repo, '.git', 'mem', 'cache');
const coldList = [];
for (let i = 0; i < Math.max(5, RUNS); i++) {
  rmSync(cache, { recursive: true, force: true });
  coldList.push(timeMs(() => spawnSync(process.execPath, [BIN, 'list', '--json'], { cwd: repo, env, stdio: 'ignore' })));
}
const warmList = cmdMedian(process.execPath, [BIN, 'list', '--json'], { cwd: repo, env }, Math.max(5, RUNS));
const nodeFloor = cmdMedian(process.execPath, ['-e', '0'], { env }, Math.max(5, RUNS));
// what a command pays to load the library (the build's one-file copy) and read one small document:
// runs paired with a bare node start, the median of the differences (a loaded machine drifts)
const loadYaml = `require(${JSON.stringify(join(ROOT, 'dist', 'vendor-yaml.cjs'))}).parseDocument('a: 1').toJS()`;
const libLoad = median(
  Array.from({ length: Math.max(9, RUNS) }, () => {
    const bare = timeMs(() => spawnSync(process.execPath, ['-e', '0'], { env, stdio: 'ignore' }));
    return timeMs(() => spawnSync(process.execPath, ['-e', loadYaml], { env, stdio: 'ignore' })) - bare;
  }),
);
// the records as the store holds them (what the cold list parses), read once through git
const paths = execFileSync('git', ['ls-tree', '-r', '--name-only', 'refs/memory', 'memories'], { cwd: repo, env, encoding: 'utf8', maxBuffer: 1 << 28 })
  .trim()
  .split('\n');
const batch = execFileSync('git', ['cat-file', '--batch'], {
  cwd: repo,
  env,
  input: paths.map((p) => `refs/memory:${p}`).join('\n'),
  maxBuffer: 1 << 30,
});
const stored = [];
for (let at = 0; at < batch.length; ) {
  const nl = batch.indexOf(10, at);
  const size = Number(batch.toString('latin1', at, nl).split(' ')[2]);
  stored.push(batch.toString('utf8', nl + 1, nl + 1 + size));
  at = nl + 1 + size + 1;
}
const storedRecords = stored.map((t) => c.parseRecord(t));
const storedTexts = Object.fromEntries(Object.entries(VARIANTS).map(([k, v]) => [k, storedRecords.map(v.write)]));
const storedRead = Object.fromEntries(
  Object.entries(VARIANTS).map(([k, v]) => [
    k,
    median(Array.from({ length: RUNS }, () => timeMs(() => storedTexts[k].forEach((t) => v.read(t))))),
  ]),
);
rmSync(dir, { recursive: true, force: true });

// ---------------------------------------------------------------- report
const f = (ms) => (ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`);
const us = (ms, n) => `${((ms * 1000) / n).toFixed(1)} µs`;
const coldMed = median(coldList);
const { loadavg } = await import('node:os');
const out = [];
out.push('## codec', '', `Load average when the report was made: ${loadavg().map((x) => x.toFixed(1)).join(' / ')} (2 cores shared).`, '');
out.push(
  `${N} records (one in three anchored, every one with \`by\`), medians of ${RUNS} rounds in one process. ` +
    `Every variant reads back the record it wrote (checked on the first 300). The library alone writes ${sameBytes ? 'the same bytes as' : 'other bytes than'} the hand codec (its lists in block style, \`id\` unquoted): the same values, another file.`,
  '',
  `| codec | serialize ${N} | per record | parse ${N} | per record | parse+serialize ${N} | bytes of the files |`,
  '|---|---|---|---|---|---|---|',
);
for (const [k, m] of Object.entries(med))
  out.push(
    `| ${k} | ${f(m.write)} | ${us(m.write, N)} | ${f(m.read)} | ${us(m.read, N)} | ${f(m.write + m.read)} | ${(bytes[k] / 1048576).toFixed(2)} MiB |`,
  );
out.push(
  '',
  `Where a user meets it: \`git mem list --json\` of a store of ${stored.length} records (imported), node floor ${f(nodeFloor)}.`,
  `Cold (the catalog rebuilt: every record parsed) ${f(coldMed)}; warm (from the catalog cache, no record parsed) ${f(warmList)}.`,
  `Loading the yaml library and reading one small document costs a process ${f(libLoad)} above the floor: paid by every variant that reads through the library, not by the hand codec (nor json+) when no record needs it.`,
  'The cold list with each codec: the measured command with the parse of the stored records by the hand codec taken out and the alternative\'s put in.',
  '',
  '| codec | parse of the stored records | cold list (projected) | vs hand |',
  '|---|---|---|---|',
);
for (const [k, ms] of Object.entries(storedRead)) {
  const proj = coldMed - storedRead.hand + ms;
  out.push(`| ${k} | ${f(ms)} | ${f(proj)} | ${k === 'hand' ? '—' : `${proj >= coldMed ? '+' : ''}${f(proj - coldMed)} (${((proj / coldMed - 1) * 100).toFixed(0)}%)`} |`);
}
console.log(out.join('\n'));
