/**
 * The search view of a record: metadata for filtering and ranking plus term
 * frequencies per field, so candidates are scored without re-reading or
 * re-tokenising their text. Pure.
 */
import { createHash } from 'node:crypto';
import type { MemoryRecord, MemoryType, Status } from '../model/record.js';
import { anchorPathNow, recordTokens } from '../model/record.js';
import { normalizePath, terms } from './text.js';

/**
 * A record's terms with their counts per field (title, body, tags+alias), packed:
 * the distinct terms sorted (strings shared through the index's intern table)
 * and three counts per term in one small typed array. A plain object per field
 * cost about 6 KB per record (dictionary-mode objects); this is about a tenth.
 */
export class TermCounts {
  /** distinct terms, sorted by code unit */
  readonly t: string[];
  /** counts: title, body, tags of t[i] at 3i, 3i+1, 3i+2 */
  readonly c: Uint8Array | Uint16Array;

  constructor(t: string[], c: ArrayLike<number>) {
    this.t = t;
    let max = 0;
    for (let i = 0; i < c.length; i++) if (c[i] > max) max = c[i];
    this.c = max < 256 ? Uint8Array.from(c) : Uint16Array.from(c, (x) => Math.min(x, 65535));
  }

  /** From per-field term lists (one entry per occurrence). */
  static of(fields: readonly [string[], string[], string[]]): TermCounts {
    // each distinct term's slot in order of first sight, its three counts at 3·slot (no array per term:
    // this runs for every record of an index build)
    const slot = new Map<string, number>();
    const seen: string[] = [];
    const n: number[] = [];
    for (let f = 0; f < 3; f++) {
      const ts = fields[f];
      for (let i = 0; i < ts.length; i++) {
        const t = ts[i];
        let k = slot.get(t);
        if (k === undefined) {
          k = seen.length;
          slot.set(t, k);
          seen.push(t);
          n.push(0, 0, 0);
        }
        n[3 * k + f]++;
      }
    }
    const t = seen.sort();
    const c: number[] = new Array(t.length * 3);
    for (let i = 0; i < t.length; i++) {
      const k = 3 * slot.get(t[i])!;
      c[3 * i] = n[k];
      c[3 * i + 1] = n[k + 1];
      c[3 * i + 2] = n[k + 2];
    }
    return new TermCounts(t, c);
  }

  /** Position of a term, or -1. */
  indexOf(term: string): number {
    const t = this.t;
    let lo = 0;
    let hi = t.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const x = t[mid];
      if (x === term) return mid;
      if (x < term) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Count of a term in field f (0 title, 1 body, 2 tags). */
  get(f: number, term: string): number {
    const i = this.indexOf(term);
    return i < 0 ? 0 : this.c[3 * i + f];
  }

  /** Terms present in field f, in sorted order. */
  keys(f: number): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.t.length; i++) if (this.c[3 * i + f]) out.push(this.t[i]);
    return out;
  }
}

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
  /** when someone last confirmed it still holds (`git mem verify`) */
  verified?: string;
  tokens: number;
  /** superseded_by links exist (treated like status superseded) */
  superseded: boolean;
  /** term frequencies per field: title, body, tags(+alias) */
  tf: TermCounts;
  /** field lengths in terms: title, body, tags */
  len: [number, number, number];
  /** content hash of the embedded text (vector cache key) */
  hash: string;
  /** blob id of the record file this was built from */
  oid?: string;
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
  const t = terms(r.title);
  const b = terms(r.body);
  const g = terms(`${r.tags.join(' ')} ${r.alias ?? ''}`);
  const d: SearchDoc = {
    id: r.id,
    type: r.type,
    status: r.status,
    title: r.title,
    tags: r.tags,
    scope: r.scope,
    paths: [...new Set(r.anchors.map((a) => normalizePath(String(anchorPathNow(a) ?? ''))).filter(Boolean))],
    confidence: r.confidence,
    created: r.created,
    updated: r.updated,
    tokens: recordTokens(r),
    superseded: Array.isArray(r.links?.superseded_by) && r.links.superseded_by.length > 0,
    tf: TermCounts.of([t, b, g]),
    len: [t.length, b.length, g.length],
    hash: contentHash(embedText(r)),
  };
  if (oid) d.oid = oid;
  if (r.alias) d.alias = r.alias;
  if (r.expires) d.expires = r.expires;
  if (r.verified) d.verified = r.verified.at;
  return d;
}
