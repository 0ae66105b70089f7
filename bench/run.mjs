#!/usr/bin/env node
// `npm run bench`: runs every bench/*.bench.mjs in turn (or those named on the
// command line), each printing a markdown section, and writes them all into
// bench/RESULTS.md with the machine and the date. Figures are medians and
// ratios against a baseline measured in the same script (these machines are noisy).
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .filter((f) => !only.length || only.some((o) => f.includes(o)))
  .sort();
const git = spawnSync('git', ['--version'], { encoding: 'utf8' }).stdout.trim();
const sections = [
  '# Benchmark results',
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? '?'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; node ${process.version}; ${git}. Date: ${new Date().toISOString().slice(0, 10)}.`,
  'Produced by `npm run bench`; every figure is a median of repeated runs, reported beside a floor measured in the same script.',
  '',
];
for (const f of files) {
  process.stderr.write(`bench: ${f}\n`);
  const r = spawnSync(process.execPath, [`${dir}${f}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 });
  sections.push(r.status === 0 ? r.stdout.trim() : `## ${f}\n\nFAILED (exit ${r.status})\n\n${r.stdout.trim()}`, '');
}
const out = sections.join('\n');
writeFileSync(`${dir}RESULTS${only.length ? `-${only.join('-')}` : ''}.md`, out);
process.stdout.write(`${out}\n`);
