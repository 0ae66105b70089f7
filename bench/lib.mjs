// Shared helpers for bench scripts: timing, medians, percentiles, the
// node/git floors, and access to ../shared/bench/gen.mjs when present.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'git-mem.js');
export const SHARED_GEN = join(ROOT, '..', 'shared', 'bench', 'gen.mjs');

/** The value after `--name` in the script's arguments, or `def` when it is not given. */
export function argOpt(name, def, args = process.argv.slice(2)) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
export function pct(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
export function timeMs(fn) {
  const t = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}
export async function timeMsAsync(fn) {
  const t = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - t) / 1e6;
}
/** Median wall time of a command over n runs. */
export function cmdMedian(cmd, args, opts, n = 9) {
  const xs = [];
  for (let i = 0; i < n; i++) xs.push(timeMs(() => spawnSync(cmd, args, { stdio: 'ignore', ...opts })));
  return median(xs);
}
export function benchEnv(home) {
  return {
    PATH: process.env.PATH,
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: join(home, '.gitconfig'),
    GIT_MEM_HOME: join(home, 'git-mem'),
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
  };
}
export function scratchRepo(prefix = 'gm-bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const env = benchEnv(dir);
  // on main: the branch git-mem takes for the shared line of history (a hook on another branch only writes notes)
  execFileSync('git', ['init', '-q', '-b', 'main', join(dir, 'repo')], { env });
  return { dir, repo: join(dir, 'repo'), env };
}
export function hasSharedGen() {
  return existsSync(SHARED_GEN);
}
export const fmt = (x) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** Starts `git mem ui --port 0` of build `bin` in `cwd`; resolves with the server process and the URL it prints. */
export function startUi(bin, cwd, env) {
  const server = spawn(process.execPath, [bin, 'ui', '--port', '0'], { cwd, env });
  let out = '';
  server.stdout.on('data', (d) => (out += d));
  server.stderr.on('data', (d) => process.stderr.write(d));
  return new Promise((resolve, reject) => {
    const t = setInterval(() => {
      const m = /git-mem ui: (http:\/\/\S+)/.exec(out);
      if (m) {
        clearInterval(t);
        resolve({ server, url: m[1] });
      }
    }, 20);
    server.once('exit', (c) => reject(new Error(`git mem ui (${bin}) exited ${c}`)));
  });
}

/** Headless Chromium (Debian's) through playwright-core's `chromium`, with the options every UI bench uses. */
export function launchBenchChromium(chromium, executablePath = '/usr/bin/chromium') {
  return chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'gm-bench-chromium-')), {
    executablePath,
    headless: true,
    viewport: { width: 1280, height: 860 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * The ways a UI bench opens the first page in a new tab, each resolving with the page once
 * `body[data-ready="1"]` is set, the page's own figure (ms from navigation start to the list,
 * window.__gmPerf.ready) and the same moment measured from the tab's creation (ms; the page's
 * performance.timeOrigin against node's Date.now(), one system clock).
 *  - 'tab': playwright's newPage() (a tab on about:blank, its renderer up) and then goto(url):
 *    the clock starts with a renderer already running.
 *  - 'link': the browser makes the tab with the URL, as for a link clicked in a terminal or
 *    `git mem ui --open` (xdg-open → the running browser opens a new tab on the URL):
 *    CDP Target.createTarget({ url }), what a browser-initiated new tab is in Chromium.
 */
export async function openFirstPage(ctx, how, url) {
  let p;
  let t0;
  if (how === 'tab') {
    p = await ctx.newPage();
    t0 = Date.now();
    await p.goto(url);
  } else {
    const opener = ctx.pages()[0];
    ctx.__gmCdp ??= await ctx.newCDPSession(opener);
    const made = ctx.waitForEvent('page');
    t0 = Date.now();
    await ctx.__gmCdp.send('Target.createTarget', { url });
    p = await made;
  }
  await p.waitForSelector('body[data-ready="1"]');
  const [ready, origin] = await p.evaluate(() => [window.__gmPerf.ready, performance.timeOrigin]);
  return { page: p, ready, fromCreation: origin + ready - t0 };
}

/** The embedding runtime's packages, left out of the bundles (loaded from node_modules when used). */
export const EMBED_EXTERNAL = ['@huggingface/transformers', 'onnxruntime-node', 'onnxruntime-web', 'sharp'];

/**
 * esbuild `options` (entryPoints, outfile or outdir, …) bundled as an ES module for node 20 whose
 * CommonJS dependencies still find `require` (a createRequire banner); errors only, unless
 * options.logLevel says otherwise.
 */
export async function bundleForNode(options) {
  const { build } = await import('esbuild');
  return build({
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'error',
    banner: { js: "import { createRequire as __c } from 'node:module'; const require = __c(import.meta.url);" },
    ...options,
  });
}

/**
 * Imports a TypeScript entry point of the tree (a bench cannot import TypeScript): bundled by
 * esbuild into a folder of the tree (its node_modules resolve lazy requires), loaded, removed.
 */
export async function importEntry(entry, tree = ROOT) {
  const { rmSync } = await import('node:fs');
  const { pathToFileURL } = await import('node:url');
  const dir = join(tree, `.bench-entry-${process.pid}`);
  await bundleForNode({ entryPoints: { entry }, outdir: dir, external: EMBED_EXTERNAL });
  try {
    return await import(pathToFileURL(join(dir, 'entry.js')).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
