/**
 * The views of a record: its summary (what `list` and the catalog keep) and the stable JSON
 * shapes of `list --json` and `show --json`. Pure. Split from src/model/record.ts.
 */
import type { Anchor, MemoryRecord, MemoryType, Status } from './record.js';
import { recordTokens } from './record.js';

/** A compact view for listings and caches (no body). */
export interface RecordSummary {
  id: string;
  alias?: string;
  type: MemoryType;
  title: string;
  status: Status;
  tags: string[];
  scope: string[];
  confidence: number;
  created: string;
  updated: string;
  expires?: string;
  /** when someone last confirmed it (`git mem verify`) */
  verified?: string;
  tokens: number;
  anchors: string[];
  /** A merge flagged it for review (`git mem conflicts`) and no `git mem resolve` has cleared it. */
  conflict?: true;
}

/**
 * Whether a merge flagged a record for review (its `conflict:` frontmatter key,
 * src/merge/engine.ts) and no `git mem resolve` has cleared it. What `list`,
 * `show` and the UI mark. Pure.
 */
export function isFlagged(r: Pick<MemoryRecord, 'extra'>): boolean {
  const v = r.extra.conflict;
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/**
 * Where an anchor's code is, as the record last confirmed it: the path a check on the default
 * branch moved it to (`current`), else where it was made. What "memories about this file" means.
 */
export function anchorPathNow(a: Anchor): string {
  const now = (a.current as { path?: unknown } | null | undefined)?.path;
  return typeof now === 'string' && now ? now : a.path;
}

export function summarize(r: MemoryRecord): RecordSummary {
  const s: RecordSummary = {
    id: r.id,
    type: r.type,
    title: r.title,
    status: r.status,
    tags: r.tags,
    scope: r.scope,
    confidence: r.confidence,
    created: r.created,
    updated: r.updated,
    tokens: recordTokens(r),
    anchors: [...new Set(r.anchors.map(anchorPathNow))],
  };
  if (r.alias) s.alias = r.alias;
  if (r.expires) s.expires = r.expires;
  if (r.verified) s.verified = r.verified.at;
  if (isFlagged(r)) s.conflict = true;
  return s;
}

/** The stable JSON shape of one summary (an element of `list --json`). */
export function summaryToJSON(s: RecordSummary) {
  return {
    id: s.id,
    alias: s.alias ?? null,
    type: s.type,
    title: s.title,
    status: s.status,
    tags: s.tags,
    scope: s.scope,
    confidence: s.confidence,
    created: s.created,
    updated: s.updated,
    expires: s.expires ?? null,
    tokens: s.tokens,
    anchors: s.anchors,
    // only on a verified record: every other summary keeps its shape (and the catalog cache its bytes)
    ...(s.verified ? { verified: s.verified } : {}),
    // only on a flagged record: every other summary keeps its shape
    ...(s.conflict ? { conflict: true as const } : {}),
  };
}

/** The stable JSON shape of one record (`show --json`). */
export function recordToJSON(r: MemoryRecord) {
  return {
    id: r.id,
    alias: r.alias ?? null,
    type: r.type,
    title: r.title,
    status: r.status,
    tags: r.tags,
    scope: r.scope,
    confidence: r.confidence,
    source: r.source ?? null,
    author: r.author ?? null,
    by: r.by ?? null,
    created: r.created,
    updated: r.updated,
    expires: r.expires ?? null,
    verified: r.verified ?? null,
    clock: r.clock,
    links: r.links,
    anchors: r.anchors,
    tokens: recordTokens(r),
    body: r.body,
    extra: r.extra,
    ...(isFlagged(r) ? { conflict: true as const } : {}),
  };
}
