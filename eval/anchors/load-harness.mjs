// The anchors harness (eval/anchors/harness.ts: our TypeScript, bundled by esbuild next to
// node_modules so the tree-sitter grammars resolve), for eval/anchors/run.mjs and the benchmarks
// that generate anchored stores with it (bench/anchors.bench.mjs, bench/lsp.bench.mjs).
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleForNode } from '../../bench/lib.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** Builds the harness into node_modules/.cache/git-mem-eval and imports it. */
export async function loadHarness() {
  const outDir = join(here, '..', '..', 'node_modules', '.cache', 'git-mem-eval');
  mkdirSync(outDir, { recursive: true });
  await bundleForNode({
    entryPoints: [join(here, 'harness.ts')],
    outfile: join(outDir, 'harness.mjs'),
    logLevel: 'warning',
    external: ['web-tree-sitter', 'tree-sitter-wasms'],
  });
  return import(join(outDir, 'harness.mjs'));
}
