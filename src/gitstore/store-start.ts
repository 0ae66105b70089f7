/**
 * The git processes a repository's store starts as it opens (src/gitstore/store.ts
 * openRepositoryStore): rev-parse to find the repository, the reader, and as the command needs
 * them the config read and the object writers, all by one process start (startGits). The
 * launcher (bin/git-mem.js) starts them early for the two commands a person waits for most,
 * `add` and the post-commit hook, while the CLI's modules load; the store takes them when it
 * opens, if they run where it opens and with its environment (else it ends them and starts its
 * own). Small on purpose: the launcher loads it beside the CLI.
 */
import { CAT_FILE_ARGS, type GitProcess, type GitStart, holdProcess, startGits } from './git.js';
import { REV_PARSE } from './repo.js';

/** The config read of a store: every entry, with its scope (store-config.ts gitConfig). */
export const CONFIG_LIST = ['config', '-z', '--list', '--show-scope'];

/**
 * The object writers' command lines: blobs, trees and commits (writer.ts). --no-filters: the
 * bytes as given (the temp file's path must not pick up autocrlf or attributes). Trees as raw
 * objects (treeObject): git checks their format; `git mktree` would also look up every entry's
 * type, a second per add at a thousand folders whose trees are loose objects.
 */
export const WRITER_ARGS: readonly string[][] = [
  ['hash-object', '-w', '--no-filters', '--stdin-paths'],
  ['hash-object', '-t', 'tree', '-w', '--no-filters', '--stdin-paths'],
  ['hash-object', '-t', 'commit', '-w', '--no-filters', '--stdin-paths'],
];

/**
 * What a store starts as it opens, beside rev-parse and the reader: nothing more (`read`); the
 * config read (`config`: a command that needs git's settings at once, as sync does the remotes');
 * the config read and the object writers (`write`: a command that writes). Each includes the last.
 */
export type StoreOpening = 'read' | 'config' | 'write';
const OPENINGS: readonly StoreOpening[] = ['read', 'config', 'write'];

/** In order: rev-parse (its stderr its own: a refusal's reason), cat-file, then config and the writers. */
function storeStarts(opening: StoreOpening): GitStart[] {
  const more =
    opening === 'write' ? [CONFIG_LIST, ...WRITER_ARGS] : opening === 'config' ? [CONFIG_LIST] : [];
  return [{ args: REV_PARSE, stderr: true }, { args: CAT_FILE_ARGS }, ...more.map((args) => ({ args }))];
}

let early: { cwd: string; env: NodeJS.ProcessEnv; opening: StoreOpening; procs: GitProcess[] } | undefined;
let opened = false;

/**
 * Starts a store's processes before the command that opens it has loaded (bin/git-mem.js); not
 * once a store has opened. They do not keep this process alive: a command that never opens
 * the store (bad input, --global) exits as it would, and git sees end of input.
 */
export function startStoreEarly(cwd: string, env: NodeJS.ProcessEnv, opening: StoreOpening): void {
  if (opened || early) return;
  const procs = startGits(storeStarts(opening), cwd, env);
  for (const p of procs) holdProcess(p, false);
  early = { cwd, env, opening, procs };
}

/**
 * A store's processes, in storeStarts' order: those started early for this directory and this
 * environment (with at least what `opening` asks), else started now.
 */
export function storeProcesses(cwd: string, env: NodeJS.ProcessEnv, opening: StoreOpening): GitProcess[] {
  opened = true;
  const e = early;
  early = undefined;
  if (e && e.cwd === cwd && e.env === env && OPENINGS.indexOf(e.opening) >= OPENINGS.indexOf(opening)) {
    for (const p of e.procs) holdProcess(p, true);
    return e.procs;
  }
  for (const p of e?.procs ?? []) p.stdin.destroy();
  return startGits(storeStarts(opening), cwd, env);
}
