/**
 * Helpers for the sync tests: a bare remote and clones that share it, all
 * real git in temp dirs.
 */
import { isolatedEnv, makeRepo, sh, type TestRepo, tmpDir } from './helpers.js';

export interface Remote {
  dir: string;
  url: string;
  git: (...args: string[]) => string;
}

export function bareRemote(): Remote {
  const dir = `${tmpDir('gm-remote-')}/shared.git`;
  const env = isolatedEnv();
  sh('git', ['init', '-q', '--bare', dir], '/', env);
  return { dir, url: dir, git: (...args) => sh('git', args, dir, env) };
}

/** A clone-like repository: its own HEAD commit and `origin` pointing at the remote. */
export function clone(remoteUrl: string, name = 'origin'): TestRepo {
  const r = makeRepo({ commit: true });
  r.git('remote', 'add', name, remoteUrl);
  return r;
}

/** The memory tree of a ref, or null. */
export function treeOf(repo: { git: (...a: string[]) => string }, ref = 'refs/memory'): string | null {
  try {
    return repo.git('rev-parse', '-q', '--verify', `${ref}^{tree}`).trim();
  } catch {
    return null;
  }
}

export function tipOf(repo: { git: (...a: string[]) => string }, ref = 'refs/memory'): string | null {
  try {
    return repo.git('rev-parse', '-q', '--verify', `${ref}^{commit}`).trim();
  } catch {
    return null;
  }
}

/** All text of every blob in the tree of a ref (records, attic, tombstones). */
export function allText(repo: { git: (...a: string[]) => string }, ref = 'refs/memory'): string {
  return repo.git('grep', '-h', '-I', '--no-color', '-e', '', ref, '--');
}
