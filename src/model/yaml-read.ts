/**
 * Reading a record file: its frontmatter split from its body, the one-line fields read
 * directly and the block part in the shapes the yaml library writes, anything else by the
 * library. Pure. Split from src/model/record.ts.
 */
import { LIMITS } from './schema.js';
import { parseDocument } from './yaml.js';
import { MAX_BLOCK_DEPTH, NUMBER, PLAIN_SAFE, SPECIAL } from './yaml-write.js';

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
