/**
 * Changing a record's fields: what a person or an agent gives on any surface
 * (the CLI's options, an MCP tool's arguments, the UI's form) read by one
 * parser into a patch, and the patch applied to a record. Both follow the
 * field table (src/model/fields.ts): which fields update may set or clear,
 * how each is given, and the one rule that clears a field (`""`, and `never`
 * for `expires`). Values are judged where a record is: validateRecord after
 * the patch (src/model/schema.ts), so a value is refused alike everywhere.
 * Pure: no git, no file system.
 */
import { err } from '../errors.js';
import {
  ADD_REQUIRED,
  ADDABLE,
  FIELD_BY_KEY,
  type FieldDef,
  TABLE_FIELDS,
  TAG_EDITS,
  type TableAddKey,
  type TableFields,
  UPDATABLE,
} from './fields.js';
import { splitScopes, validateScopes } from './glob.js';
import {
  type Anchor,
  isStatus,
  isType,
  type MemoryRecord,
  type MemoryType,
  normalizeTags,
  parseDateInput,
  type Status,
  validateAlias,
} from './record.js';
import { nextClock, STATUSES, TYPES } from './schema.js';

/**
 * A change of some fields of a record: only what is given changes. The table's own fields
 * (confidence, source, expires as an ISO date, verified, …: TableFields) are set as given.
 */
export interface FieldPatch extends Partial<TableFields> {
  title?: string;
  body?: string;
  tags?: string[];
  addTags?: string[];
  removeTags?: string[];
  status?: string;
  type?: string;
  scope?: string[];
  alias?: string | null;
  anchors?: Anchor[];
  /** fields to clear (those the table lets update clear) */
  clear?: string[];
  /** the same as clear: ['expires'] (older callers) */
  clearExpiry?: boolean;
  extra?: Record<string, unknown>;
}

export function validateType(t: string): MemoryType {
  if (!isType(t)) throw err('E_INVALID_ARG', `unknown type "${t}"`, `use one of: ${TYPES.join(', ')}`);
  return t;
}

export function validateStatus(s: string): Status {
  if (!isStatus(s)) throw err('E_INVALID_ARG', `unknown status "${s}"`, `use one of: ${STATUSES.join(', ')}`);
  return s;
}

/**
 * Whether `v` is the value that clears field `key` (the one rule, every surface): the empty
 * value `""` (a list field's `[]` or `[""]`, what a repeatable CLI option gives for `--tags ''`),
 * and `never` for a date (`expires`).
 */
export function isClearValue(key: string, v: unknown): boolean {
  if (Array.isArray(v)) return v.every((x) => x === '');
  return v === null || v === '' || (v === 'never' && FIELD_BY_KEY.get(key)?.kind === 'date');
}

function asText(key: string, v: unknown): string {
  if (typeof v !== 'string') throw err('E_INVALID_ARG', `"${key}" must be text`, undefined, { field: key });
  return v;
}

function asList(key: string, v: unknown): string[] {
  if (typeof v === 'string') return key === 'scope' ? splitScopes([v]) : v.split(',');
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw err('E_INVALID_ARG', `"${key}" must be a list of text`, undefined, { field: key });
  return key === 'scope' ? splitScopes(v) : (v as string[]);
}

function asNumber(key: string, v: unknown): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n))
    throw err('E_INVALID_ARG', `"${key}" must be a number`, undefined, { field: key });
  return n;
}

/**
 * The patch an update's input asks for: `input` maps field keys (the JSON names, as the MCP
 * tools and the UI send them, and as the CLI's options are named) to what was given, plus
 * `add_tags` and `remove_tags`. Throws E_INVALID_ARG for an unknown field, one update may not
 * change, a value of the wrong type, a clear of a field that cannot be cleared, or nothing at all.
 */
export function parseUpdateInput(input: Record<string, unknown>): FieldPatch {
  const patch: FieldPatch = {};
  const clear: string[] = [];
  for (const [key, v] of Object.entries(input)) {
    if (v === undefined) continue;
    const edit = TAG_EDITS.find((t) => t.key === key);
    if (edit) {
      const tags = asList(key, v);
      if (key === 'add_tags') patch.addTags = tags;
      else patch.removeTags = tags;
      continue;
    }
    const def = FIELD_BY_KEY.get(key);
    if (!def?.update)
      throw err(
        'E_INVALID_ARG',
        def ? `"${key}" cannot be changed by update` : `unknown field "${key}"`,
        `fields update changes: ${[...UPDATABLE.map((f) => f.key), ...TAG_EDITS.map((t) => t.key)].join(', ')}`,
        { field: key },
      );
    if (key !== 'body' && isClearValue(key, v)) {
      if (def.update !== 'set-clear')
        throw err('E_INVALID_ARG', `"${key}" cannot be cleared`, 'give it a value', { field: key });
      clear.push(key);
      continue;
    }
    const p = patch as Record<string, unknown>;
    if (def.input === 'strings') p[key] = asList(key, v);
    else if (def.input === 'number') p[key] = asNumber(key, v);
    else if (def.kind === 'date') p[key] = parseDateInput(asText(key, v));
    else p[key] = asText(key, v);
  }
  if (clear.length) patch.clear = clear;
  if (!Object.keys(patch).length)
    throw err('E_INVALID_ARG', 'nothing to change', 'give at least one field, e.g. body or status');
  return patch;
}

/**
 * What an add gives, typed: the fields the table lets add set (src/model/fields.ts); a date
 * (`expires`) as given, an ISO date or a duration (30d, 2w), read into a date by the add.
 */
export interface AddFields extends Partial<Pick<TableFields, TableAddKey>> {
  type: string;
  title: string;
  body: string;
  tags?: string[];
  scope?: string[];
  alias?: string;
  status?: string;
}

/**
 * The table's own fields (confidence, source, expires, verified, …: src/model/fields.ts) that
 * `input` gives, of the rows `which` picks, each read by its kind: a number, a line of text, a
 * date through parseDateInput (an ISO date or a duration, for every surface), an attestation as
 * it came; an empty value absent. Judged with the whole record by validateRecord. An add reads
 * its fields with it (`f.add`), an import its lines (`f.exported`).
 */
export function tableValuesOf(
  input: object,
  which: (f: FieldDef) => boolean | string | undefined,
): Partial<TableFields> {
  const given = input as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of TABLE_FIELDS) {
    const v = given[f.key];
    if (!which(f) || v === undefined || v === null || v === '') continue;
    if (f.kind === 'unit') out[f.key] = Number(v);
    else if (f.kind === 'line') out[f.key] = String(v);
    else if (f.kind === 'date') out[f.key] = parseDateInput(String(v));
    else out[f.key] = v;
  }
  return out as Partial<TableFields>;
}

/**
 * The fields an add's input gives: `input` maps field keys (the JSON names, as the MCP tool sends
 * them and the CLI's options are named) to what was given. The same reading as an update's
 * (parseUpdateInput): a list is a list of text or one comma-separated text, a number a number or
 * its text. Throws E_INVALID_ARG (with `field`) for an unknown field, one add may not set, a value
 * of the wrong type, an empty scope, or a required field (type, title, body) missing. Values are
 * judged by the add itself, as a record's are (validateRecord).
 */
export function parseAddInput(input: Record<string, unknown>): AddFields {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(input)) {
    if (v === undefined) continue;
    const def = FIELD_BY_KEY.get(key);
    if (!def?.add)
      throw err(
        'E_INVALID_ARG',
        def ? `"${key}" cannot be set by add` : `unknown field "${key}"`,
        `fields add sets: ${ADDABLE.map((f) => f.key).join(', ')}`,
        { field: key },
      );
    if (def.input === 'strings') {
      // an empty scope would vanish in the split and leave the memory unscoped
      if (key === 'scope' && [v].flat().some((x) => typeof x === 'string' && !x.trim()))
        throw err(
          'E_INVALID_ARG',
          'scope "" is empty',
          'scopes are globs relative to the repository root, e.g. src/db/**',
          { field: key },
        );
      out[key] = asList(key, v).filter((x) => x.trim() !== '');
    } else if (def.input === 'number') out[key] = asNumber(key, v);
    else out[key] = asText(key, v);
  }
  for (const key of ADD_REQUIRED)
    if (out[key] === undefined || (key === 'title' && !String(out[key]).trim()))
      throw err('E_INVALID_ARG', `"${key}" is required`, `give the memory a ${key}`, { field: key });
  return out as unknown as AddFields;
}

/** Applies a patch to a record (pure); returns the names of the fields that changed. */
export function applyPatch(r: MemoryRecord, p: FieldPatch, now: string): string[] {
  const changed: string[] = [];
  const rec = r as unknown as Record<string, unknown>;
  const set = (k: string, v: unknown) => {
    if (JSON.stringify(rec[k]) !== JSON.stringify(v)) {
      rec[k] = v;
      changed.push(k);
    }
  };
  const clear = new Set(p.clear ?? []);
  if (p.clearExpiry) clear.add('expires');
  for (const k of clear) {
    const def = FIELD_BY_KEY.get(k);
    if (def?.update !== 'set-clear') throw err('E_INVALID_ARG', `"${k}" cannot be cleared`);
    set(k, Array.isArray(rec[k]) ? [] : undefined);
  }
  if (p.title !== undefined) set('title', p.title.trim());
  if (p.body !== undefined) set('body', p.body);
  if (p.type !== undefined) set('type', validateType(p.type));
  if (p.status !== undefined) set('status', validateStatus(p.status));
  let tags = p.tags !== undefined ? normalizeTags(p.tags) : [...r.tags];
  if (p.addTags) tags = normalizeTags([...tags, ...p.addTags]);
  if (p.removeTags) {
    const rm = new Set(normalizeTags(p.removeTags));
    tags = tags.filter((t) => !rm.has(t));
  }
  set('tags', tags);
  if (p.scope !== undefined) set('scope', validateScopes(p.scope));
  // the table's own fields, each as given (judged with the whole record by validateRecord)
  const given = p as Record<string, unknown>;
  for (const f of TABLE_FIELDS) if (given[f.key] !== undefined) set(f.key, given[f.key]);
  if (p.alias !== undefined) set('alias', p.alias === null ? undefined : validateAlias(p.alias));
  if (p.anchors !== undefined) set('anchors', p.anchors);
  if (p.extra) {
    const extra = { ...r.extra, ...p.extra };
    for (const [k, v] of Object.entries(extra)) if (v === undefined) delete extra[k];
    set('extra', extra);
  }
  if (changed.length) {
    r.updated = now;
    r.clock = nextClock(r.clock);
  }
  return changed;
}
