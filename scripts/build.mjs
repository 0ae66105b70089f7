// Bundles the CLI into dist/ with esbuild. Entry points that are imported
// lazily (search, MCP, embeddings, tree-sitter) become separate chunks, so a
// `git mem show` never parses them.
import { build } from 'esbuild';
import { rmSync } from 'node:fs';

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { cli: 'src/cli/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  packages: 'external',
  logLevel: 'warning',
  banner: { js: "import { createRequire as __gmCreateRequire } from 'node:module'; const require = __gmCreateRequire(import.meta.url);" },
});
