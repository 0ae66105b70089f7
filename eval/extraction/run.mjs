#!/usr/bin/env node
// `npm run eval:extraction`: runs the real tier-0 extraction (src/agents/events.ts
// compactEvent + src/agents/extract.ts extractTier0, bundled here with esbuild)
// on the labelled prompts and event sequences of cases.jsonl and prints
// precision and recall per method. --verbose lists every false positive and miss.
//
//   node eval/extraction/run.mjs [--verbose]
import { build } from 'esbuild';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadCases, METHODS, score } from './score.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'gm-eval-extraction-'));
try {
  const out = join(dir, 'extract.mjs');
  await build({
    stdin: {
      contents:
        "export { compactEvent } from './src/agents/events.ts';\nexport { extractTier0 } from './src/agents/extract.ts';\n",
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: out,
    logLevel: 'error',
    define: { __GIT_MEM_BUILD__: '"eval"', __GIT_MEM_VENDOR__: '{}' },
  });
  const fns = await import(pathToFileURL(out).href);
  const all = loadCases();
  const table = (label, cases) => {
    const r = score(fns, cases);
    console.log(`\n${label}: ${r.cases} cases`);
    console.log('method       precision  recall  tp  fp  fn  type-agrees');
    for (const k of METHODS) {
      const x = r.methods[k];
      console.log(
        `${k.padEnd(12)} ${x.precision.toFixed(3).padStart(9)}  ${x.recall.toFixed(3).padStart(6)}  ${String(x.tp).padStart(2)}  ${String(x.fp).padStart(2)}  ${String(x.fn).padStart(2)}  ${x.typeOk}/${x.tp}`,
      );
    }
    if (process.argv.includes('--verbose'))
      for (const mi of r.misses)
        console.log(`  ${mi.kind} ${mi.method}: ${JSON.stringify(mi.case.input).slice(0, 160)}`);
    return r;
  };
  console.log('tier-0 extraction (src/agents/extract.ts) on eval/extraction/cases.jsonl');
  table('all', all);
  table('tuning split (the rules were changed looking at these)', all.filter((c) => c.split !== 'heldout'));
  table('held-out split (written after the rules, not tuned on)', all.filter((c) => c.split === 'heldout'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
