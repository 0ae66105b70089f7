/**
 * Counts of the store: by type and status, tokens, anchored, expired,
 * malformed, commits. What `git mem stats` prints and the web UI's Overview
 * page starts from.
 */
import type { Store } from '../gitstore/store.js';
import type { StoreStats } from '../model/json.js';
import { isExpired } from '../model/record.js';

export async function storeStats(store: Store): Promise<StoreStats> {
  const tip = await store.tip();
  const cat = await store.catalog();
  const byType: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  let tokens = 0;
  let expired = 0;
  let anchored = 0;
  for (const e of cat.entries.values()) {
    byType[e.type] = (byType[e.type] ?? 0) + 1;
    byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
    tokens += e.tokens;
    if (isExpired(e)) expired++;
    if (e.anchors.length) anchored++;
  }
  const commits = tip ? (await store.log()).length : 0;
  return {
    records: cat.size,
    byType,
    byStatus,
    tokens,
    expired,
    anchored,
    malformed: cat.bad.length,
    commits,
    tip,
  };
}
