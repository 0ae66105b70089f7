/**
 * The local event buffer of agent sessions: `.git/mem/events/<session>.jsonl`,
 * one compact event per line, never committed (tool output can hold secrets):
 * the folder is 0700 and the files 0600, and the buffer is deleted once the
 * session's extraction is done (see checkpoint.ts).
 *
 * This module is on the PostToolUse hot path (see src/hooks/claude-code.ts): it imports
 * node built-ins only and does a handful of small file operations per event.
 */
import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

// biome-ignore lint/suspicious/noExplicitAny: hook payloads are untyped JSON from the agent
type Json = any;

/** One buffered event (a compact, clipped copy of a hook payload). */
export interface AgentEvent {
  /** ISO time the hook ran. */
  ts: string;
  /** hook_event_name as the agent sent it. */
  event: string;
  session: string;
  tool?: string;
  tool_use_id?: string;
  input?: unknown;
  response?: unknown;
  /** PostToolUseFailure: the error text. */
  error?: string;
  /** Exit code of a shell command (0 on a successful PostToolUse without one). */
  exit?: number;
  /** The agent sent no exit code and `exit` is 1 because the output shows a failure (outputShowsFailure). */
  failedOutput?: true;
  /** Files a tool changed, with line counts. */
  files?: Array<{ path: string; added: number; removed: number; created?: boolean }>;
  prompt?: string;
  cwd?: string;
  source?: string;
  reason?: string;
  /** The model, when the agent says (SessionStart): the provenance of what the session writes. */
  model?: string;
  /** Texts git-mem injected in answer to this event (memory ids). */
  injected?: string[];
}

export const TOOL_EVENTS = new Set(['PostToolUse', 'PostToolUseFailure']);
const SHELL_TOOLS = new Set([
  'Bash',
  'shell',
  'Shell',
  'run_shell_command',
  'exec_command',
  'local_shell',
  'Execute',
]);
const EDIT_TOOLS = new Set([
  'Edit',
  'MultiEdit',
  'Write',
  'NotebookEdit',
  'apply_patch',
  'Create',
  'write_file',
  'replace',
  'edit_file',
]);

/** camelCase names some agents use for Claude Code's payload fields (Factory Droid has sent both). */
const CAMEL_FIELDS: Record<string, string> = {
  hookEventName: 'hook_event_name',
  sessionId: 'session_id',
  transcriptPath: 'transcript_path',
  toolName: 'tool_name',
  toolInput: 'tool_input',
  toolResponse: 'tool_response',
  toolUseId: 'tool_use_id',
  stopHookActive: 'stop_hook_active',
  permissionMode: 'permission_mode',
};

/**
 * Cursor's hook events (`.cursor/hooks.json`) and the Claude Code event each is read as. Cursor
 * names its events in camelCase and sends its own fields (conversation_id, workspace_roots, a
 * shell command's `output`, a file edit's `edits`…); fromCursor turns them into Claude's.
 */
export const CURSOR_EVENTS: Readonly<Record<string, string>> = {
  sessionStart: 'SessionStart',
  beforeSubmitPrompt: 'UserPromptSubmit',
  afterShellExecution: 'PostToolUse',
  afterFileEdit: 'PostToolUse',
  afterMCPExecution: 'PostToolUse',
  postToolUse: 'PostToolUse',
  postToolUseFailure: 'PostToolUseFailure',
  preCompact: 'PreCompact',
  stop: 'Stop',
  sessionEnd: 'SessionEnd',
};

/** A JSON text Cursor sends as a string (an MCP tool's input and result) as its value; other text as it is. */
function jsonOrText(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  try {
    return JSON.parse(v);
  } catch {
    return v;
  }
}

/** Rewrites a Cursor payload (hook_event_name one of CURSOR_EVENTS) in place into Claude Code's shape. */
function fromCursor(o: Record<string, Json>): void {
  const name = o.hook_event_name as string;
  o.hook_event_name = CURSOR_EVENTS[name];
  // one conversation is one session: every Cursor event carries conversation_id, session events session_id
  const conv = typeof o.conversation_id === 'string' && o.conversation_id ? o.conversation_id : undefined;
  if (conv) o.session_id = conv;
  const roots = o.workspace_roots;
  if (typeof o.cwd !== 'string' && Array.isArray(roots) && typeof roots[0] === 'string') o.cwd = roots[0];
  switch (name) {
    case 'sessionStart':
      if (typeof o.source !== 'string') o.source = 'startup';
      break;
    case 'afterShellExecution':
      o.tool_name = 'Shell';
      o.tool_input = { command: o.command, ...(typeof o.cwd === 'string' ? { cwd: o.cwd } : {}) };
      o.tool_response = {
        stdout: typeof o.output === 'string' ? o.output : '',
        ...(typeof o.exit_code === 'number' ? { exit_code: o.exit_code } : {}),
      };
      break;
    case 'afterFileEdit':
      // Cursor's edits are {old_string, new_string} pairs: counted as Claude's MultiEdit counts them
      o.tool_name = 'MultiEdit';
      o.tool_input = { file_path: o.file_path, edits: Array.isArray(o.edits) ? o.edits : [] };
      o.tool_response = { filePath: o.file_path };
      break;
    case 'afterMCPExecution':
      o.tool_name = `MCP:${typeof o.tool_name === 'string' ? o.tool_name : '?'}`;
      o.tool_input = jsonOrText(o.tool_input);
      o.tool_response = jsonOrText(o.result_json);
      break;
    case 'postToolUse':
      if (o.tool_response === undefined) o.tool_response = jsonOrText(o.tool_output);
      o.tool_input = jsonOrText(o.tool_input);
      break;
    case 'postToolUseFailure':
      if (o.error === undefined && typeof o.error_message === 'string') o.error = o.error_message;
      o.tool_input = jsonOrText(o.tool_input);
      break;
  }
}

/**
 * The payload with Claude Code's field names, whichever spelling the agent used (snake_case wins),
 * and a Cursor payload (a camelCase event name, CURSOR_EVENTS) in Claude Code's shape.
 */
export function normalizePayload<T>(p: T): T {
  if (!p || typeof p !== 'object' || Array.isArray(p)) return p;
  const o = p as Record<string, unknown>;
  for (const [camel, snake] of Object.entries(CAMEL_FIELDS))
    if (o[camel] !== undefined && o[snake] === undefined) o[snake] = o[camel];
  if (typeof o.hook_event_name === 'string' && Object.hasOwn(CURSOR_EVENTS, o.hook_event_name)) fromCursor(o);
  return p;
}

export function isShellTool(name: string | undefined): boolean {
  return !!name && SHELL_TOOLS.has(name);
}
export function isEditTool(name: string | undefined): boolean {
  return !!name && EDIT_TOOLS.has(name);
}

export function eventsDir(commonDir: string): string {
  return join(commonDir, 'mem', 'events');
}

/** 128 bits of FNV-1a (four seeds): enough to name a file, and node:crypto costs ~10 ms to load. */
function fnvHex(s: string): string {
  let out = '';
  for (const seed of [0x811c9dc5, 0x01000193, 0x9e3779b9, 0x85ebca6b]) {
    let h = seed >>> 0;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    out += h.toString(16).padStart(8, '0');
  }
  return out;
}

/** A file-name-safe form of a session id (a hash when the id is unusual). */
function sessionFileName(sessionId: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(sessionId)) return sessionId;
  return `s-${fnvHex(sessionId)}`;
}

export interface SessionPaths {
  dir: string;
  events: string;
  state: string;
  ckpt: string;
  lock: string;
  end: string;
  /** Ids of memories injected into this session, one a line. */
  injected: string;
}

export function sessionPaths(commonDir: string, sessionId: string): SessionPaths {
  const dir = eventsDir(commonDir);
  const base = join(dir, sessionFileName(sessionId));
  return {
    dir,
    events: `${base}.jsonl`,
    state: `${base}.state.json`,
    ckpt: `${base}.ckpt.json`,
    lock: `${base}.lock`,
    end: `${base}.end`,
    injected: `${base}.injected`,
  };
}

// ------------------------------------------------------------------ compacting payloads (pure)

const MAX_STR = 2000;

/** Keeps the head and the tail of a long string (errors live at the end of output). */
function clipText(s: string, max = MAX_STR): string {
  if (s.length <= max) return s;
  const head = Math.floor(max * 0.6);
  const tail = max - head - 20;
  return `${s.slice(0, head)}\n…[${s.length - head - tail} chars]…\n${s.slice(-tail)}`;
}

const DROP_KEYS = new Set([
  'originalFile',
  'structuredPatch',
  'file',
  'content',
  'oldString',
  'newString',
  'edits',
  'isImage',
]);

/** A bounded copy of a JSON value: long strings clipped, bulky keys dropped, depth limited. */
function clipValue(v: unknown, depth = 0, drop = false): unknown {
  if (typeof v === 'string') return clipText(v);
  if (v === null || typeof v !== 'object') return v;
  if (depth > 4) return '[…]';
  if (Array.isArray(v)) return v.slice(0, 50).map((x) => clipValue(x, depth + 1, drop));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (drop && DROP_KEYS.has(k)) continue;
    out[k] = clipValue(x, depth + 1, drop);
  }
  return out;
}

function lineCount(s: unknown): number {
  if (typeof s !== 'string' || s === '') return 0;
  return s.split('\n').length - (s.endsWith('\n') ? 1 : 0);
}

/** Files changed by an edit tool, with added/removed line counts. */
function editedFiles(tool: string | undefined, input: Json, response: Json): AgentEvent['files'] {
  if (!isEditTool(tool) || !input || typeof input !== 'object') return undefined;
  const path = String(input.file_path ?? input.path ?? input.notebook_path ?? response?.filePath ?? '');
  if (!path) return undefined;
  const patch = response?.structuredPatch;
  if (Array.isArray(patch) && patch.length) {
    let added = 0;
    let removed = 0;
    for (const h of patch) {
      for (const l of Array.isArray(h?.lines) ? h.lines : []) {
        if (typeof l !== 'string') continue;
        if (l.startsWith('+')) added++;
        else if (l.startsWith('-')) removed++;
      }
    }
    return [{ path, added, removed }];
  }
  if (tool === 'Write' || tool === 'Create' || tool === 'write_file') {
    return [
      {
        path,
        added: lineCount(input.content),
        removed: 0,
        created: response?.type === 'create' || tool === 'Create' || undefined,
      },
    ];
  }
  if (tool === 'MultiEdit' && Array.isArray(input.edits)) {
    let added = 0;
    let removed = 0;
    for (const e of input.edits) {
      added += lineCount(e?.new_string);
      removed += lineCount(e?.old_string);
    }
    return [{ path, added, removed }];
  }
  return [
    { path, added: lineCount(input.new_string ?? input.new_source), removed: lineCount(input.old_string) },
  ];
}

/** Exit code of a shell tool call, from whichever field the agent sends. */
function exitCodeOf(
  event: string,
  tool: string | undefined,
  response: Json,
  error: unknown,
): number | undefined {
  if (!isShellTool(tool)) return undefined;
  if (event === 'PostToolUseFailure') {
    const m = /exit(?:ed with)? code:? (\d+)/i.exec(String(error ?? ''));
    return m ? Number(m[1]) : 1;
  }
  for (const k of ['exit_code', 'exitCode', 'returnCode', 'return_code', 'status']) {
    const v = response?.[k];
    if (typeof v === 'number') return v;
  }
  if (response?.interrupted === true) return 130;
  return 0;
}

// commands whose output quotes text (search, listing, history): "error:" in it is data, not a failure
const QUOTING_CMD =
  /^(?:grep|egrep|rg|ag|ack|cat|bat|head|tail|less|more|sed|awk|echo|printf|ls|find|fd|tree|wc|jq|yq|diff|git\s+(?:log|show|diff|blame|grep|status|reflog))\b/;
const FAILURE_RES: RegExp[] = [
  /^npm ERR! /m,
  /^Traceback \(most recent call last\):/m,
  /^fatal: /m,
  /^(?:error|ERROR)(?:\[[A-Z]?\d+\])?: /m,
  /\berror TS\d+: /,
  /^\s*(?:FAIL|FAILED)\b/m,
  /\btest result: FAILED\b/,
  /\b[1-9]\d* (?:failed|failing)\b/,
  /\bFailures: [1-9]/,
  /^(?:ℹ|#) fail [1-9]/m, // node --test, TAP
];

/**
 * Whether a shell command's output says it failed when the agent sent no exit code: Claude Code's
 * PostToolUse for Bash carries stdout/stderr/interrupted only, and `npm test | tail` exits 0 whatever
 * the tests did. Output of commands that print other text (grep, cat, git log…) is never read so.
 */
export function outputShowsFailure(command: string, stdout: string, stderr: string): boolean {
  if (QUOTING_CMD.test(command.trim().replace(/^(?:\w+=\S*\s+)+/, ''))) return false;
  const text = `${stdout}\n${stderr}`;
  return FAILURE_RES.some((re) => re.test(text));
}

function hasExitField(response: Json): boolean {
  return ['exit_code', 'exitCode', 'returnCode', 'return_code', 'status'].some(
    (k) => typeof (response as Record<string, Json> | undefined)?.[k] === 'number',
  );
}

/** Turns a hook payload into the compact event we buffer. Throws on a payload that is not an object. */
export function compactEvent(p: Record<string, Json>, now = new Date()): AgentEvent {
  const event = String(p.hook_event_name);
  const ev: AgentEvent = { ts: now.toISOString(), event, session: String(p.session_id) };
  if (typeof p.cwd === 'string') ev.cwd = p.cwd;
  if (typeof p.tool_name === 'string') ev.tool = p.tool_name;
  if (typeof p.tool_use_id === 'string') ev.tool_use_id = p.tool_use_id;
  if (p.tool_input !== undefined) ev.input = clipValue(p.tool_input, 0, true);
  if (p.tool_response !== undefined) ev.response = clipValue(p.tool_response, 0, true);
  if (p.error !== undefined) ev.error = clipText(String(p.error));
  const exit = exitCodeOf(event, ev.tool, p.tool_response, p.error);
  if (exit !== undefined) ev.exit = exit;
  if (exit === 0 && event === 'PostToolUse' && !hasExitField(p.tool_response)) {
    const r = p.tool_response as Record<string, Json> | undefined;
    const cmd = (p.tool_input as Record<string, Json> | undefined)?.command;
    if (
      typeof cmd === 'string' &&
      outputShowsFailure(cmd, String(r?.stdout ?? (typeof r === 'string' ? r : '')), String(r?.stderr ?? ''))
    ) {
      ev.exit = 1;
      ev.failedOutput = true;
    }
  }
  if (event === 'PostToolUse') {
    const files = editedFiles(ev.tool, p.tool_input, p.tool_response);
    if (files) ev.files = files;
  }
  if (typeof p.prompt === 'string') ev.prompt = clipText(p.prompt, 4000);
  if (typeof p.source === 'string') ev.source = p.source;
  if (typeof p.model === 'string' && p.model) ev.model = clipText(p.model, 200);
  if (typeof p.reason === 'string') ev.reason = p.reason;
  return ev;
}

/** A shell command, normalised so "the same command" can be recognised. */
function normalizeCommand(cmd: unknown): string {
  return String(cmd ?? '')
    .replace(/^\s*cd\s+\S+\s*&&\s*/, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export function commandOf(ev: AgentEvent): string | undefined {
  const c = (ev.input as { command?: unknown } | undefined)?.command;
  return typeof c === 'string' ? normalizeCommand(c) : undefined;
}

export const COMMIT_RE =
  /(?:^|[;&|(\s])git\s+(?:-[Cc]\s+\S+\s+|--?\S+\s+)*(commit|revert|merge|cherry-pick)\b/;

// ------------------------------------------------------------------ appending and checkpoint triggers

export interface FastState {
  /** Events appended to this session so far. */
  total: number;
  /** Normalised shell commands whose last run failed. */
  failing: string[];
  /** `total` when a background checkpoint was last started. */
  spawned?: number;
}

export interface CkptState {
  /** Events processed by the last checkpoint. */
  total: number;
  /** Proposals made this session. */
  proposed: number;
  keys: string[];
  /** Id of this session's summary record, once written. */
  summaryId?: string;
  /** `total` when the summary was last written. */
  summaryTotal?: number;
  /** How many events tier 1 (the model) read, at the session's end (once a session). */
  tier1Total?: number;
  checkpoints: number;
}

export function readJson<T>(file: string, fallback: T): T {
  try {
    return { ...fallback, ...JSON.parse(readFileSync(file, 'utf8')) };
  } catch {
    return fallback;
  }
}

export function emptyCkpt(): CkptState {
  return { total: 0, proposed: 0, keys: [], checkpoints: 0 };
}

export type Trigger = 'count' | 'test-pass' | 'commit';

const CHECKPOINT_EVERY = 10;

/** Decides whether an event (just appended) calls for a checkpoint; updates the fast state. Pure. */
export function updateTrigger(state: FastState, ev: AgentEvent, ckptTotal: number): Trigger | undefined {
  state.total++;
  let trigger: Trigger | undefined;
  const cmd = isShellTool(ev.tool) ? commandOf(ev) : undefined;
  if (cmd !== undefined && ev.exit !== undefined) {
    const was = state.failing.indexOf(cmd);
    if (ev.exit !== 0) {
      if (was < 0) state.failing = [...state.failing, cmd].slice(-20);
    } else {
      if (was >= 0) {
        state.failing = state.failing.filter((c) => c !== cmd);
        trigger = 'test-pass';
      }
      if (COMMIT_RE.test(cmd)) trigger = 'commit';
    }
  }
  if (!trigger && state.total - Math.max(ckptTotal, state.spawned ?? 0) >= CHECKPOINT_EVERY)
    trigger = 'count';
  return trigger;
}

/** Appends one event and returns the checkpoint trigger it fires, if any (only tool events trigger). */
export function appendEvent(paths: SessionPaths, ev: AgentEvent, mayTrigger = true): Trigger | undefined {
  const line = `${JSON.stringify(ev)}\n`;
  // raw tool output: readable by this user only (the mode applies when the file is created)
  try {
    appendFileSync(paths.events, line, { mode: 0o600 });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    mkdirSync(paths.dir, { recursive: true, mode: 0o700 });
    appendFileSync(paths.events, line, { mode: 0o600 });
  }
  const state = readJson<FastState>(paths.state, { total: 0, failing: [] });
  if (state.total === 0) {
    // a session's first event: also tighten a folder or file an older git-mem made 0755/0644
    chmodSync(paths.dir, 0o700);
    chmodSync(paths.events, 0o600);
  }
  const ckpt = readJson<{ total: number }>(paths.ckpt, { total: 0 });
  let trigger = updateTrigger(state, ev, ckpt.total);
  if (!mayTrigger) trigger = undefined;
  if (trigger && !existsSync(paths.lock)) state.spawned = state.total;
  writeFileSync(paths.state, JSON.stringify(state), { mode: 0o600 });
  return trigger && !existsSync(paths.lock) ? trigger : undefined;
}

/** The ids of the memories given to this session so far, each once (none when nothing was). */
export function readInjected(paths: SessionPaths): string[] {
  try {
    return [...new Set(readFileSync(paths.injected, 'utf8').split('\n').filter(Boolean))];
  } catch {
    return [];
  }
}

/** Adds ids to the session's list of memories given to it (0600, as every file of the folder). */
export function noteInjectedIds(paths: SessionPaths, ids: readonly string[]): void {
  if (ids.length) appendFileSync(paths.injected, `${ids.join('\n')}\n`, { mode: 0o600 });
}

/** Empties that list (the agent compacted or cleared its context: what it was given is gone). */
export function clearInjected(paths: SessionPaths): void {
  writeFileSync(paths.injected, '', { mode: 0o600 });
}

/** Reads a session's events (skipping any torn or malformed line). */
export function readEvents(file: string): AgentEvent[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: AgentEvent[] = [];
  for (const line of text.split('\n')) {
    if (!line) continue;
    try {
      const e = JSON.parse(line);
      if (e && typeof e === 'object' && typeof e.event === 'string') out.push(e);
    } catch {}
  }
  return out;
}

/** One line in .git/mem/logs/hooks.log: a hook never fails the agent, it leaves a note. */
export function logLine(commonDir: string | undefined, msg: string): void {
  if (!commonDir) return;
  try {
    const dir = join(commonDir, 'mem', 'logs');
    mkdirSync(dir, { recursive: true });
    appendFileSync(
      join(dir, 'hooks.log'),
      `${new Date().toISOString()} ${msg.replace(/\s+/g, ' ').slice(0, 500)}\n`,
    );
  } catch {}
}
