/**
 * Bulk import/export as JSON lines. An import is validated whole before
 * anything is written, then lands as one commit.
 */
import { err } from '../errors.js';
import { writeBlobs } from '../gitstore/fast-import.js';
import type { Store } from '../gitstore/store.js';
import { isId, newId } from '../model/id.js';
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
import { assertRecordClean } from '../safety/secrets.js';
import { ensureFormat } from './memory.js';

const LINE_KEYS = new Set<string>([...KNOWN_KEYS, 'body', 'content']);

export interface ImportOptions {
  allowSecret?: boolean;
  onProgress?: (done: number, total: number) => void;
  now?: Date;
  /**
   * Ids made here for lines that gave none of ours: such a line names no memory, so one that
   * repeats a memory already there is that memory, left as it is (its id is reported).
   */
  minted?: ReadonlySet<string>;
}

/** What makes two memories the same when no id says so: type, title and text. */
const sameness = (r: Pick<MemoryRecord, 'type' | 'title' | 'body'>) =>
  `${r.type}\0${r.title.trim()}\0${r.body.trim()}`;

/** Parses and validates JSON lines into records (pure apart from id generation). */
function recordsFromJsonl(
  text: string,
  author: string,
  opts: ImportOptions = {},
): { records: MemoryRecord[]; minted: Set<string> } {
  const out: MemoryRecord[] = [];
  const minted = new Set<string>();
  const now = opts.now ?? new Date();
  const seenAlias = new Map<string, number>();
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
        if (prev) throw err('E_ALIAS_TAKEN', `alias "${alias}" also used on line ${prev}`);
        seenAlias.set(alias, i + 1);
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
        author: o.author ? String(o.author) : author,
        by,
        tags: Array.isArray(o.tags) ? o.tags.map(String) : o.tags ? String(o.tags).split(',') : [],
        scope: Array.isArray(o.scope) ? o.scope.map(String) : o.scope ? [String(o.scope)] : [],
        alias,
        status: o.status ? (String(o.status) as MemoryRecord['status']) : undefined,
        confidence: o.confidence == null ? undefined : Number(o.confidence),
        source: o.source == null ? undefined : String(o.source),
        expires: o.expires ? parseDateInput(String(o.expires)) : undefined,
        anchors,
        links: o.links && typeof o.links === 'object' ? (o.links as MemoryRecord['links']) : undefined,
        extra,
      });
      if (!ours) minted.add(r.id);
      if (o.updated) r.updated = parseDateInput(String(o.updated));
      if (o.clock != null && Number.isFinite(Number(o.clock))) r.clock = Number(o.clock);
      out.push(r);
    } catch (e) {
      const ge = e as { code?: string; message: string; hint?: string };
      if (ge.code)
        throw err((ge.code as 'E_INVALID_ARG') ?? 'E_INVALID_ARG', `${where}: ${ge.message}`, ge.hint);
      throw e;
    }
  }
  return { records: out, minted };
}

export async function importRecords(store: Store, records: MemoryRecord[], opts: ImportOptions = {}) {
  let base: string | null = null;
  const res = await store.write(async (tx) => {
    base = tx.base;
    await ensureFormat(tx);
    const cat = await tx.catalog();
    // what the store holds now for the ids being imported: a record that would be written byte for byte
    // as it is (a re-imported export) is unchanged, not replaced
    const present = records.filter((r) => cat.entries.has(r.id));
    const blobs = await tx.store.catFile.readMany(present.map((r) => cat.entries.get(r.id)!.oid));
    const current = new Map(present.map((r, i) => [r.id, blobs[i]?.content.toString('utf8')]));
    // the stored memories a line without an id may repeat: those with one of their titles
    const minted = opts.minted ?? new Set<string>();
    const titles = new Set(records.filter((r) => minted.has(r.id)).map((r) => r.title.trim()));
    const sameTitle = titles.size ? [...cat.entries.values()].filter((e) => titles.has(e.title.trim())) : [];
    const known = new Map<string, string>(); // sameness → id
    const sameBlobs = await tx.store.catFile.readMany(sameTitle.map((e) => e.oid));
    sameTitle.forEach((e, i) => {
      try {
        known.set(sameness(parseRecord(sameBlobs[i]!.content.toString('utf8'), recordPath(e.id))), e.id);
      } catch {}
    });
    let added = 0;
    let replaced = 0;
    let unchanged = 0;
    const writes: Array<{ path: string; content: Buffer }> = [];
    const progress = (i: number) => {
      if (opts.onProgress && (i % 1000 === 0 || i === records.length - 1))
        opts.onProgress(i + 1, records.length);
    };
    for (let i = 0; i < records.length; i++) {
      const r = records[i];
      if (minted.has(r.id)) {
        // a line without an id that repeats a stored memory (with its alias, if it gives one) is
        // that memory, as it is; lines repeated within the file are the file's to say
        const twin = known.get(sameness(r));
        if (twin !== undefined && (!r.alias || cat.aliases.get(r.alias) === twin)) {
          r.id = twin;
          unchanged++;
          progress(i);
          continue;
        }
      }
      if (r.alias) {
        const owner = cat.aliases.get(r.alias);
        if (owner && owner !== r.id) {
          throw err(
            'E_ALIAS_TAKEN',
            `alias "${r.alias}" is already used by ${cat.abbrev(owner)}`,
            'rename it in the file or git mem mv the existing one',
          );
        }
      }
      const now = current.get(r.id);
      if (!r.by && now !== undefined) r.by = storedBy(now, r.id);
      const text = serializeRecord(r);
      if (now !== undefined && sameRecordText(now, text, r.id)) unchanged++;
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
    for (let i = 0; i < writes.length; i++) tx.putOid(writes[i].path, oids[i]);
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

/** Who wrote the stored version of a record (an import line that does not say keeps it). */
function storedBy(stored: string, id: string): MemoryRecord['by'] {
  try {
    return parseRecord(stored, recordPath(id)).by;
  } catch {
    return undefined;
  }
}

/** The stored text and the text an import would write say the same (the stored one may be in an older layout). */
function sameRecordText(stored: string, text: string, id: string): boolean {
  if (stored === text) return true;
  try {
    return serializeRecord(parseRecord(stored, recordPath(id))) === text;
  } catch {
    return false;
  }
}

/**
 * `import` of JSON lines: parsed, checked whole by the one validator (what local
 * writes refuse, and anchors that leave the repository), then one commit.
 */
export async function importJsonl(store: Store, text: string, opts: ImportOptions = {}) {
  const ident = await store.ident();
  const { records, minted } = recordsFromJsonl(text, `${ident.name} <${ident.email}>`, opts);
  const { recordProblem } = await import('../merge/validate.js');
  records.forEach((r, i) => {
    const p = recordProblem(r);
    if (p)
      throw err(
        'E_INVALID_ARG',
        `record ${i + 1} (${r.id}): ${p}`,
        'fix it in the file; nothing was imported',
      );
  });
  return { records, ...(await importRecords(store, records, { ...opts, minted })) };
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
    if (r.alias) line.alias = r.alias;
    if (r.scope.length) line.scope = r.scope;
    if (r.source) line.source = r.source;
    if (r.author) line.author = r.author;
    if (r.by) line.by = r.by;
    if (r.expires) line.expires = r.expires;
    if (Object.values(r.links).some((v) => Array.isArray(v) && v.length)) line.links = r.links;
    if (r.anchors.length) line.anchors = r.anchors;
    return { ...line, ...r.extra };
  });
}
