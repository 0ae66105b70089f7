/**
 * Whether git may be set to sign commits here, from the config files git
 * reads, without starting git: the post-commit hook presets its identity to
 * spare a `git config` process, and most repositories never sign. A file
 * that mentions gpgsign or includes another file (or one that cannot be
 * read) may: then the store asks git (`git config --list`), which decides.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Repo } from './repo.js';

const MAY = /gpgsign|^\s*\[\s*include/im;

export function maySignCommits(repo: Repo): boolean {
  const env = repo.env;
  if (env.GIT_CONFIG_PARAMETERS && /gpgsign/i.test(env.GIT_CONFIG_PARAMETERS)) return true;
  const count = Number(env.GIT_CONFIG_COUNT ?? 0);
  for (let i = 0; i < count; i++) if (/gpgsign/i.test(env[`GIT_CONFIG_KEY_${i}`] ?? '')) return true;
  const home = env.HOME || homedir();
  const files = [join(repo.commonDir, 'config'), join(repo.gitDir, 'config.worktree')];
  if (env.GIT_CONFIG_GLOBAL !== undefined) files.push(env.GIT_CONFIG_GLOBAL);
  else
    files.push(join(home, '.gitconfig'), join(env.XDG_CONFIG_HOME || join(home, '.config'), 'git', 'config'));
  if (env.GIT_CONFIG_SYSTEM !== undefined) files.push(env.GIT_CONFIG_SYSTEM);
  else if (!env.GIT_CONFIG_NOSYSTEM)
    files.push('/etc/gitconfig', '/usr/local/etc/gitconfig', '/opt/homebrew/etc/gitconfig');
  for (const f of files) {
    if (!f) continue;
    try {
      if (MAY.test(readFileSync(f, 'utf8'))) return true;
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR' && code !== 'EISDIR') return true;
    }
  }
  return false;
}
