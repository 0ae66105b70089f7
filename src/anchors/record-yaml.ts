/**
 * serializeRecord for records with anchors, without the yaml library.
 *
 * serializeRecord writes one-line values itself and hands the rest (the
 * anchors: lists of maps holding code lines) to `yaml`, whose load and first
 * calls cost ~20 ms in a one-shot process — most of what the post-commit hook
 * spent writing ten records. This file writes the same bytes for the shapes
 * anchors have: block maps and sequences of strings, numbers, booleans and
 * null, following the yaml library's own choices (src/…/stringifyString.js of
 * yaml 2: plain when that reads back as the same string, else single- or
 * double-quoted, multi-line text as a literal block). Anything outside that
 * (control characters, trailing blanks in a block, nested lists, odd keys, a
 * record whose other values need the library too) returns serializeRecord's
 * output, so the result is always byte-identical; test/anchors-hook-fast.test.ts
 * compares the two on generated and real anchors.
 */
import { isSimple, parseSimpleYaml } from '../model/fastyaml.js';
import {
  type Anchor,
  KNOWN_KEYS,
  LIMITS,
  type MemoryRecord,
  parseRecord,
  serializeRecord,
} from '../model/record.js';

class Unsupported extends Error {}
const UNSUPPORTED = new Unsupported();

/** Strings the library double-quotes with escapes (control characters, lone surrogates). */
const FORCED_DOUBLE = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u{D800}-\u{DFFF}]/u;
/** Strings that cannot be written plain (the library's test, verbatim). */
const NOT_PLAIN = /^[\n\t ,[\]{}#&*!|>'"%@`]|^[?-]$|^[?-][ \t]|[\n:][ \t]|[ \t]\n|[\n\t ]#|[\n\t :]$/;
/** Plain scalars the core schema would read as something else than a string. */
const CORE_TAGS = [
  /^(?:~|[Nn]ull|NULL)?$/,
  /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
  /^0o[0-7]+$/,
  /^[-+]?[0-9]+$/,
  /^0x[0-9a-fA-F]+$/,
  /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/,
  /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/,
];
const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

function quoted(v: string): string {
  // one line, no forced escapes: double quotes are JSON's; single quotes when that avoids escaping
  if (v.includes('"') && !v.includes("'")) return `'${v}'`;
  return JSON.stringify(v);
}

/** A string value; `indent`: where the lines of a block scalar go. */
function str(v: string, indent: string, inSeq: boolean): string {
  if (FORCED_DOUBLE.test(v)) throw UNSUPPORTED;
  if (!v.includes('\n')) {
    if (NOT_PLAIN.test(v) || CORE_TAGS.some((t) => t.test(v))) return quoted(v);
    return v;
  }
  // multi-line: a literal block scalar
  if (inSeq || /\n[\t ]+$/.test(v) || v.startsWith('\n')) throw UNSUPPORTED;
  let end = v.length;
  while (end > 0 && (v[end - 1] === '\n' || v[end - 1] === '\t' || v[end - 1] === ' ')) end--;
  const tail = v.slice(end);
  if (tail !== '' && tail !== '\n') throw UNSUPPORTED;
  let body = v.slice(0, end);
  let i = 0;
  while (body[i] === ' ') i++;
  if (body[i] === '\n') throw UNSUPPORTED; // leading blank line
  const header = `${i > 0 ? '2' : ''}${tail === '' ? '-' : ''}`;
  body = body.replace(/\n+/g, `$&${indent}`);
  return `|${header}\n${indent}${body}`;
}

function scalar(v: unknown, indent: string, inSeq: boolean): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return str(v, indent, inSeq);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw UNSUPPORTED;
    return Object.is(v, -0) ? '-0' : JSON.stringify(v);
  }
  throw UNSUPPORTED;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

function mapBlock(m: Record<string, unknown>, indent: string, out: string[]): void {
  for (const [k, v] of Object.entries(m)) {
    if (v === undefined) continue;
    if (!KEY.test(k) || CORE_TAGS.some((t) => t.test(k))) throw UNSUPPORTED;
    if (Array.isArray(v)) {
      if (!v.length) out.push(`${indent}${k}: []\n`);
      else {
        out.push(`${indent}${k}:\n`);
        seqBlock(v, `${indent}  `, out);
      }
    } else if (isMap(v)) {
      if (!Object.values(v).some((x) => x !== undefined)) out.push(`${indent}${k}: {}\n`);
      else {
        out.push(`${indent}${k}:\n`);
        mapBlock(v, `${indent}  `, out);
      }
    } else out.push(`${indent}${k}: ${scalar(v, `${indent}  `, false)}\n`);
  }
}

function seqBlock(xs: readonly unknown[], indent: string, out: string[]): void {
  for (const x of xs) {
    if (x === undefined || Array.isArray(x)) throw UNSUPPORTED;
    if (isMap(x)) {
      const inner: string[] = [];
      mapBlock(x, `${indent}  `, inner);
      if (!inner.length) out.push(`${indent}- {}\n`);
      else {
        inner[0] = `${indent}- ${inner[0].slice(indent.length + 2)}`;
        out.push(...inner);
      }
    } else out.push(`${indent}- ${scalar(x, `${indent}  `, true)}\n`);
  }
}

/** The `anchors:` block as the yaml library writes it, or undefined when it is not sure to. */
export function anchorsYaml(anchors: readonly unknown[]): string | undefined {
  try {
    const out: string[] = ['anchors:\n'];
    seqBlock(anchors, '  ', out);
    return out.join('');
  } catch (e) {
    if (e instanceof Unsupported) return undefined;
    throw e;
  }
}

/** serializeRecord(r), byte for byte; without the yaml library when the record allows it. */
export function serializeRecordFast(r: MemoryRecord): string {
  if (!r.anchors.length) return serializeRecord(r);
  // every other value must take serializeRecord's one-line path, so the anchors are its only yaml part
  const others: unknown[] = [
    r.id,
    r.type,
    r.title,
    r.status,
    r.tags,
    r.confidence,
    r.created,
    r.updated,
    r.clock,
  ];
  for (const v of [r.alias, r.source, r.author, r.expires]) if (v) others.push(v);
  if (r.scope.length) others.push(r.scope);
  for (const [k, v] of Object.entries(r.extra)) {
    if (!(KNOWN_KEYS as readonly string[]).includes(k) && v !== undefined) others.push(v);
  }
  if (!others.every(isSimple)) return serializeRecord(r);
  for (const v of Object.values(r.links))
    if (Array.isArray(v) ? v.length : v != null) return serializeRecord(r);
  const block = anchorsYaml(r.anchors);
  if (block === undefined) return serializeRecord(r);
  const head = serializeRecord({ ...r, anchors: [] });
  // the closing fence: one-line values hold no newline, so it is the first "\n---\n"
  const at = head.indexOf('\n---\n');
  if (!head.startsWith('---\n') || at < 0) return serializeRecord(r);
  return `${head.slice(0, at + 1)}${block}${head.slice(at + 1)}`;
}

// ---------------------------------------------------------------- reading

/**
 * Reads the block values anchorsYaml writes. Deliberately naive (no comments,
 * no flow collections but [] and {}, no anchors or tags): the caller checks the
 * result by writing it again and comparing bytes, and anything that does not
 * come back identical is left to the yaml library.
 */
class Reader {
  i = 0;
  constructor(readonly lines: readonly string[]) {}

  private scalar(raw: string, indent: string): unknown {
    if (raw === 'null') return null;
    if (raw === 'true') return true;
    if (raw === 'false') return false;
    if (raw === '[]') return [];
    if (raw === '{}') return {};
    if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(raw)) return Number(raw);
    if (raw.startsWith('"')) return JSON.parse(raw) as string;
    if (raw.startsWith("'")) {
      if (!raw.endsWith("'") || raw.length < 2) throw UNSUPPORTED;
      return raw.slice(1, -1).replace(/''/g, "'");
    }
    const block = /^\|(2?)(-?)$/.exec(raw);
    if (block) {
      // literal block: the following lines indented by `indent`; blank lines carry no indent
      const body: string[] = [];
      while (this.i < this.lines.length) {
        const l = this.lines[this.i];
        if (l === '') body.push('');
        else if (l.startsWith(indent)) body.push(l.slice(indent.length));
        else break;
        this.i++;
      }
      if (!body.length || body[body.length - 1] === '') throw UNSUPPORTED;
      return body.join('\n') + (block[2] ? '' : '\n');
    }
    return raw;
  }

  /** A value after "key:" (rest: what followed the colon on its line). */
  private value(rest: string, indent: string): unknown {
    if (rest !== '') return this.scalar(rest.slice(1), `${indent}  `);
    const next = this.lines[this.i] ?? '';
    if (next.startsWith(`${indent}  - `)) return this.seq(`${indent}  `);
    if (next.startsWith(`${indent}  `)) return this.map(`${indent}  `);
    throw UNSUPPORTED;
  }

  map(indent: string, first?: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    let line = first;
    for (;;) {
      if (line === undefined) {
        const l = this.lines[this.i];
        if (l === undefined || !l.startsWith(indent) || l[indent.length] === ' ' || l[indent.length] === '-')
          break;
        line = l.slice(indent.length);
        this.i++;
      }
      const m = /^([A-Za-z_][A-Za-z0-9_]*):( [\s\S]*)?$/.exec(line); // [\s\S]: "." stops at U+2028
      if (!m || m[1] in out) throw UNSUPPORTED;
      out[m[1]] = this.value(m[2] ?? '', indent);
      line = undefined;
    }
    return out;
  }

  seq(indent: string): unknown[] {
    const out: unknown[] = [];
    while (this.lines[this.i]?.startsWith(`${indent}- `)) {
      const item = this.lines[this.i++].slice(indent.length + 2);
      if (/^[A-Za-z_][A-Za-z0-9_]*:(?: |$)/.test(item)) out.push(this.map(`${indent}  `, item));
      else out.push(this.scalar(item, `${indent}  `));
    }
    return out;
  }
}

/** The anchors of an `anchors:` block (its lines, the key line first), when anchorsYaml writes exactly these bytes back. */
export function readAnchorsYaml(block: string): unknown[] | undefined {
  try {
    const lines = block.split('\n');
    if (lines[0] !== 'anchors:' || lines.pop() !== '') return undefined;
    const r = new Reader(lines);
    r.i = 1;
    const anchors = r.seq('  ');
    if (r.i !== lines.length || !anchors.length) return undefined;
    return anchorsYaml(anchors) === block ? anchors : undefined;
  } catch {
    return undefined;
  }
}

/**
 * parseRecord(text), without the yaml library for a record whose only nested
 * value is an anchors block this file reads back exactly (the rest is one-line
 * values, read by the fast parser): the same record, else parseRecord's answer.
 */
export function parseRecordFast(text: string, path?: string): MemoryRecord {
  const slow = () => parseRecord(text, path);
  if (!text.startsWith('---\n')) return slow();
  const end = text.indexOf('\n---\n', 3);
  if (end < 0) return slow();
  const fm = text.slice(4, end + 1);
  if (Buffer.byteLength(fm) > LIMITS.frontmatterBytes) return slow();
  const at = fm.startsWith('anchors:\n') ? 0 : fm.indexOf('\nanchors:\n') + 1;
  if (at <= 0 && !fm.startsWith('anchors:\n')) return slow();
  // the block runs to the next line that starts at the margin
  const after = /\n[^ \n]/.exec(fm.slice(at + 'anchors:\n'.length - 1));
  const blockEnd = after ? at + 'anchors:\n'.length - 1 + after.index + 1 : fm.length;
  const anchors = readAnchorsYaml(fm.slice(at, blockEnd));
  if (!anchors) return slow();
  const rest = fm.slice(0, at) + fm.slice(blockEnd);
  if (!parseSimpleYaml(rest)) return slow();
  const r = parseRecord(`---\n${rest}${text.slice(end + 1)}`, path);
  r.anchors = anchors.filter(
    (a) => a && typeof a === 'object' && typeof (a as Anchor).path === 'string',
  ) as Anchor[];
  return r;
}
