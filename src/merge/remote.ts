/**
 * Remotes for the memory: which remote to use, the refs it is mirrored into,
 * `git mem remote setup`, and the internal fetch and push.
 *
 * Ref names. Locally the store is `refs/memory`. On a remote it lives at
 * `refs/mem/memory`: git's receive-pack refuses one-level names such as
 * `refs/memory` ("funny refname"), so no server would accept it. What a fetch
 * brings lands in `refs/mem-remotes/<remote>/memory` (outside refs/remotes, so
 * `git branch -r` does not list it) and `refs/notes/mem-remotes/<remote>/memory`.
 * We never fetch with `+` into refs/memory itself: the merge moves it.
 *
 * Every internal fetch and push runs with the user's hooks disabled (an empty
 * core.hooksPath, `--no-verify`, GIT_MEM_NO_SYNC=1), so our own pre-push hook
 * cannot recurse; credentials go through git's usual helpers.
 */
import { err } from '../errors.js';
import { type GitResult, git } from '../gitstore/git.js';
import { memDir, type Repo } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import type { ProblemKind } from './problems.js';

/** Where the memory lives on a remote (two levels: servers refuse `refs/memory`). */
export const REMOTE_MEMORY_REF = 'refs/mem/memory';
export const NOTES_REF = 'refs/notes/memory';

export const trackingRef = (remote: string) => `refs/mem-remotes/${remote}/memory`;
export const notesTrackingRef = (remote: string) => `refs/notes/mem-remotes/${remote}/memory`;

/**
 * Fetch refspecs for `remote setup` and for our own fetches. Globs, because a
 * configured exact refspec whose source is missing makes every plain
 * `git fetch` fail ("couldn't find remote ref") until someone first syncs.
 */
export function fetchRefspecs(remote: string): string[] {
  return [
    `+refs/mem/*:refs/mem-remotes/${remote}/*`,
    `+refs/notes/memory*:refs/notes/mem-remotes/${remote}/memory*`,
  ];
}

const opts = (repo: Repo, extra: Partial<{ allowFail: boolean; env: NodeJS.ProcessEnv }> = {}) => ({
  cwd: repo.cwd,
  env: extra.env ?? repo.env,
  allowFail: extra.allowFail,
});

/**
 * What this module reads git's configuration through: a store's one `git config --list`
 * (src/gitstore/store-config.ts), which the store reads anyway for the identity and settings.
 */
export type ConfigSource = Pick<Store, 'repo' | 'gitConfig'>;

/** Remote names and URLs (a remote's first URL, as git fetches from it), and each branch's upstream remote. */
async function remoteConfig(
  src: ConfigSource,
): Promise<{ urls: Map<string, string>; upstream: Map<string, string> }> {
  const urls = new Map<string, string>();
  const upstream = new Map<string, string>();
  for (const { key, value } of await src.gitConfig()) {
    const m = /^(remote|branch)\.(.+)\.(url|remote)$/.exec(key);
    if (!m) continue;
    if (m[1] === 'remote' && m[3] === 'url' && !urls.has(m[2])) urls.set(m[2], value);
    if (m[1] === 'branch' && m[3] === 'remote') upstream.set(m[2], value);
  }
  return { urls, upstream };
}

export async function listRemotes(src: ConfigSource): Promise<string[]> {
  return [...(await remoteConfig(src)).urls.keys()];
}

/** The checked-out branch's short name; '' when HEAD is detached. */
async function headBranch(repo: Repo): Promise<string> {
  const head = await git(['symbolic-ref', '-q', '--short', 'HEAD'], opts(repo, { allowFail: true }));
  return head.code === 0 ? head.stdout.toString().trim() : '';
}

function pickDefault(
  cfg: { urls: Map<string, string>; upstream: Map<string, string> },
  branch: string,
): string {
  const name = branch ? cfg.upstream.get(branch) : undefined;
  return name && name !== '.' && cfg.urls.has(name) ? name : 'origin';
}

/**
 * The remotes' config and the remote `name` names (default: the current
 * branch's upstream remote, else `origin`); the config and the branch are read
 * side by side, the branch only when no name is given.
 */
async function pickRemote(
  src: ConfigSource,
  name?: string,
): Promise<{ cfg: { urls: Map<string, string>; upstream: Map<string, string> }; remote: string }> {
  const given = name?.trim();
  const [cfg, branch] = await Promise.all([remoteConfig(src), given ? '' : headBranch(src.repo)]);
  return { cfg, remote: given || pickDefault(cfg, branch) };
}

/** The current branch's upstream remote, else `origin`. */
async function defaultRemote(src: ConfigSource): Promise<string> {
  return (await pickRemote(src)).remote;
}

export interface RemoteInfo {
  name: string;
  url: string;
  /**
   * A team store (src/commands/stores.ts), not a git remote: fetched from and
   * pushed to its URL, memory only (notes describe another repository's
   * commits), tracked under refs/mem-stores/<name>/remote/.
   */
  store?: boolean;
}

/** Where a team store's fetch lands: `refs/mem-stores/<name>/remote/memory` (its store is `refs/mem-stores/<name>/memory`). */
export const storeTrackingRef = (name: string) => `refs/mem-stores/${name}/remote/memory`;

/** The tracking refs of a remote or a team store (a store has no notes). */
export function trackingRefsOf(remote: RemoteInfo): { memory: string; notes: string | null } {
  return remote.store
    ? { memory: storeTrackingRef(remote.name), notes: null }
    : { memory: trackingRef(remote.name), notes: notesTrackingRef(remote.name) };
}

/**
 * Sets tracking refs (null: deletes one) in one `git update-ref --stdin`. Best effort: they
 * only record what was last seen of a remote, and the next fetch sets them again.
 */
export async function setTrackingRefs(
  repo: Repo,
  refs: ReadonlyArray<[string, string | null]>,
): Promise<void> {
  if (!refs.length) return;
  const lines = refs.map(([ref, oid]) => (oid ? `update ${ref} ${oid}\n` : `delete ${ref}\n`));
  await git(['update-ref', '--stdin'], { ...opts(repo, { allowFail: true }), input: lines.join('') });
}

/** What git fetch and push are given: a remote's name, a team store's URL. */
const target = (remote: RemoteInfo) => (remote.store ? remote.url : remote.name);

/** The fetch refspecs of a remote, or of a team store (its memory only, globbed like the remote's). */
function specsOf(remote: RemoteInfo): string[] {
  return remote.store ? [`+refs/mem/*:refs/mem-stores/${remote.name}/remote/*`] : fetchRefspecs(remote.name);
}

/** Resolves a remote name (default: upstream's, else origin); one clear error when it does not exist. */
export async function resolveRemote(src: ConfigSource, name?: string): Promise<RemoteInfo> {
  const { cfg, remote } = await pickRemote(src, name);
  const url = cfg.urls.get(remote);
  if (url === undefined) {
    const remotes = [...cfg.urls.keys()];
    const known = remotes.length ? `known remotes: ${remotes.join(', ')}` : 'this repository has no remotes';
    throw err(
      'E_REMOTE',
      `no remote named "${remote}" (${known})`,
      remotes.length ? `name one: git mem sync ${remotes[0]}` : `add one: git remote add ${remote} URL`,
    );
  }
  return { name: remote, url };
}

/** The `remote.<name>.fetch` refspecs (those `remote setup` added among them). */
async function configuredSpecs(src: ConfigSource, remote: string): Promise<string[]> {
  const key = `remote.${remote}.fetch`;
  return (await src.gitConfig()).filter((e) => e.key === key).map((e) => e.value);
}

export async function isSetUp(src: ConfigSource, remote: string): Promise<boolean> {
  const have = await configuredSpecs(src, remote);
  return fetchRefspecs(remote).every((s) => have.includes(s));
}

/** Adds the memory and notes fetch refspecs (idempotent). Never touches remote.*.push. */
export async function setupRemote(
  src: ConfigSource,
  remote: string,
): Promise<{ remote: string; added: string[]; present: string[] }> {
  const { repo } = src;
  const have = await configuredSpecs(src, remote);
  const added: string[] = [];
  const present: string[] = [];
  for (const spec of fetchRefspecs(remote)) {
    if (have.includes(spec)) present.push(spec);
    else {
      await git(['config', '--add', `remote.${remote}.fetch`, spec], opts(repo));
      added.push(spec);
    }
  }
  return { remote, added, present };
}

/** Removes what setupRemote added, and nothing else. */
export async function unsetupRemote(
  src: ConfigSource,
  remote: string,
): Promise<{ remote: string; removed: string[] }> {
  const { repo } = src;
  const have = await configuredSpecs(src, remote);
  const removed: string[] = [];
  for (const spec of fetchRefspecs(remote)) {
    if (!have.includes(spec)) continue;
    await git(['config', '--fixed-value', '--unset-all', `remote.${remote}.fetch`, spec], opts(repo));
    removed.push(spec);
  }
  return { remote, removed };
}

// ------------------------------------------------------------------ transport

/** Environment and config for internal transport: no user hooks, no recursion, git's own credentials. */
function transportArgs(repo: Repo): string[] {
  return ['-c', `core.hooksPath=${memDir(repo, 'no-hooks')}`];
}

function transportEnv(repo: Repo, interactive = false): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...repo.env, GIT_MEM_NO_SYNC: '1' };
  // let git prompt for a password on the terminal when a person runs the command
  if (interactive && env.GIT_TERMINAL_PROMPT === undefined) env.GIT_TERMINAL_PROMPT = '1';
  return env;
}

/** One line naming what went wrong talking to a remote, from git's stderr. */
function transportError(what: string, remote: RemoteInfo, r: GitResult) {
  const lines = r.stderr
    .split('\n')
    .map((l) => l.replace(/^(fatal|error|remote): /, '').trim())
    .filter(
      (l) =>
        l &&
        !/^Please make sure you have the correct access rights/.test(l) &&
        l !== 'and the repository exists.',
    );
  const reason =
    lines.find((l) =>
      /could not|cannot|unable|refused|denied|not found|does not|timed out|failed|not a git|resolve/i.test(l),
    ) ??
    lines[0] ??
    `exit ${r.code}`;
  return err(
    'E_REMOTE',
    `cannot ${what} ${remote.name} (${remote.url}): ${reason}`,
    remote.store
      ? `check the URL (git mem store list), the network and your credentials, then run git mem store sync ${remote.name} again; the local memory is unchanged`
      : 'check the URL (git remote -v), the network and your credentials, then run git mem sync again; the local memory is unchanged',
    { remote: remote.name, url: remote.url, stderr: r.stderr },
  );
}

export interface FetchResult {
  /** The remote's memory commit (null: the remote has no memory yet, an empty store). */
  memory: string | null;
  notes: string | null;
}

/** The commits the tracking refs of a remote or team store hold (read through the store's cat-file). */
export async function readTracking(store: Store, remote: string | RemoteInfo): Promise<FetchResult> {
  const refs = trackingRefsOf(typeof remote === 'string' ? { name: remote, url: '' } : remote);
  const [memory, notes] = await Promise.all([
    store.commitOf(refs.memory),
    refs.notes ? store.commitOf(refs.notes) : null,
  ]);
  return { memory, notes };
}

/**
 * Fetches the remote's memory and notes refs into the tracking refs (pruning
 * them when the remote has none). A remote without memory is not an error.
 */
export async function fetchMemory(
  store: Store,
  remote: RemoteInfo,
  interactive = false,
  timeoutMs?: number,
): Promise<FetchResult> {
  const repo = store.repo;
  const args = [
    ...transportArgs(repo),
    // git's own object checks (names like .. and .git, malformed trees) before anything is stored
    '-c',
    'fetch.fsckObjects=true',
    'fetch',
    '--quiet',
    '--no-tags',
    '--prune',
    '--no-write-fetch-head',
    '--no-recurse-submodules',
    '--no-auto-maintenance',
    '--no-show-forced-updates',
    // a URL cannot pass for an option: a team store's URL is refused at `store add` if it starts with -
    target(remote),
    ...specsOf(remote),
  ];
  for (let attempt = 1; ; attempt++) {
    const r = await git(args, {
      ...opts(repo, { allowFail: true, env: transportEnv(repo, interactive) }),
      timeoutMs,
    });
    if (r.code === 0) break;
    // another sync in this repository (a hook, an agent) holds the tracking ref's lock: wait a moment
    if (attempt < 6 && /cannot lock ref|Unable to create '.*\.lock'/i.test(r.stderr)) {
      await new Promise((res) => setTimeout(res, 40 * attempt + Math.random() * 60));
      continue;
    }
    if (/fsck error|^error: object [0-9a-f]+: /m.test(r.stderr)) throw await fsckRefusal(repo, remote, r);
    throw transportError('fetch from', remote, r);
  }
  return readTracking(store, remote);
}

/** The remote's memory or notes failed git's object checks: one line with git's reason and the remote's commits. */
async function fsckRefusal(repo: Repo, remote: RemoteInfo, r: GitResult) {
  const line =
    r.stderr
      .split('\n')
      .map((l) => l.replace(/^(fatal|error): /, '').trim())
      .find((l) => /^object [0-9a-f]+: /.test(l)) ?? 'fsck error in a fetched object';
  const ls = await git(
    [...transportArgs(repo), 'ls-remote', target(remote), REMOTE_MEMORY_REF, NOTES_REF],
    opts(repo, { allowFail: true, env: transportEnv(repo) }),
  );
  const out = ls.stdout.toString();
  const at = (ref: string) => new RegExp(`^([0-9a-f]{40,64})\t${ref}$`, 'm').exec(out)?.[1];
  const tip = at(REMOTE_MEMORY_REF);
  const notes = at(NOTES_REF);
  const commits = [tip && `commit ${tip.slice(0, 12)}`, notes && `notes commit ${notes.slice(0, 12)}`].filter(
    Boolean,
  );
  return err(
    'E_MERGE',
    `the remote memory of ${remote.name}${commits.length ? ` (${commits.join(', ')})` : ''} fails git's object checks: ${line}`,
    'nothing was fetched or merged and the local memory is unchanged; remove that object where it was written, then sync again',
    { remote: remote.name, commit: tip, notes, stderr: r.stderr, problem: 'fsck' satisfies ProblemKind },
  );
}

export interface PushRef {
  /** the local ref it is pushed from (refs/memory, refs/notes/memory) */
  src: string;
  /**
   * the commit pushed: what `src` held when the push was decided. A write that lands while the
   * push is on the wire is not sent, and so not recorded as the remote's.
   */
  oid: string;
  dst: string;
  /** the tracking ref that names `oid` once the remote has taken it */
  tracking?: string;
}

export interface PushResult {
  ok: boolean;
  /** A rejection worth retrying after a fetch and merge (the remote moved). */
  retry: boolean;
  rejected: Array<{ ref: string; reason: string }>;
  /** git's own words for a rejection: the remote's `error:` line, else the status line's reason. */
  reason?: string;
  /** The remote could not lock or update its ref (a concurrent push, or a stale lock there). */
  locked?: boolean;
}

/** git's own reason for a rejected push, in one line: what the remote said, else the status. */
function pushReason(stderr: string, rejected: ReadonlyArray<{ ref: string; reason: string }>): string {
  const said = stderr
    .split('\n')
    .filter((l) => l.startsWith('remote:'))
    .map((l) => l.replace(/^remote:\s*/, '').trim())
    .filter(Boolean);
  const line = said.find((l) => /^(error|fatal):/i.test(l)) ?? said[0];
  if (line) return line.replace(/^(error|fatal):\s*/i, '');
  return rejected.map((x) => `${x.ref} ${x.reason}`).join(', ') || stderr.trim().split('\n').pop() || '';
}

/**
 * Pushes without force, atomically. Parses `--porcelain` output: a
 * non-fast-forward or a lost race on the server asks for another round; a
 * refusal (hook, permission, protected ref) or a transport failure is an error.
 */
export async function pushRefs(
  repo: Repo,
  remote: RemoteInfo,
  refs: PushRef[],
  interactive = false,
): Promise<PushResult> {
  let atomic = refs.length > 1;
  for (;;) {
    const args = [...transportArgs(repo), 'push', '--porcelain', '--no-verify'];
    if (atomic) args.push('--atomic');
    args.push(target(remote), ...refs.map((r) => `${r.oid}:${r.dst}`));
    const r = await git(args, opts(repo, { allowFail: true, env: transportEnv(repo, interactive) }));
    const out = r.stdout.toString('utf8');
    if (
      r.code !== 0 &&
      atomic &&
      /does not support --atomic|atomic push/i.test(r.stderr) &&
      !/^[!=* +-]\t/m.test(out)
    ) {
      atomic = false;
      continue;
    }
    const rejected: Array<{ ref: string; reason: string }> = [];
    let sawStatus = false;
    for (const line of out.split('\n')) {
      const m = /^([ +\-*=!])\t([^\t]*)\t?(.*)$/.exec(line);
      if (!m) continue;
      sawStatus = true;
      if (m[1] === '!') rejected.push({ ref: m[2].split(':').pop() ?? m[2], reason: m[3].trim() });
    }
    if (r.code === 0 && !rejected.length) {
      // the tracking refs name what the remote now holds
      await setTrackingRefs(
        repo,
        refs.flatMap((x) => (x.tracking ? [[x.tracking, x.oid] as [string, string]] : [])),
      );
      return { ok: true, retry: false, rejected: [] };
    }
    if (!sawStatus) throw transportError('push to', remote, r);
    const retryable =
      /non-fast-forward|fetch first|stale info|cannot lock ref|atomic push failed|failed to update ref|incorrect old value|already exists/i;
    const fatal = rejected.filter((x) => !retryable.test(x.reason));
    if (fatal.length) {
      throw err(
        'E_REMOTE',
        `${remote.name} refused the memory push: ${fatal.map((x) => `${x.ref} (${x.reason})`).join(', ')}${
          r.stderr.includes('remote:') ? `: ${pushReason(r.stderr, fatal)}` : ''
        }`,
        'the remote may protect these refs or run a hook that declines them; ask its admin to allow refs/mem/* and refs/notes/memory',
        { remote: remote.name, rejected },
      );
    }
    const reason = pushReason(r.stderr, rejected);
    // "cannot lock ref …: is at X but expected Y" is a race lost to another push (fetch, merge, retry);
    // a lock only when no rejection says the ref moved
    const moved = /but expected|incorrect old value|stale info|non-fast-forward|fetch first/i;
    const locked =
      !rejected.some((x) => moved.test(x.reason)) &&
      !moved.test(r.stderr) &&
      (rejected.every((x) => /failed to update ref|cannot lock ref/i.test(x.reason)) ||
        /cannot lock ref|Unable to create '[^']*\.lock'/i.test(r.stderr));
    return { ok: false, retry: true, rejected, reason, locked };
  }
}

/**
 * What `git mem init` does about remotes: with --remote-setup, set up the
 * default remote; otherwise a one-line hint when a remote exists that is not
 * set up yet. Never fails init.
 */
export async function initRemoteStep(
  src: ConfigSource,
  doSetup: boolean,
): Promise<{ setup?: { remote: string; added: string[]; present: string[] }; hint?: string }> {
  const remotes = await listRemotes(src).catch(() => [] as string[]);
  if (doSetup) {
    const name = await defaultRemote(src);
    if (!remotes.includes(name)) {
      return {
        hint: `No remote "${name}" to set up yet: git remote add ${name} URL, then git mem remote setup ${name}`,
      };
    }
    const remote = await resolveRemote(src, name);
    const setup = await setupRemote(src, remote.name);
    return {
      setup,
      hint: `Remote ${remote.name} set up: git fetch brings the memory; share yours with git mem sync`,
    };
  }
  if (!remotes.length) return {};
  const name = await defaultRemote(src);
  if (!remotes.includes(name) || (await isSetUp(src, name))) return {};
  return { hint: `Share it with your team: git mem remote setup ${name} && git mem sync ${name}` };
}
