#!/usr/bin/env node
// Thin launcher: the CLI is bundled into dist/ by `npm run build` (one ES module
// build; each command and each heavy library is loaded when used).
import module from 'node:module';

// node 22.1+ keeps compiled code on disk between runs; node 20 has no such cache
module.enableCompileCache?.();
const argv = process.argv.slice(2);
// a reader that goes away (`git mem list | head`) ends us quietly, as it ends git
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
// `hook claude-code` (the agent hooks): tool events, and prompts a running daemon
// answers, are handled before the CLI loads (dist/claude-fast.js); everything else
// goes to the CLI with the stdin already read. A hook never fails the agent.
const hook =
  argv[0] === 'hook' && argv[1] === 'claude-code'
    ? await import('../dist/claude-fast.js').then(
        (m) => m.fastHook(argv).catch(() => ({ code: 0 })),
        () => undefined,
      )
    : undefined;
// `add`, `check` and the git hooks that re-anchor: a running daemon of this worktree runs
// them on its warm store (dist/via-daemon.js decides which); else, or when it declines, the CLI
// below does, with the repository it found. Other command lines do not load it (a word that
// must be there, checked here so that `git mem list` pays nothing for it)
const viaDaemon =
  !hook && argv.some((a) => a === 'add' || a === 'check' || a === 'hook')
    ? await import('../dist/via-daemon.js').then(
        (m) => m.runViaDaemon(argv),
        () => undefined,
      )
    : undefined;
if (hook && 'code' in hook) process.exitCode = hook.code;
else if (viaDaemon && 'code' in viaDaemon) process.exitCode = viaDaemon.code;
else {
  const cli = await import('../dist/cli.js');
  const io = cli.processIO();
  if (hook) {
    io.readStdin = async () => hook.stdin;
    io.stdinIsTTY = hook.stdin === undefined;
  }
  cli.main(argv, io, { repo: viaDaemon?.repo }).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`git-mem: internal error: ${err?.stack ?? err}\n`);
      process.exitCode = 70;
    },
  );
}
