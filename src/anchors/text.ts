/**
 * Pure text helpers for anchors: line splitting, the two hashes of an anchored
 * range, context lines and the 4 KiB text cap. No git, no file system.
 */
import { createHash } from 'node:crypto';

const TEXT_CAP = 4096;
const CONTEXT_LINES = 3;

/** Splits file content into lines (no trailing empty line for a final newline; CRLF tolerated). */
export function splitLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) if (lines[i].endsWith('\r')) lines[i] = lines[i].slice(0, -1);
  return lines;
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
