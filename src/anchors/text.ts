/**
 * Pure text helpers for anchors: line splitting, the two hashes of an anchored
 * range, context lines and the 4 KiB text cap. No git, no file system.
 */
import { createHash } from 'node:crypto';

const TEXT_CAP = 4096;
export const CONTEXT_LINES = 3;

/** Splits file content into lines (no trailing empty line for a final newline; CRLF tolerated). */
export function splitLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) if (lines[i].endsWith('\r')) lines[i] = lines[i].slice(0, -1);
  return lines;
}

/** The whitespace `\s` matches beyond ASCII's (no-break spaces, the U+2000 block, line separators, BOM). */
const WIDE_SPACE = /[\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]/;

/**
 * A text without any whitespace, as UTF-8: what `text.replace(/\s+/g, '')` gives, encoded. A
 * whitespace-insensitive match of one text in another implies the first's squeezed form is in the
 * second's (a substring of UTF-8 is one of the string). Texts with only ASCII whitespace (nearly
 * all source) are squeezed byte by byte, about four times faster than the regular expression.
 */
export function squeezeWhitespace(text: string): Buffer {
  if (WIDE_SPACE.test(text)) return Buffer.from(text.replace(/\s+/g, ''));
  const b = Buffer.from(text);
  let j = 0;
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c === 32 || (c >= 9 && c <= 13)) continue;
    b[j++] = c;
  }
  return b.subarray(0, j);
}

/** One line with leading/trailing whitespace removed and inner runs collapsed. */
export function normLine(line: string): string {
  return line.trim().replace(/\s+/g, ' ');
}

/** sha256 hex, shortened to 32 characters (128 bits: enough to gate, short in YAML). */
export function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}

/** Hash of the whitespace-normalised lines (indentation and spacing ignored, line breaks kept). */
export function hashLines(lines: readonly string[]): string {
  return sha(lines.map(normLine).join('\n'));
}

/** Hash ignoring all whitespace, line breaks included (survives reflowing). */
export function wsHash(lines: readonly string[]): string {
  return sha(lines.join('').replace(/\s+/g, ''));
}

/** Text of a range capped at TEXT_CAP bytes (cut at a line boundary when possible). */
export function capText(lines: readonly string[]): { text: string; truncated: boolean } {
  const full = lines.join('\n');
  if (Buffer.byteLength(full, 'utf8') <= TEXT_CAP) return { text: full, truncated: false };
  let out = '';
  for (const l of lines) {
    const next = out ? `${out}\n${l}` : l;
    if (Buffer.byteLength(next, 'utf8') > TEXT_CAP) break;
    out = next;
  }
  if (!out)
    out = Buffer.from(full, 'utf8')
      .subarray(0, TEXT_CAP)
      .toString('utf8')
      .replace(/\uFFFD$/, '');
  return { text: out, truncated: true };
}

/** Up to n lines before start and after end (1-based inclusive range). */
export function contextOf(lines: readonly string[], start: number, end: number, n = CONTEXT_LINES) {
  return {
    before: lines.slice(Math.max(0, start - 1 - n), start - 1),
    after: lines.slice(end, end + n),
  };
}

/** git's blob id of some content (sha1 of "blob <len>\0<content>"). */
export function blobId(content: Buffer | string): string {
  const buf = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  return createHash('sha1').update(`blob ${buf.length}\0`).update(buf).digest('hex');
}

/** Share of tokens of a that survive in b (0..1), for confidence of a `changed` verdict. */
export function tokenOverlap(a: string, b: string): number {
  const ta = a.split(/\W+/).filter(Boolean);
  if (!ta.length) return a.trim() === b.trim() ? 1 : 0;
  const tb = new Map<string, number>();
  for (const t of b.split(/\W+/)) if (t) tb.set(t, (tb.get(t) ?? 0) + 1);
  let hit = 0;
  for (const t of ta) {
    const n = tb.get(t) ?? 0;
    if (n > 0) {
      hit++;
      tb.set(t, n - 1);
    }
  }
  return hit / ta.length;
}

// ---------------------------------------------------------------- significant indentation

/**
 * Languages whose indentation is meaning (blocks by offside rule, recipes by tab, nesting by
 * indent): there a change of a line's leading whitespace is an edit, not reformatting. By file
 * extension; files known by their whole name in INDENT_NAMES.
 */
export const INDENT_EXTENSIONS: Readonly<Record<string, string>> = {
  py: 'Python',
  pyi: 'Python',
  pyw: 'Python',
  pyx: 'Cython',
  pxd: 'Cython',
  bzl: 'Starlark',
  star: 'Starlark',
  yml: 'YAML',
  yaml: 'YAML',
  mk: 'Makefile',
  mak: 'Makefile',
  hs: 'Haskell',
  lhs: 'Haskell',
  fs: 'F#',
  fsi: 'F#',
  fsx: 'F#',
  nim: 'Nim',
  nims: 'Nim',
  nimble: 'Nim',
  coffee: 'CoffeeScript',
  litcoffee: 'CoffeeScript',
  pug: 'Pug',
  jade: 'Pug',
  sass: 'Sass',
  styl: 'Stylus',
  slim: 'Slim',
  haml: 'Haml',
  elm: 'Elm',
  purs: 'PureScript',
  idr: 'Idris',
  gd: 'GDScript',
  mojo: 'Mojo',
  rst: 'reStructuredText',
};

export const INDENT_NAMES: Readonly<Record<string, string>> = {
  makefile: 'Makefile',
  gnumakefile: 'Makefile',
  snakefile: 'Python',
  sconstruct: 'Python',
  sconscript: 'Python',
  build: 'Starlark',
  'build.bazel': 'Starlark',
  workspace: 'Starlark',
  'workspace.bazel': 'Starlark',
};

/** The language whose indentation is significant for this path, or undefined (whitespace is layout). */
export function indentLanguage(path: string): string | undefined {
  const name = (path.split('/').pop() ?? '').toLowerCase();
  if (INDENT_NAMES[name]) return INDENT_NAMES[name];
  const dot = name.lastIndexOf('.');
  return dot > 0 ? INDENT_EXTENSIONS[name.slice(dot + 1)] : undefined;
}

/** Leading whitespace of a line (blank lines have none: their indentation means nothing). */
export function indentOf(line: string): string {
  return line.trim() ? /^[ \t]*/.exec(line)![0] : '';
}

/** Whether two runs of lines indent every line alike. */
export function sameIndentation(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (indentOf(a[i]) !== indentOf(b[i])) return false;
  return true;
}

// ---------------------------------------------------------------- raw string literals

/**
 * Delimiters of string literals that keep their whitespace verbatim and may span lines (Go's
 * raw strings, JavaScript's template literals, triple-quoted text blocks, Rust's raw strings).
 * Inside them a whitespace change is an edit; elsewhere in these languages it is layout.
 */
export type RawSyntax = 'backtick' | 'triple' | 'rust';

const RAW_EXTENSIONS: Readonly<Record<string, RawSyntax>> = {
  go: 'backtick',
  js: 'backtick',
  mjs: 'backtick',
  cjs: 'backtick',
  jsx: 'backtick',
  ts: 'backtick',
  mts: 'backtick',
  cts: 'backtick',
  tsx: 'backtick',
  vue: 'backtick',
  svelte: 'backtick',
  kt: 'triple',
  kts: 'triple',
  scala: 'triple',
  swift: 'triple',
  java: 'triple',
  groovy: 'triple',
  dart: 'triple',
  cs: 'triple',
  jl: 'triple',
  rs: 'rust',
};

/** The raw-literal syntax of this path's language, or undefined (no multi-line verbatim literals known). */
export function rawSyntax(path: string): RawSyntax | undefined {
  const name = (path.split('/').pop() ?? '').toLowerCase();
  const dot = name.lastIndexOf('.');
  return dot > 0 ? RAW_EXTENSIONS[name.slice(dot + 1)] : undefined;
}

/**
 * The contents of the raw literals in these lines, in order (a literal still open at the end runs
 * to the end). A lexer's approximation: delimiters are found without parsing comments or other
 * strings, which errs towards calling a whitespace change an edit.
 */
export function rawLiterals(lines: readonly string[], syntax: RawSyntax): string[] {
  const text = lines.join('\n');
  const opener = syntax === 'backtick' ? /`/g : syntax === 'triple' ? /"""|'''/g : /\br(#*)"/g;
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    opener.lastIndex = i;
    const open = opener.exec(text);
    if (!open) break;
    const close = syntax === 'rust' ? `"${open[1]}` : open[0];
    const from = open.index + open[0].length;
    let end = text.indexOf(close, from);
    // in a template literal a backslash-escaped backtick does not close it
    while (syntax === 'backtick' && end > 0 && text[end - 1] === '\\') end = text.indexOf(close, end + 1);
    if (end < 0) {
      out.push(text.slice(from));
      break;
    }
    out.push(text.slice(from, end));
    i = end + close.length;
  }
  return out;
}

/** Whether two runs of lines hold the same raw literals, whitespace included. */
export function sameRawLiterals(a: readonly string[], b: readonly string[], syntax: RawSyntax): boolean {
  const x = rawLiterals(a, syntax);
  const y = rawLiterals(b, syntax);
  return x.length === y.length && x.every((s, i) => s === y[i]);
}

// ---------------------------------------------------------------- information

/** Words that say little about which code a line is (keywords and literals of common languages). */
const NOISE_WORDS = new Set(
  (
    'end begin do done then fi esac elif else elsif if endif endfor endwhile endfunction return ' +
    'pass break continue try catch except finally raise throw throws new def fn func function var let ' +
    'const class struct enum interface public private protected static final void int bool boolean ' +
    'string true false null nil none self this super import from export default async await yield ' +
    'in of is not and or for while switch case type module package use using namespace extern'
  ).split(' '),
);

/** How much of the anchored text can tell it apart: characters of its distinct non-keyword words. */
export function informationOf(lines: readonly string[]): number {
  const words = new Set<string>();
  for (const l of lines)
    for (const w of l.match(/[A-Za-z_$][A-Za-z0-9_$]*|\d{2,}/g) ?? [])
      if (!NOISE_WORDS.has(w.toLowerCase())) words.add(w);
  let n = 0;
  for (const w of words) n += w.length;
  return n;
}

/** Below this, an anchor's own text cannot identify it (a lone `"""`, a run of `}`, `end`). */
export const MIN_INFORMATION = 6;

/** A line that can identify a place: at least 3 word characters that are not all keywords. */
export function distinctiveLine(line: string): boolean {
  return normLine(line).replace(/[^A-Za-z0-9_]/g, '').length >= 3;
}
