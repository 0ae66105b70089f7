#!/usr/bin/env node
// Thin launcher: the CLI is bundled into dist/ by `npm run build` so that a
// one-shot command loads one file, and heavy libraries are imported lazily.
const argv = process.argv.slice(2);
// a reader that goes away (`git mem list | head`) ends us quietly, as it ends git
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
// `hook post-commit` from a git hook installed by an earlier version: the hook's own
// program (dist/post-commit.cjs, what hooks installed now run directly), not the CLI
const postCommit =
  argv.length === 2 && argv[0] === 'hook' && argv[1] === 'post-commit'
    ? await import('node:module').then(
        (m) => {
          m.createRequire(import.meta.url)('../dist/post-commit.cjs');
          return true;
        },
        () => false,
      )
    : false;
// `hook claude-code` (the agent hooks) takes a fast path that does not load the
// CLI: tool events are only appended to the local buffer. A hook never fails
// the agent: an error there ends the process with 0.
const fastMod =
  !postCommit && argv[0] === 'hook' && argv[1] === 'claude-code'
    ? await import('../dist/claude-fast.js').catch(() => undefined)
    : undefined;
// `search` asks a running query daemon directly (dist/search-fast.js); undefined = the full CLI
const fast = postCommit
  ? { code: undefined }
  : fastMod
    ? await fastMod.fastHook(argv).catch(() => ({ code: 0 }))
    : argv[0] === 'search' || argv[0] === 'find'
      ? await import('../dist/search-fast.js').then((m) => m.fastSearch(argv), () => undefined)
      : argv.length === 2 && (argv[0] === 'show' || ((argv[0] === 'list' || argv[0] === 'ls') && argv[1] === '--json'))
        ? // `show REF`, `list --json` from the catalog cache without the CLI (dist/read-fast.js); undefined = the full CLI
          await import('../dist/read-fast.js').then(
            (m) => (argv[0] === 'show' ? m.fastShow(argv) : m.fastList(argv)),
            () => undefined,
          )
        : undefined;
if (fast && 'code' in fast) {
  if (fast.code !== undefined) process.exitCode = fast.code;
} else
  (await loadCli()).main(argv, fast?.io).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`git-mem: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);

/**
 * The CLI: dist/cli.cjs (one CommonJS file) compiled from a V8 code cache kept
 * per command (src/v8cache.ts), else the ES module build (dist/cli.js).
 */
async function loadCli() {
  try {
    const { createRequire } = await import('node:module');
    const require = createRequire(import.meta.url);
    const file = require.resolve('../dist/cli.cjs');
    const { loadWithCodeCache, statKey } = require('../dist/v8cache.cjs');
    const key = statKey(file);
    const cmd = /^[a-z][a-z-]{0,30}$/.test(argv[0] ?? '') ? argv[0] : '';
    const name = `cli-${key}-${cmd || 'help'}`;
    let cli;
    cli = loadWithCodeCache(
      file,
      {
        names: [name],
        // one cache per command that exists (not per typo)
        save: (found, rejected) => ((!found || rejected) && (!cmd || cli?.isCommand(cmd)) ? name : undefined),
        prune: { prefix: 'cli-', keep: `cli-${key}-` },
      },
      true,
    );
    return cli;
  } catch {
    return import('../dist/cli.js');
  }
}
