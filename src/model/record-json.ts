/**
 * The views of a record: its summary (what `list` and the catalog keep) and the stable JSON
 * shapes of `list --json` and `show --json`. Pure. Split from src/model/record.ts.
 */

import { FIELDS, type TableFieldsJSON } from './fields.js';
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

/** The stable JSON shape of one record (`show --json`), as the UI's wire (RecordJson) types it. */
export interface RecordJSON extends TableFieldsJSON {
  id: string;
  type: MemoryType;
  title: string;
  alias: string | null;
  status: Status;
  tags: string[];
  scope: string[];
  by: NonNullable<MemoryRecord['by']> | null;
  created: string;
  updated: string;
  clock: number;
  links: MemoryRecord['links'];
  anchors: Anchor[];
  body: string;
  tokens: number;
  /** frontmatter fields this version of git-mem does not know */
  extra: Record<string, unknown>;
  conflict?: true;
}

/**
 * The stable JSON shape of one record (`show --json`): every field of the table
 * (src/model/fields.ts) under its key, in table order, an absent one as null; then the token
 * count, the unknown keys (`extra`) and the review flag.
 */
export function recordToJSON(r: MemoryRecord): RecordJSON {
  const rec = r as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of FIELDS) out[f.key] = rec[f.key] ?? null;
  out.tokens = recordTokens(r);
  out.extra = r.extra;
  if (isFlagged(r)) out.conflict = true;
  return out as unknown as RecordJSON;
}
