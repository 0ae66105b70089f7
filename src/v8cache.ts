/**
 * Loading a self-contained CommonJS program with a V8 code cache, so a
 * one-shot process does not compile the same JavaScript on every run. Node
 * 20 has no compile cache of its own (module.enableCompileCache is Node 22),
 * and its ES module loader also pays a resolve, a package-scope lookup and a
 * read for every module of a graph: the CLI's 10 modules cost 16 ms in a
 * quiet minute and 35 ms in a slow one, against ~10 ms for the same code as
 * one CommonJS file with a cache.
 *
 * A cache holds the functions a run compiled, so a program run in several
 * ways (the CLI's commands) keeps one cache per way, by name. It is keyed by
 * the caller (the program's bytes or its size and time, and node's version:
 * V8 itself refuses a cache of another V8), lives beside the program or, when
 * that folder is read-only, under ~/.cache/git-mem, and is written at exit by
 * the run that found none (or one V8 refused). Any problem with a cache: the
 * program is compiled as usual.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import vm from 'node:vm';
import { mark } from './trace.js';

export interface CacheOptions {
  /** names of caches to try, best first (without directory or extension) */
  names: readonly string[];
  /**
   * Called at exit with the cache found (its name, or undefined) and whether V8
   * refused it: the name to write this run's cache under, or undefined to keep
   * what is there. Default: the first name, when none was found or it was refused.
   */
  save?: (found: string | undefined, rejected: boolean) => string | undefined;
  /** when writing, remove the caches named `prefix…` but not `keep…` (those of older builds) */
  prune?: { prefix: string; keep: string };
}

/** A short key of some strings (node's version and the program's identity, typically). */
export function cacheKey(...parts: string[]): string {
  return createHash('sha1').update(parts.join('\0')).digest('hex').slice(0, 20);
}

/** The key of a program file by node's version, the architecture, and the file's size and time. */
export function statKey(file: string): string {
  const s = statSync(file);
  return cacheKey(process.version, process.arch, String(s.size), String(s.mtimeMs));
}

/**
 * Runs `file` (CommonJS) as a module and returns its exports, compiled from a
 * V8 code cache when there is one. `dynamicImport`: the program uses import()
 * (of a package left out of the bundle); where this node cannot give a cached
 * script that (before 20.12), the file is required as usual.
 */
export function loadWithCodeCache(file: string, opts: CacheOptions, dynamicImport = false): unknown {
  const loader = (vm as unknown as { constants?: { USE_MAIN_CONTEXT_DEFAULT_LOADER?: symbol } }).constants
    ?.USE_MAIN_CONTEXT_DEFAULT_LOADER;
  const req = createRequire(file);
  if (dynamicImport && !loader) return req(file);
  const src = readFileSync(file, 'utf8');
  const dirs = [dirname(file), join(homedir(), '.cache', 'git-mem')];
  let cached: Buffer | undefined;
  let found: string | undefined;
  find: for (const n of opts.names) {
    for (const d of dirs) {
      try {
        cached = readFileSync(join(d, `${n}.v8cache`));
        found = n;
        break find;
      } catch {}
    }
  }
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname) {${src}\n})`, {
    filename: file,
    cachedData: cached,
    ...(dynamicImport ? { importModuleDynamically: loader as never } : {}),
  });
  process.once('exit', () => {
    const rejected = !!cached && script.cachedDataRejected === true;
    const name = opts.save ? opts.save(found, rejected) : !found || rejected ? opts.names[0] : undefined;
    if (!name) return;
    let data: Buffer;
    try {
      data = script.createCachedData();
    } catch {
      return;
    }
    for (const d of dirs) {
      try {
        if (d !== dirs[0]) mkdirSync(d, { recursive: true });
        const to = join(d, `${name}.v8cache`);
        const tmp = `${to}.${process.pid}.tmp`;
        writeFileSync(tmp, data);
        renameSync(tmp, to);
        const p = opts.prune;
        if (p) {
          for (const f of readdirSync(d)) {
            if (f.startsWith(p.prefix) && !f.startsWith(p.keep) && f.endsWith('.v8cache'))
              rmSync(join(d, f), { force: true });
          }
        }
        return;
      } catch {}
    }
  });
  mark(
    `code cache ${found ?? opts.names[0]}: ${!cached ? 'none' : script.cachedDataRejected ? 'rejected' : 'used'}`,
  );
  const mod = { exports: {} as unknown };
  script.runInThisContext()(mod.exports, req, mod, file, dirname(file));
  return mod.exports;
}
