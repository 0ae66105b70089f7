/**
 * Installing git hooks that call `git mem hook <name>`: respects
 * core.hooksPath, chains a hook that is already there (kept beside ours and run
 * first), is idempotent, and `uninstall` restores exactly what was there.
 * Our hooks never fail the git command: the work happens in `git mem hook`,
 * which logs its errors under .git/mem/ and exits 0.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { gitText } from '../gitstore/git.js';
import type { Repo } from '../gitstore/repo.js';

const MARKER = '# git-mem hook: installed by `git mem hooks install`; `git mem hooks uninstall` restores';
export type GitHookName = 'post-commit' | 'post-merge' | 'post-rewrite' | 'pre-push';

async function hooksDir(repo: Repo): Promise<string> {
  const p = await gitText(['rev-parse', '--git-path', 'hooks'], { cwd: repo.cwd, env: repo.env });
  return isAbsolute(p) ? p : resolve(repo.cwd, p);
}

/**
 * How a hook finds git-mem: GIT_MEM_CMD when set, else `git-mem` on PATH.
 * The script holds no path of this machine (with husky, core.hooksPath=.husky,
 * it is a committed file every clone runs). Where git-mem is missing it says
 * how to install it, in one line, and the git command goes on.
 */
function findSelf(what: string): string {
  return `if [ -n "\${GIT_MEM_CMD:-}" ]; then GIT_MEM="$GIT_MEM_CMD"
elif command -v git-mem >/dev/null 2>&1; then GIT_MEM=git-mem
else
  echo "git-mem: not installed, so ${what} did not run (install it: npm install -g git-mem)" >&2
  GIT_MEM=
fi`;
}

function hookScript(name: GitHookName): string {
  const chained = `"$(dirname "$0")/${name}.git-mem-chained"`;
  if (name === 'pre-push') {
    return `#!/bin/sh
${MARKER}
input=$(cat)
status=0
if [ -x ${chained} ]; then printf '%s\\n' "$input" | ${chained} "$@" || status=$?; fi
[ "$status" -ne 0 ] && exit "$status"
if [ "\${GIT_MEM_NO_SYNC:-0}" = "0" ]; then
  ${findSelf('the memory push').replace(/\n/g, '\n  ')}
  [ -n "$GIT_MEM" ] && { printf '%s\\n' "$input" | eval "$GIT_MEM hook pre-push \\"\\$@\\"" >/dev/null 2>&1 || true; }
fi
exit 0
`;
  }
  // The hook opens no connection: it runs without the extra CA bundle a NODE_EXTRA_CA_CERTS
  // setting makes node load first (30 to 50 ms of every commit, and a warning line when unreadable).
  return `#!/bin/sh
${MARKER}
status=0
if [ -x ${chained} ]; then ${chained} "$@" || status=$?; fi
${findSelf('the memory staleness check')}
[ -n "$GIT_MEM" ] && { eval "NODE_EXTRA_CA_CERTS= $GIT_MEM hook ${name} \\"\\$@\\"" </dev/null 2>&1 | { IFS= read -r line; [ -n "$line" ] && printf '%s\\n' "$line" >&2; cat >/dev/null; } || true; }
exit $status
`;
}

export function isOurs(file: string): boolean {
  return existsSync(file) && readFileSync(file, 'utf8').includes(MARKER);
}

export interface HookChange {
  hook: GitHookName;
  path: string;
  action: 'installed' | 'already-installed' | 'chained' | 'removed' | 'restored' | 'not-installed';
}

export async function installGitHook(repo: Repo, name: GitHookName): Promise<HookChange> {
  const dir = await hooksDir(repo);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  const script = hookScript(name);
  if (isOurs(file)) {
    if (readFileSync(file, 'utf8') !== script) {
      writeFileSync(file, script);
      chmodSync(file, 0o755);
    }
    return { hook: name, path: file, action: 'already-installed' };
  }
  let action: HookChange['action'] = 'installed';
  if (existsSync(file)) {
    renameSync(file, `${file}.git-mem-chained`);
    action = 'chained';
  }
  writeFileSync(file, script);
  chmodSync(file, 0o755);
  return { hook: name, path: file, action };
}

export async function uninstallGitHook(repo: Repo, name: GitHookName): Promise<HookChange> {
  const dir = await hooksDir(repo);
  const file = join(dir, name);
  if (!isOurs(file)) return { hook: name, path: file, action: 'not-installed' };
  rmSync(file);
  if (existsSync(`${file}.git-mem-chained`)) {
    renameSync(`${file}.git-mem-chained`, file);
    return { hook: name, path: file, action: 'restored' };
  }
  return { hook: name, path: file, action: 'removed' };
}
