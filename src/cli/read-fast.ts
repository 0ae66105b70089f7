/**
 * Fast paths of `git mem show REF` and `git mem list --json` (bin/git-mem.js
 * runs them before loading the CLI bundle): one self-contained file that
 * answers from the catalog cache — show resolves the id, prefix or alias
 * there and reads the record's blob with one git process; list --json copies
 * the cached summaries — and prints exactly what the CLI prints, without
 * loading the CLI's ~17 modules, which are most of a one-shot command's time.
 * Anything unusual (another option, GIT_DIR, an output format other than the
 * one asked, a global config file, a stale or missing cache, no single match,
 * a record that does not parse) returns undefined and the full CLI handles
 * the command, so every message and every fallback stays the CLI's own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { findInCache, listJsonFromCache } from '../gitstore/catalog-cache.js';
import { gitMemHome } from '../gitstore/config.js';
import type { Repo } from '../gitstore/repo.js';
import { normalizeIdInput } from '../model/id.js';
import { expiredAt, parseRecord, recordPath } from '../model/record.js';
import { findRepo } from '../search/search-fast.js';
import { recordText } from './format.js';

/**
 * The repository's store and its tip, found without running git; undefined
 * when git's own discovery could differ (GIT_DIR and friends) or there is none.
 * The Repo carries what the catalog cache needs (its common dir).
 */
function storeAt(env: NodeJS.ProcessEnv, cwd: string): { repo: Repo; ref: string; tip: string } | undefined {
  if (env.GIT_DIR || env.GIT_WORK_TREE || env.GIT_COMMON_DIR) return undefined;
  const found = findRepo(cwd);
  if (!found) return undefined;
  const ref = 'refs/memory';
  const r = spawnSync('git', ['rev-parse', '-q', '--verify', `${ref}^{commit}`], { cwd, env });
  const tip = r.status === 0 ? r.stdout.toString('utf8').trim() : null;
  if (!tip) return undefined;
  const repo = {
    cwd,
    env,
    commonDir: found.commonDir,
    gitDir: found.commonDir,
    workTree: found.workTree,
    bare: false,
  };
  return { repo, ref, tip };
}

export function fastShow(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  write: (s: string) => void = (s) => process.stdout.write(s),
): { code: number } | undefined {
  try {
    if (argv.length !== 2 || argv[0] !== 'show' || argv[1].startsWith('-')) return undefined;
    if (env.GIT_MEM_OUTPUT && env.GIT_MEM_OUTPUT !== 'human') return undefined;
    // the global config file may set another output format: the CLI reads it
    if (!env.GIT_MEM_OUTPUT && existsSync(join(gitMemHome(env), 'config.yaml'))) return undefined;
    const at = storeAt(env, cwd);
    if (!at) return undefined;
    const { repo, ref, tip } = at;
    const input = argv[1].trim();
    const p = normalizeIdInput(input);
    const hit = findInCache(repo, ref, tip, input, /^[0-9A-HJKMNP-TV-Z]{4,26}$/.test(p) ? p : undefined);
    if (!hit) return undefined;
    const r = spawnSync('git', ['cat-file', 'blob', hit.oid], { cwd, env, maxBuffer: 64 << 20 });
    if (r.status !== 0 || !r.stdout) return undefined;
    const record = parseRecord(r.stdout.toString('utf8'), recordPath(hit.id));
    if (env.GIT_MEM_TRACE) process.stderr.write('git-mem trace: show answered by dist/read-fast.js\n');
    const text = recordText(record);
    write(text.endsWith('\n') ? text : `${text}\n`);
    return { code: 0 };
  } catch {
    return undefined;
  }
}

/** `list --json` (or `ls --json`) with no filter: the cached summaries of the memories not expired. */
export function fastList(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  write: (b: Buffer) => void = (b) => void process.stdout.write(b),
): { code: number } | undefined {
  try {
    if (argv.length !== 2 || (argv[0] !== 'list' && argv[0] !== 'ls') || argv[1] !== '--json')
      return undefined;
    const at = storeAt(env, cwd);
    if (!at) return undefined;
    const { repo, ref, tip } = at;
    const now = Date.now();
    const expired = expiredAt(now);
    // what `list` keeps without filters (see makeFilter): everything not expired
    const hit = listJsonFromCache(repo, ref, tip, (row) => !expired(row), new Set(['expires']), now);
    // malformed records are warned about by the CLI
    if (!hit || hit.bad) return undefined;
    if (env.GIT_MEM_TRACE) process.stderr.write('git-mem trace: list --json answered by dist/read-fast.js\n');
    write(hit.json);
    return { code: 0 };
  } catch {
    return undefined;
  }
}
