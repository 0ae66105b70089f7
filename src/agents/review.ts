/** The review queue: pending proposals are approved (optionally edited) or rejected. */
import { removeMemory, updateMemory } from '../commands/memory.js';
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { identLine } from '../gitstore/store-config.js';
import type { MemoryRecord } from '../model/record.js';
import { rememberRejected, rememberRejectedKey } from './proposal.js';

/** A consolidation review item (src/agents/consolidate.ts): its method says so. */
function consolidation(r: MemoryRecord): { key?: string } | undefined {
  const p = r.extra.proposal as Record<string, unknown> | undefined;
  if (typeof p?.method !== 'string' || !p.method.startsWith('consolidate:')) return undefined;
  return { key: typeof p.key === 'string' ? p.key : undefined };
}

/** Pending records, oldest first. */
export async function listPending(store: Store): Promise<MemoryRecord[]> {
  if (!(await store.tip())) return [];
  const cat = await store.catalog();
  const entries = [...cat.entries.values()]
    .filter((e) => e.status === 'pending')
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  return store.readRecords(entries);
}

/** A proposal as `git mem review --json` and the web UI's Review page show it. */
export function proposalJSON(r: MemoryRecord) {
  const p = (r.extra.proposal ?? {}) as Record<string, unknown>;
  return {
    id: r.id,
    type: r.type,
    title: r.title,
    body: r.body,
    tags: r.tags,
    confidence: r.confidence,
    source: r.source ?? null,
    created: r.created,
    method: p.method ?? null,
    session: p.session ?? null,
    evidence: p.evidence ?? null,
    // a consolidation: what approving does, to which memories, and why
    ...(consolidation(r)
      ? {
          consolidate: {
            kind: String(p.method).slice('consolidate:'.length),
            ids: p.ids ?? [],
            reason: p.reason ?? null,
          },
        }
      : {}),
  };
}

async function pending(store: Store, ref: string): Promise<MemoryRecord> {
  const { record } = await store.get(ref);
  if (record.status !== 'pending') {
    throw err(
      'E_INVALID_ARG',
      `${record.id.slice(0, 12)} is ${record.status}, not pending`,
      'see the queue with git mem review',
    );
  }
  return record;
}

export async function approveProposal(
  store: Store,
  ref: string,
  edit: { title?: string; body?: string } = {},
) {
  const r = await pending(store, ref);
  // a consolidation is carried out (merge, supersede or archive), not just made active
  if (consolidation(r)) return (await import('./consolidate.js')).applyConsolidation(store, r.id, edit);
  const ident = await store.ident();
  const res = await updateMemory(store, r.id, {
    status: 'active',
    ...(edit.title !== undefined ? { title: edit.title } : {}),
    ...(edit.body !== undefined ? { body: edit.body.endsWith('\n') ? edit.body : `${edit.body}\n` } : {}),
    extra: {
      review: {
        state: edit.title !== undefined || edit.body !== undefined ? 'edited' : 'approved',
        by: identLine(ident),
        at: new Date().toISOString(),
      },
    },
  });
  return res.record;
}

export async function rejectProposal(store: Store, ref: string) {
  const r = await pending(store, ref);
  const res = await removeMemory(store, r.id, 'rejected in review');
  const c = consolidation(r);
  // a consolidation is remembered by the memories it names, so the same set is never proposed again
  if (c?.key) await rememberRejectedKey(store, c.key);
  else await rememberRejected(store, r.title);
  return { id: res.id, title: res.title };
}
