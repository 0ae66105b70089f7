/**
 * dist/post-commit.cjs, what the installed hook runs: loads the hook program
 * (dist/post-commit-main.cjs) with a V8 code cache (src/v8cache.ts), so a
 * commit does not pay for compiling the same ~80 KB of JavaScript again
 * (~14 ms of the hook's time measured on the 10k-anchor bench). The cache is
 * written at exit when there was none (or V8 refused it), and again by the
 * first run that recorded verdicts (a "full" cache: the check's code
 * compiled too). Any problem: the program is loaded as usual, without a
 * cache.
 */
import { join } from 'node:path';
import { loadWithCodeCache, statKey } from '../v8cache.js';

declare const __dirname: string;

function run(): void {
  // (the program has no import(): scripts/build.mjs checks)
  const file = join(__dirname, 'post-commit-main.cjs');
  const key = statKey(file);
  const full = `post-commit-${key}.full`;
  const plain = `post-commit-${key}`;
  loadWithCodeCache(file, {
    // a cache made by a run that recorded verdicts (most of the code compiled), else by any run
    names: [full, plain],
    save(found, rejected) {
      const recorded = !!(globalThis as Record<symbol, unknown>)[Symbol.for('git-mem.post-commit.recorded')];
      if (found === full && !rejected) return undefined;
      if (found && !rejected && !recorded) return undefined; // nothing better to keep
      // a refused cache is replaced where it was found
      const asFull = found && rejected ? found === full || recorded : recorded;
      return asFull ? full : plain;
    },
    prune: { prefix: 'post-commit-', keep: `post-commit-${key}` },
  });
}

try {
  run();
} catch (e) {
  // the hook never fails a commit
  process.stderr.write(`git-mem: warning: post-commit hook failed to start: ${(e as Error)?.message ?? e}\n`);
}
