#!/usr/bin/env node
// The secret scanner's eval (issue 28): builds src/safety/secrets.ts with the
// project's bundler, then prints recall per format, overall recall, the
// false-positive line rate on real code and configuration, every miss and
// every false positive, and the time to scan 100 KB.
//
//   npm run eval:secrets            (node eval/secrets/run.mjs [--json])
//
// Goals: recall >= 0.97, false positives on <= 0.5 % of negative lines
// (test/secrets-eval.test.ts asserts the same on every test run).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { measure, timeScan } from './measure.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'git-mem-secrets-'));
let scanner;
try {
  // the same esbuild options as scripts/build.mjs's node bundles
  await build({
    absWorkingDir: root,
    entryPoints: ['src/safety/secrets.ts'],
    outfile: join(dir, 'secrets.mjs'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify: true,
    logLevel: 'warning',
  });
  scanner = await import(pathToFileURL(join(dir, 'secrets.mjs')).href);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const r = measure(scanner);
const speed = timeScan(scanner.scanSecrets);
if (process.argv.includes('--json')) {
  console.log(JSON.stringify({ ...r, speed }, null, 2));
} else {
  const pct = (x) => `${(100 * x).toFixed(2)} %`;
  console.log('recall per format:');
  for (const f of r.byFormat) console.log(`  ${f.format.padEnd(28)} ${String(f.found).padStart(3)}/${f.n}`);
  console.log(`\nmisses (${r.misses.length}):`);
  for (const m of r.misses) console.log(`  [${m.format}] ${JSON.stringify(m.text).slice(0, 200)}`);
  console.log(`\nfalse positives (${r.falsePositives.length}):`);
  for (const f of r.falsePositives) console.log(`  ${f.file}:${f.line} [${f.kind}] ${f.text}`);
  console.log(
    `\nlabelled: ${r.labelled} lines of the negatives hold a real secret's shape (LABELLED), not counted` +
    `\npositives: ${r.positives} in ${r.formats} formats, found ${r.found}: recall ${r.recall.toFixed(4)}` +
      `\nnegatives: ${r.negativeLines} non-empty lines in ${r.negativeFiles} files, ` +
      `${r.falsePositives.length} flagged: false-positive rate ${pct(r.fpRate)}` +
      `\nspeed: ${speed.bytes} bytes of real code scanned in ${speed.ms.toFixed(2)} ms (median of 15 runs; ` +
      `${speed.cpuMs.toFixed(2)} ms of CPU a scan)`,
  );
}
if (r.recall < 0.97 || r.fpRate > 0.005) process.exitCode = 1;
