/**
 * Session records: one `session` memory per agent session, rewritten as the
 * session goes on (its id is derived from the session id, so a retry or a
 * second writer never makes a duplicate). Retention (seed 001): the last N
 * summaries stay in full, older ones are compressed in the same commit.
 */

import { createHash } from 'node:crypto';
import { ensureFormat } from '../commands/memory.js';
import type { CatalogEntry } from '../gitstore/catalog.js';
import { layer, readGlobalConfig, readLocalConfig, readSharedConfig } from '../gitstore/config.js';
import type { Store } from '../gitstore/store.js';
import type { SessionRow } from '../model/json.js';
import { agentProvenance } from '../model/provenance.js';
import { type MemoryRecord, newRecord, parseRecord, recordPath } from '../model/record.js';
import { nextClock, withoutControls } from '../model/schema.js';
import { redactRecord } from '../safety/secrets.js';
import type { AgentEvent } from './events.js';
import {
  compressSummaryBody,
  redactSecrets,
  renderSummary,
  type SessionSummary,
  summarizeSession,
  summaryTitle,
} from './summary.js';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A record id for a session: the time part from its start, the rest from a hash of the session id. */
function sessionRecordId(sessionId: string, startedMs: number): string {
  let t = Math.max(0, Math.floor(startedMs));
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  const h = createHash('sha256').update(`git-mem session ${sessionId}`).digest();
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ALPHABET[h[i] % 32];
  return time + rand;
}

export const DEFAULT_KEEP_FULL = 5;

/** Settings from every layer (global < shared < local), unknown keys included. */
export async function loadSettings(store: Store): Promise<Record<string, unknown>> {
  let global: Record<string, unknown> = {};
  try {
    global = readGlobalConfig(store.repo.env);
  } catch {}
  const shared = await readSharedConfig(store).catch(() => ({}));
  const local = await readLocalConfig(store.repo).catch(() => ({}));
  try {
    return layer([
      ['global', global],
      ['shared', shared],
      ['local', local],
    ]).values as Record<string, unknown>;
  } catch {
    return { ...global, ...shared, ...local };
  }
}

export function numberSetting(settings: Record<string, unknown>, key: string, fallback: number): number {
  const n = Number(settings[key]);
  return Number.isFinite(n) && n >= 0 ? n : fallback;
}

export interface SessionWrite {
  record: MemoryRecord;
  created: boolean;
  compressed: string[];
  summary: SessionSummary;
}

/** Writes (or rewrites) the summary record of one session and compresses summaries beyond the last N. */
export async function writeSessionSummary(
  store: Store,
  events: AgentEvent[],
  opts: { root?: string; agent?: string; model?: string; keepFull?: number } = {},
): Promise<SessionWrite | undefined> {
  if (!events.length) return undefined;
  const summary = summarizeSession(events, opts);
  const id = sessionRecordId(summary.session, Date.parse(summary.started));
  // a transcript's commands and errors hold what terminals printed: colours, cursor moves
  const body = withoutControls(redactSecrets(renderSummary(summary)));
  const title = withoutControls(redactSecrets(summaryTitle(summary)), false);
  const ident = await store.ident();
  const keepFull = opts.keepFull ?? DEFAULT_KEEP_FULL;
  const extra = {
    session: {
      id: summary.session,
      agent: summary.agent,
      started: summary.started,
      ended: summary.ended,
      duration_s: summary.durationS,
      outcome: summary.outcome,
      files: summary.files.length,
      commands: summary.commands.length,
      errors: summary.errors.length,
      errors_fixed: summary.errors.filter((e) => e.fixed).length,
      commits: summary.commits.length,
    },
  };
  const res = await store.write(async (tx) => {
    await ensureFormat(tx);
    const cat = await tx.catalog();
    const now = new Date().toISOString();
    let record: MemoryRecord;
    let created = false;
    if (cat.entries.has(id)) {
      record = await tx.get(id);
      if (record.body === body && record.title === title) return null;
      record.body = body;
      record.title = title;
      record.extra = { ...record.extra, ...extra };
      record.tags = record.tags.filter((t) => t !== 'compressed');
      record.updated = now;
      record.clock = nextClock(record.clock);
    } else {
      created = true;
      record = newRecord({
        id,
        type: 'session',
        title,
        body,
        now,
        author: `${ident.name} <${ident.email}>`,
        by: agentProvenance(summary.agent, summary.session, opts.model),
        tags: ['session', summary.agent],
        confidence: 1,
        source: `${summary.agent}:${summary.session}`,
        extra,
      });
    }
    // every field is agent text (the session id and agent name in source and extra too)
    record = redactRecord(record);
    tx.putRecord(record);
    // retention: newest first; beyond keepFull, compress the ones not compressed yet
    const sessions: CatalogEntry[] = [...cat.entries.values()].filter(
      (e) => e.type === 'session' && e.id !== id,
    );
    sessions.sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
    const old = sessions.slice(Math.max(0, keepFull - 1)).filter((e) => !e.tags.includes('compressed'));
    const compressed: string[] = [];
    for (const e of old) {
      const r = await tx.get(e.id);
      r.body = compressSummaryBody(r.body);
      r.tags = [...r.tags, 'compressed'];
      r.extra = { ...r.extra, compressed: true };
      r.updated = now;
      r.clock = nextClock(r.clock);
      tx.putRecord(r);
      compressed.push(e.id);
    }
    return {
      message: `mem: session ${summary.session.slice(0, 12)} summary (${summary.outcome})${compressed.length ? `; compress ${compressed.length} older` : ''}`,
      value: { record, created, compressed },
    };
  });
  if (!res.value) {
    const { record } = await store.get(id);
    return { record, created: false, compressed: [], summary };
  }
  return { ...res.value, summary };
}

/**
 * The session record a reference names: the agent's own session id (what
 * Claude Code and the others call it) first, exactly, else a record id,
 * prefix or alias. Shared by `git mem sessions show` and the MCP tool.
 */
export async function resolveSession(store: Store, ref: string): Promise<string> {
  const cat = await store.catalog();
  const entries = sessionEntries(cat.entries.values());
  const blobs = await store.catFile.readMany(entries.map((e) => e.oid));
  const i = blobs.findIndex((b) => {
    if (!b) return false;
    try {
      return (
        (parseRecord(b.content.toString('utf8')).extra.session as { id?: unknown } | undefined)?.id === ref
      );
    } catch {
      return false;
    }
  });
  return i >= 0 ? entries[i].id : cat.resolve(ref);
}

/** Session records, newest first. */
export function sessionEntries(entries: Iterable<CatalogEntry>): CatalogEntry[] {
  return [...entries]
    .filter((e) => e.type === 'session')
    .sort((a, b) => (a.created < b.created ? 1 : a.created > b.created ? -1 : 0));
}

/** The latest `limit` session summaries, newest first. */
export async function sessionRows(store: Store, limit: number): Promise<SessionRow[]> {
  if (!(await store.tip())) return [];
  const shown = sessionEntries((await store.catalog()).entries.values()).slice(0, limit);
  const blobs = await store.catFile.readMany(shown.map((e) => e.oid));
  return shown.map((e, i) => {
    const r = parseRecord(blobs[i]!.content.toString('utf8'), recordPath(e.id));
    const s = (r.extra.session ?? {}) as Record<string, unknown>;
    return {
      id: r.id,
      title: r.title,
      created: r.created,
      updated: r.updated,
      session: s.id ?? null,
      agent: s.agent ?? null,
      duration_s: s.duration_s ?? null,
      outcome: s.outcome ?? null,
      compressed: r.tags.includes('compressed'),
    };
  });
}
