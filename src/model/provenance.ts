/**
 * Provenance: who or what made a memory and each memory commit. Pure.
 *
 * A record keeps who wrote it (`by` in its frontmatter: a person, or an
 * agent with its name, session and model when known); every memory commit
 * carries git trailers naming the operation, the memory ids it touched and,
 * when an agent made it, the agent, its session and its model:
 *
 *   mem: add 01JH2K3M4N5P "Use the query builder"
 *
 *   Mem-Operation: add
 *   Mem-Id: 01JH2K3M4N5PQ6R7S8T9V0W1X2
 *   Mem-Agent: claude-code
 *   Mem-Session: 3f2a9c1e-…
 *   Mem-Model: claude-sonnet-4-5
 *
 * `git interpret-trailers --parse` and `git log --format=%(trailers)` read
 * them. Values come from agents' payloads: each is cut to one printable line.
 */

/** Who made a record or a commit. Unknown keys from newer versions are kept. */
export interface Provenance {
  kind: 'person' | 'agent';
  /** the agent's name (claude-code, an MCP client's name, GIT_MEM_AGENT) */
  agent?: string;
  /** the agent's session id, when it said */
  session?: string;
  /** the model, when the agent said */
  model?: string;
}

export const PERSON: Provenance = { kind: 'person' };

const MAX_VALUE = 200;

/** One printable line of at most 200 characters ('' when nothing is left). */
export function provenanceValue(v: unknown): string {
  return String(v ?? '')
    .replace(/[\u0000-\u001f\u007f\u2028\u2029]+/g, ' ')
    .trim()
    .slice(0, MAX_VALUE)
    .trim();
}

/** An agent's provenance from what it said (empty values dropped). */
export function agentProvenance(agent: unknown, session?: unknown, model?: unknown): Provenance {
  const p: Provenance = { kind: 'agent', agent: provenanceValue(agent) || 'agent' };
  const s = provenanceValue(session);
  const m = provenanceValue(model);
  if (s) p.session = s;
  if (m) p.model = m;
  return p;
}

/**
 * Who is writing, from the environment: `GIT_MEM_AGENT` (with
 * `GIT_MEM_AGENT_SESSION`, `GIT_MEM_AGENT_MODEL`) names an agent; Claude
 * Code sets `CLAUDECODE=1` for the commands it runs (and the hooks and MCP
 * server it starts); anything else is a person.
 */
/** The variables actorFromEnv reads. */
export const ACTOR_ENV = [
  'GIT_MEM_AGENT',
  'GIT_MEM_AGENT_SESSION',
  'GIT_MEM_AGENT_MODEL',
  'CLAUDECODE',
  'CLAUDE_CODE_SESSION_ID',
] as const;

export function actorFromEnv(env: NodeJS.ProcessEnv): Provenance {
  if (provenanceValue(env.GIT_MEM_AGENT))
    return agentProvenance(env.GIT_MEM_AGENT, env.GIT_MEM_AGENT_SESSION, env.GIT_MEM_AGENT_MODEL);
  if (env.CLAUDECODE === '1')
    return agentProvenance(
      'claude-code',
      env.GIT_MEM_AGENT_SESSION ?? env.CLAUDE_CODE_SESSION_ID,
      env.GIT_MEM_AGENT_MODEL,
    );
  return { ...PERSON };
}

/** A `by` value read from a record's frontmatter: a mapping with kind person or agent, else undefined. */
export function parseProvenance(v: unknown): Provenance | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (o.kind !== 'person' && o.kind !== 'agent') return undefined;
  const out: Provenance = { ...(o as object), kind: o.kind } as Provenance;
  for (const k of ['agent', 'session', 'model'] as const) {
    if (o[k] === undefined || o[k] === null) delete out[k];
    else out[k] = provenanceValue(o[k]);
  }
  return out;
}

/** "agent claude-code (session 3f2a9c1e…, model x)" or "person". */
export function provenanceText(p: Provenance | null | undefined): string {
  if (!p) return 'unknown';
  if (p.kind !== 'agent') return 'person';
  const more = [p.session ? `session ${p.session}` : '', p.model ? `model ${p.model}` : ''].filter(Boolean);
  return `agent ${p.agent ?? '?'}${more.length ? ` (${more.join(', ')})` : ''}`;
}

// ------------------------------------------------------------------ commit trailers

export const TRAILERS = {
  operation: 'Mem-Operation',
  id: 'Mem-Id',
  idCount: 'Mem-Id-Count',
  agent: 'Mem-Agent',
  session: 'Mem-Session',
  model: 'Mem-Model',
} as const;

/** The most ids one commit names; past it, `Mem-Id-Count` says how many it touched. */
export const MAX_TRAILER_IDS = 100;

/** The operation of a memory commit: the first word after `mem: ` in its subject. */
export function operationOf(subject: string): string {
  return /^mem: ([a-z][a-z0-9-]*)/.exec(subject)?.[1] ?? 'unknown';
}

/** The trailer lines of a memory commit. */
export function memTrailers(subject: string, ids: readonly string[], actor: Provenance): string[] {
  const lines = [`${TRAILERS.operation}: ${operationOf(subject)}`];
  const sorted = [...new Set(ids)].sort();
  for (const id of sorted.slice(0, MAX_TRAILER_IDS)) lines.push(`${TRAILERS.id}: ${id}`);
  if (sorted.length > MAX_TRAILER_IDS) lines.push(`${TRAILERS.idCount}: ${sorted.length}`);
  if (actor.kind === 'agent') {
    lines.push(`${TRAILERS.agent}: ${provenanceValue(actor.agent) || 'agent'}`);
    if (provenanceValue(actor.session)) lines.push(`${TRAILERS.session}: ${provenanceValue(actor.session)}`);
    if (provenanceValue(actor.model)) lines.push(`${TRAILERS.model}: ${provenanceValue(actor.model)}`);
  }
  return lines;
}

/** The message with the trailer block after a blank line (a message that has one already is left as it is). */
export function withTrailers(message: string, trailers: readonly string[]): string {
  const msg = message.replace(/\s+$/, '');
  if (!trailers.length || msg.includes(`\n${TRAILERS.operation}: `)) return `${msg}\n`;
  return `${msg}\n\n${trailers.join('\n')}\n`;
}

/** What a memory commit's trailers say (as `git log --format=%(trailers:only,unfold)` prints them). */
export interface CommitProvenance {
  /** null: a commit made before git-mem wrote trailers */
  operation: string | null;
  ids: string[];
  /** how many ids the commit touched (more than it names when past MAX_TRAILER_IDS) */
  idCount: number;
  by: Provenance | null;
}

export function parseTrailerLines(text: string): CommitProvenance {
  const ids: string[] = [];
  let operation: string | null = null;
  let idCount = 0;
  const agent: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z0-9-]+):\s*(.*)$/.exec(line.trim());
    if (!m) continue;
    const key = m[1].toLowerCase();
    const value = m[2].trim();
    if (key === TRAILERS.operation.toLowerCase()) operation = value;
    else if (key === TRAILERS.id.toLowerCase()) ids.push(value);
    else if (key === TRAILERS.idCount.toLowerCase()) idCount = Number(value) || 0;
    else if (key === TRAILERS.agent.toLowerCase()) agent.agent = value;
    else if (key === TRAILERS.session.toLowerCase()) agent.session = value;
    else if (key === TRAILERS.model.toLowerCase()) agent.model = value;
  }
  const by: Provenance | null = agent.agent
    ? agentProvenance(agent.agent, agent.session, agent.model)
    : operation
      ? { ...PERSON }
      : null;
  return { operation, ids, idCount: Math.max(idCount, ids.length), by };
}
