/**
 * The search view of a record: metadata for filtering and ranking plus term
 * frequencies per field, so candidates are scored without re-reading or
 * re-tokenising their text. Pure.
 */
import { createHash } from 'node:crypto';
import type { MemoryRecord, MemoryType, Status } from '../model/record.js';
import { recordTokens } from '../model/record.js';
import { normalizePath, terms } from './text.js';

export type TermFreq = Record<string, number>;

export interface SearchDoc {
  id: string;
  alias?: string;
  type: MemoryType;
  status: Status;
  title: string;
  tags: string[];
  scope: string[];
  /** anchored paths, normalised */
  paths: string[];
  confidence: number;
  created: string;
  updated: string;
  expires?: string;
  tokens: number;
  /** superseded_by links exist (treated like status superseded) */
  superseded: boolean;
  /** term frequencies: title, body, tags(+alias) */
  tf: [TermFreq, TermFreq, TermFreq];
  /** field lengths in terms: title, body, tags */
  len: [number, number, number];
  /** content hash of the embedded text (vector cache key) */
  hash: string;
  /** blob id of the record file this was built from */
  oid?: string;
}

function countTerms(text: string): { tf: TermFreq; n: number } {
  const tf: TermFreq = Object.create(null);
  const ts = terms(text);
  for (const t of ts) tf[t] = (tf[t] ?? 0) + 1;
  return { tf, n: ts.length };
}

/** Text embedded for a record's vector: title, tags and body. */
export function embedText(r: Pick<MemoryRecord, 'title' | 'body' | 'tags'>): string {
  return `${r.title}\n${r.tags.join(' ')}\n${r.body}`.slice(0, 4000);
}

/** Same key as the vector cache of src/search/embed (sha-256 of the text, 32 hex characters). */
export function contentHash(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex').slice(0, 32);
}

export function docFromRecord(r: MemoryRecord, oid?: string): SearchDoc {
  const t = countTerms(r.title);
  const b = countTerms(r.body);
  const g = countTerms(`${r.tags.join(' ')} ${r.alias ?? ''}`);
  const d: SearchDoc = {
    id: r.id,
    type: r.type,
    status: r.status,
    title: r.title,
    tags: r.tags,
    scope: r.scope,
    paths: [...new Set(r.anchors.map((a) => normalizePath(String(a.path ?? ''))).filter(Boolean))],
    confidence: r.confidence,
    created: r.created,
    updated: r.updated,
    tokens: recordTokens(r),
    superseded: Array.isArray(r.links?.superseded_by) && r.links.superseded_by.length > 0,
    tf: [t.tf, b.tf, g.tf],
    len: [t.n, b.n, g.n],
    hash: contentHash(embedText(r)),
  };
  if (oid) d.oid = oid;
  if (r.alias) d.alias = r.alias;
  if (r.expires) d.expires = r.expires;
  return d;
}
