/**
 * Client side of the query daemon (filled in by the daemon module): returns
 * undefined when no daemon answers, and the caller searches in-process.
 */
import type { Store } from '../gitstore/store.js';

export interface DaemonRequest {
  op: 'search' | 'context';
  q: unknown;
}

export async function queryViaDaemon(
  _store: Store,
  _req: DaemonRequest,
  _env: NodeJS.ProcessEnv,
): Promise<unknown | undefined> {
  return undefined;
}

/** Asks a running daemon to exit (reindex does this so it never serves a dropped index). */
export async function stopDaemon(_store: Store): Promise<void> {}
