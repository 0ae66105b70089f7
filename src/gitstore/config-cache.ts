/**
 * `git config --list` without a git process on most commands: the parsed
 * listing is kept in .git/mem/cache/gitconfig.json beside a signature of
 * everything it was read from — the environment variables git reads config
 * from, and the size, modification time and inode of every file that
 * contributed an entry plus every standard location (present or not, so a
 * newly created ~/.gitconfig is noticed). Any difference, any include (an
 * `includeIf onbranch:` depends on HEAD), or an origin other than a file or
 * the command line, and git is asked again.
 */
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { memDir, type Repo } from './repo.js';

export interface ConfigEntry {
  scope: string;
  key: string;
  value: string;
}

const VERSION = 1;

/** Environment variables that change what `git config --list` prints. */
function envPart(env: NodeJS.ProcessEnv): string {
  return Object.keys(env)
    .filter((k) => k.startsWith('GIT_CONFIG') || k === 'HOME' || k === 'XDG_CONFIG_HOME' || k === 'GIT_DIR')
    .sort()
    .map((k) => `${k}=${env[k]}`)
    .join('\n');
}

/** The standard places git reads config from for this repository (whether they exist or not). */
function standardFiles(repo: Repo): string[] {
  const env = repo.env;
  const home = env.HOME ?? homedir();
  const xdg = env.XDG_CONFIG_HOME || join(home, '.config');
  const files = [join(repo.commonDir, 'config'), join(repo.gitDir, 'config.worktree')];
  if (env.GIT_CONFIG_GLOBAL) files.push(resolve(repo.cwd, env.GIT_CONFIG_GLOBAL));
  else files.push(join(home, '.gitconfig'), join(xdg, 'git', 'config'));
  if (env.GIT_CONFIG_SYSTEM) files.push(resolve(repo.cwd, env.GIT_CONFIG_SYSTEM));
  else
    files.push(
      '/etc/gitconfig',
      '/usr/etc/gitconfig',
      '/usr/local/etc/gitconfig',
      '/opt/homebrew/etc/gitconfig',
    );
  return files;
}

function stamp(file: string): string {
  try {
    const s = statSync(file);
    return `${s.size}:${s.mtimeMs}:${s.ino}`;
  } catch {
    return '-';
  }
}

function signature(repo: Repo, files: string[]): string {
  return [envPart(repo.env), ...files.map((f) => `${f}\t${stamp(f)}`)].join('\n');
}

function cacheFile(repo: Repo): string {
  return join(memDir(repo, 'cache'), 'gitconfig.json');
}

/** The cached listing when nothing it was read from has changed; undefined otherwise. */
export function readConfigCache(repo: Repo): ConfigEntry[] | undefined {
  try {
    const c = JSON.parse(readFileSync(join(repo.commonDir, 'mem', 'cache', 'gitconfig.json'), 'utf8')) as {
      v?: number;
      gitDir?: string;
      files?: string[];
      sig?: string;
      entries?: ConfigEntry[];
    };
    if (c.v !== VERSION || c.gitDir !== repo.gitDir || !Array.isArray(c.files) || !Array.isArray(c.entries))
      return undefined;
    return signature(repo, c.files) === c.sig ? c.entries : undefined;
  } catch {
    return undefined;
  }
}

/** The signature of the standard config files now: taken before git reads them, compared after. */
export function configSignature(repo: Repo): string {
  return signature(repo, standardFiles(repo));
}

/**
 * Parses `git config -z --list --show-scope --show-origin` (scope NUL origin
 * NUL key LF value NUL …) and saves it when it can be trusted later: every
 * entry from a standard file or the command line, no include, and no file
 * changed while git read them (`before` equals the signature now).
 */
export function parseAndCacheConfig(repo: Repo, out: string, before: string | undefined): ConfigEntry[] {
  const parts = out.split('\0');
  const entries: ConfigEntry[] = [];
  const files = standardFiles(repo);
  const known = new Set(files);
  let cacheable = before !== undefined;
  for (let i = 0; i + 2 < parts.length; i += 3) {
    const [scope, origin, kv] = [parts[i], parts[i + 1], parts[i + 2]];
    const nl = kv.indexOf('\n');
    const key = nl < 0 ? kv : kv.slice(0, nl);
    entries.push({ scope, key, value: nl < 0 ? 'true' : kv.slice(nl + 1) });
    if (key.startsWith('include.') || key.startsWith('includeif.')) cacheable = false;
    if (origin.startsWith('file:')) {
      const f = origin.slice(5);
      if (!known.has(isAbsolute(f) ? f : resolve(repo.cwd, f))) cacheable = false;
    } else if (origin !== 'command line:') cacheable = false;
  }
  if (cacheable && signature(repo, files) === before) {
    try {
      const file = cacheFile(repo);
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ v: VERSION, gitDir: repo.gitDir, files, sig: before, entries }));
      renameSync(tmp, file);
    } catch {
      // a read-only .git: no cache, git is asked each time
    }
  }
  return entries;
}
