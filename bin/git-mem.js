#!/usr/bin/env node
// Thin launcher: the CLI is bundled into dist/ by `npm run build` (one ES module
// build; each command and each heavy library is loaded when used).
import module from 'node:module';

// node 22.1+ keeps compiled code on disk between runs; node 20 has no such cache
module.enableCompileCache?.();
const argv = process.argv.slice(2);
if (process.env.GIT_MEM_TRACE) process.stderr.write(`git-mem trace: ${performance.now().toFixed(1)} ms launcher\n`);
// a reader that goes away (`git mem list | head`) ends us quietly, as it ends git
process.stdout.on('error', (e) => {
  if (e.code === 'EPIPE') process.exit(0);
  throw e;
});
const report = (err) => {
  process.stderr.write(`git-mem: internal error: ${err?.stack ?? err}\n`);
  process.exitCode = 70;
};
// The agent hooks run exactly `git mem hook claude-code` (or `hook cursor`) at every tool call:
// that command line loads the hook dispatcher alone (dist/agent-hook.js, src/hooks/claude-code.ts),
// the one the CLI's `hook` command calls too, without the CLI around it. Every other line is the CLI's.
if (argv.length === 2 && argv[0] === 'hook' && (argv[1] === 'claude-code' || argv[1] === 'cursor')) {
  import('../dist/agent-hook.js')
    .then((m) => m.hookMain(argv[1]))
    .then((code) => {
      process.exitCode = code;
    }, report);
} else {
  const cli = () => {
    // the two commands a person waits for most: the store's git processes start while the CLI
    // loads (an add's writers too), and the store takes them when it opens (src/gitstore/store-start.ts)
    // (the post-commit hook reads git's settings at every commit: the config read starts with them)
    const opening = argv[0] === 'add' ? 'write' : argv[0] === 'hook' && argv[1] === 'post-commit' ? 'config' : undefined;
    if (opening)
      import('../dist/store-start.js').then((m) => m.startStoreEarly(process.cwd(), process.env, opening), () => {});
    return import('../dist/cli.js').then((m) => m.main(argv, m.processIO()));
  };
  // every commit's hook: a running daemon of this work tree runs it on its warm store
  // (src/hooks/git-hook.ts); else, and on any problem there, the CLI runs it here
  const viaDaemon =
    argv.length === 2 && argv[0] === 'hook' && argv[1] === 'post-commit'
      ? import('../dist/git-hook.js').then((m) => m.postCommitViaDaemon(process.cwd(), process.env)).catch(() => undefined)
      : Promise.resolve(undefined);
  viaDaemon
    .then((lines) => {
      if (!lines) return cli();
      for (const line of lines) process.stderr.write(`${line}\n`);
      return 0;
    })
    .then((code) => {
      process.exitCode = code;
    }, report);
}
