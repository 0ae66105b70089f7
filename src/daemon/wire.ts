/**
 * The query daemon's wire protocol, client side: one newline-delimited JSON
 * request, one reply, over a Unix socket. Node built-ins only (and the names of
 * the actor's variables), so the agent hook's dispatcher (src/hooks/claude-code.ts)
 * and the post-commit hook's (src/hooks/git-hook.ts) can ask the daemon without
 * loading anything else.
 */
import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { ACTOR_ENV } from '../model/provenance.js';

export interface DaemonRequest {
  op: 'search' | 'context' | 'dedup' | 'prompt' | 'post-commit' | 'ping' | 'stop';
  q?: unknown;
  /** search: count the hits as used (default false: only hits given to an agent are a use) */
  count?: boolean;
}

export interface DaemonReply {
  ok: boolean;
  result?: unknown;
  error?: { code: string; message: string; hint?: string; data?: Record<string, unknown> };
  /** build of the daemon (a daemon of another build is replaced) */
  build?: string;
  pid?: number;
  tip?: string | null;
  memories?: number;
  uptimeMs?: number;
  /** the worktree the daemon was started in (ping; it answers every worktree of the repository) */
  workTree?: string | null;
  /** a post-commit request's first line: its turn has come (askStarted) */
  started?: boolean;
}

/**
 * GIT_MEM_DAEMON: `off` (0, no, false) never asks or starts a daemon, `on` (1, yes, true)
 * always uses one, starting it if need be, `auto` (unset) uses a running one and starts one
 * for a large store. Read here, once, for every caller.
 */
export function daemonMode(env: NodeJS.ProcessEnv): 'auto' | 'on' | 'off' {
  const v = String(env.GIT_MEM_DAEMON ?? 'auto').toLowerCase();
  if (['0', 'off', 'no', 'false'].includes(v)) return 'off';
  if (['1', 'on', 'yes', 'true'].includes(v)) return 'on';
  return 'auto';
}

/** Connections the daemon serves at once; more are answered E_DAEMON_BUSY and closed. */
export const MAX_CONNECTIONS = 32;
/** The longest request line the daemon reads (1 MiB); a longer one is answered E_DAEMON_TOO_LARGE and closed. */
export const MAX_REQUEST_BYTES = 1 << 20;
/** How long a connection may take to send its whole request line. */
export const REQUEST_MS = 10_000;
/** Refusals of a connection (not of the request's content): the client does the work itself instead. */
export const E_DAEMON_BUSY = 'E_DAEMON_BUSY';
export const E_DAEMON_TOO_LARGE = 'E_DAEMON_TOO_LARGE';
export const E_DAEMON_TIMEOUT = 'E_DAEMON_TIMEOUT';
/** The daemon runs the post-commit hook only for its own work tree, settings and build (see hookEnv). */
export const E_DAEMON_ELSEWHERE = 'E_DAEMON_ELSEWHERE';
export function isRefusal(code: string | undefined): boolean {
  return (
    code === E_DAEMON_BUSY ||
    code === E_DAEMON_TOO_LARGE ||
    code === E_DAEMON_TIMEOUT ||
    code === E_DAEMON_ELSEWHERE
  );
}

declare const __GIT_MEM_BUILD__: string | undefined;

/**
 * Identifies this build of git-mem: the id scripts/build.mjs gives all its bundles
 * (the CLI as ES modules and as one CommonJS file, the fast paths), else (sources,
 * in tests) this file and its modification time.
 */
export function buildId(): string {
  if (typeof __GIT_MEM_BUILD__ === 'string') return __GIT_MEM_BUILD__;
  const self = fileURLToPath(import.meta.url);
  try {
    return `${self}@${statSync(self).mtimeMs}`;
  } catch {
    return self;
  }
}

/**
 * Variables git sets for one command and its hooks: the identity and date of a commit, its index,
 * editor and pager, what a rebase tells the commands it runs. A daemon started from such a process
 * does not keep them.
 */
export const COMMAND_ONLY = [
  'GIT_CHERRY_PICK_HELP',
  'GIT_SEQUENCE_EDITOR',
  'GIT_AUTHOR_NAME',
  'GIT_AUTHOR_EMAIL',
  'GIT_AUTHOR_DATE',
  'GIT_COMMITTER_NAME',
  'GIT_COMMITTER_EMAIL',
  'GIT_COMMITTER_DATE',
  'GIT_INDEX_FILE',
  'GIT_EDITOR',
  'GIT_PREFIX',
  'GIT_REFLOG_ACTION',
  'GIT_PAGER_IN_USE',
];

/**
 * Who the post-commit hook's verdicts are by: the author git names to its hooks (of COMMAND_ONLY)
 * and the agent, if any (src/model/provenance.ts actorFromEnv). The hook sends them; a daemon
 * running the hook takes them for that one commit.
 */
export const HOOK_WHO: readonly string[] = ['GIT_AUTHOR_NAME', 'GIT_AUTHOR_EMAIL', ...ACTOR_ENV];

/** Variables that change nothing the post-commit hook does: tracing, the daemon's own, where git's programs are. */
const HOOK_IGNORES = new Set([
  'GIT_MEM_TRACE',
  'GIT_MEM_CMD',
  'GIT_MEM_DAEMON',
  'GIT_MEM_DAEMON_IDLE_MS',
  'GIT_MEM_DAEMON_REQUEST_MS',
  'GIT_MEM_TEST_DAEMON_LOAD_MS',
  'GIT_EXEC_PATH',
]);

/**
 * The environment the post-commit hook's work depends on: git's variables and git-mem's (every
 * `GIT_*`: the repository, git's configuration and `-c`, git-mem's settings), where the
 * configuration files are, and who the verdicts are by (HOOK_WHO). A daemon runs a hook sent to
 * it only when the others are its own; it never adopts them.
 */
export function hookEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || HOOK_IGNORES.has(k)) continue;
    if (COMMAND_ONLY.includes(k) && !HOOK_WHO.includes(k)) continue;
    if (/^GIT_/.test(k) || k === 'HOME' || k === 'XDG_CONFIG_HOME' || HOOK_WHO.includes(k)) out[k] = v;
  }
  return out;
}

/** Whether a hook with `theirs` (hookEnv) would do what a daemon with `ours` does: the same variables, HOOK_WHO aside. */
export function sameHookEnv(ours: Record<string, string>, theirs: Record<string, string>): boolean {
  const keys = new Set([...Object.keys(ours), ...Object.keys(theirs)]);
  for (const k of keys) if (!HOOK_WHO.includes(k) && ours[k] !== theirs[k]) return false;
  return true;
}

/** The socket of the daemon serving `refs/memory`, under a repository's common git dir. */
export const DEFAULT_SOCKET = ['mem', 'search', 'refs_memory', 'daemon.sock'] as const;

/**
 * A request whose answer may take a while (the post-commit hook's): the daemon first sends
 * `{"ok":true,"started":true}` when the request's turn comes, then the answer. Undefined when the
 * turn has not come within `startMs` (the daemon busy with other requests: the connection is
 * closed, and the daemon drops the request when it gets to it), or on any connection problem;
 * a refusal is the first line and is returned as it is. Waits `answerMs` at most for the answer.
 */
export function askStarted(
  path: string,
  req: DaemonRequest,
  startMs: number,
  answerMs: number,
): Promise<DaemonReply | undefined> {
  return new Promise((resolve) => {
    const sock = connect(path);
    let buf = '';
    let begun = false;
    const done = (r: DaemonReply | undefined) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    let timer = setTimeout(() => done(undefined), startMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`${JSON.stringify(req)}\n`));
    sock.on('data', (d: string) => {
      buf += d;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        let r: DaemonReply;
        try {
          r = JSON.parse(buf.slice(0, nl)) as DaemonReply;
        } catch {
          return done(undefined);
        }
        buf = buf.slice(nl + 1);
        if (!begun && r.ok && r.started === true) {
          begun = true;
          clearTimeout(timer);
          timer = setTimeout(() => done(undefined), answerMs);
          continue;
        }
        return done(r);
      }
    });
    sock.on('error', () => done(undefined));
    sock.on('close', () => done(undefined));
  });
}

/** One request, one reply (newline-delimited JSON); rejects on connection errors or timeout. */
export function ask(path: string, req: DaemonRequest, timeoutMs = 30_000): Promise<DaemonReply> {
  return new Promise((resolve, reject) => {
    const sock = connect(path);
    let buf = '';
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('daemon timed out'));
    }, timeoutMs);
    sock.setEncoding('utf8');
    sock.on('connect', () => sock.write(`${JSON.stringify(req)}\n`));
    sock.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(timer);
        sock.end();
        try {
          resolve(JSON.parse(buf.slice(0, nl)) as DaemonReply);
        } catch (e) {
          reject(e);
        }
      }
    });
    sock.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    sock.on('close', () => {
      clearTimeout(timer);
      if (!buf.includes('\n')) reject(new Error('daemon closed the connection'));
    });
  });
}
