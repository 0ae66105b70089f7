// Bundles the CLI into dist/ with esbuild. Code imported lazily (search, MCP,
// embeddings, tree-sitter) becomes separate chunks, so `git mem show` never
// parses it. Heavy third-party packages stay external and load on demand.
// Builds into a fresh directory and swaps it in, so a test run reading dist/
// never sees a half-written bundle.
import { build } from 'esbuild';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tmp = `${root}dist.new-${process.pid}`;
const old = `${root}dist.old-${process.pid}`;
await build({
  // claude-hook: the agent hook handler, also loaded directly by dist/claude-fast.js (below)
  // search-fast: `git mem search` against a running daemon without loading the CLI (shares its daemon client chunk)
  entryPoints: { cli: 'src/cli/main.ts', 'claude-hook': 'src/agents/claude-hook.ts', 'search-fast': 'src/search/search-fast.ts' },
  absWorkingDir: root,
  outdir: tmp,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  minify: true,
  // bundled: small pure-JS libraries on the hot path (yaml, yargs, micromatch, orama);
  // external: native, WASM or very large packages, loaded lazily when used
  external: [
    '@huggingface/transformers',
    'onnxruntime-node',
    'onnxruntime-web',
    'sharp',
    'web-tree-sitter',
    'tree-sitter-wasms',
    '@modelcontextprotocol/sdk',
    '@modelcontextprotocol/sdk/*',
  ],
  banner: {
    js: "import { createRequire as __gmCreateRequire } from 'node:module'; const require = __gmCreateRequire(import.meta.url);",
  },
});
// The agent hook's fast path (run by bin/ before the CLI): one self-contained
// file of node built-ins only, so a PostToolUse event loads a single small module.
await build({
  entryPoints: { 'claude-fast': 'src/agents/claude-fast.ts' },
  absWorkingDir: root,
  outdir: tmp,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  minify: true,
});
if (existsSync(`${root}dist`)) renameSync(`${root}dist`, old);
renameSync(tmp, `${root}dist`);
rmSync(old, { recursive: true, force: true });
