/**
 * Extractive session summaries with no LLM (seed 000, Layer 4): files
 * modified with line counts, commands run with exit codes, errors met and how
 * they were fixed, decisions and corrections, commits, duration and outcome.
 * Pure functions over the buffered events.
 */
import { redactText } from '../safety/secrets.js';
import { type AgentEvent, COMMIT_RE, commandOf, isEditTool, isShellTool } from './events.js';

export interface FileChange {
  path: string;
  added: number;
  removed: number;
  created?: boolean;
}
export interface CommandRun {
  command: string;
  /** Exit codes in order of the runs. */
  exits: number[];
  /** Some run's failure was read from its output: the agent sent no exit code (events.ts outputShowsFailure). */
  failedOutput?: true;
}
export interface ErrorMet {
  command: string;
  error: string;
  /** How it was fixed: the files edited and commands run before the command passed. */
  fixedBy?: string[];
  fixed: boolean;
}
export interface SessionSummary {
  session: string;
  agent: string;
  started: string;
  ended: string;
  durationS: number;
  prompts: number;
  toolCalls: number;
  firstPrompt?: string;
  files: FileChange[];
  commands: CommandRun[];
  errors: ErrorMet[];
  decisions: string[];
  commits: string[];
  outcome: 'completed' | 'failing' | 'interrupted' | 'no-activity';
  outcomeDetail: string;
  endReason?: string;
}

/** A path relative to the work tree when it lies inside it. */
export function relPath(p: string, root?: string): string {
  if (root && p.startsWith(`${root.replace(/\/$/, '')}/`)) return p.slice(root.replace(/\/$/, '').length + 1);
  return p;
}

/** The line of a tool's output that names the error (pure heuristics, no LLM). */
export function errorSignature(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^(error: )?exit(ed with)? code:? \d+$/i.test(l) && !/^[-=─━*]{3,}$/.test(l));
  const re =
    /\b(error|ERR!|FAIL|failed|failure|exception|assert|expected|cannot|can't|not found|undefined|denied|refused|panic|traceback)\b/i;
  const hit = lines.find((l) => re.test(l) && !/^\s*(at|✓|√|PASS)\b/.test(l)) ?? lines[0] ?? '';
  return hit.length > 140 ? `${hit.slice(0, 137)}...` : hit;
}

export function errorTextOf(ev: AgentEvent): string {
  if (ev.error) return ev.error;
  const r = ev.response as { stderr?: unknown; stdout?: unknown } | undefined;
  return `${String(r?.stderr ?? '')}\n${String(r?.stdout ?? '')}`;
}

// ------------------------------------------------------------------ corrections and markers (shared with extraction)

// A correction is a directive about how to work, said at the start of a sentence: "No, don't X",
// "Don't/Never X", "Use X instead (of Y)", "Instead of X, use Y", "Actually, …", "That's wrong…",
// "Stop doing X". A bug report ("gives a 500 instead of 400"), a question, a quoted rule ("the docs
// say 'don't use v1'") or a one-off ("don't commit yet") is not: eval/extraction measures these.
const LEAD = String.raw`^(?:(?:please|also|and|so|but|ok(?:ay)?|no|nope|wait|actually|hmm)\b[\s,.!:;-]*)*`;
const CORRECTION_PATTERNS: RegExp[] = [
  // "No, don't…", "No, it's not in utils", "No no, we don't squash", "Nope, use the Makefile instead"
  /^(?:no|nope)(?:\s+no)?\s*[,.!;:\u2013\u2014-]+\s*.*\b(?:not|don'?t|do not|never|stop|instead|rather than|isn'?t|aren'?t|wrong)\b/i,
  // "Don't edit the generated files", "Never commit to main", "Wait, don't run…" (not "don't worry")
  new RegExp(
    `${LEAD}(?:don'?t|do not|never)\\s+(?:ever\\s+)?(?!worry|bother|forget|know|think|mind|care|understand|panic|see\\b|get\\b)[a-z]+`,
    'i',
  ),
  // "Use pnpm instead of npm", "Prefer composition instead of inheritance", "Actually, use make rather than cargo"
  new RegExp(
    `${LEAD}(?:use|prefer|go with|switch to|stick (?:to|with)|call)\\s+[^?!\\n]{1,80}?\\b(?:instead|rather than)\\b`,
    'i',
  ),
  // "Instead of raw SQL strings, use the query builder."
  /^instead of\s+[^,?!\n]{1,60},\s*(?:use|prefer|call|go with)\b/i,
  // "Actually, the API lives in services/api", "Wait, we don't use Redux anymore"
  /^(?:actually|wait)\s*[,:\u2013\u2014-]\s/i,
  /^(?:no[,.]?\s+)?that'?s\s+(?:wrong|not right|incorrect|not how)\b/i,
  /^(?:please\s+)?stop\s+[a-z]+ing\b/i,
];

// a directive for this moment only: "don't commit yet", "don't push this time"
const ONE_OFF_RE =
  /\b(?:yet|for now|this time|right now|just now|at the moment|for the moment|until I|till I|before I|in this (?:commit|PR))\b/i;

/** A sentence with its quoted parts ('…', "…", `…`, “…”) blanked: a quoted rule is not the user's own. */
function unquoted(s: string): string {
  return s
    .replace(/`[^`]*`/g, ' `q` ')
    .replace(/\u201c[^\u201d]*\u201d/g, ' q ')
    .replace(/(^|[\s(:])"[^"]*"(?=[\s.,;:)!?\u2014-]|$)/g, '$1 q ')
    .replace(/(^|[\s(:])'[^']*'(?=[\s.,;:)!?\u2014-]|$)/g, '$1 q ');
}

function isCorrection(sentence: string): boolean {
  const x = unquoted(sentence).trim();
  if (/\?\s*$/.test(x)) return false; // a question asks, it does not correct
  if (!CORRECTION_PATTERNS.some((re) => re.test(x))) return false;
  return !ONE_OFF_RE.test(x);
}

function sentencesOf(prompt: string): string[] {
  return prompt
    .split(/(?<=[.!?])\s+|\n+/)
    .map((x) => x.trim())
    .filter(Boolean);
}

// "Remember: …", "Please remember that …", "For future reference, remember: …" at a sentence's start;
// not "I don't remember that…", "Do you remember…?", "I can't remember: is it…?"
const MARKER_RE =
  /^(?:(?:please|also|and|so|ok(?:ay)?|btw|note|great|thanks|for future reference|going forward)\b[\s,.!:;-]*)*remember(?:\s+that)?\s*(?:[:\-\u2013]\s*(.+)|\s+that\s+(.+))|^(?:(?:please|also|and|so)\s+)*remember\s+that\s+(.+)/i;

/** The sentences of a prompt that carry a correction ("No, don't X. Use Y instead."), or undefined. */
export function correctionOf(prompt: string): string | undefined {
  const sentences = sentencesOf(prompt);
  const i = sentences.findIndex(isCorrection);
  if (i < 0) return undefined;
  let out = sentences[i];
  // a correction often continues in the next sentence ("No, not lodash. Use reduce instead.")
  if (
    i + 1 < sentences.length &&
    !/\?\s*$/.test(sentences[i + 1]) &&
    (isCorrection(sentences[i + 1]) || out.length < 25)
  )
    out = `${out} ${sentences[i + 1]}`;
  return out;
}

/**
 * What one prompt asks to keep: a request to remember ("Remember: …") or else a correction — never
 * both, so one prompt makes one record (in the session summary and in extraction alike).
 */
export function promptNote(prompt: string): { kind: 'marker' | 'correction'; text: string } | undefined {
  const marker = markerOf(prompt);
  if (marker) return { kind: 'marker', text: marker };
  const corr = correctionOf(prompt);
  return corr ? { kind: 'correction', text: corr } : undefined;
}

export function markerOf(prompt: string): string | undefined {
  for (const sentence of sentencesOf(prompt)) {
    const m = MARKER_RE.exec(sentence);
    if (!m) continue;
    const line = (m[1] ?? m[2] ?? m[3] ?? '').split('\n')[0];
    if (/\?\s*$/.test(line)) continue; // "remember: is it nightly?" asks
    const s = line.replace(/[.!]+\s*$/, '').trim();
    if (s.length >= 8) return s;
  }
  return undefined;
}

// ------------------------------------------------------------------ the summary

function clip(s: string, n: number): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 3)}...` : one;
}

/** Parses "[main 1a2b3c4] subject" from `git commit` output. */
export function commitFromOutput(stdout: string): { sha: string; subject: string } | undefined {
  const m = /^\[[^\]\s]+(?: \([^)]*\))? ([0-9a-f]{7,40})\] (.+)$/m.exec(stdout);
  return m ? { sha: m[1], subject: m[2].trim() } : undefined;
}

export function summarizeSession(
  events: AgentEvent[],
  opts: { root?: string; agent?: string } = {},
): SessionSummary {
  const session = events[0]?.session ?? 'unknown';
  const ts = events.map((e) => Date.parse(e.ts)).filter((t) => Number.isFinite(t));
  const started = ts.length ? new Date(Math.min(...ts)).toISOString() : new Date(0).toISOString();
  const ended = ts.length ? new Date(Math.max(...ts)).toISOString() : started;
  const files = new Map<string, FileChange>();
  const commands = new Map<string, CommandRun>();
  const errors: ErrorMet[] = [];
  const decisions: string[] = [];
  const commits: string[] = [];
  let prompts = 0;
  let toolCalls = 0;
  let firstPrompt: string | undefined;
  let endReason: string | undefined;
  let interrupted = false;
  // open errors per command: index into errors + what happened since
  const open = new Map<string, { err: ErrorMet; since: string[] }>();
  for (const ev of events) {
    if (ev.event === 'UserPromptSubmit' && ev.prompt) {
      prompts++;
      firstPrompt ??= ev.prompt;
      const note = promptNote(ev.prompt);
      if (note?.kind === 'marker') decisions.push(`Asked to remember: "${clip(note.text, 160)}"`);
      else if (note) decisions.push(`User correction: "${clip(note.text, 160)}"`);
      continue;
    }
    if (ev.event === 'SessionEnd') endReason = ev.reason;
    if (ev.event !== 'PostToolUse' && ev.event !== 'PostToolUseFailure') continue;
    toolCalls++;
    if (ev.tool === 'ExitPlanMode' && ev.event === 'PostToolUse') {
      const plan =
        String((ev.input as { plan?: unknown })?.plan ?? '')
          .split('\n')
          .find((l) => l.trim()) ?? '';
      decisions.push(`Plan approved: ${clip(plan.replace(/^#+\s*/, ''), 160)}`);
    }
    for (const f of ev.files ?? []) {
      const path = relPath(f.path, opts.root);
      const cur = files.get(path) ?? { path, added: 0, removed: 0 };
      cur.added += f.added;
      cur.removed += f.removed;
      if (f.created) cur.created = true;
      files.set(path, cur);
      for (const o of open.values()) if (!o.since.includes(path)) o.since.push(path);
    }
    if (isEditTool(ev.tool) && ev.event === 'PostToolUseFailure') continue;
    if (!isShellTool(ev.tool)) continue;
    const cmd = commandOf(ev);
    if (!cmd) continue;
    const exit = ev.exit ?? (ev.event === 'PostToolUseFailure' ? 1 : 0);
    if (exit === 130) interrupted = true;
    const run = commands.get(cmd) ?? { command: cmd, exits: [] };
    run.exits.push(exit);
    if (ev.failedOutput) run.failedOutput = true;
    commands.set(cmd, run);
    if (exit !== 0) {
      if (!open.has(cmd)) {
        const err: ErrorMet = {
          command: cmd,
          error: errorSignature(errorTextOf(ev)) || `exit ${exit}`,
          fixed: false,
        };
        errors.push(err);
        open.set(cmd, { err, since: [] });
      }
    } else {
      const o = open.get(cmd);
      if (o) {
        o.err.fixed = true;
        if (o.since.length) o.err.fixedBy = o.since.slice(0, 8);
        open.delete(cmd);
      }
      for (const other of open.values()) if (other.since.length < 8) other.since.push(`\`${clip(cmd, 60)}\``);
      if (COMMIT_RE.test(cmd)) {
        const c = commitFromOutput(String((ev.response as { stdout?: unknown })?.stdout ?? ''));
        commits.push(c ? `${c.sha.slice(0, 7)} ${clip(c.subject, 100)}` : clip(cmd, 100));
      }
    }
  }
  const failingNow = [...commands.values()].filter((c) => c.exits[c.exits.length - 1] !== 0);
  let outcome: SessionSummary['outcome'];
  let outcomeDetail: string;
  if (!toolCalls && !prompts) {
    outcome = 'no-activity';
    outcomeDetail = 'no prompts or tool calls recorded';
  } else if (interrupted) {
    outcome = 'interrupted';
    outcomeDetail = 'a command was interrupted';
  } else if (failingNow.length) {
    outcome = 'failing';
    outcomeDetail = `last run failing: ${failingNow.map((c) => `\`${clip(c.command, 60)}\``).join(', ')}`;
  } else {
    outcome = 'completed';
    const fixed = errors.filter((e) => e.fixed).length;
    outcomeDetail = [
      errors.length
        ? `${fixed} of ${errors.length} error${errors.length === 1 ? '' : 's'} fixed`
        : 'no errors',
      commands.size ? 'every command passes on its last run' : '',
      commits.length ? `${commits.length} commit${commits.length > 1 ? 's' : ''}` : '',
    ]
      .filter(Boolean)
      .join('; ');
  }
  return {
    session,
    agent: opts.agent ?? 'claude-code',
    started,
    ended,
    durationS: Math.round((Date.parse(ended) - Date.parse(started)) / 1000),
    prompts,
    toolCalls,
    firstPrompt,
    files: [...files.values()],
    commands: [...commands.values()],
    errors,
    decisions,
    commits,
    outcome,
    outcomeDetail,
    endReason,
  };
}

function formatDuration(s: number): string {
  if (s < 60) return `${s}s`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function summaryTitle(s: SessionSummary): string {
  const day = s.started.slice(0, 16).replace('T', ' ');
  const task = s.firstPrompt ? `: ${clip(s.firstPrompt, 80)}` : '';
  return clip(`Session ${day}${task}`, 200);
}

/** Markdown body of a session record. */
export function renderSummary(s: SessionSummary): string {
  const out: string[] = [];
  out.push(
    `> ${s.agent} session ${s.session} · ${s.started} · ${formatDuration(s.durationS)} · ${s.prompts} prompt${s.prompts === 1 ? '' : 's'} · ${s.toolCalls} tool call${s.toolCalls === 1 ? '' : 's'}`,
    '',
  );
  if (s.files.length) {
    out.push('## Files modified');
    for (const f of s.files.slice(0, 40))
      out.push(`- ${f.path} (${f.created ? 'created, ' : ''}+${f.added} −${f.removed})`);
    if (s.files.length > 40) out.push(`- … ${s.files.length - 40} more`);
    out.push('');
  }
  if (s.commands.length) {
    out.push('## Commands run');
    for (const c of s.commands.slice(0, 30)) {
      const exits = c.exits.length > 4 ? [...c.exits.slice(0, 2), '…', ...c.exits.slice(-2)] : c.exits;
      out.push(
        `- \`${clip(c.command, 120)}\` (exit ${exits.join(' → ')})${c.exits.length > 1 ? ` ×${c.exits.length}` : ''}${c.failedOutput ? ' (no exit code sent; a failure was read from the output)' : ''}`,
      );
    }
    if (s.commands.length > 30) out.push(`- … ${s.commands.length - 30} more`);
    out.push('');
  }
  if (s.errors.length) {
    out.push('## Errors');
    for (const e of s.errors.slice(0, 20)) {
      const how = e.fixed
        ? e.fixedBy?.length
          ? `fixed by changing ${e.fixedBy.join(', ')}`
          : 'passed on a rerun'
        : 'not fixed';
      out.push(`- \`${clip(e.command, 80)}\`: ${clip(e.error, 160)} — ${how}`);
    }
    out.push('');
  }
  if (s.decisions.length) {
    out.push('## Decisions and corrections');
    for (const d of s.decisions.slice(0, 20)) out.push(`- ${d}`);
    out.push('');
  }
  if (s.commits.length) {
    out.push('## Commits');
    for (const c of s.commits.slice(0, 20)) out.push(`- ${c}`);
    out.push('');
  }
  out.push(
    '## Outcome',
    `- ${s.outcome}: ${s.outcomeDetail}${s.endReason ? ` (session ended: ${s.endReason})` : ''}`,
    '',
  );
  return out.join('\n');
}

/** Older summaries keep what matters (errors, decisions, commits, outcome) and drop the lists (seed 001). */
export function compressSummaryBody(body: string): string {
  // a resumed part's lists are one level down (### under its ## Resumed heading)
  const sections = body.split(/\n(?=#{2,3} )/);
  const out: string[] = [];
  for (const sec of sections) {
    const first = sec.split('\n')[0];
    const level = first.startsWith('### ') ? '###' : '##';
    const head = first.replace(/^###? /, '## ');
    const items = sec.split('\n').filter((l) => l.startsWith('- '));
    if (head === '## Files modified') {
      let a = 0;
      let r = 0;
      for (const l of items) {
        const m = /\+(\d+) −(\d+)\)$/.exec(l);
        if (m) {
          a += Number(m[1]);
          r += Number(m[2]);
        }
      }
      out.push(
        `${level} Files modified\n- ${items.length} file${items.length === 1 ? '' : 's'} (+${a} −${r})\n`,
      );
    } else if (head === '## Commands run') {
      out.push(`${level} Commands run\n- ${items.length} distinct command${items.length === 1 ? '' : 's'}\n`);
    } else out.push(sec.endsWith('\n') ? sec : `${sec}\n`);
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}

/** Replaces every likely secret with [REDACTED] (a summary is never refused, it is redacted). */
export function redactSecrets(text: string): string {
  return redactText(text);
}
