/**
 * Tier-0 extraction (seed 004): deterministic rules over the buffered events.
 *  - error→fix: a failing command followed by the same command passing, with
 *    the edits (or commands) between → known_fix
 *  - user corrections ("no, don't…", "use X instead") → constraint / preference
 *  - explicit markers: "remember: …" in a prompt, `Memory:` / `Decision:`
 *    trailers in a commit made during the session
 *  - revert commits → failed_attempt
 * Pure: commit messages are looked up by the caller and passed in.
 */
import type { MemoryType } from '../model/record.js';
import { type AgentEvent, COMMIT_RE, commandOf, isEditTool, isShellTool } from './events.js';
import type { Proposal } from './proposal.js';
import { errorSignature, errorTextOf, promptNote, relPath } from './summary.js';

export interface CommitInfo {
  sha: string;
  message: string;
  /** Index of the event that made it. */
  at: number;
}

export interface Tier0Options {
  /** Only proposals whose last event is at or after this index (events before were checkpointed). */
  since?: number;
  root?: string;
  commits?: CommitInfo[];
}

export interface Candidate extends Proposal {
  /** Index of the event that completes the pattern. */
  at: number;
}

function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 3)}...` : one;
}

export function inferType(text: string): MemoryType {
  const t = text.toLowerCase();
  if (/\b(never|must not|mustn'?t|don'?t|do not|always|must|forbidden|not allowed)\b/.test(t))
    return 'constraint';
  if (/\b(decided|decision|we chose|going with|we will use|we use)\b/.test(t)) return 'decision';
  if (/\b(prefer|instead|rather than)\b/.test(t)) return 'preference';
  if (/\b(env|environment|requires?|install|version|node \d|python \d)\b/.test(t)) return 'environment';
  return 'convention';
}

function firstWord(cmd: string): string {
  const w = cmd.split(/\s+/).find((x) => !/=/.test(x)) ?? '';
  return w
    .replace(/[^a-z0-9._-]/gi, '')
    .toLowerCase()
    .slice(0, 30);
}

function editSnippet(ev: AgentEvent, root?: string): string {
  const input = (ev.input ?? {}) as Record<string, unknown>;
  const path = relPath(String(input.file_path ?? input.path ?? ev.files?.[0]?.path ?? '?'), root);
  const lines = (s: unknown, sign: string) =>
    String(s ?? '')
      .split('\n')
      .filter((l) => l.trim())
      .slice(0, 6)
      .map((l) => `${sign} ${l}`);
  const oldS = input.old_string;
  const newS = input.new_string;
  if (typeof oldS === 'string' || typeof newS === 'string') {
    return [`${path}:`, '```diff', ...lines(oldS, '-'), ...lines(newS, '+'), '```'].join('\n');
  }
  const f = ev.files?.[0];
  return f ? `${path} (+${f.added} −${f.removed})` : path;
}

function errorFixes(events: AgentEvent[], opts: Tier0Options): Candidate[] {
  const out: Candidate[] = [];
  const firstFail = new Map<string, number>();
  events.forEach((ev, i) => {
    if (!isShellTool(ev.tool) || (ev.event !== 'PostToolUse' && ev.event !== 'PostToolUseFailure')) return;
    const cmd = commandOf(ev);
    if (!cmd || ev.exit === undefined) return;
    if (ev.exit !== 0) {
      if (ev.exit !== 130 && !firstFail.has(cmd)) firstFail.set(cmd, i);
      return;
    }
    const f = firstFail.get(cmd);
    if (f === undefined) return;
    firstFail.delete(cmd);
    if (i < (opts.since ?? 0)) return;
    // the last failure before the pass carries the error the edits fixed
    let lastFail = f;
    for (let k = f; k < i; k++)
      if (isShellTool(events[k].tool) && commandOf(events[k]) === cmd && events[k].exit) lastFail = k;
    const between = events.slice(f + 1, i);
    const edits = between.filter((e) => e.event === 'PostToolUse' && isEditTool(e.tool));
    const fixCmds = between.filter(
      (e) =>
        isShellTool(e.tool) && e.exit === 0 && commandOf(e) !== cmd && !COMMIT_RE.test(commandOf(e) ?? ''),
    );
    if (!edits.length && !fixCmds.length) return; // passed on a plain rerun: flaky, nothing learnt
    const errText = errorTextOf(events[lastFail]);
    const sig = errorSignature(errText);
    if (!sig) return;
    const files = [...new Set(edits.flatMap((e) => (e.files ?? []).map((x) => relPath(x.path, opts.root))))];
    const how = files.length
      ? `fixed in ${files.slice(0, 3).join(', ')}`
      : `fixed by running ${fixCmds
          .map((e) => `\`${clip(commandOf(e) ?? '', 40)}\``)
          .slice(0, 2)
          .join(', ')}`;
    const errLines = errText
      .split('\n')
      .filter((l) => l.trim())
      .slice(0, 40);
    const sigAt = errLines.findIndex((l) =>
      l.includes(
        sig
          .replace(/\.\.\.$/, '')
          .trim()
          .slice(0, 40),
      ),
    );
    const excerpt = (sigAt >= 0 ? errLines.slice(sigAt, sigAt + 4) : errLines.slice(0, 4)).map((l) =>
      clip(l, 160),
    );
    const body = [
      `\`${clip(cmd, 120)}\` failed with:`,
      '```',
      ...excerpt,
      '```',
      files.length ? 'Fixed by this change:' : 'Fixed by running:',
      ...(files.length
        ? edits.slice(-3).map((e) => editSnippet(e, opts.root))
        : fixCmds.slice(0, 3).map((e) => `- \`${clip(commandOf(e) ?? '', 120)}\``)),
      `After that \`${clip(cmd, 80)}\` passed.`,
    ].join('\n');
    out.push({
      type: 'known_fix',
      title: clip(`${sig.replace(/^(error|Error):\s*/, '')} (${how})`, 120),
      body,
      tags: ['error-fix', firstWord(cmd)].filter(Boolean),
      source: 'tier0:error_fix',
      evidence: `tool_use ${events[lastFail].tool_use_id ?? lastFail} failed, ${ev.tool_use_id ?? i} passed`,
      confidence: 0.7,
      at: i,
    });
  });
  return out;
}

function previousAction(events: AgentEvent[], i: number, root?: string): string | undefined {
  for (let k = i - 1; k >= 0 && k >= i - 8; k--) {
    const e = events[k];
    if (e.event !== 'PostToolUse' && e.event !== 'PostToolUseFailure') continue;
    if (isShellTool(e.tool)) return `the agent had just run \`${clip(commandOf(e) ?? '', 80)}\``;
    if (isEditTool(e.tool))
      return `the agent had just edited ${relPath(e.files?.[0]?.path ?? String((e.input as { file_path?: unknown })?.file_path ?? '?'), root)}`;
  }
  return undefined;
}

function promptRules(events: AgentEvent[], opts: Tier0Options): Candidate[] {
  const out: Candidate[] = [];
  events.forEach((ev, i) => {
    if (i < (opts.since ?? 0) || ev.event !== 'UserPromptSubmit' || !ev.prompt) return;
    const note = promptNote(ev.prompt);
    if (note?.kind === 'marker') {
      const marker = note.text;
      out.push({
        type: inferType(marker),
        title: clip(marker.replace(/[.!]+$/, ''), 120),
        body: `${clip(marker, 600)}\n\n(Asked to remember during a session.)`,
        tags: ['remember'],
        source: 'tier0:marker',
        evidence: `prompt: "${clip(ev.prompt, 200)}"`,
        confidence: 0.9,
        at: i,
      });
      return;
    }
    if (note) {
      const corr = note.text;
      const ctx = previousAction(events, i, opts.root);
      const type = /\b(never|don'?t|do not|must|always|stop)\b/i.test(corr) ? 'constraint' : 'preference';
      out.push({
        type,
        title: clip(
          corr
            .replace(/^(no|nope|actually|wait)\s*[,.!:;-]*\s*/i, '')
            .replace(/[.!]+\s+(\S)/g, (_m, c: string) => `; ${c.toLowerCase()}`)
            .replace(/[.!]+$/, ''),
          120,
        ),
        body: `${clip(ev.prompt, 600)}${ctx ? `\n\n(User correction; ${ctx}.)` : '\n\n(User correction.)'}`,
        tags: ['correction'],
        source: 'tier0:correction',
        evidence: `prompt: "${clip(ev.prompt, 200)}"`,
        confidence: 0.8,
        at: i,
      });
    }
  });
  return out;
}

const TRAILER_RE = /^(Memory|Decision|Remember|Constraint|Convention|Learned):[ \t]*(.+)$/gim;

function commitRules(events: AgentEvent[], opts: Tier0Options): Candidate[] {
  const out: Candidate[] = [];
  for (const c of opts.commits ?? []) {
    if (c.at < (opts.since ?? 0)) continue;
    const [subject, ...rest] = c.message.split('\n');
    for (const m of c.message.matchAll(TRAILER_RE)) {
      const kind = m[1].toLowerCase();
      const text = m[2].trim();
      const type: MemoryType =
        kind === 'decision'
          ? 'decision'
          : kind === 'constraint'
            ? 'constraint'
            : kind === 'convention'
              ? 'convention'
              : inferType(text);
      out.push({
        type,
        title: clip(text.replace(/[.!]+$/, ''), 120),
        body: `${text}\n\n(From the \`${m[1]}:\` trailer of commit ${c.sha.slice(0, 10)} "${clip(subject, 80)}".)`,
        tags: ['commit-trailer'],
        source: 'tier0:trailer',
        evidence: `commit ${c.sha}`,
        confidence: 0.9,
        at: c.at,
      });
    }
    const rev = /^Revert "(.+)"\s*$/.exec(subject.trim());
    if (rev) {
      const reason = rest
        .join('\n')
        .replace(TRAILER_RE, '')
        .split('\n')
        .filter((l) => l.trim() && !/^This reverts commit/i.test(l.trim()))
        .join(' ')
        .trim();
      const reverted = /This reverts commit ([0-9a-f]{7,40})/.exec(c.message)?.[1];
      out.push({
        type: 'failed_attempt',
        title: clip(`Reverted: ${rev[1]}`, 120),
        body: `The change "${rev[1]}"${reverted ? ` (commit ${reverted.slice(0, 10)})` : ''} was reverted in ${c.sha.slice(0, 10)}.${reason ? `\n\nWhy: ${clip(reason, 600)}` : '\n\nNo reason was given in the revert commit.'}`,
        tags: ['revert'],
        source: 'tier0:revert',
        evidence: `commit ${c.sha}`,
        confidence: 0.75,
        at: c.at,
      });
    }
  }
  void events;
  return out;
}

/** Every tier-0 candidate in event order. */
export function extractTier0(events: AgentEvent[], opts: Tier0Options = {}): Candidate[] {
  return [...errorFixes(events, opts), ...promptRules(events, opts), ...commitRules(events, opts)].sort(
    (a, b) => a.at - b.at,
  );
}
