/**
 * The memory record: Markdown body + YAML frontmatter, one file per record.
 * Pure: no git, no file system. Parsing is strict on write and tolerant on
 * read (a malformed record from elsewhere is reported, never crashes a list).
 */

import { err } from '../errors.js';
import { FRONTMATTER_KEYS, type Verified } from './fields.js';
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
import { parseDocument, stringify } from './yaml.js';

export type { Verified } from './fields.js';
export type { MemoryType, Status } from './schema.js';
export { LIMITS, STATUSES, TYPES } from './schema.js';

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

export interface MemoryRecord {
  id: string;
  type: MemoryType;
  title: string;
  alias?: string;
  status: Status;
  tags: string[];
  scope: string[];
  confidence: number;
  source?: string;
  author?: string;
  /** Who wrote it: a person, or an agent (name, session, model); absent in records from before git-mem kept it. */
  by?: Provenance;
  created: string;
  updated: string;
  expires?: string;
  /** Who last confirmed it still holds, and when (`git mem verify`); absent until someone does. */
  verified?: Verified;
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

export interface NewRecordInput {
  id: string;
  type: MemoryType;
  title: string;
  body: string;
  now: string;
  author?: string;
  by?: Provenance;
  tags?: string[];
  scope?: string[];
  alias?: string;
  status?: Status;
  confidence?: number;
  source?: string;
  expires?: string;
  verified?: Verified;
  anchors?: Anchor[];
  links?: Partial<Links>;
  extra?: Record<string, unknown>;
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
    confidence: i.confidence ?? 0.8,
    source: i.source,
    author: i.author,
    by: i.by,
    created: i.now,
    updated: i.now,
    expires: i.expires,
    verified: i.verified,
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

/*
 * The frontmatter format. Values that fit on one line (strings, numbers,
 * booleans, lists of strings) are written as `key: scalar` or
 * `key: [flow, list]`, strings plain only when YAML cannot misread them and
 * JSON-quoted otherwise (a JSON string is a YAML double-quoted scalar); the
 * rest (anchors, nested maps) is written by the yaml library. Everything is
 * read back by the yaml library.
 */

const PLAIN_SAFE = /^[A-Za-z_/][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+()-]+)*$/;
const SPECIAL = /^(?:true|false|yes|no|on|off|null|~|y|n|\.nan|\.inf|[-+]?\.inf)$/i;
const NUMBER = /^[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$|^0x[0-9a-fA-F]+$|^0o[0-7]+$/;

/** A string as a one-line YAML scalar: plain when that cannot be misread, else JSON-quoted. */
function yamlScalar(s: string, inFlow = false): string {
  if (
    s.length > 0 &&
    s.length < 200 &&
    PLAIN_SAFE.test(s) &&
    !SPECIAL.test(s) &&
    !NUMBER.test(s) &&
    !(inFlow && /[,[\]{}]/.test(s))
  ) {
    return s;
  }
  return JSON.stringify(s);
}

/** A list of strings as a one-line YAML flow sequence. */
function yamlFlowList(xs: readonly string[]): string {
  return `[${xs.map((x) => yamlScalar(x, true)).join(', ')}]`;
}

/** Is this value written on one line (else by the yaml library)? */
function isOneLine(v: unknown): boolean {
  if (typeof v === 'string')
    return !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u2028\u2029\ufeff]/.test(v);
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v === 'boolean') return true;
  if (Array.isArray(v)) return v.every((x) => typeof x === 'string' && isOneLine(x));
  return false;
}

function oneLine(key: string, v: unknown): string {
  if (typeof v === 'string') return `${key}: ${yamlScalar(v)}`;
  if (Array.isArray(v)) return `${key}: ${yamlFlowList(v as string[])}`;
  return `${key}: ${String(v)}`;
}

function strArray(v: unknown): string[] {
  if (v == null) return [];
  if (Array.isArray(v)) return v.filter((x) => x != null).map((x) => String(x));
  return [String(v)];
}

/** The frontmatter of a record as serializeRecord writes it: known keys in a fixed order, unknown keys after. */
export function frontmatterOf(r: MemoryRecord): Record<string, unknown> {
  const fm: Record<string, unknown> = {};
  fm.id = r.id;
  fm.type = r.type;
  fm.title = r.title;
  if (r.alias) fm.alias = r.alias;
  fm.status = r.status;
  fm.tags = r.tags;
  if (r.scope.length) fm.scope = r.scope;
  fm.confidence = r.confidence;
  if (r.source) fm.source = r.source;
  if (r.author) fm.author = r.author;
  // a `by` this version does not read (a newer shape) is written back as it came
  if (r.by) fm.by = r.by;
  else if (r.extra.by !== undefined) fm.by = r.extra.by;
  fm.created = r.created;
  fm.updated = r.updated;
  if (r.expires) fm.expires = r.expires;
  // a `verified` this version does not read is written back as it came, as `by` is
  if (r.verified) fm.verified = { by: r.verified.by, at: r.verified.at };
  else if (r.extra.verified !== undefined) fm.verified = r.extra.verified;
  fm.clock = r.clock;
  const links: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(r.links)) {
    if (Array.isArray(v) ? v.length : v != null) links[k] = v;
  }
  if (Object.keys(links).length) fm.links = links;
  if (r.anchors.length) fm.anchors = r.anchors;
  for (const [k, v] of Object.entries(r.extra)) {
    if (!(KNOWN_KEYS as readonly string[]).includes(k) && v !== undefined) fm[k] = v;
  }
  return fm;
}

/** Serialises deterministically: known keys in a fixed order, unknown keys after, in their order. */
export function serializeRecord(r: MemoryRecord): string {
  const fm = frontmatterOf(r);
  // one-line values first, in order; the rest (anchors, nested maps) through the yaml library
  const lines: string[] = [];
  let rest: Record<string, unknown> | undefined;
  for (const [k, v] of Object.entries(fm)) {
    if (isOneLine(v)) lines.push(oneLine(k, v));
    else {
      rest ??= {};
      rest[k] = v;
    }
  }
  let yaml = lines.length ? `${lines.join('\n')}\n` : '';
  if (rest) yaml += writeBlockFields(rest) ?? stringify(rest, BLOCK_OPTIONS);
  const body = r.body.endsWith('\n') || r.body === '' ? r.body : `${r.body}\n`;
  return `---\n${yaml}---\n${body}`;
}

/*
 * Writing the block form without the library. What the library writes for the
 * block part (its options above: no line folding, no aliases) follows from a
 * few rules of its stringifier (yaml 2, stringify/stringifyString.js,
 * stringifyCollection.js, stringifyPair.js): maps and lists in block style
 * indented by two, empty ones as `{}` and `[]`, strings plain when nothing
 * could misread them, else quoted (single quotes around a `"` without a `'`),
 * strings of several lines as literal blocks with an indentation digit when
 * they start with a space and chomping from their trailing line feeds. The
 * library takes about 150 µs warm (and loading it 40 ms) per anchored record;
 * writeBlockFields gives the same bytes in a few µs and gives up (undefined)
 * on anything else — control characters, keys or strings that need the
 * library's judgement, quoted strings over several lines — so the library
 * writes those. test/record.test.ts checks the bytes are the library's.
 */

/** how the library writes the block part: no line folding, no aliases */
export const BLOCK_OPTIONS = {
  lineWidth: 0,
  aliasDuplicateObjects: false,
  flowCollectionPadding: false,
} as const;
const SIMPLE_KEY = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** where the library leaves plain style (stringifyString.js plainString) */
const PLAIN_REFUSED = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/;
/** what the library always writes double-quoted: controls but tab and line feed, unpaired surrogates */
const DOUBLE_ONLY = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u{D800}-\u{DFFF}]/u;
/** what the core schema reads as other than a string: its tags' tests (yaml 2, schema/core) */
const CORE_NOT_STRING = new RegExp(
  [
    /^(?:~|[Nn]ull|NULL)?$/,
    /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
    /^0o[0-7]+$/,
    /^[-+]?[0-9]+$/,
    /^0x[0-9a-fA-F]+$/,
    /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
    /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
    /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
  ]
    .map((r) => r.source)
    .join('|'),
);

/** A one-line string quoted as the library quotes it: single quotes around a `"` without a `'`, else JSON. */
function quotedOneLine(s: string): string {
  if (s.includes('"') && !s.includes("'")) return `'${s}'`;
  return JSON.stringify(s);
}

/** A string as the library writes it, its block lines indented by `indent`; undefined when unsure. */
function writeString(s: string, indent: string): string | undefined {
  if (DOUBLE_ONLY.test(s) || s.includes('\u2028') || s.includes('\u2029')) return undefined;
  const multi = s.includes('\n');
  if (!multi) return PLAIN_REFUSED.test(s) || CORE_NOT_STRING.test(s) ? quotedOneLine(s) : s;
  // several lines: a literal block, unless it ends in a line of spaces (then the library quotes it)
  if (/\n[\t ]+$/.test(s)) return undefined;
  let endStart = s.length;
  while (endStart > 0 && ' \t\n'.includes(s[endStart - 1])) endStart--;
  let end = s.slice(endStart);
  const nl = end.indexOf('\n');
  const chomp = nl < 0 ? '-' : s === end || nl !== end.length - 1 ? '+' : '';
  let value = s;
  if (end) {
    value = value.slice(0, -end.length);
    if (end.endsWith('\n')) end = end.slice(0, -1);
    if (/\n(?!\n|$)/.test(end)) return undefined;
  }
  let startWithSpace = false;
  let startEnd = 0;
  let startNl = -1;
  for (; startEnd < value.length; startEnd++) {
    const ch = value[startEnd];
    if (ch === ' ') startWithSpace = true;
    else if (ch === '\n') startNl = startEnd;
    else break;
  }
  let start = value.slice(0, startNl + 1);
  if (start) {
    value = value.slice(start.length);
    start = start.replace(/\n+/g, `$&${indent}`);
  }
  value = value.replace(/\n+/g, `$&${indent}`);
  return `|${startWithSpace ? '2' : ''}${chomp}\n${indent}${start}${value}${end}`;
}

/** A value in block style at `indent` (its own lines' indentation), as the library writes it; undefined when unsure. */
function writeBlockValue(v: unknown, indent: string, depth: number): string | undefined {
  if (typeof v === 'string') return writeString(v, indent);
  if (typeof v === 'number')
    return Number.isFinite(v) ? (Object.is(v, -0) ? '-0' : JSON.stringify(v)) : undefined;
  if (typeof v === 'boolean') return String(v);
  if (v === null) return 'null';
  if (depth > MAX_BLOCK_DEPTH || typeof v !== 'object') return undefined;
  if (Array.isArray(v)) {
    if (!v.length) return '[]';
    const lines: string[] = [];
    for (const item of v) {
      if (Array.isArray(item) && item.length) return undefined;
      const str = writeBlockValue(item, `${indent}  `, depth + 1);
      if (str === undefined) return undefined;
      lines.push(`- ${str}`);
    }
    return lines.join(`\n${indent}`);
  }
  if (Object.getPrototypeOf(v) !== Object.prototype) return undefined;
  const lines: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    if (!SIMPLE_KEY.test(k) || CORE_NOT_STRING.test(k) || x === undefined) return undefined;
    const str = writeBlockValue(x, `${indent}  `, depth + 1);
    if (str === undefined) return undefined;
    const nested = x !== null && typeof x === 'object' && Object.keys(x).length > 0;
    lines.push(nested ? `${k}:\n${indent}  ${str}` : `${k}: ${str}`);
  }
  return lines.length ? lines.join(`\n${indent}`) : '{}';
}

/** The block part of a frontmatter as the yaml library writes it (with a final line feed), or undefined. */
export function writeBlockFields(fields: Record<string, unknown>): string | undefined {
  const s = writeBlockValue(fields, '', 0);
  return s === undefined || s === '{}' ? undefined : `${s}\n`;
}

export class RecordParseError extends Error {
  constructor(
    message: string,
    readonly path?: string,
  ) {
    super(message);
  }
}

/** Splits frontmatter and body; throws RecordParseError on malformed input. */
export function splitFrontmatter(text: string): { yaml: string; body: string } {
  if (!text.startsWith('---\n') && !text.startsWith('---\r\n'))
    throw new RecordParseError('missing frontmatter');
  const start = text.indexOf('\n') + 1;
  const re = /^---\r?$/m;
  re.lastIndex = 0;
  const rest = text.slice(start);
  const m = re.exec(rest);
  if (!m) throw new RecordParseError('unterminated frontmatter');
  const yaml = rest.slice(0, m.index);
  let body = rest.slice(m.index + m[0].length);
  if (body.startsWith('\n')) body = body.slice(1);
  return { yaml, body };
}

/** The frontmatter read by the yaml library alone (what readFrontmatter must agree with). */
export function readFrontmatterByLibrary(yaml: string): unknown {
  const doc = parseDocument(yaml, { schema: 'core', uniqueKeys: true, prettyErrors: false, strict: true });
  if (doc.errors.length) throw new RecordParseError(`invalid YAML: ${doc.errors[0].message.split('\n')[0]}`);
  try {
    return doc.toJS({ maxAliasCount: LIMITS.yamlAliases });
  } catch (e) {
    throw new RecordParseError(`invalid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
}

/*
 * Reading the one-line form. The yaml library costs about 100 µs a record
 * (most of a 100k-memory index build), while the frontmatter serializeRecord
 * writes is mostly lines `key: scalar` and `key: [flow, list]` in the forms
 * yamlScalar and yamlFlowList above produce, and `by` as such lines indented
 * under `by:`. Those lines, at the top of the frontmatter, are read here (a
 * few µs); the first line that is not exactly such a line, and everything
 * after it (anchors, nested lists, anything written by hand), is read by the
 * library, and any doubt — a duplicate key, a key or value the library could
 * read differently, an error in the rest — hands the whole frontmatter to the
 * library, so errors and values are the library's. test/record.test.ts checks
 * that both agree on every shape serializeRecord writes, on random records
 * and on hand-written frontmatter.
 */

const NOT_ONE_LINE: unique symbol = Symbol('not one-line');
const ONE_LINE_FIELD = /^([A-Za-z_][A-Za-z0-9_.-]*):(?: (.+))?$/;
const JSON_NUMBER = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?$/;
/** left to the library, to be safe: characters YAML versions treat specially (C1 controls, line and paragraph separators, BOM, non-characters) */
const NOT_JSON_SAFE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/;
// a colon inside its first word, never last (the library writes a check's time plain: 2026-11-26T20:10:39.543Z)
const PLAIN_FROM_DIGIT = /^[0-9](?:[A-Za-z0-9_./@+-]|:(?=[A-Za-z0-9_./@+-]))*(?: [A-Za-z0-9_./@+()-]+)*$/;
const REST_STARTS_WITH_KEY = /^[A-Za-z_][A-Za-z0-9_.-]*:(?: |\n|$)/;

/** A scalar as yamlScalar writes it (a number or boolean as oneLine writes it), else NOT_ONE_LINE. */
function readOneLineScalar(s: string): unknown {
  if (s.charCodeAt(0) === 34) {
    if (s.length < 2 || s.charCodeAt(s.length - 1) !== 34 || NOT_JSON_SAFE.test(s)) return NOT_ONE_LINE;
    try {
      return JSON.parse(s) as string;
    } catch {
      return NOT_ONE_LINE;
    }
  }
  if (s === 'true') return true;
  if (s === 'false') return false;
  if (JSON_NUMBER.test(s)) return Number(s);
  // plain: what yamlScalar writes plain, or (as the library writes `by`) the same starting with a digit
  return (PLAIN_SAFE.test(s) || PLAIN_FROM_DIGIT.test(s)) && !SPECIAL.test(s) && !NUMBER.test(s)
    ? s
    : NOT_ONE_LINE;
}

/** A value as oneLine writes it: a scalar or `[a, "b"]` (elements separated by ", "), else NOT_ONE_LINE. */
function readOneLineValue(s: string): unknown {
  if (s.charCodeAt(0) !== 91) return readOneLineScalar(s);
  if (s === '[]') return [];
  if (s.charCodeAt(s.length - 1) !== 93) return NOT_ONE_LINE;
  const out: unknown[] = [];
  let i = 1;
  for (;;) {
    let end = i;
    if (s.charCodeAt(i) === 34) {
      end++;
      while (end < s.length && s.charCodeAt(end) !== 34) end += s.charCodeAt(end) === 92 ? 2 : 1;
      end++;
    } else {
      while (
        end < s.length &&
        s[end] !== ',' &&
        s[end] !== ']' &&
        s[end] !== '[' &&
        s[end] !== '{' &&
        s[end] !== '}'
      )
        end++;
    }
    if (end >= s.length) return NOT_ONE_LINE;
    const v = readOneLineScalar(s.slice(i, end));
    if (v === NOT_ONE_LINE) return NOT_ONE_LINE;
    out.push(v);
    if (s[end] === ']') return end === s.length - 1 ? out : NOT_ONE_LINE;
    if (s[end] !== ',' || s[end + 1] !== ' ') return NOT_ONE_LINE;
    i = end + 2;
  }
}

/**
 * Reads lines `key: value` (after `indent`) from `at` into `out`. At the top,
 * a line `key:` followed by such lines indented by two spaces (how the yaml
 * library writes a map of scalars, like `by`) is one field too. Returns where
 * the first line it leaves unread starts, or -1 when the library must read
 * everything (a duplicate key).
 */
function readOneLineFields(yaml: string, at: number, indent: string, out: Record<string, unknown>): number {
  while (at < yaml.length) {
    const nl = yaml.indexOf('\n', at);
    const end = nl < 0 ? yaml.length : nl;
    const line = yaml.slice(at, end);
    if (indent && !line.startsWith(indent)) break;
    const m = ONE_LINE_FIELD.exec(indent ? line.slice(indent.length) : line);
    if (!m) break;
    const key = m[1];
    if (SPECIAL.test(key) || key === '__proto__' || Object.hasOwn(out, key)) return -1;
    let v: unknown;
    let next = end + 1;
    if (m[2] === undefined) {
      if (indent) break;
      const map: Record<string, unknown> = {};
      const after = readOneLineFields(yaml, next, '  ', map);
      if (after < 0) return -1;
      // nothing below `key:`, or a line below it that is not a field: the library's
      if (after === next || (after < yaml.length && yaml.charCodeAt(after) === 32)) break;
      v = map;
      next = after;
    } else {
      v = readOneLineValue(m[2]);
      if (v === NOT_ONE_LINE) break;
    }
    out[key] = v;
    at = next;
  }
  return at;
}

/**
 * The frontmatter with its one-line fields and its block part read directly,
 * or the block part by the library; undefined when the library must read all
 * of it (`directOnly`: also when it would read the block part).
 */
export function readFrontmatterFast(yaml: string, directOnly = false): Record<string, unknown> | undefined {
  if (yaml.includes('\r')) return undefined;
  const out: Record<string, unknown> = {};
  const at = readOneLineFields(yaml, 0, '', out);
  if (at <= 0) return undefined;
  if (at >= yaml.length) return out;
  const rest = yaml.slice(at);
  if (!REST_STARTS_WITH_KEY.test(rest)) return undefined;
  // the block part (anchors, links, nested values) in the shapes the library writes, else by the library
  if (readBlockFields(rest, out)) return out;
  if (directOnly) return undefined;
  let more: unknown;
  try {
    more = readFrontmatterByLibrary(rest);
  } catch {
    return undefined;
  }
  if (
    !more ||
    typeof more !== 'object' ||
    Array.isArray(more) ||
    Object.getPrototypeOf(more) !== Object.prototype
  )
    return undefined;
  for (const k of Object.keys(more)) if (Object.hasOwn(out, k) || k === '__proto__') return undefined;
  return Object.assign(out, more);
}

/*
 * Reading the block form. What the one-line fields leave (anchors with their
 * source text, links, nested maps) the yaml library writes as block YAML:
 * `key:` with a map or a `- ` list indented two spaces below it, list items
 * that are scalars or maps (`- path: x` and the map's other keys below it),
 * `[]` and `{}`, scalars plain, quoted or as literal blocks (`|`, `|-`, `|+`,
 * `|2-` …). The yaml library reads an anchored record's frontmatter in about
 * 300 µs warm and a millisecond cold, the largest part of opening a store of
 * anchored memories (a check, an add's duplicate check). readBlockFields reads
 * exactly those shapes and gives up (false) at the first line it is not sure
 * of — a tab in an indentation, a comment, a key or scalar the library might
 * read differently, anything deeper than MAX_BLOCK_DEPTH — so the library reads
 * such a frontmatter and its values and errors stay the library's.
 */

const MAX_BLOCK_DEPTH = 16;
const BLOCK_KEY = /^([A-Za-z_][A-Za-z0-9_.-]*):(?: (.*))?$/;
/** a literal block header as the library writes it: `|`, then an indentation digit, then chomping */
const LITERAL_HEADER = /^\|([1-9])?([-+])?$/;
/** characters that begin a YAML indicator, left to the library when they start a plain scalar (`-`, `?`, `:` only before a space) */
const PLAIN_FIRST_BAD = /^(?:[,[\]{}#&*!|>'"%@`\s]|[-?:](?:\s|$))/;
/** C0 controls but tab, and what NOT_JSON_SAFE names: left to the library anywhere */
const BLOCK_BAD_CHAR = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/;

/** A scalar on one line in a block: what readOneLineScalar reads, plain text as the library writes it, 'single', null. */
function readBlockScalar(s: string): unknown {
  if (s === '[]') return [];
  if (s === '{}') return {};
  if (s === 'null') return null;
  const v = readOneLineScalar(s);
  if (v !== NOT_ONE_LINE) return v;
  if (BLOCK_BAD_CHAR.test(s)) return NOT_ONE_LINE;
  if (s.charCodeAt(0) === 39) {
    // 'single-quoted': '' is a quote; nothing else is special
    if (s.length < 2 || s.charCodeAt(s.length - 1) !== 39) return NOT_ONE_LINE;
    const inner = s.slice(1, -1);
    if (inner.replaceAll("''", '').includes("'")) return NOT_ONE_LINE;
    return inner.replaceAll("''", "'");
  }
  // plain: no indicator first, no `: ` or ` #`, nothing a schema could read as other than a string
  if (
    PLAIN_FIRST_BAD.test(s) ||
    /\s$|:$|: |:\t|\s#/.test(s) ||
    SPECIAL.test(s) ||
    NUMBER.test(s) ||
    /^[-+]?[.0-9]/.test(s)
  )
    return NOT_ONE_LINE;
  return s;
}

/** Leading spaces of a line; -1 when a tab comes before its first other character. */
function indentOf(line: string): number {
  let i = 0;
  while (i < line.length && line.charCodeAt(i) === 32) i++;
  return line.charCodeAt(i) === 9 ? -1 : i;
}

/** A line holding nothing but spaces (a tab makes it the library's). */
function isBlank(line: string): boolean {
  return indentOf(line) === line.length;
}

class BlockReader {
  /** the lines, without the empty string after the final line feed */
  readonly lines: string[];
  at = 0;

  constructor(text: string) {
    this.lines = text.split('\n');
    if (this.lines[this.lines.length - 1] === '') this.lines.pop();
  }

  /** Map entries at `indent` into `out`, until a line less indented; false when unsure. */
  map(indent: number, out: Record<string, unknown>, depth: number): boolean {
    if (depth > MAX_BLOCK_DEPTH) return false;
    let entries = 0;
    while (this.at < this.lines.length) {
      const line = this.lines[this.at];
      const ind = indentOf(line);
      if (ind < 0 || ind === line.length) return false;
      if (ind < indent) break;
      if (ind > indent) return false;
      const m = BLOCK_KEY.exec(line.slice(indent));
      if (!m) return false;
      const key = m[1];
      if (SPECIAL.test(key) || key === '__proto__' || Object.hasOwn(out, key)) return false;
      this.at++;
      const v = m[2] === undefined ? this.nested(indent, depth) : this.value(m[2], indent);
      if (v === NOT_ONE_LINE) return false;
      out[key] = v;
      entries++;
    }
    return entries > 0;
  }

  /** What follows a `key:` at `indent` on the lines below: a map or a list two spaces in. */
  private nested(indent: number, depth: number): unknown {
    const next = this.lines[this.at];
    if (next === undefined || indentOf(next) !== indent + 2) return NOT_ONE_LINE;
    if (next.charCodeAt(indent + 2) === 45) return this.list(indent + 2, depth + 1);
    const m: Record<string, unknown> = {};
    return this.map(indent + 2, m, depth + 1) ? m : NOT_ONE_LINE;
  }

  /** List items `- ` at `indent`. */
  private list(indent: number, depth: number): unknown {
    if (depth > MAX_BLOCK_DEPTH) return NOT_ONE_LINE;
    const out: unknown[] = [];
    while (this.at < this.lines.length) {
      const line = this.lines[this.at];
      const ind = indentOf(line);
      if (ind < 0 || ind === line.length) return NOT_ONE_LINE;
      if (ind < indent) break;
      if (ind > indent || line.charCodeAt(indent) !== 45 || line.charCodeAt(indent + 1) !== 32)
        return NOT_ONE_LINE;
      const item = line.slice(indent + 2);
      if (BLOCK_KEY.test(item) && !item.startsWith('- ')) {
        // `- key: value`: a map whose keys stand two columns in, the first on the dash's line
        this.lines[this.at] = `${' '.repeat(indent + 2)}${item}`;
        const m: Record<string, unknown> = {};
        if (!this.map(indent + 2, m, depth + 1)) return NOT_ONE_LINE;
        out.push(m);
        continue;
      }
      this.at++;
      const v = this.value(item, indent);
      if (v === NOT_ONE_LINE) return NOT_ONE_LINE;
      out.push(v);
    }
    return out;
  }

  /** A value written after `key: ` or `- ` on a line whose key or dash stands at `indent`. */
  private value(s: string, indent: number): unknown {
    if (s.charCodeAt(0) !== 124) return readBlockScalar(s);
    const h = LITERAL_HEADER.exec(s);
    return h ? this.literal(indent, h[1] ? indent + Number(h[1]) : 0, h[2] ?? '') : NOT_ONE_LINE;
  }

  /**
   * A literal block's text: the lines below that are blank or indented at least
   * `content` spaces (0: as far as its first non-blank line, which must be deeper
   * than `parent`), chomped as the header says (`-` no final line feed, `+` all of them).
   */
  private literal(parent: number, content: number, chomp: string): unknown {
    const start = this.at;
    let end = start;
    let lastText = -1;
    let leadingBlank = 0;
    while (end < this.lines.length) {
      const line = this.lines[end];
      let sp = 0;
      while (sp < line.length && line.charCodeAt(sp) === 32) sp++;
      // spaces only: an empty line, or text (spaces) when deeper than the content's indentation
      if (sp === line.length && !(content && sp > content)) {
        if (lastText < 0) leadingBlank = Math.max(leadingBlank, sp);
        end++;
        continue;
      }
      if (!content) {
        if (sp <= parent || sp === line.length) break;
        content = sp;
      }
      // shallower: the block ends (a tab there is the enclosing reader's to refuse)
      if (sp < content) break;
      if (BLOCK_BAD_CHAR.test(line)) return NOT_ONE_LINE;
      lastText = end;
      end++;
    }
    // no text at all, or a leading blank line deeper than the text: the library's to read
    if (lastText < 0 || leadingBlank > content) return NOT_ONE_LINE;
    // blank lines after the text belong to it; the next line must be a shallower key or item
    const text = this.lines
      .slice(start, lastText + 1)
      .map((l) => (l.length > content ? l.slice(content) : isBlank(l) ? '' : NOT_ONE_LINE));
    if (text.includes(NOT_ONE_LINE as never)) return NOT_ONE_LINE;
    this.at = end;
    const body = text.join('\n');
    if (chomp === '-') return body;
    if (chomp === '') return `${body}\n`;
    return `${body}\n${'\n'.repeat(end - lastText - 1)}`;
  }
}

/**
 * Reads `text` (the frontmatter after its one-line fields) as block map entries at
 * the left margin into `out`; false, with `out` as it was, when the library must read it.
 */
function readBlockFields(text: string, out: Record<string, unknown>): boolean {
  if (text.length > LIMITS.frontmatterBytes) return false;
  const r = new BlockReader(text);
  const more: Record<string, unknown> = {};
  if (!r.map(0, more, 0) || r.at !== r.lines.length) return false;
  for (const k of Object.keys(more)) if (Object.hasOwn(out, k)) return false;
  Object.assign(out, more);
  return true;
}

/** The frontmatter as an object: the one-line fields directly, the rest by the yaml library. */
export function readFrontmatter(yaml: string): unknown {
  if (Buffer.byteLength(yaml) > LIMITS.frontmatterBytes) throw new RecordParseError('frontmatter too large');
  return readFrontmatterFast(yaml) ?? readFrontmatterByLibrary(yaml);
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
  for (const [k, v] of Object.entries(o)) if (!(KNOWN_KEYS as readonly string[]).includes(k)) extra[k] = v;
  if (o.by != null && !by) extra.by = o.by;
  const verified = parseVerified(o.verified);
  if (o.verified != null && !verified) extra.verified = o.verified;
  const anchors = Array.isArray(o.anchors)
    ? (o.anchors.filter(
        (a) => a && typeof a === 'object' && typeof (a as Anchor).path === 'string',
      ) as Anchor[])
    : [];
  const conf = o.confidence == null ? 0.8 : Number(o.confidence);
  return {
    id,
    type,
    title: String(o.title ?? ''),
    alias: o.alias == null ? undefined : String(o.alias),
    status,
    tags: strArray(o.tags),
    scope: strArray(o.scope),
    confidence: Number.isFinite(conf) ? conf : 0.8,
    source: o.source == null ? undefined : String(o.source),
    author: o.author == null ? undefined : String(o.author),
    by,
    created: String(o.created ?? ''),
    updated: String(o.updated ?? o.created ?? ''),
    expires: o.expires == null ? undefined : String(o.expires),
    verified,
    clock: Number.isFinite(Number(o.clock)) ? Number(o.clock) : 0,
    links,
    anchors,
    body,
    extra,
  };
}

/** A compact view for listings and caches (no body). */
export interface RecordSummary {
  id: string;
  alias?: string;
  type: MemoryType;
  title: string;
  status: Status;
  tags: string[];
  scope: string[];
  confidence: number;
  created: string;
  updated: string;
  expires?: string;
  /** when someone last confirmed it (`git mem verify`) */
  verified?: string;
  tokens: number;
  anchors: string[];
  /** A merge flagged it for review (`git mem conflicts`) and no `git mem resolve` has cleared it. */
  conflict?: true;
}

/**
 * Whether a merge flagged a record for review (its `conflict:` frontmatter key,
 * src/merge/engine.ts) and no `git mem resolve` has cleared it. What `list`,
 * `show` and the UI mark. Pure.
 */
export function isFlagged(r: Pick<MemoryRecord, 'extra'>): boolean {
  const v = r.extra.conflict;
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Where an anchor's code is, as the record last confirmed it: the path a check on the default
 * branch moved it to (`current`), else where it was made. What "memories about this file" means.
 */
export function anchorPathNow(a: Anchor): string {
  const now = (a.current as { path?: unknown } | null | undefined)?.path;
  return typeof now === 'string' && now ? now : a.path;
}

export function summarize(r: MemoryRecord): RecordSummary {
  const s: RecordSummary = {
    id: r.id,
    type: r.type,
    title: r.title,
    status: r.status,
    tags: r.tags,
    scope: r.scope,
    confidence: r.confidence,
    created: r.created,
    updated: r.updated,
    tokens: recordTokens(r),
    anchors: [...new Set(r.anchors.map(anchorPathNow))],
  };
  if (r.alias) s.alias = r.alias;
  if (r.expires) s.expires = r.expires;
  if (r.verified) s.verified = r.verified.at;
  if (isFlagged(r)) s.conflict = true;
  return s;
}

/** The stable JSON shape of one summary (an element of `list --json`). */
export function summaryToJSON(s: RecordSummary) {
  return {
    id: s.id,
    alias: s.alias ?? null,
    type: s.type,
    title: s.title,
    status: s.status,
    tags: s.tags,
    scope: s.scope,
    confidence: s.confidence,
    created: s.created,
    updated: s.updated,
    expires: s.expires ?? null,
    tokens: s.tokens,
    anchors: s.anchors,
    // only on a verified record: every other summary keeps its shape (and the catalog cache its bytes)
    ...(s.verified ? { verified: s.verified } : {}),
    // only on a flagged record: every other summary keeps its shape
    ...(s.conflict ? { conflict: true as const } : {}),
  };
}

/** The stable JSON shape of one record (`show --json`). */
export function recordToJSON(r: MemoryRecord) {
  return {
    id: r.id,
    alias: r.alias ?? null,
    type: r.type,
    title: r.title,
    status: r.status,
    tags: r.tags,
    scope: r.scope,
    confidence: r.confidence,
    source: r.source ?? null,
    author: r.author ?? null,
    by: r.by ?? null,
    created: r.created,
    updated: r.updated,
    expires: r.expires ?? null,
    verified: r.verified ?? null,
    clock: r.clock,
    links: r.links,
    anchors: r.anchors,
    tokens: recordTokens(r),
    body: r.body,
    extra: r.extra,
    ...(isFlagged(r) ? { conflict: true as const } : {}),
  };
}
