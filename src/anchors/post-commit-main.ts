/**
 * dist/post-commit.cjs: the post-commit hook as a program of its own, run by
 * the installed hook script without loading the CLI (the command table,
 * argument parsing and every command's code cost ~25 ms of a hook that runs
 * on every commit). One self-contained file; the work is runPostCommitHook's.
 */
import type { Ctx } from '../cli/context.js';
import { runPostCommitHook } from './post-commit-hook.js';

export async function postCommitMain(argv: string[]): Promise<number> {
  const ctx: Ctx = {
    io: {
      out: (s) => void process.stdout.write(s),
      err: (s) => void process.stderr.write(s),
      readStdin: async () => undefined,
      isTTY: false,
      stdinIsTTY: false,
    },
    cwd: process.cwd(),
    env: process.env,
    json: false,
    stores: [],
  };
  try {
    return await runPostCommitHook(ctx, argv);
  } finally {
    for (const s of ctx.stores) s.close();
  }
}

// (no top-level await: the file is built as CommonJS, which starts faster than an ES module)
postCommitMain(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    // runPostCommitHook catches its own errors; this is the last resort: never fail the commit
    process.stderr.write(`git-mem: warning: post-commit hook failed: ${(e as Error)?.message ?? e}\n`);
  },
);
