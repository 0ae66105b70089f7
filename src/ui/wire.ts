/**
 * The wire contract of `git mem ui`: the JSON shapes of the UI's HTTP API
 * (src/ui/api.ts), declared once and shared by the server (src/ui, which
 * checks that what it returns is exactly these) and the page (web/, which
 * reads them with `import type`). Type-only: interfaces and type aliases, no
 * runtime code, and imports only src/model/json.ts and fields.ts (both import-free), so it
 * compiles in both projects (Node's, and web/tsconfig.json's DOM without Node
 * types). A change on one side that the
 * other does not follow fails `npm run typecheck`, which `npm test` runs.
 *
 * Each route's answer is named beside it. A few fields are `unknown` because
 * the server passes on what a record's frontmatter holds unchecked (a
 * proposal's method, a session's agent): the page must not assume their type.
 */
import type { TableFieldsJSON, TableKind } from '../model/fields.js';
import type { LogEntry as CommitEntry, SessionRow, StoreStats } from '../model/json.js';

export type { SessionRow, StoreStats };

// ------------------------------------------------------------------ shared pieces

/** Which store a memory is in: the repository's, or the personal global one. */
export type StoreName = 'project' | 'global';

/** A range of lines, 1-based, both ends included. */
export type Lines = [number, number];

/** Who wrote something: a person, or an agent (src/model/provenance.ts). */
export interface Provenance {
  kind: 'person' | 'agent';
  /** the agent's name */
  agent?: string;
  /** the agent's session id, when it said */
  session?: string;
  /** the model, when the agent said */
  model?: string;
}

/** One row of a line diff (src/ui/diff.ts). */
export interface DiffRow {
  /** ' ' kept, '-' only in the old text, '+' only in the new, '…' lines left out */
  op: ' ' | '-' | '+' | '…';
  /** 1-based line numbers on each side (absent on the side the line is not on) */
  old?: number;
  new?: number;
  text: string;
}

/** A window of a file's text (around an anchor, or its start). */
export interface CodeView {
  path: string;
  blob: string;
  commit: string | null;
  /** first line shown, 1-based */
  from: number;
  lines: string[];
  /** the anchored range within what is shown (absolute line numbers), null for a whole file */
  mark: Lines | null;
  truncated: boolean;
}

/** A record's links (supersedes, superseded_by, related, and any other kind kept as written). */
export interface Links {
  supersedes: string[];
  superseded_by: string[];
  related: string[];
  [kind: string]: unknown;
}

/** An anchor as the record stores it (path, lines, symbol, and what anchoring and checks wrote). */
export interface RecordAnchor {
  path: string;
  lines?: Lines;
  symbol?: string;
  [field: string]: unknown;
}

/** What a record's summary and the record in full begin with. */
export interface RecordHead {
  id: string;
  alias: string | null;
  type: string;
  title: string;
  status: string;
  tags: string[];
  scope: string[];
  confidence: number;
  /** a merge flagged it for review and no resolve has cleared it (src/model/record.ts isFlagged) */
  conflict?: true;
}

/**
 * One record in full, as `git mem show --json` gives it (recordToJSON): the fields the table
 * declares whole (confidence, source, author, expires, verified …) typed from their rows.
 */
export interface RecordJson extends RecordHead, TableFieldsJSON {
  by: Provenance | null;
  created: string;
  updated: string;
  clock: number;
  links: Links;
  anchors: RecordAnchor[];
  tokens: number;
  body: string;
  /** frontmatter fields this version of git-mem does not know */
  extra: Record<string, unknown>;
}

/** A signature on a memory commit, as git verified it (null: not verified). */
export interface Signature {
  status: 'good' | 'untrusted' | 'bad' | 'expired' | 'expired-key' | 'revoked-key' | 'unverifiable' | 'none';
  /** git's %G? letter */
  code: string;
  signer: string | null;
  key: string | null;
}

/** A commit on the memory ref, with what made it (its trailers) and its signature. */
export interface LogEntry extends CommitEntry {
  /** the git-mem operation (null: a commit made before git-mem wrote trailers) */
  operation: string | null;
  ids: string[];
  by: Provenance | null;
  signature: Signature | null;
}

/** The body of every failed request (HTTP 4xx/5xx): GitMemError's JSON. */
export interface ErrorAnswer {
  error: { code: string; message: string; hint?: string; [field: string]: unknown };
}

// ------------------------------------------------------------------ GET /api/info

export interface Info {
  /** the repository's folder name */
  repo: string;
  root: string;
  ref: string;
  tip: string | null;
  workTree: boolean;
  global: boolean;
  /** memories: the curated ones (not pending proposals, not session summaries), as the Memories page lists them */
  counts: { memories: number; pending: number; stale: number };
  types: readonly string[];
  statuses: readonly string[];
  sorts: readonly string[];
  /** the edit form's fields, in the field table's order (src/ui/form.ts) */
  form: readonly FormField[];
  /** the fields the Conflicts page compares, in the field table's order */
  compared: readonly string[];
  /** the fields a memory's page lists by kind, every one the table declares whole, in its order */
  shown: readonly ShownField[];
}

/** A field a memory's page lists (src/ui/form.ts): its value's kind says how it reads. */
export interface ShownField {
  key: string;
  kind: TableKind;
}

/**
 * One field of the edit form, as the field table declares it (src/model/fields.ts): the page
 * renders a control for each and sends what changed (the update operation reads it).
 */
export interface FormField {
  /** the field's key: the control's name and the key of the JSON the form sends */
  key: string;
  label: string;
  /** one line: the control's hint */
  help: string;
  /** text, a number, or a list (typed comma-separated, sent as an array) */
  input: 'string' | 'number' | 'strings';
  /** the only values it may take (a select), else null */
  values: readonly string[] | null;
  minimum: number | null;
  maximum: number | null;
  /** an emptied control clears it (sent as ""); else it must hold a value */
  clears: boolean;
  /** text of many lines, Markdown (the body) */
  markdown: boolean;
}

// GET /api/conflicts/count: a number

// ------------------------------------------------------------------ GET /api/memories, /api/tags

/** A record's summary, as `git mem list --json` gives it (summaryToJSON). */
export interface MemorySummary extends RecordHead {
  created: string;
  updated: string;
  expires: string | null;
  /** when someone last confirmed it (only on a verified record) */
  verified?: string;
  tokens: number;
  /** the paths it is anchored to */
  anchors: string[];
}

export interface MemoryItem extends MemorySummary {
  store: StoreName;
  /** a search hit's score and why it matched (searches only) */
  score?: number;
  why?: string;
}

/** What a record is to a reader (src/commands/list.ts kindOf): a curated memory, a pending proposal, a session summary. */
export type RecordKind = 'memories' | 'pending' | 'sessions';

export interface MemoryList {
  /** how many the main list holds (over all its pages) */
  total: number;
  /** the kinds the main list holds; null: every kind (a type or status was asked for, as `git mem list` does) */
  kinds: RecordKind[] | null;
  /** how many of each kind match the query and the other filters */
  counts: Record<RecordKind, number>;
  /**
   * when no kind, type or status was asked for: the first pending proposals and session summaries
   * that match, in the list's order, shown apart from the curated memories (empty otherwise)
   */
  apart: MemoryItem[];
  /** the search stopped at its cap: there may be more */
  capped: boolean;
  page: number;
  size: number;
  sort: string;
  order: 'asc' | 'desc';
  /** the store as it was at a revision (`at`), else null */
  at: { ref: string; commit: string } | null;
  items: MemoryItem[];
}

/** A tag and how many memories carry it (GET /api/tags answers a list, most used first). */
export type TagCount = [tag: string, count: number];

// ------------------------------------------------------------------ GET /api/memory/:ref

/** A place in the code a check followed an anchor to. */
export interface CodeLoc {
  path: string;
  lines?: Lines;
  /** for symbol verdicts: the symbol's (new) qualified name */
  symbol?: string;
}

export interface AnchorVerdict {
  status: string;
  reason: string;
  /** the code commit checked against */
  commit: string;
  to: CodeLoc | null;
  checked: string;
}

export interface AnchorView {
  index: number;
  path: string;
  lines: Lines | null;
  symbol: string | null;
  commit: string | null;
  blob: string | null;
  current: { path: string; lines: Lines | null; commit: string } | null;
  verdict: AnchorVerdict | null;
  stale: boolean;
}

export interface MemoryLink {
  kind: string;
  id: string;
  /** null when the linked memory is gone */
  title: string | null;
  status: string | null;
}

export interface MemoryView {
  store: StoreName;
  /** the commit it is shown at, null for now */
  at: string | null;
  record: RecordJson;
  abbrev: string;
  staleReasons: string[];
  anchors: AnchorView[];
  links: MemoryLink[];
  conflict: boolean;
  canReanchor: boolean;
}

/** POST /api/memory/:ref (an edit). */
export interface UpdateAnswer {
  record: RecordJson;
  /** the fields that changed */
  changed: string[];
  commit: string | null;
  /** likely secrets stored because secret-scan is warn, one line each */
  warnings?: string[];
}

/** GET /api/memory/:ref/anchor/:index: one anchor's code then and now, and the change between. */
export interface AnchorCode {
  index: number;
  anchor: AnchorView;
  anchored: CodeView | null;
  head: CodeView | null;
  diff: DiffRow[] | null;
  diffTo: { blob: string | null; commit: string | null } | null;
}

/** POST /api/memory/:ref/reanchor. */
export interface ReanchorAnswer {
  record: RecordJson;
  commit: string | null;
  dropped: string[];
  notes: string[];
}

// ------------------------------------------------------------------ history

/** GET /api/log answers LogEntry[]; GET /api/at: */
export interface AtAnswer {
  rev: string;
  commit: string;
  date: string | null;
  subject: string | null;
}

export interface Version extends LogEntry {
  /** the record is gone at this commit (a tombstone took its place) */
  deleted: boolean;
  /** the record as it was at this commit, null when deleted or unreadable */
  record: RecordJson | null;
}

/** GET /api/memory/:ref/history */
export interface MemoryHistory {
  id: string;
  versions: Version[];
}

/** GET /api/memory/:ref/diff */
export interface VersionDiff {
  id: string;
  from: string;
  to: string;
  rows: DiffRow[];
}

// ------------------------------------------------------------------ review

/** GET /api/review answers Proposal[]. */
export interface Proposal {
  id: string;
  type: string;
  title: string;
  body: string;
  tags: string[];
  confidence: number;
  source: string | null;
  created: string;
  /** as the proposal's frontmatter holds them (text when an agent of git-mem wrote it) */
  method: unknown;
  session: unknown;
  evidence: unknown;
  /** a consolidation: what approving it does, to which memories, and why */
  consolidate?: { kind: string; ids: unknown; reason: unknown };
}

/** POST /api/review/:ref/approve */
export interface ApproveAnswer {
  id: string;
  status: string;
  title: string;
}

/** POST /api/review/:ref/reject */
export interface RejectAnswer {
  id: string;
  title: string;
}

// ------------------------------------------------------------------ conflicts

/** Another version of a flagged memory, kept in the attic. */
/** Who wrote one side of a conflict: the author of the last commit that changed the record on that side. */
export interface ConflictAuthor {
  name: string;
  email: string;
  /** the commit's author date, ISO 8601 */
  date: string;
  commit: string;
}

export interface ConflictOther {
  hash: string;
  reason: string | null;
  /** the commit of the side this version came from, as the merge named it */
  from: string | null;
  /** who wrote this version (null: git cannot tell) */
  author: ConflictAuthor | null;
  /** the fields in which it differs from the kept version */
  fields: string[];
  /** null when it cannot be read */
  record: RecordJson | null;
  /** the kept body against this one's */
  body: DiffRow[];
}

/** GET /api/conflicts answers Conflict[]. */
export interface Conflict {
  id: string;
  title: string;
  reasons: string[];
  lostAlias: string | null;
  /** the deletion that lost against a change */
  deletion: Record<string, unknown> | null;
  ours: RecordJson;
  /** who wrote the kept version (null: git cannot tell) */
  oursAuthor: ConflictAuthor | null;
  others: ConflictOther[];
}

/** POST /api/conflicts/:ref/resolve */
export interface ResolveAnswer {
  id: string;
  action: 'kept' | 'took-attic' | 'deleted' | 'content';
  commit: string | null;
  removedAttic: string[];
}

// ------------------------------------------------------------------ code

export interface CodeFolder {
  name: string;
  path: string;
  files: number;
  /** files with at least one memory */
  covered: number;
  /** distinct memories anchored or scoped under it */
  memories: number;
}

export interface CodeFileEntry {
  name: string;
  path: string;
  anchored: number;
  scoped: number;
  rules: number;
}

/** GET /api/code/tree: one folder ('' = the root). */
export interface CodeTree {
  head: string | null;
  dir: string;
  files: number;
  folders: CodeFolder[];
  entries: CodeFileEntry[];
}

/** A memory anchored to the file, as `git mem blame` judges it at HEAD. */
export interface FileMemory {
  store: 'project';
  id: string;
  title: string;
  type: string;
  status: string;
  /** who added it (null before git-mem kept it) */
  by: Provenance | null;
  anchors: Array<{ lines: Lines | null; symbol: string | null; verdict: string }>;
}

interface FileRuleBase {
  id: string;
  alias: string | null;
  title: string;
  /** cut at 4000 characters */
  body: string;
  scope: string[];
  /** the glob that matched the file, null for a rule without scope (it applies everywhere) */
  matched: string | null;
}

/** A rule in force for the file: the project's (as blame gives them) or the personal store's (as rulesFor does). */
export type FileRule =
  | (FileRuleBase & {
      origin: 'project';
      author: string | null;
      by: Provenance | null;
      created: string;
      updated: string;
    })
  | (FileRuleBase & { origin: 'global'; store: string; specificity: number });

/** A memory (not a rule) scoped to the file by its globs. */
export interface ScopedMemory {
  store: StoreName;
  id: string;
  title: string;
  type: string;
  status: string;
  scope: string[];
}

/** GET /api/code/file */
export interface FilePanel {
  head: string | null;
  path: string;
  exists: boolean;
  binary: boolean;
  size: number;
  /** null when binary, too large or not a file */
  text: string | null;
  anchored: FileMemory[];
  rules: FileRule[];
  scoped: ScopedMemory[];
}

// ------------------------------------------------------------------ sessions, overview

// GET /api/sessions answers SessionRow[] (src/model/json.ts): the session fields as the summary's frontmatter holds them

/** GET /api/overview */
export interface Overview {
  /** what `git mem stats` counts */
  stats: StoreStats;
  byMonth: Array<{ month: string; byType: Record<string, number> }>;
  overTime: Array<{ date: string; commit: string; byStatus: Record<string, number> }>;
  stale: { stale: number; anchored: number; share: number };
  code: { head: string | null; files: number; covered: number };
  folders: Array<{ path: string; files: number; covered: number; memories: number }>;
}

// ------------------------------------------------------------------ checks (the server's)

/**
 * `Is<Conforms<S, W>>` compiles only when S, a shape the server builds or takes from another
 * module, is assignable to the wire type W and has no field, at any depth, that W does not
 * declare: a field added on the server and not here fails like one removed.
 */
export type Is<T extends true> = T;
export type Conforms<S extends W, W> = [Undeclared<S, W>] extends [never]
  ? true
  : { undeclared: Undeclared<S, W> };

/** The names of the fields of S (deeply) that W does not declare; never when none. */
type Undeclared<S, W> = unknown extends W
  ? never
  : S extends readonly (infer E)[]
    ? Undeclared<E, ElementOf<W>>
    : S extends object
      ? { [K in keyof S]-?: K extends KeysOf<W> ? Undeclared<S[K], ValueAt<W, K>> : K }[keyof S]
      : never;
type ElementOf<W> = W extends readonly (infer E)[] ? E : never;
type KeysOf<W> = W extends object ? keyof W : never;
type ValueAt<W, K> = W extends object ? (K extends keyof W ? W[K] : never) : never;
