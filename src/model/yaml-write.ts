/**
 * Writing a record's frontmatter: values of one line as `key: scalar` or `key: [flow, list]`,
 * the block part (anchors, nested maps) in exactly the bytes the yaml library writes (see
 * below), or undefined where the library must write it. Pure. Split from src/model/record.ts.
 */
/*
 * The frontmatter format. Values that fit on one line (strings, numbers,
 * booleans, lists of strings) are written as `key: scalar` or
 * `key: [flow, list]`, strings plain only when YAML cannot misread them and
 * JSON-quoted otherwise (a JSON string is a YAML double-quoted scalar); the
 * rest (anchors, nested maps) is written by the yaml library. Everything is
 * read back by the yaml library.
 */

export const PLAIN_SAFE = /^[A-Za-z_/][A-Za-z0-9_./@+-]*(?: [A-Za-z0-9_./@+()-]+)*$/;
export const SPECIAL = /^(?:true|false|yes|no|on|off|null|~|y|n|\.nan|\.inf|[-+]?\.inf)$/i;
export const NUMBER = /^[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$|^0x[0-9a-fA-F]+$|^0o[0-7]+$/;

/** A string as a one-line YAML scalar: plain when that cannot be misread, else JSON-quoted. */
export function yamlScalar(s: string, inFlow = false): string {
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
export function isOneLine(v: unknown): boolean {
  if (typeof v === 'string')
    return !/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\u2028\u2029\ufeff]/.test(v);
  if (typeof v === 'number') return Number.isFinite(v);
  if (typeof v === 'boolean') return true;
  if (Array.isArray(v)) return v.every((x) => typeof x === 'string' && isOneLine(x));
  return false;
}

export function oneLine(name: string, v: unknown): string {
  // a key is written like a value: unquoted, `[x]` or `? k` would be read as a collection, `False` as false
  const key = yamlScalar(name);
  if (typeof v === 'string') return `${key}: ${yamlScalar(v)}`;
  if (Array.isArray(v)) return `${key}: ${yamlFlowList(v as string[])}`;
  return `${key}: ${String(v)}`;
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
/** the deepest nesting the direct writer and reader handle (deeper: the library's) */
export const MAX_BLOCK_DEPTH = 16;

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
