/**
 * The memory record: Markdown body + YAML frontmatter, one file per record.
 * Pure: no git, no file system. Parsing is strict on write and tolerant on
 * read (a malformed record from elsewhere is reported, never crashes a list).
 */

import { err } from '../errors.js';
import {
  FIELDS,
  type FieldDef,
  FRONTMATTER_KEYS,
  TABLE_FIELDS,
  type TableFields,
  type TableKind,
  type Verified,
} from './fields.js';
import { fanout, isId } from './id.js';
import { type Provenance, parseProvenance } from './provenance.js';
import {
  ALIAS_RE,
  CONTROL_RE,
  type FieldProblem,
  LIMITS,
  type MemoryType,
  recordFieldProblems,
  STATUSES,
  type Status,
  TYPES,
} from './schema.js';
import { stringify } from './yaml.js';
import { RecordParseError, readFrontmatter, splitFrontmatter } from './yaml-read.js';
import { BLOCK_OPTIONS, isOneLine, oneLine, writeBlockFields } from './yaml-write.js';

export type { Verified } from './fields.js';
export {
  anchorPathNow,
  isFlagged,
  type RecordSummary,
  recordToJSON,
  summarize,
  summaryToJSON,
} from './record-json.js';
export type { MemoryType, Status } from './schema.js';
export { LIMITS, STATUSES, TYPES } from './schema.js';
export {
  RecordParseError,
  readFrontmatter,
  readFrontmatterByLibrary,
  readFrontmatterFast,
  splitFrontmatter,
} from './yaml-read.js';
export { BLOCK_OPTIONS, writeBlockFields } from './yaml-write.js';

export interface Links {
  supersedes: string[];
  superseded_by: string[];
  related: string[];
  [k: string]: unknown;
}

/** A code anchor. The anchors module fills in blob ids, hashes and verdicts; unknown keys survive. */
export interface Anchor {
  path: string;
  lines?: [number, number];
  symbol?: string;
  [k: string]: unknown;
}

/**
 * A record. The fields of the kinds the table declares whole (confidence, source, author,
 * expires, verified: TableFields, src/model/fields.ts) come from their rows; the rest are here.
 */
export type MemoryRecord = OwnFields & TableFields;

/** The fields a record has code of its own for (kind `own` in src/model/fields.ts). */
export interface OwnFields {
  id: string;
  type: MemoryType;
  title: string;
  alias?: string;
  status: Status;
  tags: string[];
  scope: string[];
  /** Who wrote it: a person, or an agent (name, session, model); absent in records from before git-mem kept it. */
  by?: Provenance;
  created: string;
  updated: string;
  /** Lamport clock, raised on every change and every merge (wall time is for display only). */
  clock: number;
  links: Links;
  anchors: Anchor[];
  body: string;
  /** Frontmatter fields this version does not know; written back untouched. */
  extra: Record<string, unknown>;
}

/** The frontmatter keys this version knows, in the order they are written (src/model/fields.ts). */
export const KNOWN_KEYS: readonly string[] = FRONTMATTER_KEYS;

export const RECORDS_DIR = 'memories';
export const TOMBSTONES_DIR = 'tombstones';

export function recordPath(id: string): string {
  return `${RECORDS_DIR}/${fanout(id)}/${id}.md`;
}
export function tombstonePath(id: string): string {
  return `${TOMBSTONES_DIR}/${fanout(id)}/${id}.yaml`;
}
/** id from a tree path, or undefined if the path is not a record file. */
export function idFromPath(path: string): string | undefined {
  const m = /^memories\/[0-9A-Z]{2}\/([0-9A-Z]{26})\.md$/.exec(path);
  return m ? m[1] : undefined;
}

/** The record id a store path is about (a record or its tombstone), or undefined. */
export function idOfStorePath(path: string): string | undefined {
  const m =
    /^(?:memories\/[0-9A-Z]{2}\/([0-9A-Z]{26})\.md|tombstones\/[0-9A-Z]{2}\/([0-9A-Z]{26})\.yaml)$/.exec(
      path,
    );
  return m ? (m[1] ?? m[2]) : undefined;
}

/** Token estimate: characters / 4. One function, so a real tokenizer can replace it. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
export function recordTokens(r: Pick<MemoryRecord, 'title' | 'body'>): number {
  return estimateTokens(r.title) + estimateTokens(r.body) + 4;
}

export function isType(s: string): s is MemoryType {
  return (TYPES as readonly string[]).includes(s);
}
export function isStatus(s: string): s is Status {
  return (STATUSES as readonly string[]).includes(s);
}

export function validateAlias(alias: string): string {
  const a = alias.trim();
  if (!ALIAS_RE.test(a) || a.length > LIMITS.aliasChars) {
    throw err(
      'E_INVALID_ARG',
      `invalid alias "${alias}"`,
      'use lowercase path segments like standards/ts/eslint (a-z 0-9 . _ -)',
    );
  }
  if (isId(a.toUpperCase()) || /^[0-9a-z]{26}$/i.test(a)) {
    throw err('E_INVALID_ARG', `alias "${alias}" looks like an id`, 'choose a path-like alias');
  }
  return a;
}

export function normalizeTags(tags: readonly string[]): string[] {
  const out: string[] = [];
  for (const t of tags) {
    for (const part of String(t).split(',')) {
      const tag = part.trim().toLowerCase();
      if (!tag) continue;
      if (tag.length > LIMITS.tagChars || /\s/.test(tag) || CONTROL_RE.test(tag)) {
        throw err('E_INVALID_ARG', `invalid tag "${tag}"`, 'tags are single words of at most 64 characters');
      }
      if (!out.includes(tag)) out.push(tag);
    }
  }
  if (out.length > LIMITS.tags)
    throw err('E_INVALID_ARG', `too many tags (${out.length})`, `keep at most ${LIMITS.tags}`);
  return out;
}

/** The dates a record may hold: those whose ISO form has a four-digit year (to 9999-12-31). */
const LATEST_DATE = Date.parse('9999-12-31T23:59:59.999Z');
const EARLIEST_DATE = Date.parse('0000-01-01T00:00:00.000Z');

/**
 * Parses an ISO date or a relative duration (30d, 12h, 2w) into an ISO string. A date past
 * 9999-12-31 (`99999999999d`) is E_INVALID_ARG naming the range, as an unreadable one is.
 */
export function parseDateInput(input: string, now = new Date()): string {
  const rel = /^(\d+)\s*([smhdwy])$/.exec(input.trim());
  let t: number;
  if (rel) {
    const n = Number(rel[1]);
    const unit = { s: 1e3, m: 6e4, h: 36e5, d: 864e5, w: 6048e5, y: 31536e6 }[rel[2] as 's'];
    t = now.getTime() + n * unit;
  } else {
    t = Date.parse(input);
    if (Number.isNaN(t)) {
      throw err(
        'E_INVALID_ARG',
        `invalid date "${input}"`,
        'use an ISO date (2026-12-31) or a duration (30d, 12h, 2w)',
      );
    }
  }
  if (!(t >= EARLIEST_DATE && t <= LATEST_DATE))
    throw err(
      'E_INVALID_ARG',
      `date out of range: "${input}"`,
      'use a date from 0000-01-01 to 9999-12-31, or a shorter duration',
    );
  return new Date(t).toISOString();
}

export function isExpired(r: Pick<MemoryRecord, 'expires'>, now = Date.now()): boolean {
  return !!r.expires && Date.parse(r.expires) <= now;
}

/**
 * The warning for an expiry a write sets in the past (an add, or an update that sets `expires`):
 * the memory is stored, and expired at once, so search, context and the agents' packs leave it out.
 */
export function pastExpiryWarning(
  r: Pick<MemoryRecord, 'id' | 'expires'>,
  now = Date.now(),
): string | undefined {
  if (!r.expires || !isExpired(r, now)) return undefined;
  return `${r.id.slice(0, 12)} expires ${r.expires.slice(0, 10)}, which has passed: search, context and the agents' packs leave it out (set a later expiry, or clear it)`;
}

/** A rule in force: active and not expired (what `rules`, its exports and the agents' packs apply). */
export function ruleInForce(
  e: { type: string; status: string; expires?: string | null },
  expired: (r: { expires?: string | null }) => boolean = expiredAt(Date.now()),
): boolean {
  return e.type === 'rule' && e.status === 'active' && !expired(e);
}

/** isExpired for many records at one time `now` (ISO strings compare in time order; others are parsed). */
export function expiredAt(now: number): (r: { expires?: string | null }) => boolean {
  const nowIso = new Date(now).toISOString();
  return (r) => !!r.expires && (r.expires.length === 24 ? r.expires <= nowIso : Date.parse(r.expires) <= now);
}

function emptyLinks(): Links {
  return { supersedes: [], superseded_by: [], related: [] };
}

/** A new record's fields: the own ones and any of the table's (a table field left out gets its default). */
export interface NewRecordInput extends Partial<TableFields> {
  id: string;
  type: MemoryType;
  title: string;
  body: string;
  now: string;
  by?: Provenance;
  tags?: string[];
  scope?: string[];
  alias?: string;
  status?: Status;
  anchors?: Anchor[];
  links?: Partial<Links>;
  extra?: Record<string, unknown>;
}

/**
 * How each kind the table declares whole is read from a frontmatter and written into one.
 * `read` is tolerant (undefined: absent, or a value this version cannot read, which the record
 * keeps in `extra` and writes back as it came); `write` gives what the frontmatter holds, or
 * undefined to leave the key out.
 */
const KIND_CODEC: {
  [K in TableKind]: { read: (v: unknown, def: FieldDef) => unknown; write: (v: never) => unknown };
} = {
  unit: {
    read: (v, def) => {
      const n = v == null ? Number.NaN : Number(v);
      return Number.isFinite(n) ? n : def.default;
    },
    write: (v: number | undefined) => v,
  },
  line: {
    read: (v) => (v == null ? undefined : String(v)),
    write: (v: string | undefined) => v || undefined,
  },
  date: {
    read: (v) => (v == null ? undefined : String(v)),
    write: (v: string | undefined) => v || undefined,
  },
  attestation: {
    read: parseVerified,
    write: (v: Verified | undefined) => (v ? { by: v.by, at: v.at } : undefined),
  },
};

/** The table's fields of a new record's input, each as given or its default (src/model/fields.ts). */
function tableFieldsOf(i: Partial<TableFields>): TableFields {
  const given = i as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of TABLE_FIELDS) out[f.key] = given[f.key] ?? f.default;
  return out as TableFields;
}

export function newRecord(i: NewRecordInput): MemoryRecord {
  const r: MemoryRecord = {
    id: i.id,
    type: i.type,
    title: i.title,
    alias: i.alias,
    status: i.status ?? 'active',
    tags: normalizeTags(i.tags ?? []),
    scope: i.scope ?? [],
    by: i.by,
    created: i.now,
    updated: i.now,
    ...tableFieldsOf(i),
    clock: 1,
    links: { ...emptyLinks(), ...(i.links ?? {}) } as Links,
    anchors: i.anchors ?? [],
    body: i.body,
    extra: i.extra ?? {},
  };
  validateRecord(r);
  return r;
}

/**
 * Throws (E_INVALID_ARG, E_INVALID_RECORD, E_ANCHOR, E_TOO_LARGE, E_BINARY) when a record must not
 * be written: its frontmatter as serializeRecord writes it, against the one table of limits
 * (src/model/schema.ts) the sync boundary checks a remote's records against too.
 */
export function validateRecord(r: MemoryRecord): void {
  const p = recordProblems(r)[0];
  if (p) throw err(p.code, p.message, p.hint, { field: p.field });
}

/** Every field of a record that breaks its limit (what validateRecord refuses), [] when none. */
export function recordProblems(r: MemoryRecord): FieldProblem[] {
  return recordFieldProblems(frontmatterOf(r), r.body);
}

// ---------------------------------------------------------------- serialise

function strArray(v: unknown): string[] {
  if (v == null) return [];
  if (Array.isArray(v)) return v.filter((x) => x != null).map((x) => String(x));
  return [String(v)];
}

/** The frontmatter of a record as serializeRecord writes it: known keys in a fixed order, unknown keys after. */
export function frontmatterOf(r: MemoryRecord): Record<string, unknown> {
  const fm: Record<string, unknown> = {};
  eachFrontmatterValue(r, (k, v) => {
    fm[k] = v;
  });
  return fm;
}

const KNOWN_KEY_SET: ReadonlySet<string> = new Set(FRONTMATTER_KEYS);

/** Each key and value of a record's frontmatter, in the order frontmatterOf gives them. */
function eachFrontmatterValue(r: MemoryRecord, visit: (k: string, v: unknown) => void): void {
  for (const [key, value, keepsExtra] of WRITERS) {
    const v = value(r);
    // a value this version does not read (a newer shape of `by`, `verified`, …) is written back as it came
    if (v !== undefined) visit(key, v);
    else if (keepsExtra && r.extra[key] !== undefined) visit(key, r.extra[key]);
  }
  for (const k of Object.keys(r.extra)) {
    const v = r.extra[k];
    if (v !== undefined && !KNOWN_KEY_SET.has(k)) visit(k, v);
  }
}

/** The table's rows in the frontmatter, in the order they are written. */
/**
 * What the frontmatter holds for each of the table's rows in it, in the order they are written
 * (undefined: the key is left out), and whether a value this version could not read, kept in
 * `extra`, is written back in its place (`by` and the table's own fields).
 */
const WRITERS: ReadonlyArray<readonly [string, (r: MemoryRecord) => unknown, boolean]> = FIELDS.filter(
  (f) => f.frontmatter,
).map((f) => [
  f.key,
  f.kind === 'own' ? ownWriter(f.key) : tableWriter(f),
  f.kind !== 'own' || f.key === 'by',
]);

/** How a field of kind `own` is written. */
function ownWriter(key: string): (r: MemoryRecord) => unknown {
  switch (key) {
    case 'alias':
      return (r) => r.alias || undefined;
    case 'scope':
      return (r) => (r.scope.length ? r.scope : undefined);
    case 'links':
      return (r) => {
        const links: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(r.links))
          if (Array.isArray(v) ? v.length : v != null) links[k] = v;
        return Object.keys(links).length ? links : undefined;
      };
    case 'anchors':
      return (r) => (r.anchors.length ? r.anchors : undefined);
    default:
      return (r) => (r as unknown as Record<string, unknown>)[key];
  }
}

/** How a field of a kind the table declares whole is written (KIND_CODEC). */
function tableWriter(f: FieldDef): (r: MemoryRecord) => unknown {
  const write = KIND_CODEC[f.kind as TableKind].write as (v: unknown) => unknown;
  return (r) => write((r as unknown as Record<string, unknown>)[f.key]);
}

/** Serialises deterministically: known keys in a fixed order, unknown keys after, in their order. */
export function serializeRecord(r: MemoryRecord): string {
  // one-line values first, in order; the rest (anchors, nested maps) through the yaml library
  const lines: string[] = [];
  let rest: Record<string, unknown> | undefined;
  eachFrontmatterValue(r, (k, v) => {
    if (isOneLine(v)) lines.push(oneLine(k, v));
    else {
      rest ??= {};
      rest[k] = v;
    }
  });
  let yaml = lines.length ? `${lines.join('\n')}\n` : '';
  if (rest) yaml += writeBlockFields(rest) ?? stringify(rest, BLOCK_OPTIONS);
  const body = r.body.endsWith('\n') || r.body === '' ? r.body : `${r.body}\n`;
  return `---\n${yaml}---\n${body}`;
}

/** Parses a record file. Throws RecordParseError naming the problem. */
export function parseRecord(text: string, path?: string): MemoryRecord {
  return parseRecordFile(text, path).record;
}

/**
 * Parses a record file into the record and its frontmatter as read (before any
 * value is coerced: what the limits are checked on). Throws RecordParseError.
 */
export function parseRecordFile(
  text: string,
  path?: string,
): { record: MemoryRecord; frontmatter: Record<string, unknown> } {
  const { frontmatter, body } = readRecordParts(text, path);
  return { record: recordFromParts(frontmatter, body, path), frontmatter };
}

/** A record file's frontmatter, as read (no value coerced), and its body. Throws RecordParseError. */
export function readRecordParts(
  text: string,
  path?: string,
): { frontmatter: Record<string, unknown>; body: string } {
  try {
    const { yaml, body } = splitFrontmatter(text);
    const fm = readFrontmatter(yaml);
    if (!fm || typeof fm !== 'object' || Array.isArray(fm))
      throw new RecordParseError('frontmatter is not a mapping');
    return { frontmatter: fm as Record<string, unknown>, body };
  } catch (e) {
    if (e instanceof RecordParseError) throw new RecordParseError(e.message, path);
    throw new RecordParseError(String((e as Error).message ?? e), path);
  }
}

/** The record of readRecordParts' answer. Throws RecordParseError (no id, an unknown type or status). */
export function recordFromParts(
  frontmatter: Record<string, unknown>,
  body: string,
  path?: string,
): MemoryRecord {
  try {
    return recordOf(frontmatter, body);
  } catch (e) {
    if (e instanceof RecordParseError) throw new RecordParseError(e.message, path);
    throw new RecordParseError(String((e as Error).message ?? e), path);
  }
}

/** A `verified: {by, at}` as read, or undefined when it is not one (then kept as it came). */
export function parseVerified(v: unknown): Verified | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const { by, at } = v as Record<string, unknown>;
  if (typeof by !== 'string' || typeof at !== 'string' || Object.keys(v).length !== 2) return undefined;
  return { by, at };
}

/** The record a frontmatter and body say (tolerant: missing values get their defaults). */
function recordOf(o: Record<string, unknown>, body: string): MemoryRecord {
  const id = String(o.id ?? '');
  if (!isId(id)) throw new RecordParseError(`invalid or missing id "${id}"`);
  const type = String(o.type ?? '');
  if (!isType(type)) throw new RecordParseError(`unknown type "${type}"`);
  const status = String(o.status ?? 'active');
  if (!isStatus(status)) throw new RecordParseError(`unknown status "${status}"`);
  const linksIn = (o.links && typeof o.links === 'object' ? o.links : {}) as Record<string, unknown>;
  const links: Links = { ...emptyLinks() };
  for (const [k, v] of Object.entries(linksIn)) links[k] = Array.isArray(v) ? strArray(v) : v;
  const by = parseProvenance(o.by);
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!KNOWN_KEY_SET.has(k)) extra[k] = v;
  if (o.by != null && !by) extra.by = o.by;
  // the fields the table declares whole, each read by its kind; one this version cannot read is kept as it came
  const table: Record<string, unknown> = {};
  for (const f of TABLE_FIELDS) {
    const v = KIND_CODEC[f.kind as TableKind].read(o[f.key], f);
    table[f.key] = v;
    if (v === undefined && o[f.key] != null) extra[f.key] = o[f.key];
  }
  const anchors = Array.isArray(o.anchors)
    ? (o.anchors.filter(
        (a) => a && typeof a === 'object' && typeof (a as Anchor).path === 'string',
      ) as Anchor[])
    : [];
  return {
    id,
    type,
    title: String(o.title ?? ''),
    alias: o.alias == null ? undefined : String(o.alias),
    status,
    tags: strArray(o.tags),
    scope: strArray(o.scope),
    by,
    created: String(o.created ?? ''),
    updated: String(o.updated ?? o.created ?? ''),
    ...(table as TableFields),
    clock: Number.isFinite(Number(o.clock)) ? Number(o.clock) : 0,
    links,
    anchors,
    body,
    extra,
  };
}
