#!/usr/bin/env node
// Thin launcher: the CLI is bundled into dist/ by `npm run build` so that a
// one-shot command loads one file, and heavy libraries are imported lazily.
const argv = process.argv.slice(2);
// Agent tool events (`hook claude-code` on PostToolUse) take a fast path that
// buffers the event without loading the CLI; anything else falls through.
const fast = argv[0] === 'hook' && argv[1] === 'claude-code' ? await (await import('../dist/claude-fast.js')).fastHook(argv) : undefined;
if (fast && 'code' in fast) process.exitCode = fast.code;
else (await import('../dist/cli.js')).main(argv, fast?.io).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`git-mem: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
