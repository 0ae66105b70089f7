// Bundles the CLI into dist/ with esbuild. Code imported lazily (search, MCP,
// embeddings, tree-sitter) becomes separate chunks, so `git mem show` never
// parses it. Heavy third-party packages stay external and load on demand.
// Builds into a fresh directory and swaps it in, so a test run reading dist/
// never sees a half-written bundle.
import { build } from 'esbuild';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tmp = `${root}dist.new-${process.pid}`;
// one id for every bundle of this build: a search daemon started by one of them is
// "this build" for all the others (src/search/daemon-client.ts buildId)
const define = { __GIT_MEM_BUILD__: JSON.stringify(`${Date.now().toString(36)}-${process.pid}`) };
// bundled: small pure-JS libraries on the hot path (yaml, yargs, micromatch, orama);
// external: native, WASM or very large packages, loaded lazily when used
const external = [
  '@huggingface/transformers',
  'onnxruntime-node',
  'onnxruntime-web',
  'sharp',
  'web-tree-sitter',
  'tree-sitter-wasms',
  '@modelcontextprotocol/sdk',
  '@modelcontextprotocol/sdk/*',
];
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
  define,
  external,
  banner: {
    js: "import { createRequire as __gmCreateRequire } from 'node:module'; const require = __gmCreateRequire(import.meta.url);",
  },
});
// Fast paths that bin/ runs before the CLI, each one self-contained file so a hot
// command loads a single small module: the agent hook's tool events (node built-ins
// only) and `git mem show REF` / `list --json` from the catalog cache.
const selfContained = { absWorkingDir: root, outdir: tmp, bundle: true, format: 'esm', platform: 'node', target: 'node20', sourcemap: 'linked', logLevel: 'warning', minify: true, define };
await build({ ...selfContained, entryPoints: { 'claude-fast': 'src/agents/claude-fast.ts' } });
await build({
  ...selfContained,
  entryPoints: { 'read-fast': 'src/cli/read-fast.ts' },
  // record parsing loads yaml through require (src/model/lazy.ts)
  banner: {
    js: "import { createRequire as __gmCreateRequire } from 'node:module'; const require = __gmCreateRequire(import.meta.url);",
  },
});
// The CLI again as one CommonJS file, which bin/git-mem.js loads with a V8 code cache
// per command (src/v8cache.ts, dist/v8cache.cjs): no ES module graph to resolve and
// compile on every run. Lazy imports of bundled code become lazily run modules of the
// same file; the packages left out are still imported when used.
const cjsCommon = {
  absWorkingDir: root,
  outdir: tmp,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  minify: true,
  define: { ...define, 'import.meta.url': '__gmImportMetaUrl' },
  banner: { js: "'use strict';const __gmImportMetaUrl = require('node:url').pathToFileURL(__filename).href;" },
};
await build({ ...cjsCommon, entryPoints: { cli: 'src/cli/main.ts' }, sourcemap: 'linked', external });
await build({ ...cjsCommon, entryPoints: { v8cache: 'src/v8cache.ts' } });
// The post-commit hook (run by the installed git hook, src/hooks/git-hooks.ts):
// one self-contained CommonJS file, so every commit pays for the hook's code only,
// not the CLI's, and not for the ES module loader either (~5 ms of a node start);
// started by post-commit.cjs (below), which loads it with a V8 code cache.
await build({
  ...cjsCommon,
  entryPoints: { 'post-commit-main': 'src/anchors/post-commit-main.ts' },
  sourcemap: 'linked',
  external: ['web-tree-sitter', 'tree-sitter-wasms'],
});
// post-commit-main.cjs runs as a vm.Script without a module loader (post-commit-loader.ts), where import() fails
if (/\bimport\(/.test(readFileSync(`${tmp}/post-commit-main.cjs`, 'utf8'))) {
  throw new Error('dist/post-commit-main.cjs must not use import(): it runs as a vm.Script (see post-commit-loader.ts)');
}
await build({ ...cjsCommon, entryPoints: { 'post-commit': 'src/anchors/post-commit-loader.ts' } });
// yaml and micromatch as one CommonJS file each, required synchronously on
// first use (src/model/lazy.ts): most one-shot commands never parse them
for (const name of ['yaml', 'micromatch']) {
  await build({
    stdin: { contents: `module.exports = require('${name}');`, resolveDir: root, loader: 'js' },
    absWorkingDir: root,
    outfile: `${tmp}/${name}.cjs`,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
    minify: true,
  });
}
// Swap the new files in one by one (rename is atomic per file) and keep the old
// chunks for a while: a git-mem process that started before this build may
// still import one of them lazily (a hook, the daemon, a test run).
mkdirSync(`${root}dist`, { recursive: true });
const fresh = new Set(readdirSync(tmp));
for (const f of [...fresh].sort((a, b) => (a === 'cli.js') - (b === 'cli.js'))) renameSync(`${tmp}/${f}`, `${root}dist/${f}`);
rmSync(tmp, { recursive: true, force: true });
for (const f of readdirSync(`${root}dist`)) {
  const p = `${root}dist/${f}`;
  // V8 code caches (the CLI's per command, the post-commit hook's) are made by the first runs after a build (never packed)
  if (f.endsWith('.v8cache')) rmSync(p, { force: true });
  else if (!fresh.has(f) && Date.now() - statSync(p).mtimeMs > 15 * 60_000) rmSync(p, { force: true });
}
