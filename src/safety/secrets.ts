/**
 * Secret scanning for every text headed for refs/memory (which is pushed to
 * shared remotes). `scanSecrets` finds likely secrets in one text; `scanRecord`
 * walks every field of a record (tags, scope, alias, anchors, unknown keys and
 * their names included). Two policies on top: human input is refused
 * (`assertRecordClean`), agent text is redacted (`redactText`, `redactRecord`).
 */
import { err } from '../errors.js';
import { scanAssignments } from './secret-assign.js';
import { RULES, type Rule } from './secret-rules.js';

export { entropy } from './secret-words.js';

export interface SecretFinding {
  kind: string;
  line: number;
  column: number;
  /** The match with most of it masked, for messages. */
  preview: string;
  /** The secret part of the match (what redaction replaces), as offsets into the text. */
  start: number;
  end: number;
}

/** What redaction leaves in place of a secret. */
export const REDACTED = '[REDACTED]';

/** Line and column of offsets in one text: the line starts found once, then a binary search each. */
function positions(text: string): (index: number) => { line: number; column: number } {
  let starts: number[] | undefined;
  return (index) => {
    if (!starts) {
      starts = [0];
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
    }
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= index) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: index - starts[lo] + 1 };
  };
}

function mask(s: string): string {
  if (s.length <= 8) return '****';
  return `${s.slice(0, 4)}…${'*'.repeat(4)}`;
}

function hinted(text: string, hint: Rule['hint']): boolean {
  if (hint === undefined) return true;
  if (typeof hint === 'string') return text.includes(hint);
  if (Array.isArray(hint)) return hint.some((h) => text.includes(h));
  return hint.test(text);
}

/** Likely secrets in one text, in text order (one finding where several rules see the same secret). */
export function scanSecrets(text: string): SecretFinding[] {
  if (!text) return [];
  const found: Array<{ kind: string; at: number; start: number; end: number; match?: string }> = [];
  for (const rule of RULES) {
    if (!hinted(text, rule.hint)) continue;
    rule.re.lastIndex = 0;
    for (let m = rule.re.exec(text); m; m = rule.re.exec(text)) {
      if (m[0] === '') {
        rule.re.lastIndex++;
        continue;
      }
      let at = m.index;
      if (rule.back) {
        const b = rule.back.exec(text.slice(Math.max(0, at - 64), at));
        if (!b) continue;
        at -= b[0].length;
      }
      if (rule.before && at > 0 && rule.before.test(text[at - 1])) continue;
      if (rule.lead && at > 0 && !rule.lead.test(text[at - 1])) continue;
      const group = Array.isArray(rule.group) ? rule.group.find((g) => m?.[g] !== undefined) : rule.group;
      const value = group ? (m[group] ?? '') : text.slice(at, m.index + m[0].length);
      if (!value || (rule.check && !rule.check(value, m))) continue;
      const start = group ? m.index + m[0].lastIndexOf(value) : at;
      found.push({
        kind: rule.kind,
        at,
        start,
        end: start + value.length,
        match: text.slice(at, m.index + m[0].length),
      });
    }
  }
  scanAssignments(text, found);
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: SecretFinding[] = [];
  const position = positions(text);
  let covered = -1;
  for (const f of found) {
    if (f.end <= covered) continue; // the same secret, seen by another rule
    covered = Math.max(covered, f.end);
    const { line, column } = position(f.at);
    out.push({
      kind: f.kind,
      line,
      column,
      preview: mask(f.match ?? text.slice(f.at, f.end)),
      start: f.start,
      end: f.end,
    });
  }
  return out;
}

/**
 * The text with every likely secret replaced by [REDACTED], the rest kept
 * (`postgres://admin:[REDACTED]@db`). Agent text is redacted, never refused.
 */
export function redactText(text: string): string {
  let out = text;
  for (let pass = 0; pass < 3; pass++) {
    const findings = scanSecrets(out);
    if (!findings.length) return out;
    let next = '';
    let at = 0;
    for (const f of findings) {
      if (f.end <= at) continue; // inside a span already replaced
      next += out.slice(at, Math.max(at, f.start)) + REDACTED;
      at = f.end;
    }
    out = next + out.slice(at);
  }
  // still flagged after three passes (pathological input): withhold the lines
  const lines = new Set(scanSecrets(out).map((f) => f.line));
  return out
    .split('\n')
    .map((l, i) => (lines.has(i + 1) ? REDACTED : l))
    .join('\n');
}

// ------------------------------------------------------------------ records

export interface RecordFinding extends SecretFinding {
  /** The field as the user wrote it: title, body, tags, anchors[0].path, an unknown key… */
  field: string;
  /** The secret is in a field's name, not its value. */
  inKey?: boolean;
}

const TOP_LEVEL_OBJECTS = new Set(['extra']);

function walk(
  value: unknown,
  field: string,
  visit: (text: string, field: string, inKey: boolean) => void,
  depth: number,
): void {
  if (depth > 32) return;
  if (typeof value === 'string') visit(value, field, false);
  else if (Array.isArray(value)) {
    value.forEach((v, i) => {
      walk(v, v !== null && typeof v === 'object' ? `${field}[${i}]` : field, visit, depth + 1);
    });
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      visit(k, field, true); // a key is reported by where it is, never by itself
      walk(v, field ? `${field}.${k}` : k, visit, depth + 1);
    }
  }
}

/** The record's fields, with `extra` (unknown keys) flattened as they are in the file. */
function fieldsOf(r: object, only?: readonly string[]): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [k, v] of Object.entries(r)) {
    if (only && !only.includes(k)) continue;
    if (TOP_LEVEL_OBJECTS.has(k) && v && typeof v === 'object' && !Array.isArray(v))
      for (const [ek, ev] of Object.entries(v as Record<string, unknown>)) out.push([ek, ev]);
    else out.push([k, v]);
  }
  return out;
}

/**
 * Likely secrets in every field of a record: title, body, source, author,
 * alias, tags, scope, anchors, links and unknown keys (names and values).
 * `only` limits the scan to some top-level fields (an update's changed ones).
 */
export function scanRecord(r: object, only?: readonly string[]): RecordFinding[] {
  const out: RecordFinding[] = [];
  for (const [name, value] of fieldsOf(r, only)) {
    const top = (text: string, field: string, inKey: boolean) => {
      for (const f of scanSecrets(text)) out.push({ ...f, field, inKey: inKey || undefined });
    };
    top(name, '', true);
    walk(value, name, top, 0);
  }
  return out;
}

/** One line for a finding: the kind, the field and (in multi-line text) the position. */
function describeFinding(f: RecordFinding, multiline = true): string {
  const where = f.inKey ? `the name of a field${f.field ? ` in ${f.field}` : ''}` : f.field;
  const pos = multiline ? ` at line ${f.line}, column ${f.column}` : '';
  return `${f.kind} in ${where}${pos} (${f.preview})`;
}

/**
 * Refuses a record holding a likely secret anywhere (human input: add,
 * update, import, MCP). Throws E_SECRET naming the field; the store is not
 * touched because callers check before they write.
 */
export function assertRecordClean(r: object, opts: { allow?: boolean; only?: readonly string[] } = {}): void {
  if (opts.allow) return;
  const f = scanRecord(r, opts.only)[0];
  if (!f) return;
  const multiline = f.field === 'body' || f.line > 1;
  throw err(
    'E_SECRET',
    `refusing to store a likely secret: ${describeFinding(f, multiline)}`,
    'remove it, or pass --allow-secret if it is not a secret',
    // inKey: the secret is the name of a field (in `field`, '' at the top), not a value
    { kind: f.kind, field: f.field, line: f.line, column: f.column, ...(f.inKey ? { inKey: true } : {}) },
  );
}

function redactDeep(v: unknown, depth: number): unknown {
  if (typeof v === 'string') return redactText(v);
  if (depth > 32 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => redactDeep(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>))
    out[redactText(k)] = redactDeep(x, depth + 1);
  return out;
}

/** A copy of a record (or any value) with every likely secret in every field redacted (agent text). */
export function redactRecord<T>(r: T): T {
  return redactDeep(r, 0) as T;
}

/** Throws E_SECRET for the first finding, naming its kind and position. */
export function assertNoSecrets(fields: Record<string, string | undefined>, allow = false): void {
  if (allow) return;
  for (const [field, text] of Object.entries(fields)) {
    if (!text) continue;
    const f = scanSecrets(text)[0];
    if (f) {
      throw err(
        'E_SECRET',
        `refusing to store a likely secret: ${f.kind} in ${field} at line ${f.line}, column ${f.column} (${f.preview})`,
        'remove it, or pass --allow-secret if it is not a secret',
        { kind: f.kind, field, line: f.line, column: f.column },
      );
    }
  }
}
