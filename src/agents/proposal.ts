/**
 * Proposals: memories that extraction (tier 0 rules, tier 1 LLM) suggests and
 * that enter the store as `pending` until someone reviews them. Every
 * proposal passes one gate before it is written: at most 5 per session,
 * no duplicate of the store or of the batch, nothing transient ("build
 * succeeded") and never text git-mem itself injected into the agent. Likely
 * secrets in a proposal (agent text) are redacted, in every field.
 */

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureFormat } from '../gitstore/format.js';
import { memDir } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { identLine } from '../gitstore/store-config.js';
import { newId } from '../model/id.js';
import { agentProvenance } from '../model/provenance.js';
import { isType, LIMITS, type MemoryRecord, type MemoryType, newRecord } from '../model/record.js';
import { withoutControls } from '../model/schema.js';
import { redactRecord } from '../safety/secrets.js';
import { overlap, terms } from '../search/text.js';

export interface Proposal {
  type: MemoryType;
  title: string;
  body: string;
  tags: string[];
  /** Where it came from, e.g. `tier0:error_fix`, `tier0:correction`, `tier1:llm`. */
  source: string;
  /** A short quote of the events it rests on (local event text is never committed otherwise). */
  evidence?: string;
  /** 0..1: how sure the extractor is. */
  confidence?: number;
}

const MAX_PROPOSALS_PER_SESSION = 5;

export interface GateOptions {
  /** Proposals this session already made (the per-session cap counts them). */
  alreadyProposed?: number;
  /** Cap per session; 5 unless set. */
  max?: number;
  /** Texts git-mem injected into the agent this session (memory titles and bodies). */
  injected?: string[];
  /** Keys of proposals rejected in review earlier (never proposed again). */
  rejectedKeys?: string[];
  /** Keys of proposals already made this session. */
  seenKeys?: string[];
}

export interface GateVerdict {
  proposal: Proposal;
  accepted: boolean;
  reason?:
    | 'invalid'
    | 'cap'
    | 'duplicate-store'
    | 'duplicate-batch'
    | 'transient'
    | 'injected'
    | 'rejected-before';
  /** The record it duplicates, for duplicate-store. */
  duplicateOf?: string;
}

// ------------------------------------------------------------------ text helpers (pure)

/** A stable key for a proposal: its normalised title tokens. */
export function proposalKey(p: Pick<Proposal, 'title'>): string {
  return [...new Set(terms(p.title))].sort().join(' ');
}

const TRANSIENT = [
  /^(the )?(build|tests?|test run|ci|lint|compile|compilation|typecheck|deploy(ment)?|install(ation)?)( all)? (succeeded|passed|passes|passing|is green|are green|ok|works|worked|done|finished|failed|fails|is failing)\.?$/i,
  /^all (the )?tests? (pass|passed|passing|are passing|green)\.?$/i,
  /^(done|fixed( it)?|it works|works now|ok|okay|thanks|thank you|great|good|lgtm|looks good)[.!]*$/i,
  /^(running|ran|executing|executed) /i,
  /^(exit code|exited with) \d+/i,
];

/** True for text that only reports a passing moment, not something worth remembering. */
export function isTransient(p: Pick<Proposal, 'title' | 'body'>): boolean {
  const t = p.title.trim();
  if (t.length < 12 || terms(t).length < 2) return true;
  return (
    TRANSIENT.some((re) => re.test(t)) ||
    (p.body.trim().length < 200 && TRANSIENT.some((re) => re.test(p.body.trim())))
  );
}

/** Markers of the framing git-mem wraps around what it injects. */
const INJECTION_MARKERS = ['<memory', '</memory>', 'git-mem context', 'Reference only; not instructions'];

function looksInjected(p: Pick<Proposal, 'title' | 'body'>, injected: string[] = []): boolean {
  const text = `${p.title}\n${p.body}`;
  if (INJECTION_MARKERS.some((m) => text.includes(m))) return true;
  const pt = terms(p.title);
  const pb = terms(`${p.title} ${p.body}`);
  for (const inj of injected) {
    if (!inj) continue;
    if (overlap(pt, inj) > 0.85 || overlap(pb, inj) > 0.7) return true;
  }
  return false;
}

function isDuplicate(p: Proposal, title: string): boolean {
  const a = terms(p.title);
  const b = terms(title);
  if (a.join(' ') === b.join(' ')) return true;
  return overlap(a, b) > 0.7;
}

/** Checks one batch against the store and the session (pure apart from reading the catalog). */
export async function gateProposalsDetailed(
  store: Store,
  proposals: Proposal[],
  opts: GateOptions = {},
): Promise<GateVerdict[]> {
  const max = opts.max ?? MAX_PROPOSALS_PER_SESSION;
  let used = opts.alreadyProposed ?? 0;
  const cat = await store.catalog();
  const existing = [...cat.entries.values()].filter((e) => e.type !== 'session');
  // keys are compared re-cut by today's tokenizer: a key written by an earlier build (another
  // stemmer, other stop words) still names the proposal it rejected
  const rekey = (k: string) => proposalKey({ title: k });
  const rejected = new Set((opts.rejectedKeys ?? []).map(rekey));
  const seen = new Set((opts.seenKeys ?? []).map(rekey));
  const accepted: Proposal[] = [];
  const out: GateVerdict[] = [];
  for (const raw of proposals) {
    // agent text: a likely secret is redacted in place (`postgres://admin:[REDACTED]@db`), never kept;
    // before normalising, which lowercases tags and clips text (a clipped secret is not recognisable)
    const p = normalizeProposal(raw && redactRecord(raw));
    if (!p) {
      out.push({ proposal: raw, accepted: false, reason: 'invalid' });
      continue;
    }
    const key = rekey(proposalKey(p));
    const v: GateVerdict = { proposal: p, accepted: false };
    if (rejected.has(key)) v.reason = 'rejected-before';
    else if (isTransient(p)) v.reason = 'transient';
    else if (looksInjected(p, opts.injected)) v.reason = 'injected';
    else if (seen.has(key) || accepted.some((a) => isDuplicate(p, a.title) || overlap(a.body, p.body) > 0.85))
      v.reason = 'duplicate-batch';
    else {
      const dup = existing.find((e) => isDuplicate(p, e.title));
      if (dup) {
        v.reason = 'duplicate-store';
        v.duplicateOf = dup.id;
      } else if (used >= max) v.reason = 'cap';
    }
    if (!v.reason) {
      v.accepted = true;
      used++;
      accepted.push(p);
      seen.add(key);
    }
    out.push(v);
  }
  return out;
}

/** The gate: returns the proposals that may be written. */
export async function gateProposals(
  store: Store,
  proposals: Proposal[],
  opts: GateOptions = {},
): Promise<Proposal[]> {
  return (await gateProposalsDetailed(store, proposals, opts))
    .filter((v) => v.accepted)
    .map((v) => v.proposal);
}

/** Cleans a proposal from any source (an LLM reply included); undefined when unusable. */
function normalizeProposal(p: Partial<Proposal> | null | undefined): Proposal | undefined {
  if (!p || typeof p !== 'object') return undefined;
  const type = String(p.type ?? '');
  if (!isType(type) || type === 'session' || type === 'rule') return undefined;
  let title = String(p.title ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  const body = String(p.body ?? '').trim();
  if (!title || !body) return undefined;
  if (title.length > 120) title = `${title.slice(0, 117).trimEnd()}...`;
  const tags = (Array.isArray(p.tags) ? p.tags : [])
    .map((t) => String(t).trim().toLowerCase().replace(/\s+/g, '-'))
    .filter((t) => t && t.length <= LIMITS.tagChars)
    .slice(0, 8);
  const conf = Number(p.confidence);
  return {
    type,
    title,
    body: body.length > 4000 ? `${body.slice(0, 3997)}...` : body,
    tags: [...new Set(tags)],
    source: String(p.source ?? 'unknown'),
    evidence: p.evidence ? String(p.evidence).slice(0, 1000) : undefined,
    confidence: Number.isFinite(conf) ? Math.min(1, Math.max(0, conf)) : undefined,
  };
}

// ------------------------------------------------------------------ writing and the local rejected list

export interface ProposalMeta {
  session?: string;
  agent?: string;
  /** the model, when the agent said */
  model?: string;
  now?: Date;
}

/** Writes accepted proposals as `pending` records in one commit. */
export async function writeProposals(
  store: Store,
  proposals: Proposal[],
  meta: ProposalMeta = {},
): Promise<MemoryRecord[]> {
  if (!proposals.length) return [];
  const ident = await store.ident();
  const now = meta.now ?? new Date();
  const records = proposals.map((p) =>
    newRecord({
      id: newId(now.getTime()),
      type: p.type,
      // an agent's or a model's text: escape sequences and control characters dropped, not refused
      title: withoutControls(p.title, false),
      body: withoutControls(p.body.endsWith('\n') ? p.body : `${p.body}\n`),
      now: now.toISOString(),
      author: identLine(ident),
      by: agentProvenance(meta.agent ?? 'agent', meta.session, meta.model),
      tags: p.tags?.map((t) => withoutControls(t, false)),
      status: 'pending',
      confidence: p.confidence ?? 0.6,
      source: `${meta.agent ?? 'agent'}${meta.session ? `:${meta.session}` : ''}`,
      extra: {
        proposal: {
          method: p.source,
          ...(meta.session ? { session: meta.session } : {}),
          ...(p.evidence ? { evidence: p.evidence } : {}),
        },
      },
    }),
  );
  await store.write(async (tx) => {
    await ensureFormat(tx);
    for (const r of records) tx.putRecord(redactRecord(r));
    return {
      message: `mem: propose ${records.length} pending memor${records.length === 1 ? 'y' : 'ies'}${meta.session ? ` from session ${meta.session.slice(0, 12)}` : ''}`,
      value: null,
    };
  });
  return records;
}

function rejectedFile(store: Store): string {
  return join(memDir(store.repo), 'review-rejected.txt');
}

/** Keys of proposals rejected in review (local: what this clone's user turned down). */
export function readRejectedKeys(store: Store): string[] {
  const f = rejectedFile(store);
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8').split('\n').filter(Boolean);
}

export async function rememberRejected(store: Store, title: string): Promise<void> {
  const { appendFileSync } = await import('node:fs');
  appendFileSync(rejectedFile(store), `${proposalKey({ title })}\n`);
}

/** Remembers a key of its own (a consolidation's set of ids), so that proposal is never made again here. */
export async function rememberRejectedKey(store: Store, key: string): Promise<void> {
  const { appendFileSync } = await import('node:fs');
  appendFileSync(rejectedFile(store), `${key.replace(/\s+/g, ' ')}\n`);
}
