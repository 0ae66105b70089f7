/**
 * The fields of a memory, declared once. Each row says what one field is and
 * how every part of git-mem treats it; the rest is derived from this table:
 *
 * - the codec's key order (`KNOWN_KEYS`, src/model/record.ts),
 * - the checks of its value a local write and the sync boundary share
 *   (`kind`, checked by recordFieldProblems in src/model/schema.ts),
 * - the input a person or an agent may give for it on every surface (`input`,
 *   `add`, `update`: the CLI's options, the MCP tools' input schemas, the UI's
 *   edit form, all read by one parser per verb, src/model/patch.ts),
 * - the three-way merge (`merge`, src/merge/engine.ts), the fields the
 *   Conflicts page compares (`compare`), and import/export (`exported`),
 * - the UI's edit form: a control per field marked `ui`, in this order, from
 *   its `input`, `values`, `label`, bounds and `update` (src/ui/form.ts).
 *
 * One rule clears a field, the same on every surface: give it the empty
 * value `""` (`git mem update ID --expires ''`, `{"expires": ""}` in MCP and
 * the UI). `never` is accepted for `expires` alike everywhere (and the CLI's
 * `--clear-expiry` is its alias). Only fields whose `update` is `'set-clear'`
 * can be cleared.
 *
 * Pure: imports nothing (src/model/schema.ts imports this table).
 */

/** Who confirmed that a memory still holds, and when (`git mem verify`). */
export interface Verified {
  /** a person (`Name <email>`) or an agent's name */
  by: string;
  /** ISO date-time */
  at: string;
}

/**
 * How a value is checked (src/model/schema.ts): `own` fields have checks of their own
 * there (id, type, title, tags, …); the other kinds are checked generically from the table.
 */
export type FieldKind = 'own' | 'unit' | 'line' | 'date' | 'attestation';

/** How a field's two changed sides merge (src/merge/engine.ts). */
export type MergePolicy =
  /** the same value, or the one side that changed it; both changed: the later record's, the other kept in the attic */
  | 'scalar'
  /** set union with removals respected */
  | 'set'
  /** the value whose `at` is later (an attestation: never a conflict) */
  | 'later-at'
  /** merged by code of its own (id, body, links, anchors, clock, updated) */
  | 'own';

/** What a surface accepts for the field: text, a number, or a list of text (a comma-separated text too). */
export type InputType = 'string' | 'number' | 'strings';

/** The types a memory may have (the `type` field's values). */
export const TYPES = [
  'decision',
  'constraint',
  'known_fix',
  'failed_attempt',
  'convention',
  'preference',
  'environment',
  'architecture',
  'dependency',
  'security',
  'rule',
  'session',
  'strategy',
] as const;

/** The statuses a memory may have (the `status` field's values). */
export const STATUSES = ['pending', 'active', 'stale', 'superseded', 'archived'] as const;

export interface FieldDef {
  /** frontmatter key, JSON name (show --json, export, the UI's wire), MCP argument and CLI option (`--key`) */
  key: string;
  /** in the frontmatter (false for the body, which follows it) */
  frontmatter: boolean;
  kind: FieldKind;
  merge: MergePolicy;
  /** one line for help text, MCP descriptions and docs */
  help: string;
  /** how a surface gives it; absent: no surface sets it directly */
  input?: InputType;
  /** `add` may set it; `'required'`: every add gives it (the CLI's `--type` has a default) */
  add?: boolean | 'required';
  /** `update` may set it, or set and clear it */
  update?: 'set' | 'set-clear';
  /** the UI's edit form edits it */
  ui?: boolean;
  /** the only values it may take (the UI's edit form offers them in a select) */
  values?: readonly string[];
  /** what the UI's edit form calls it (default: the key, capitalized) */
  label?: string;
  /** the Conflicts page compares it */
  compare?: boolean;
  /** written by export and read back by import */
  exported?: boolean;
  /** JSON schema bounds the MCP tools declare (derived from the same limits the record check uses) */
  minimum?: number;
  maximum?: number;
  /** the value a new record, or a read record without it, gets (a field with one is never absent) */
  default?: number | string;
}

/** In frontmatter order: the order serializeRecord writes the keys in. */
const TABLE = [
  { key: 'id', frontmatter: true, kind: 'own', merge: 'own', help: 'the memory id', exported: true },
  {
    key: 'type',
    frontmatter: true,
    kind: 'own',
    merge: 'scalar',
    help: 'memory type (decision, constraint, known_fix, rule, …)',
    input: 'string',
    add: 'required',
    update: 'set',
    ui: true,
    compare: true,
    exported: true,
    values: TYPES,
  },
  {
    key: 'title',
    frontmatter: true,
    kind: 'own',
    merge: 'scalar',
    help: 'one-line title (at most 300 characters)',
    input: 'string',
    add: 'required',
    update: 'set',
    ui: true,
    compare: true,
    exported: true,
  },
  {
    key: 'alias',
    frontmatter: true,
    kind: 'own',
    merge: 'scalar',
    help: 'path-like alias, e.g. standards/ts/eslint',
    input: 'string',
    add: true,
    update: 'set-clear',
    compare: true,
    exported: true,
  },
  {
    key: 'status',
    frontmatter: true,
    kind: 'own',
    merge: 'scalar',
    help: 'pending, active, stale, superseded or archived',
    input: 'string',
    add: true,
    update: 'set',
    ui: true,
    compare: true,
    exported: true,
    values: STATUSES,
  },
  {
    key: 'tags',
    frontmatter: true,
    kind: 'own',
    merge: 'set',
    help: 'tags: single words (comma-separated or repeated)',
    input: 'strings',
    add: true,
    update: 'set-clear',
    ui: true,
    compare: true,
    exported: true,
  },
  {
    key: 'scope',
    frontmatter: true,
    kind: 'own',
    merge: 'set',
    help: 'globs the memory applies to (rules), e.g. src/db/**',
    input: 'strings',
    add: true,
    update: 'set-clear',
    ui: true,
    compare: true,
    exported: true,
  },
  {
    key: 'confidence',
    frontmatter: true,
    kind: 'unit',
    merge: 'scalar',
    help: 'how sure, a number from 0 to 1 (default 0.8)',
    input: 'number',
    add: true,
    update: 'set',
    ui: true,
    compare: true,
    exported: true,
    minimum: 0,
    maximum: 1,
    default: 0.8,
  },
  {
    key: 'source',
    frontmatter: true,
    kind: 'line',
    merge: 'scalar',
    help: 'where it came from (URL, person, session)',
    input: 'string',
    add: true,
    update: 'set-clear',
    ui: true,
    compare: true,
    exported: true,
  },
  { key: 'author', frontmatter: true, kind: 'line', merge: 'scalar', help: 'git author', exported: true },
  { key: 'by', frontmatter: true, kind: 'own', merge: 'scalar', help: 'who wrote it', exported: true },
  { key: 'created', frontmatter: true, kind: 'own', merge: 'scalar', help: 'when added', exported: true },
  { key: 'updated', frontmatter: true, kind: 'own', merge: 'own', help: 'last change', exported: true },
  {
    key: 'expires',
    frontmatter: true,
    kind: 'date',
    merge: 'scalar',
    help: 'expiry: ISO date or duration (30d, 2w)',
    input: 'string',
    add: true,
    update: 'set-clear',
    ui: true,
    compare: true,
    exported: true,
  },
  {
    key: 'verified',
    frontmatter: true,
    kind: 'attestation',
    merge: 'later-at',
    help: 'who last confirmed the memory still holds, and when (git mem verify)',
    compare: true,
    exported: true,
  },
  { key: 'clock', frontmatter: true, kind: 'own', merge: 'own', help: 'Lamport clock', exported: true },
  {
    key: 'links',
    frontmatter: true,
    kind: 'own',
    merge: 'own',
    help: 'links to other memories',
    compare: true,
    exported: true,
  },
  { key: 'anchors', frontmatter: true, kind: 'own', merge: 'own', help: 'code anchors', exported: true },
  {
    key: 'body',
    frontmatter: false,
    kind: 'own',
    merge: 'own',
    help: 'the memory itself, in Markdown: what, why, and how to apply it',
    input: 'string',
    add: 'required',
    update: 'set',
    ui: true,
    exported: true,
    label: 'Text (Markdown)',
  },
] as const satisfies readonly FieldDef[];

/** The field table (TABLE above), each row typed as a FieldDef. */
export const FIELDS: readonly FieldDef[] = TABLE;

/**
 * What a record holds for a field of each kind but `own`: such a field is whole in its row, and
 * the record's type, codec, new records, patches, import and export follow from the row alone
 * (src/model/record.ts, patch.ts, src/commands/bulk.ts). An `own` field has code of its own.
 */
export interface KindValue {
  unit: number;
  line: string;
  date: string;
  attestation: Verified;
}
/** The kinds whose fields the table declares whole. */
export type TableKind = keyof KindValue;
type Row = (typeof TABLE)[number];
type TableRow = Extract<Row, { kind: TableKind }>;
/**
 * A record's fields of the kinds the table declares whole, typed from their rows: one with a
 * `default` always there (`confidence: number`), the others optional (`source?: string`).
 */
export type TableFields = {
  [R in TableRow as R extends { default: unknown } ? R['key'] : never]: KindValue[R['kind']];
} & {
  [R in TableRow as R extends { default: unknown } ? never : R['key']]?: KindValue[R['kind']];
};
/** TableFields as JSON (`show --json`, the UI's wire): each under its key, an absent one null. */
export type TableFieldsJSON = {
  [K in keyof Required<TableFields>]: undefined extends TableFields[K]
    ? NonNullable<TableFields[K]> | null
    : TableFields[K];
};
/** The keys of the table fields an add may set. */
export type TableAddKey = Extract<TableRow, { add: true | 'required' }>['key'];
/** The rows of the fields the table declares whole (every kind but `own`), in table order. */
export const TABLE_FIELDS: readonly FieldDef[] = FIELDS.filter((f) => f.kind !== 'own');
/**
 * The fields whose text a write stores as given (what the secret scan reads by field): text and
 * lists of text, but neither a choice of fixed values (type, status) nor a date read into one.
 */
export const TEXT_FIELDS: readonly string[] = FIELDS.filter(
  (f) => (f.input === 'string' || f.input === 'strings') && !f.values && f.kind !== 'date',
).map((f) => f.key);

export const FIELD_BY_KEY: ReadonlyMap<string, FieldDef> = new Map(FIELDS.map((f) => [f.key, f]));

/** The frontmatter keys this version knows, in the order they are written. */
export const FRONTMATTER_KEYS: readonly string[] = FIELDS.filter((f) => f.frontmatter).map((f) => f.key);

/** Fields `update` may change (in table order). */
export const UPDATABLE: readonly FieldDef[] = FIELDS.filter((f) => f.update);
/** Fields `add` may set. */
export const ADDABLE: readonly FieldDef[] = FIELDS.filter((f) => f.add);
/** Fields every add gives. */
export const ADD_REQUIRED: readonly string[] = FIELDS.filter((f) => f.add === 'required').map((f) => f.key);
/** Fields merged as plain scalars. */
export const SCALAR_FIELDS: readonly string[] = FIELDS.filter((f) => f.merge === 'scalar').map((f) => f.key);
/** Fields merged by the later `at`. */
export const LATER_AT_FIELDS: readonly string[] = FIELDS.filter((f) => f.merge === 'later-at').map(
  (f) => f.key,
);
/** Fields the Conflicts page compares. */
export const COMPARED_FIELDS: readonly string[] = FIELDS.filter((f) => f.compare).map((f) => f.key);
/** Fields the UI's edit form edits, in its order (src/ui/form.ts describes each to the page). */
export const UI_FIELDS: readonly string[] = FIELDS.filter((f) => f.ui).map((f) => f.key);

/**
 * Inputs that are not fields but edits of one (update only): tags added or removed.
 * Their names on every surface (`--add-tag`/`add_tags`).
 */
export const TAG_EDITS = [
  { key: 'add_tags', cli: 'add-tag', help: 'add tags' },
  { key: 'remove_tags', cli: 'remove-tag', help: 'remove tags' },
] as const;

/**
 * A verification's new expiry: a memory that expires gets the same lifetime again, counted
 * from `now` rather than from when it was last verified (or created). Undefined: no expiry.
 */
export function renewedExpiry(
  r: { expires?: string; created: string; verified?: Verified },
  now: Date,
): string | undefined {
  if (!r.expires) return undefined;
  const start = Date.parse(r.verified?.at ?? r.created);
  const end = Date.parse(r.expires);
  if (!Number.isFinite(start) || !Number.isFinite(end)) return r.expires;
  const life = Math.max(0, end - start);
  return new Date(Math.min(now.getTime() + life, Date.parse('9999-12-31T23:59:59.999Z'))).toISOString();
}
