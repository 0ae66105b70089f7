/**
 * The query daemon's wire protocol, client side: one newline-delimited JSON
 * request, one reply, over a Unix socket. Node built-ins only, so the agent
 * hook's dispatcher (src/hooks/claude-code.ts) can ask the daemon without
 * loading anything else.
 */
import { connect } from 'node:net';

export interface DaemonRequest {
  op: 'search' | 'context' | 'dedup' | 'prompt' | 'ping' | 'stop';
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
export function isRefusal(code: string | undefined): boolean {
  return code === E_DAEMON_BUSY || code === E_DAEMON_TOO_LARGE || code === E_DAEMON_TIMEOUT;
}

/** The socket of the daemon serving `refs/memory`, under a repository's common git dir. */
export const DEFAULT_SOCKET = ['mem', 'search', 'refs_memory', 'daemon.sock'] as const;

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
