/** Human output: short, aligned, no colour unless a terminal asks for it. */

import type { Catalog } from '../gitstore/catalog.js';
import { TABLE_FIELDS, type Verified } from '../model/fields.js';
import { provenanceText } from '../model/provenance.js';
import type { MemoryRecord, RecordSummary } from '../model/record.js';
import { isFlagged, recordTokens, summaryToJSON } from '../model/record.js';
import { type Colors, plain } from './output.js';

/** How `list` marks a memory someone confirmed still holds (`git mem verify`). */
export const VERIFIED_MARK = '✓ verified';

/** How `list` and `show` mark a record a merge flagged for review, until `git mem resolve` clears it. */
export const CONFLICT_MARK = '⚑ conflict';

/** The table's own fields recordText gives a line of their own above (the rest follow generically). */
const SHOWN_ABOVE = new Set(['confidence', 'author', 'expires', 'verified', 'source']);

/** A place an anchor's code is: a path and its lines. */
type Place = { path?: string; lines?: [number, number] };

export function pad(s: string, n: number): string {
  return s.length >= n ? s : s + ' '.repeat(n - s.length);
}

export function summaryLine(s: RecordSummary, cat?: Catalog, c: Colors = plain): string {
  const id = cat ? cat.abbrev(s.id) : s.id.slice(0, 12);
  const flags =
    (s.status === 'active' ? '' : ` ${c.warn(`[${s.status}]`)}`) +
    (s.verified ? ` ${c.dim(VERIFIED_MARK)}` : '') +
    (s.conflict ? ` ${c.warn(CONFLICT_MARK)}` : '');
  const alias = s.alias ? `  (${s.alias})` : '';
  return `${c.id(id)}  ${pad(s.type, 14)} ${s.title}${alias}${flags}  ${c.dim(`~${s.tokens}t`)}`;
}

/** The stable JSON shape of one summary (an element of `list --json`). */
export const summaryJSON = summaryToJSON;

export function recordText(r: MemoryRecord, cat?: Catalog, c: Colors = plain): string {
  const lines = [`${c.id(cat ? cat.abbrev(r.id) : r.id)}  ${r.type}  ${r.title}`, `id:         ${r.id}`];
  if (r.alias) lines.push(`alias:      ${r.alias}`);
  if (isFlagged(r)) {
    const reasons = (r.extra.conflict as { reasons?: unknown }).reasons;
    // the reasons a merge writes; anything else a remote put there is not echoed
    const known = Array.isArray(reasons)
      ? reasons.filter((x) => ['body', 'delete', 'alias'].includes(x))
      : [];
    const why = known.length ? ` (${known.join(', ')})` : '';
    lines.push(
      `conflict:   ${c.warn(`${CONFLICT_MARK}${why}`)}: git mem conflicts, then git mem resolve ${cat ? cat.abbrev(r.id) : r.id.slice(0, 12)}`,
    );
  }
  lines.push(
    `status:     ${r.status === 'active' ? r.status : c.warn(r.status)}    confidence: ${r.confidence}    tokens: ~${recordTokens(r)}`,
  );
  if (r.tags.length) lines.push(`tags:       ${r.tags.join(', ')}`);
  if (r.scope.length) lines.push(`scope:      ${r.scope.join(', ')}`);
  if (r.author) lines.push(`author:     ${r.author}`);
  if (r.by) lines.push(`by:         ${provenanceText(r.by)}`);
  lines.push(`created:    ${r.created}    updated: ${r.updated}`);
  if (r.expires) lines.push(`expires:    ${r.expires}`);
  if (r.verified) lines.push(`verified:   ${r.verified.at} by ${r.verified.by}`);
  if (r.source) lines.push(`source:     ${r.source}`);
  // any other field the table declares whole (src/model/fields.ts), under its key
  const rec = r as unknown as Record<string, unknown>;
  for (const f of TABLE_FIELDS) {
    const v = rec[f.key];
    if (SHOWN_ABOVE.has(f.key) || v === undefined || v === '') continue;
    const text = f.kind === 'attestation' ? `${(v as Verified).at} by ${(v as Verified).by}` : String(v);
    lines.push(`${pad(`${f.key}:`, 11)} ${text}`);
  }
  for (const [k, v] of Object.entries(r.links)) {
    if (Array.isArray(v) && v.length)
      lines.push(`${pad(`${k}:`, 11)} ${v.map((x) => (cat ? cat.abbrev(String(x)) : x)).join(', ')}`);
  }
  for (const a of r.anchors) {
    const range = a.lines ? `:${a.lines[0]}-${a.lines[1]}` : '';
    const sym = a.symbol ? ` (${a.symbol})` : '';
    const v = (a as { verdict?: { status?: string; to?: Place | null } }).verdict;
    const verdict = v?.status;
    // where the code is now (the last check's place), and where it was when it differs
    const cur = (a as { current?: Place }).current ?? v?.to ?? undefined;
    const now = cur?.path ? `${cur.path}${cur.lines ? `:${cur.lines[0]}-${cur.lines[1]}` : ''}` : '';
    const was = `${a.path}${range}`;
    lines.push(
      now && now !== was
        ? `anchor:     ${now}${sym}${verdict ? `  [${verdict}]` : ''}  was at ${was}`
        : `anchor:     ${was}${sym}${verdict ? `  [${verdict}]` : ''}`,
    );
  }
  lines.push('', r.body.replace(/\n$/, ''));
  return lines.join('\n');
}
