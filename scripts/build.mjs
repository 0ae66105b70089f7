// Bundles the CLI into dist/ with esbuild: one ES module build with code
// splitting. Every command is imported when it runs (src/cli/commands.ts) and
// code imported lazily (search, MCP, embeddings, tree-sitter) becomes chunks of
// its own, so `git mem show` never parses it. Heavy third-party packages stay
// external and load on demand.
// Builds into a fresh directory and swaps it in, so a test run reading dist/
// never sees a half-written bundle.
import { build } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const CLEAN = process.argv.includes('--clean');
const tmp = `${root}dist.new-${process.pid}`;
// one id for every bundle of this build: a query daemon started by one of them is
// "this build" for all the others (src/daemon/client.ts buildId)
// yaml and micromatch are required on first use (src/model/yaml.ts, glob.ts), each from one file
// bundled here into dist/vendor-<name>.cjs (one file loads in half the time of the package's many)
const VENDOR = { yaml: 'yaml', micromatch: 'micromatch' };
const define = {
  __GIT_MEM_BUILD__: JSON.stringify(`${Date.now().toString(36)}-${process.pid}`),
  __GIT_MEM_VENDOR__: JSON.stringify(
    Object.fromEntries(Object.keys(VENDOR).map((k) => [k, `./vendor-${k}.cjs`])),
  ),
};
// bundled: small pure-JS libraries; yaml and micromatch are required on first use;
// external: native, WASM or very large packages, loaded lazily when used
const external = [
  // loaded on first use through require() (src/model/yaml.ts, src/model/glob.ts)
  'yaml',
  'micromatch',
  '@huggingface/transformers',
  'onnxruntime-node',
  'onnxruntime-web',
  'sharp',
  'web-tree-sitter',
  'tree-sitter-wasms',
  '@modelcontextprotocol/sdk',
  '@modelcontextprotocol/sdk/*',
  '@modelcontextprotocol/server',
  '@modelcontextprotocol/server/*',
];
// the node bundles: ES modules for node 20, minified, with this build's id
const forNode = {
  absWorkingDir: root,
  outdir: tmp,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  minify: true,
  define,
  external,
};
await build({
  ...forNode,
  // cli: the CLI (bin/git-mem.js); agent-hook: the agent hooks' dispatcher, which
  // bin/git-mem.js loads alone for `hook claude-code` (the CLI's hook command calls the
  // same module: shared chunks)
  // store-start: the store's git processes, which bin/git-mem.js starts for `add` and the
  // post-commit hook while the CLI loads (the CLI's store takes them: shared chunks)
  // git-hook: the post-commit hook's way to a running daemon, which bin/git-mem.js asks first
  entryPoints: {
    cli: 'src/cli/main.ts',
    'agent-hook': 'src/hooks/claude-code.ts',
    'git-hook': 'src/hooks/git-hook.ts',
    'store-start': 'src/gitstore/store-start.ts',
  },
  splitting: true,
});
// no module of these bundles calls require(): the CommonJS packages (yaml, micromatch) are
// required on first use through createRequire in src/model/yaml.ts and glob.ts. A bundled
// CommonJS package would get esbuild's shim, which throws at run time: fail here instead.
for (const f of readdirSync(tmp))
  if (f.endsWith('.js') && readFileSync(`${tmp}/${f}`, 'utf8').includes('Dynamic require of'))
    throw new Error(`build: ${f} bundles a CommonJS require(); load that package through createRequire`);
for (const [name, pkg] of Object.entries(VENDOR))
  await build({
    entryPoints: [pkg],
    absWorkingDir: root,
    outfile: `${tmp}/vendor-${name}.cjs`,
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    minify: true,
    logLevel: 'warning',
  });
// The page of `git mem ui` (src/ui/server.ts serves these three files): web/ bundled for the
// browser, Preact, marked and DOMPurify in it, nothing fetched at run time. Its scripts and
// styles together stay within UI_BUDGET gzipped, or the build fails.
const UI_BUDGET = 150 * 1024;
await build({
  entryPoints: { 'ui-app': 'web/main.tsx' },
  absWorkingDir: root,
  outdir: tmp,
  bundle: true,
  // an ES module, so the Markdown renderer can be a chunk loaded after the first page
  format: 'esm',
  splitting: true,
  chunkNames: 'ui-chunk-[hash]',
  platform: 'browser',
  target: ['chrome111', 'firefox113', 'safari16.2'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  minify: true,
  legalComments: 'linked',
  define: { 'process.env.NODE_ENV': '"production"' },
  logLevel: 'warning',
});
await build({
  entryPoints: { 'ui-app': 'web/app.css' },
  absWorkingDir: root,
  outdir: tmp,
  bundle: true,
  target: ['chrome111', 'firefox113', 'safari16.2'],
  minify: true,
  logLevel: 'warning',
});
copyFileSync(`${root}web/index.html`, `${tmp}/ui-index.html`);
const uiFiles = readdirSync(tmp).filter((f) => /^ui-(app|chunk-\w+)\.(js|css)$|^ui-index\.html$/.test(f));
const uiGzip = uiFiles.reduce(
  (n, f) => n + gzipSync(readFileSync(`${tmp}/${f}`), { level: 9 }).length,
  0,
);
if (uiGzip > UI_BUDGET) {
  rmSync(tmp, { recursive: true, force: true });
  throw new Error(`git mem ui: the page is ${(uiGzip / 1024).toFixed(1)} KiB gzipped, over its ${UI_BUDGET / 1024} KiB budget`);
}
// Swap the new files in one by one (rename is atomic per file) and keep the old
// chunks for a while: a git-mem process that started before this build may
// still import one of them lazily (a hook, the daemon, a test run). `--clean`
// (npm pack's build, package.json prepack) keeps none: the package holds this
// build's files only.
mkdirSync(`${root}dist`, { recursive: true });
const fresh = new Set(readdirSync(tmp));
for (const f of [...fresh].sort((a, b) => (a === 'cli.js') - (b === 'cli.js'))) renameSync(`${tmp}/${f}`, `${root}dist/${f}`);
rmSync(tmp, { recursive: true, force: true });
for (const f of readdirSync(`${root}dist`)) {
  const p = `${root}dist/${f}`;
  // What earlier builds made goes at once: V8 code caches and the CommonJS programs. Post-commit
  // hooks they installed run dist/post-commit.cjs only while it exists, else `git mem hook post-commit`.
  if (f.endsWith('.v8cache') || (/\.cjs(\.map)?$/.test(f) && !f.startsWith('vendor-'))) rmSync(p, { force: true });
  else if (!fresh.has(f) && (CLEAN || Date.now() - statSync(p).mtimeMs > 15 * 60_000)) rmSync(p, { force: true });
}
// The manual page (package.json "man"; `git mem --help` and `git help mem` run `man git-mem`),
// made from the command table of the CLI just built, so it never drifts from the commands.
// It goes to man/man1/, so MANPATH=man finds it in a checkout too.
const { manual } = await import(`${root}dist/cli.js?${Date.now()}`);
mkdirSync(`${root}man/man1`, { recursive: true });
writeFileSync(`${root}man/man1/git-mem.1`, await manual());
