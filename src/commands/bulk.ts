/**
 * Bulk import/export as JSON lines. An import is validated whole before
 * anything is written, then lands as one commit.
 */

import { err } from '../errors.js';
import { writeBlobs } from '../gitstore/fast-import.js';
import { ensureFormat } from '../gitstore/format.js';
import type { Store } from '../gitstore/store.js';
import { identLine } from '../gitstore/store-config.js';
import { FIELDS } from '../model/fields.js';
import { isId, newId } from '../model/id.js';
import { tableValuesOf } from '../model/patch.js';
import { parseProvenance } from '../model/provenance.js';
import {
  type Anchor,
  KNOWN_KEYS,
  type MemoryRecord,
  newRecord,
  parseDateInput,
  parseRecord,
  recordPath,
  serializeRecord,
  validateAlias,
} from '../model/record.js';
import { nextClock } from '../model/schema.js';
import { assertRecordClean } from '../safety/secrets.js';

const LINE_KEYS = new Set<string>([...KNOWN_KEYS, 'body', 'content']);

export interface ImportOptions {
  allowSecret?: boolean;
  onProgress?: (done: number, total: number) => void;
  now?: Date;
  /** What each record's line said (parallel to the records; import of JSON lines). */
  lines?: readonly LineFacts[];
}

/** What a JSON line gave of a record, beside its values. */
export interface LineFacts {
  /** its line number in the file */
  line: number;
  /** how errors name it (`line 3`, a file of a folder) */
  where?: string;
  /** no id of ours: the line names no memory by id (none, or a foreign one, which became its alias) */
  minted: boolean;
  /** the fields it gave: those it did not keep the stored memory's */
  author: boolean;
  created: boolean;
  updated: boolean;
  clock: boolean;
}

/** What makes two memories the same when no id says so: type, title and text. */
const sameness = (r: Pick<MemoryRecord, 'type' | 'title' | 'body'>) =>
  `${r.type}\0${r.title.trim()}\0${r.body.trim()}`;

/**
 * One memory to import, in the shape of an export's JSON line, and where it came from:
 * a line of a JSON lines file, or a file of a folder (an OKF bundle, src/model/okf.ts).
 */
export interface ImportItem {
  o: Record<string, unknown>;
  /** its position (1-based) */
  line: number;
  /** how errors name it: `line 3`, `metrics/revenue.md` */
  where: string;
}

/** Parses JSON lines into import items (each line one JSON object). */
function itemsFromJsonl(text: string): ImportItem[] {
  const items: ImportItem[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].trim();
    if (!raw) continue;
    const where = `line ${i + 1}`;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(raw);
    } catch (e) {
      throw err(
        'E_INVALID_ARG',
        `${where}: invalid JSON (${(e as Error).message})`,
        'each line must be one JSON object',
      );
    }
    if (!o || typeof o !== 'object' || Array.isArray(o))
      throw err('E_INVALID_ARG', `${where}: not a JSON object`);
    items.push({ o, line: i + 1, where });
  }
  return items;
}

/** Validates import items into records (pure apart from id generation). */
function recordsFromItems(
  items: readonly ImportItem[],
  author: string,
  opts: ImportOptions = {},
): { records: MemoryRecord[]; lines: LineFacts[] } {
  const out: MemoryRecord[] = [];
  const facts: LineFacts[] = [];
  const now = opts.now ?? new Date();
  const seenAlias = new Map<string, string>();
  for (const { o, line, where } of items) {
    try {
      // every key of the line as given: source, author, tags, scope, anchors, a foreign id, unknown keys
      assertRecordClean(o, { allow: opts.allowSecret });
      const givenId = o.id == null ? undefined : String(o.id);
      const ours = givenId && isId(givenId.toUpperCase());
      let alias = o.alias == null ? undefined : String(o.alias);
      const extra: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(o)) if (!LINE_KEYS.has(k)) extra[k] = v;
      if (givenId && !ours) {
        if (alias) extra.source_id = givenId;
        else alias = givenId.toLowerCase();
      }
      if (alias) {
        alias = validateAlias(alias);
        const prev = seenAlias.get(alias);
        if (prev) throw err('E_ALIAS_TAKEN', `alias "${alias}" also used on ${prev}`);
        seenAlias.set(alias, where);
      }
      const body = String(o.body ?? o.content ?? '');
      const title = String(o.title ?? '');
      // who wrote it, as an export says (kept through a round trip); a line without it keeps the stored one
      const by = o.by == null ? undefined : parseProvenance(o.by);
      if (o.by != null && !by)
        throw err(
          'E_INVALID_ARG',
          '"by" must be {"kind": "person"} or {"kind": "agent", "agent": …, "session": …, "model": …}',
          'fix it in the file, or leave it out',
        );
      const anchors = Array.isArray(o.anchors) ? (o.anchors as Anchor[]) : [];
      for (const a of anchors) {
        if (!a || typeof a.path !== 'string') throw err('E_INVALID_ARG', 'every anchor needs a path');
      }
      const r = newRecord({
        id: ours ? givenId!.toUpperCase() : newId(now.getTime()),
        type: String(o.type ?? 'decision') as MemoryRecord['type'],
        title,
        body,
        now: o.created ? parseDateInput(String(o.created)) : now.toISOString(),
        // confidence, source, expires, verified …: the table's own fields, each read by its kind
        ...tableValuesOf(o, (f) => f.exported),
        author: o.author ? String(o.author) : author,
        by,
        tags: Array.isArray(o.tags) ? o.tags.map(String) : o.tags ? String(o.tags).split(',') : [],
        scope: Array.isArray(o.scope) ? o.scope.map(String) : o.scope ? [String(o.scope)] : [],
        alias,
        status: o.status ? (String(o.status) as MemoryRecord['status']) : undefined,
        anchors,
        links: o.links && typeof o.links === 'object' ? (o.links as MemoryRecord['links']) : undefined,
        extra,
      });
      if (o.updated) r.updated = parseDateInput(String(o.updated));
      const clock = o.clock != null && Number.isFinite(Number(o.clock));
      if (clock) r.clock = Number(o.clock);
      out.push(r);
      facts.push({
        line,
        where,
        minted: !ours,
        author: !!o.author,
        created: !!o.created,
        updated: !!o.updated,
        clock,
      });
    } catch (e) {
      const ge = e as { code?: string; message: string; hint?: string; data?: Record<string, unknown> };
      // the line named first; what the error says of its field (a secret's kind and field) kept
      if (ge.code)
        throw err(
          (ge.code as 'E_INVALID_ARG') ?? 'E_INVALID_ARG',
          `${where}: ${ge.message}`,
          ge.hint,
          ge.data,
        );
      throw e;
    }
  }
  return { records: out, lines: facts };
}

export async function importRecords(store: Store, records: MemoryRecord[], opts: ImportOptions = {}) {
  let base: string | null = null;
  const facts = opts.lines ?? [];
  // the ids made for lines with none of ours: a write that lost a race matches them again
  const made = records.map((r) => r.id);
  const res = await store.write(async (tx) => {
    tx.allowSecret = !!opts.allowSecret;
    base = tx.base;
    records.forEach((r, i) => {
      if (facts[i]?.minted) r.id = made[i];
    });
    await ensureFormat(tx);
    const cat = await tx.catalog();
    const where = (i: number) => (facts[i] ? `${facts[i].where ?? `line ${facts[i].line}`}: ` : '');
    // a line with no id of ours names no memory by id: it is the memory its alias names, else a
    // stored one with its type, title and text (one each, in order), else a new one
    const minted = records.map((_, i) => !!facts[i]?.minted);
    const titles = new Set(records.filter((_, i) => minted[i]).map((r) => r.title.trim()));
    const sameTitle = titles.size ? [...cat.entries.values()].filter((e) => titles.has(e.title.trim())) : [];
    const known = new Map<string, string[]>(); // sameness → ids
    const sameBlobs = await tx.store.catFile.readMany(sameTitle.map((e) => e.oid));
    sameTitle.forEach((e, i) => {
      try {
        const k = sameness(parseRecord(sameBlobs[i]!.content.toString('utf8'), recordPath(e.id)));
        known.set(k, [...(known.get(k) ?? []), e.id]);
      } catch {}
    });
    records.forEach((r, i) => {
      if (!minted[i]) return;
      const named = r.alias ? cat.aliases.get(r.alias) : undefined;
      const twin = named ?? known.get(sameness(r))?.shift();
      if (twin) r.id = twin;
    });
    // what the store holds now for the ids being imported: a record that would be written byte for byte
    // as it is (a re-imported export) is unchanged, not replaced
    const present = [...new Set(records.filter((r) => cat.entries.has(r.id)).map((r) => r.id))];
    const blobs = await tx.store.catFile.readMany(present.map((id) => cat.entries.get(id)!.oid));
    const current = new Map(present.map((id, i) => [id, blobs[i]?.content.toString('utf8')]));
    let added = 0;
    let replaced = 0;
    let unchanged = 0;
    const writes: Array<{ path: string; content: Buffer }> = [];
    const progress = (i: number) => {
      if (opts.onProgress && (i % 1000 === 0 || i === records.length - 1))
        opts.onProgress(i + 1, records.length);
    };
    const nowIso = (opts.now ?? new Date()).toISOString();
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      if (r.alias) {
        const owner = cat.aliases.get(r.alias);
        if (owner && owner !== r.id) {
          throw err(
            'E_ALIAS_TAKEN',
            `${where(i)}alias "${r.alias}" is already used by ${cat.abbrev(owner)}`,
            'rename it in the file or git mem mv the existing one',
          );
        }
      }
      const now = current.get(r.id);
      const stored = now === undefined ? undefined : storedRecord(now, r.id);
      // what the line does not say, the stored memory keeps: who wrote it, when, its clock
      const f = facts[i];
      if (!r.by && stored) r.by = stored.by;
      if (stored && f) {
        if (!f.author) r.author = stored.author;
        if (!f.created) r.created = stored.created;
        if (!f.updated) r.updated = stored.updated;
        if (!f.clock) r.clock = stored.clock;
      }
      let text = serializeRecord(r);
      // the stored text says the same, byte for byte or once written in today's layout
      const same = now !== undefined && (now === text || (!!stored && serializeRecord(stored) === text));
      if (!same && stored && f && (!f.updated || !f.clock)) {
        // a change: dated now and counted on the stored clock, where the line gave neither
        if (!f.updated) r.updated = nowIso;
        if (!f.clock) r.clock = nextClock(stored.clock);
        text = serializeRecord(r);
      }
      if (same) unchanged++;
      else {
        if (cat.entries.has(r.id)) replaced++;
        else added++;
        writes.push({ path: recordPath(r.id), content: Buffer.from(text, 'utf8') });
      }
      progress(i);
    }
    // one pack for the whole import (a loose object per record would slow every full read of the store)
    const oids = await writeBlobs(
      tx.store.repo,
      writes.map((w) => w.content),
    );
    for (let i = 0; i < writes.length; i++)
      tx.putOid(writes[i].path, oids[i], { content: writes[i].content });
    if (!records.length) return null;
    return {
      message: `mem: import ${records.length} record${records.length === 1 ? '' : 's'} (${added} new, ${replaced} replaced${unchanged ? `, ${unchanged} unchanged` : ''})`,
      value: { added, replaced, unchanged },
    };
  });
  const value = res.value ?? { added: 0, replaced: 0, unchanged: 0 };
  // nothing to write leaves the ref where it was: no commit, not even an empty one
  return { ...value, commit: res.commit && res.commit !== base ? res.commit : null };
}

/** The stored version of a record (what an import line does not say, it keeps), or undefined when it does not read. */
function storedRecord(stored: string, id: string): MemoryRecord | undefined {
  try {
    return parseRecord(stored, recordPath(id));
  } catch {
    return undefined;
  }
}

/**
 * `import` of JSON lines: parsed, checked whole by the one validator (what local
 * writes refuse, and anchors that leave the repository), then one commit.
 */
export async function importJsonl(store: Store, text: string, opts: ImportOptions = {}) {
  return importItems(store, itemsFromJsonl(text), opts);
}

/**
 * The one import of memories given as export lines (JSON lines, an OKF bundle's concepts):
 * secret scan and the record checks a local write gets, then one commit.
 */
export async function importItems(store: Store, items: readonly ImportItem[], opts: ImportOptions = {}) {
  const ident = await store.ident();
  const { records, lines } = recordsFromItems(items, identLine(ident), opts);
  const { recordProblem } = await import('../merge/validate.js');
  records.forEach((r, i) => {
    const p = recordProblem(r);
    if (p) throw err('E_INVALID_ARG', `${lines[i].where}: ${p}`, 'fix it in the file; nothing was imported');
  });
  return { records, ...(await importRecords(store, records, { ...opts, lines })) };
}

/** One JSON line per record, in id order; import reads it back unchanged. */
export async function exportRecords(store: Store, commit: string): Promise<Array<Record<string, unknown>>> {
  const cat = await store.catalogAt(commit);
  const ids = cat.sortedIds;
  const blobs = await store.catFile.readMany(ids.map((id) => cat.entries.get(id)!.oid));
  return ids.map((id, i) => {
    const r = parseRecord(blobs[i]!.content.toString('utf8'), recordPath(id));
    const line: Record<string, unknown> = {
      id: r.id,
      type: r.type,
      title: r.title,
      body: r.body,
      tags: r.tags,
      status: r.status,
      confidence: r.confidence,
      created: r.created,
      updated: r.updated,
      clock: r.clock,
    };
    const rec = r as unknown as Record<string, unknown>;
    for (const f of FIELDS) {
      if (!f.exported || f.key in line) continue;
      if (f.key === 'alias' && r.alias) line.alias = r.alias;
      else if (f.key === 'scope' && r.scope.length) line.scope = r.scope;
      else if (f.key === 'by' && r.by) line.by = r.by;
      else if (f.key === 'links' && Object.values(r.links).some((v) => Array.isArray(v) && v.length))
        line.links = r.links;
      else if (f.key === 'anchors' && r.anchors.length) line.anchors = r.anchors;
      // the table's own fields (source, author, expires, verified, …), each when it has a value
      else if (f.kind !== 'own' && rec[f.key] !== undefined && rec[f.key] !== '') line[f.key] = rec[f.key];
    }
    return { ...line, ...r.extra };
  });
}
