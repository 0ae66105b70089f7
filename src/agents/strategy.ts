/**
 * Procedural memory (seed 001): `strategy` records count their successes and
 * failures; confidence = (s + 1) / (s + f + 2) (Laplace's rule of succession,
 * so one outcome moves it a little, not to an end) clamped to [0.1, 0.95],
 * 0.5 before any outcome, and a strategy below 0.3 is archived (and comes back
 * when its record recovers).
 */

import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { applyPatch } from '../model/patch.js';
import type { MemoryRecord } from '../model/record.js';

const STRATEGY_MIN = 0.1;
const STRATEGY_MAX = 0.95;
export const STRATEGY_NEW = 0.5;
const ARCHIVE_BELOW = 0.3;
const ARCHIVED_REASON = 'confidence below 0.3';

export function strategyConfidence(successes: number, failures: number): number {
  const n = successes + failures;
  if (n <= 0) return STRATEGY_NEW;
  // smoothed: one success gives 0.667, not 0.95 — below the 0.7 that puts a strategy in every session
  const c = (successes + 1) / (n + 2);
  return Math.round(Math.min(STRATEGY_MAX, Math.max(STRATEGY_MIN, c)) * 1000) / 1000;
}

export interface StrategyCounts {
  successes: number;
  failures: number;
}

export function countsOf(r: Pick<MemoryRecord, 'extra'>): StrategyCounts {
  const n = (v: unknown) => (Number.isFinite(Number(v)) && Number(v) >= 0 ? Math.floor(Number(v)) : 0);
  return { successes: n(r.extra.successes), failures: n(r.extra.failures) };
}

/** Pure: the patch one outcome makes to a strategy record. */
export function outcomePatch(r: MemoryRecord, outcome: 'success' | 'failure', now: string) {
  const c = countsOf(r);
  if (outcome === 'success') c.successes++;
  else c.failures++;
  const confidence = strategyConfidence(c.successes, c.failures);
  const extra: Record<string, unknown> = { successes: c.successes, failures: c.failures, last_used: now };
  let status: string | undefined;
  if (confidence < ARCHIVE_BELOW && r.status !== 'archived') {
    status = 'archived';
    extra.archived_reason = ARCHIVED_REASON;
  } else if (
    confidence >= ARCHIVE_BELOW &&
    r.status === 'archived' &&
    r.extra.archived_reason === ARCHIVED_REASON
  ) {
    status = 'active';
    extra.archived_reason = undefined;
  }
  return { confidence, extra, ...(status ? { status } : {}) };
}

export async function recordOutcome(store: Store, ref: string, outcome: 'success' | 'failure') {
  const res = await store.write(async (tx) => {
    if (!tx.base) throw err('E_NOT_FOUND', `no memory matches "${ref}"`, 'the store is empty');
    const id = (await tx.catalog()).resolve(ref);
    const r = await tx.get(id);
    if (r.type !== 'strategy') {
      throw err(
        'E_INVALID_ARG',
        `${id.slice(0, 12)} is a ${r.type}, not a strategy`,
        'record outcomes only on strategy memories (git mem strategy add …)',
      );
    }
    const now = new Date().toISOString();
    applyPatch(r, outcomePatch(r, outcome, now), now);
    tx.putRecord(r);
    return { message: `mem: strategy ${id.slice(0, 12)} ${outcome} (confidence ${r.confidence})`, value: r };
  });
  const record = res.value!;
  return { record, counts: countsOf(record), archived: record.status === 'archived' };
}
