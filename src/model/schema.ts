/**
 * The limits of a record, declared once. Every field a record's frontmatter
 * may hold is checked here, in the form it has on disk (the frontmatter as
 * serializeRecord writes it and the yaml library reads it back), against one
 * table: its type, its length, its count, its range. A local write
 * (`validateRecord`: add, update, import, the MCP tools, the UI) and the sync
 * boundary (`src/merge/validate.ts`: every record a remote, an imported folder
 * or a merge driver brings) call the same function on the same form, so the
 * two cannot disagree; `git mem doctor` calls it on what is already stored.
 *
 * Text fields hold no control characters (C0, DEL, C1: what moves a
 * terminal's cursor, writes its clipboard or hides a line); a body may hold
 * line feeds, tabs and CR LF line ends. Anchors' paths stay inside the
 * repository. Unknown keys (written by a newer version) are not judged.
 * Pure: no git, no file system.
 */
import type { ErrorCode } from '../errors.js';
import { FIELDS, type FieldKind, STATUSES, TYPES } from './fields.js';
import { isId } from './id.js';

export { STATUSES, TYPES };
export type MemoryType = (typeof TYPES)[number];
export type Status = (typeof STATUSES)[number];

export const LIMITS = {
  bodyBytes: 64 * 1024,
  titleChars: 300,
  tags: 64,
  tagChars: 64,
  scopes: 256,
  scopeChars: 1024,
  aliasChars: 200,
  /** source, author, an anchor's symbol, a `by` value */
  textChars: 1024,
  /** entries of one list in `links` */
  links: 1024,
  anchors: 256,
  /** the highest Lamport clock: a safe integer, so +1 is exact */
  clock: Number.MAX_SAFE_INTEGER,
  frontmatterBytes: 256 * 1024,
  yamlAliases: 16,
};

/**
 * The clock after `c`: one more, up to LIMITS.clock (a record a remote set to the
 * limit keeps it, and its merges are ordered by their text: never a clock past
 * a safe integer, which every other clone would refuse).
 */
export function nextClock(c: number): number {
  return c >= LIMITS.clock ? LIMITS.clock : c + 1;
}

export const ALIAS_RE = /^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)*$/;

/** C0 controls, DEL and C1 controls: refused in every one-line text field. */
export const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f]/;
/** What a body may not hold: controls but tab and line feed, and a CR not ending a line. */
const PATH_CONTROL_RE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/;
const BODY_CONTROL_RE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\r(?!\n)/;
/** An ISO 8601 date or date-time, as toISOString and date inputs write it. */
const ISO_DATE_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/** An escape sequence whole: CSI (ESC [ or U+009B), OSC, DCS, PM and APC strings (to BEL or ST), or ESC and one character. */
const ESCAPE_SEQUENCE_RE =
  /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|(?:\u001b[\]PX^_]|[\u009d\u0090\u0098\u009e\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[\s\S]?/g;

/**
 * Text an agent wrote (a session's transcript, a proposal, an LLM's reply) made fit for a record:
 * escape sequences removed whole (terminal colours in a captured command's output), other control
 * characters dropped; a `multiline` text keeps its line feeds and tabs (CR LF becomes LF), a
 * one-line text gets a space for each. A person's input is refused instead (recordFieldProblems).
 */
export function withoutControls(s: string, multiline = true): string {
  const t = s.replace(ESCAPE_SEQUENCE_RE, '');
  return multiline
    ? t.replace(/\r\n/g, '\n').replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '')
    : t.replace(/[\t\n\r]/g, ' ').replace(/[\u0000-\u001f\u007f-\u009f]/g, '');
}

/** One field of a record that breaks its limit. */
export interface FieldProblem {
  /** the frontmatter key (anchors: `anchors[2].current.path`), or `body` */
  field: string;
  /** the code a local write is refused with */
  code: ErrorCode;
  message: string;
  hint?: string;
}

/** "U+001B", for a message naming a control character. */
function charName(s: string, re: RegExp): string {
  const m = re.exec(s);
  const c = m ? (m[0].codePointAt(0) ?? 0) : 0;
  return `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Where an anchor path fails to stay inside the repository, or null. Asked of every anchor a check
 * selects (10,000 at a time): it walks the path once, and quotes it only for a problem found.
 */
export function anchorPathProblem(p: unknown): string | null {
  if (typeof p !== 'string' || p === '') return 'an anchor without a path';
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p) || p.startsWith('\\'))
    return `anchor path ${JSON.stringify(p)} is absolute: anchors are relative to the repository`;
  // a tab is a file name's own (git allows it; a terminal shows it as space): every other control is refused
  if (PATH_CONTROL_RE.test(p)) return `anchor path ${JSON.stringify(p)} holds control characters`;
  // its segments, between / or \: a `..` leaves the repository; an empty one or `.` is not normalised
  let outside = false;
  let odd = false;
  let first = -1;
  for (let i = 0, start = 0; i <= p.length; i++) {
    const c = i < p.length ? p.charCodeAt(i) : SLASH;
    if (c !== SLASH && c !== BACKSLASH) continue;
    if (first < 0) first = i;
    const len = i - start;
    if (len === 0 || (len === 1 && p.charCodeAt(start) === DOT)) odd = true;
    else if (len === 2 && p.charCodeAt(start) === DOT && p.charCodeAt(start + 1) === DOT) outside = true;
    start = i + 1;
  }
  if (outside) return `anchor path ${JSON.stringify(p)} is outside the repository`;
  if (odd) return `anchor path ${JSON.stringify(p)} is not a normalised relative path`;
  if (first === 4 && p.slice(0, 4).toLowerCase() === '.git')
    return `anchor path ${JSON.stringify(p)} points inside .git`;
  if (p.length > 4096) return `anchor path ${JSON.stringify(p).slice(0, 40)}… is over 4096 characters`;
  return null;
}
const SLASH = 47;
const BACKSLASH = 92;
const DOT = 46;

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);

/** Problems of one anchor, its paths (where it was made, where a check last saw it, its verdict's) and lines. */
function anchorProblems(a: unknown, at: string, out: FieldProblem[]): void {
  const bad = (field: string, message: string) => {
    out.push({ field: `${at}${field}`, code: 'E_ANCHOR', message });
  };
  if (!isPlainObject(a)) {
    bad('', 'an anchor that is not a mapping');
    return;
  }
  const path = (field: string, v: unknown) => {
    const p = anchorPathProblem(v);
    if (p) bad(field, p);
  };
  const lines = (field: string, v: unknown) => {
    if (v === undefined || v === null) return;
    if (
      !Array.isArray(v) ||
      v.length !== 2 ||
      !v.every((n) => Number.isSafeInteger(n) && (n as number) >= 1) ||
      (v[0] as number) > (v[1] as number)
    )
      bad(field, `${field.replace(/^\./, '')} are not a range [start, end] of line numbers from 1`);
  };
  path('.path', a.path);
  lines('.lines', a.lines);
  if (a.symbol !== undefined && a.symbol !== null) {
    if (typeof a.symbol !== 'string' || a.symbol.length > LIMITS.textChars || CONTROL_RE.test(a.symbol))
      bad('.symbol', `the symbol is not one line of at most ${LIMITS.textChars} characters`);
  }
  if (a.current !== undefined && a.current !== null) {
    if (!isPlainObject(a.current)) bad('.current', 'current is not a mapping');
    else {
      path('.current.path', a.current.path);
      lines('.current.lines', a.current.lines);
    }
  }
  if (isPlainObject(a.verdict)) {
    const v = a.verdict;
    for (const k of ['from', 'to'] as const)
      if (isPlainObject(v[k])) path(`.verdict.${k}.path`, (v[k] as Record<string, unknown>).path);
    if (Array.isArray(v.candidates))
      v.candidates.forEach((c, i) => {
        if (isPlainObject(c)) path(`.verdict.candidates[${i}].path`, c.path);
      });
  }
}

/** The first problem of one anchor (its paths, lines, symbol), or null. */
export function anchorProblem(a: unknown): string | null {
  const out: FieldProblem[] = [];
  anchorProblems(a, 'anchor', out);
  return out[0]?.message ?? null;
}

/**
 * What is wrong with the value `v` of a field of a generic kind (the table's `kind`), or null.
 * The one place such a value is judged: a local write, an input on any surface (the same value
 * before it is written) and the sync boundary.
 */
export function valueProblem(kind: FieldKind, key: string, v: unknown): FieldProblem | null {
  const bad = (message: string, hint?: string, code: ErrorCode = 'E_INVALID_ARG'): FieldProblem => ({
    field: key,
    code,
    message,
    ...(hint ? { hint } : {}),
  });
  const line = (k: string, x: unknown): FieldProblem | null => {
    if (typeof x !== 'string') return bad(`${k} is not a string`);
    if (x.length > LIMITS.textChars) return bad(`${k} is over ${LIMITS.textChars} characters`);
    if (CONTROL_RE.test(x)) return bad(`${k} holds a control character (${charName(x, CONTROL_RE)})`);
    return null;
  };
  const date = (k: string, x: unknown): FieldProblem | null =>
    typeof x !== 'string' || !ISO_DATE_RE.test(x) || Number.isNaN(Date.parse(x))
      ? bad(
          `invalid ${k === 'expires' ? 'expiry' : `${k} date`} ${JSON.stringify(typeof x === 'string' ? x.slice(0, 40) : (x ?? null))}`,
          'use an ISO date (2026-12-31) or a duration (30d, 12h, 2w)',
        )
      : null;
  switch (kind) {
    case 'unit':
      return typeof v !== 'number' || !(v >= 0 && v <= 1)
        ? bad(`${key} ${String(v).slice(0, 40)} is out of range`, 'use a number between 0 and 1')
        : null;
    case 'line':
      return line(key, v);
    case 'date':
      return date(key, v);
    case 'attestation': {
      if (!isPlainObject(v) || Object.keys(v).length !== 2)
        return bad(`${key} is not a mapping of by and at`, undefined, 'E_INVALID_RECORD');
      return line(`${key}.by`, v.by) ?? date(`${key}.at`, v.at);
    }
    default:
      return null;
  }
}

/**
 * Every field of a record's frontmatter (`fm`, as on disk) and its body that
 * breaks a limit; [] when all fit. Keys this version does not know are not judged.
 */
export function recordFieldProblems(fm: Record<string, unknown>, body: string): FieldProblem[] {
  const out: FieldProblem[] = [];
  const bad = (field: string, code: ErrorCode, message: string, hint?: string) => {
    out.push({ field, code, message, ...(hint ? { hint } : {}) });
  };
  const has = (k: string) => fm[k] !== undefined && fm[k] !== null;
  const date = (k: string, code: ErrorCode, message: string) => {
    const v = fm[k];
    if (typeof v !== 'string' || !ISO_DATE_RE.test(v) || Number.isNaN(Date.parse(v)))
      bad(k, code, `${message} ${JSON.stringify(typeof v === 'string' ? v.slice(0, 40) : (v ?? null))}`);
  };

  if (typeof fm.id !== 'string' || !isId(fm.id))
    bad('id', 'E_INVALID_RECORD', `invalid id ${JSON.stringify(String(fm.id).slice(0, 40))}`);
  if (typeof fm.type !== 'string' || !(TYPES as readonly string[]).includes(fm.type))
    bad(
      'type',
      'E_INVALID_ARG',
      `unknown type "${String(fm.type).slice(0, 40)}"`,
      `use one of: ${TYPES.join(', ')}`,
    );
  if (has('status') && !(STATUSES as readonly unknown[]).includes(fm.status))
    bad(
      'status',
      'E_INVALID_ARG',
      `unknown status "${String(fm.status).slice(0, 40)}"`,
      `use one of: ${STATUSES.join(', ')}`,
    );
  if (typeof fm.title !== 'string' || !fm.title.trim())
    bad('title', 'E_INVALID_ARG', 'a title is required', 'pass --title "…"');
  else if (fm.title.length > LIMITS.titleChars || /[\r\n]/.test(fm.title))
    bad('title', 'E_INVALID_ARG', `title must be one line of at most ${LIMITS.titleChars} characters`);
  else if (CONTROL_RE.test(fm.title))
    bad(
      'title',
      'E_INVALID_ARG',
      `title holds a control character (${charName(fm.title, CONTROL_RE)})`,
      'write it without escape sequences or control characters',
    );
  if (has('alias')) {
    const a = fm.alias;
    if (typeof a !== 'string' || !ALIAS_RE.test(a) || a.length > LIMITS.aliasChars)
      bad(
        'alias',
        'E_INVALID_ARG',
        `invalid alias ${JSON.stringify(String(a).slice(0, 40))}`,
        'use lowercase path segments like standards/ts/eslint (a-z 0-9 . _ -)',
      );
    else if (isId(a.toUpperCase()) || /^[0-9a-z]{26}$/i.test(a))
      bad('alias', 'E_INVALID_ARG', `alias "${a}" looks like an id`, 'choose a path-like alias');
  }
  if (has('tags')) {
    const t = fm.tags;
    if (!Array.isArray(t)) bad('tags', 'E_INVALID_ARG', 'tags are not a list');
    else if (t.length > LIMITS.tags)
      bad('tags', 'E_INVALID_ARG', `too many tags (${t.length})`, `keep at most ${LIMITS.tags}`);
    else {
      const wrong = t.find(
        (x) =>
          typeof x !== 'string' || !x || x.length > LIMITS.tagChars || /[\s,]/.test(x) || CONTROL_RE.test(x),
      );
      if (wrong !== undefined)
        bad(
          'tags',
          'E_INVALID_ARG',
          `invalid tag ${JSON.stringify(String(wrong).slice(0, 80))}`,
          `tags are single words of at most ${LIMITS.tagChars} characters`,
        );
    }
  }
  if (has('scope')) {
    const s = fm.scope;
    if (!Array.isArray(s)) bad('scope', 'E_INVALID_ARG', 'scope is not a list');
    else if (s.length > LIMITS.scopes)
      bad('scope', 'E_INVALID_ARG', `too many scopes (${s.length})`, `keep at most ${LIMITS.scopes}`);
    else {
      const wrong = s.find(
        (x) =>
          typeof x !== 'string' ||
          !x.replace(/^!/, '').trim() ||
          x.length > LIMITS.scopeChars ||
          CONTROL_RE.test(x) ||
          /^!?(\/|~|[A-Za-z]:[\\/])/.test(x) ||
          x.split(/[\\/]/).includes('..'),
      );
      if (wrong !== undefined)
        bad(
          'scope',
          'E_INVALID_ARG',
          `invalid scope ${JSON.stringify(String(wrong).slice(0, 80))}`,
          'scopes are globs relative to the repository root, e.g. src/db/**',
        );
    }
  }
  if (isPlainObject(fm.by)) {
    for (const [k, v] of Object.entries(fm.by))
      if (typeof v === 'string' && (v.length > LIMITS.textChars || CONTROL_RE.test(v)))
        bad(`by.${k}`, 'E_INVALID_ARG', `by.${k} is not one line of at most ${LIMITS.textChars} characters`);
  }
  date('created', 'E_INVALID_RECORD', 'invalid creation date');
  if (has('updated')) date('updated', 'E_INVALID_RECORD', 'invalid update date');
  // the fields the table (src/model/fields.ts) gives a generic kind: checked by their kind
  for (const f of FIELDS) {
    if (f.kind !== 'own' && has(f.key)) {
      const p = valueProblem(f.kind, f.key, fm[f.key]);
      if (p) out.push(p);
    }
  }
  if (has('clock')) {
    const c = fm.clock;
    if (typeof c !== 'number' || !Number.isSafeInteger(c) || c < 0)
      bad(
        'clock',
        'E_INVALID_RECORD',
        `clock ${String(c).slice(0, 40)} is not a whole number from 0 to ${LIMITS.clock}`,
      );
  }
  if (has('links')) {
    if (!isPlainObject(fm.links)) bad('links', 'E_INVALID_RECORD', 'links are not a mapping');
    else
      for (const [k, v] of Object.entries(fm.links)) {
        if (!Array.isArray(v)) continue;
        if (
          v.length > LIMITS.links ||
          v.some((x) => typeof x !== 'string' || x.length > LIMITS.textChars || CONTROL_RE.test(x))
        )
          bad(
            `links.${k}`,
            'E_INVALID_RECORD',
            `links.${k} is not a list of at most ${LIMITS.links} one-line references`,
          );
      }
  }
  if (has('anchors')) {
    const a = fm.anchors;
    if (!Array.isArray(a)) bad('anchors', 'E_ANCHOR', 'anchors are not a list');
    else if (a.length > LIMITS.anchors)
      bad('anchors', 'E_INVALID_ARG', `too many anchors (${a.length})`, `keep at most ${LIMITS.anchors}`);
    else
      a.forEach((x, i) => {
        anchorProblems(x, `anchors[${i}]`, out);
      });
  }
  const bp = bodyProblem(body);
  if (bp) out.push(bp);
  return out;
}

/** What is wrong with a record's body (its size, binary content, control characters), or null. */
export function bodyProblem(body: string): FieldProblem | null {
  const out: FieldProblem[] = [];
  const bad = (field: string, code: ErrorCode, message: string, hint?: string) => {
    out.push({ field, code, message, ...(hint ? { hint } : {}) });
  };
  const size = Buffer.byteLength(body, 'utf8');
  if (size > LIMITS.bodyBytes)
    bad(
      'body',
      'E_TOO_LARGE',
      `body is ${size} bytes, over the ${LIMITS.bodyBytes}-byte limit`,
      'split it into several memories or link to a file',
    );
  else if (body.includes('\u0000') || /\uFFFD{4,}/.test(body))
    bad(
      'body',
      'E_BINARY',
      'content looks binary (NUL or control bytes)',
      'store text only; reference binaries by path',
    );
  else if (BODY_CONTROL_RE.test(body))
    bad(
      'body',
      'E_INVALID_ARG',
      `body holds a control character (${charName(body, BODY_CONTROL_RE)})`,
      'store text only: no escape sequences or control characters but tabs and line ends',
    );
  return out[0] ?? null;
}
