/**
 * Session records: one `session` memory per agent session, rewritten as the
 * session goes on (its id is derived from the session id, so a retry or a
 * second writer never makes a duplicate). Retention (seed 001): the last N
 * summaries stay in full, older ones are compressed in the same commit.
 */
import { createHash } from 'node:crypto';
import { ensureFormat, removeInTx } from '../commands/memory.js';
import type { CatalogEntry } from '../gitstore/catalog.js';
import { layer, readGlobalConfig, readLocalConfig, readSharedConfig } from '../gitstore/config.js';
import type { Store } from '../gitstore/store.js';
import { identLine } from '../gitstore/store-config.js';
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

/** The random part of a session's record id: a hash of the agent's session id (16 characters). */
function sessionIdSuffix(sessionId: string): string {
  const h = createHash('sha256').update(`git-mem session ${sessionId}`).digest();
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ALPHABET[h[i] % 32];
  return rand;
}

/** A new record id for a session: the time part from its start, the rest from a hash of the session id. */
function sessionRecordId(sessionId: string, startedMs: number): string {
  let t = Math.max(0, Math.floor(startedMs));
  let time = '';
  for (let i = 0; i < 10; i++) {
    time = ALPHABET[t % 32] + time;
    t = Math.floor(t / 32);
  }
  return time + sessionIdSuffix(sessionId);
}

/**
 * The records of a session already in the store, oldest first: session records whose id ends with
 * the hash of the session id. A session that resumes after its end (a new event buffer, a later
 * start) finds the record its first part made, so one agent session keeps one record; two clones
 * that ran the same session id each made one, and the next write folds them into the oldest.
 */
function existingSessionRecords(entries: Iterable<CatalogEntry>, sessionId: string): string[] {
  const suffix = sessionIdSuffix(sessionId);
  const found: string[] = [];
  for (const e of entries) if (e.type === 'session' && e.id.endsWith(suffix)) found.push(e.id);
  return found.sort();
}

/** The heading a resumed part of a session starts under in its record's body. */
function resumedHeading(started: string): string {
  return `## Resumed ${started}`;
}

/** Whether `started` is the start of the part a session record's body begins with (its first part). */
function isFirstPart(body: string, started: string): boolean {
  return (body.split('\n', 1)[0] ?? '').includes(` · ${started} · `);
}

/**
 * A session record's body with one part of the session (the events of one buffer, from
 * `started`) put in, each part once: the first part is the body's head, a resumed part has its own
 * section; the part's text replaces what the body held of it, the other parts stay as they are.
 */
export function mergeSessionBody(old: string, started: string, part: string): string {
  const nextSection = (from: number) => {
    const i = old.indexOf('\n## Resumed ', from);
    return i < 0 ? old.length : i + 1;
  };
  if (isFirstPart(old, started)) {
    const rest = old.slice(nextSection(0));
    return rest ? `${part.trimEnd()}\n\n${rest}` : part;
  }
  const heading = resumedHeading(started);
  const section = `${heading}\n${part.replace(/^## /gm, '### ').trimEnd()}\n`;
  const at = old.indexOf(`\n${heading}\n`);
  if (at >= 0) {
    const rest = old.slice(nextSection(at + 1));
    return `${old.slice(0, at + 1)}${section}${rest ? `\n${rest}` : ''}`;
  }
  return `${old.trimEnd()}\n\n${section}`;
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

/**
 * Writes (or rewrites) the summary record of one session and compresses summaries beyond the last
 * N. One record per agent session id, whatever the order and repetition of its events: every Stop,
 * SessionEnd and resume updates the same record (found again inside the write, so two writers at
 * once still make one), a resumed part adds its own section once. A session, or a resumed part,
 * with no prompt and no tool call commits nothing.
 */
export async function writeSessionSummary(
  store: Store,
  events: AgentEvent[],
  opts: { root?: string; agent?: string; model?: string; keepFull?: number } = {},
): Promise<SessionWrite | undefined> {
  if (!events.length) return undefined;
  const summary = summarizeSession(events, opts);
  if (!summary.prompts && !summary.toolCalls) return undefined;
  // a transcript's commands and errors hold what terminals printed: colours, cursor moves
  const part = withoutControls(redactSecrets(renderSummary(summary)));
  const partTitle = withoutControls(redactSecrets(summaryTitle(summary)), false).replace(/\n/g, ' ');
  const ident = await store.ident();
  const keepFull = opts.keepFull ?? DEFAULT_KEEP_FULL;
  const counts = {
    duration_s: summary.durationS,
    files: summary.files.length,
    commands: summary.commands.length,
    errors: summary.errors.length,
    errors_fixed: summary.errors.filter((e) => e.fixed).length,
    commits: summary.commits.length,
  };
  const session = {
    id: summary.session,
    agent: summary.agent,
    started: summary.started,
    ended: summary.ended,
    outcome: summary.outcome,
    ...counts,
  };
  let id = sessionRecordId(summary.session, Date.parse(summary.started));
  const res = await store.write(async (tx) => {
    await ensureFormat(tx);
    const cat = await tx.catalog();
    const now = new Date().toISOString();
    let record: MemoryRecord;
    let created = false;
    // read again on every attempt: a writer that won the race may have made the record meanwhile
    const found = existingSessionRecords(cat.entries.values(), summary.session);
    id = found[0] ?? id;
    if (cat.entries.has(id)) {
      record = await tx.get(id);
      const was = record.body;
      // another clone's record of the same session (after a sync): its parts join this one, it goes
      for (const other of found.slice(1)) {
        const o = await tx.get(other);
        const started = (o.extra.session as { started?: unknown } | undefined)?.started;
        if (typeof started === 'string' && !record.body.includes(started))
          record.body = mergeSessionBody(record.body, started, o.body);
        removeInTx(tx, o, identLine(ident), `same agent session as ${id}`);
      }
      const body = mergeSessionBody(record.body, summary.started, part);
      const first = isFirstPart(record.body, summary.started);
      const title = first ? partTitle : record.title;
      if (was === body && record.title === title && found.length < 2) return null;
      const prev = (record.extra.session ?? {}) as Record<string, unknown>;
      record.body = body;
      record.title = title;
      // the counts are the part written last; `parts` says how many the body holds
      record.extra = {
        ...record.extra,
        session: {
          ...session,
          started: first || typeof prev.started !== 'string' ? summary.started : prev.started,
          parts: 1 + (body.match(/\n## Resumed /g)?.length ?? 0),
        },
      };
      record.tags = record.tags.filter((t) => t !== 'compressed');
      if (record.extra.compressed !== undefined) delete record.extra.compressed;
      record.updated = now;
      record.clock = nextClock(record.clock);
    } else {
      created = true;
      record = newRecord({
        id,
        type: 'session',
        title: partTitle,
        body: part,
        now,
        author: identLine(ident),
        by: agentProvenance(summary.agent, summary.session, opts.model),
        tags: ['session', summary.agent],
        confidence: 1,
        source: `${summary.agent}:${summary.session}`,
        extra: { session },
      });
    }
    // every field is agent text (the session id and agent name in source and extra too)
    record = redactRecord(record);
    tx.putRecord(record);
    // retention: newest first; beyond keepFull, compress the ones not compressed yet
    const sessions: CatalogEntry[] = [...cat.entries.values()].filter(
      (e) => e.type === 'session' && e.id !== id && !found.includes(e.id),
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
