/**
 * dist/post-commit.cjs, what the installed hook runs: loads the hook program
 * (dist/post-commit-main.cjs) with a V8 code cache, so a commit does not pay
 * for compiling the same ~80 KB of JavaScript again (~14 ms of the hook's
 * time measured on the 10k-anchor bench). The cache holds the functions
 * compiled during a run, is keyed by the program's bytes, the node version
 * and the architecture (V8 itself refuses a cache of another V8), lives
 * beside the program or, when that folder is read-only, under
 * ~/.cache/git-mem, and is written at exit when there was none (or V8 refused
 * it), and again by the first run that recorded verdicts (a "full" cache: the
 * check's code compiled too). Any problem: the program is loaded as usual,
 * without a cache.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import vm from 'node:vm';

declare const __dirname: string;
declare const require: NodeJS.Require;

function run(): void {
  // (the program has no import(): a vm script has no module loader; scripts/build.mjs checks)
  const file = join(__dirname, 'post-commit-main.cjs');
  const src = readFileSync(file, 'utf8');
  const key = createHash('sha1')
    .update(`${process.version} ${process.arch}\0`)
    .update(src)
    .digest('hex')
    .slice(0, 20);
  // a cache made by a run that recorded verdicts ("full": most of the code compiled), else by any run
  const dirs = [__dirname, join(homedir(), '.cache', 'git-mem')];
  const name = (full: boolean) => `post-commit-${key}${full ? '.full' : ''}.v8cache`;
  let cached: Buffer | undefined;
  let full = false;
  find: for (const f of [true, false]) {
    for (const d of dirs) {
      try {
        cached = readFileSync(join(d, name(f)));
        full = f;
        break find;
      } catch {}
    }
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${src}\n})`, {
    filename: file,
    cachedData: cached,
  });
  if (!full || script.cachedDataRejected) {
    process.once('exit', () => {
      const recorded = !!(globalThis as Record<symbol, unknown>)[Symbol.for('git-mem.post-commit.recorded')];
      if (cached && !script.cachedDataRejected && !recorded) return; // nothing better to keep
      const data = script.createCachedData();
      // a refused cache is replaced where it was found
      const asFull = cached && script.cachedDataRejected ? full || recorded : recorded;
      for (const d of dirs) {
        try {
          const to = join(d, name(asFull));
          const tmp = `${to}.${process.pid}.tmp`;
          if (d !== __dirname) mkdirSync(d, { recursive: true });
          writeFileSync(tmp, data);
          renameSync(tmp, to);
          return;
        } catch {}
      }
    });
  }
  const mod = { exports: {} };
  script.runInThisContext()(mod.exports, require, mod, file, __dirname);
}

try {
  run();
} catch (e) {
  // the hook never fails a commit
  process.stderr.write(`git-mem: warning: post-commit hook failed to start: ${(e as Error)?.message ?? e}\n`);
}
