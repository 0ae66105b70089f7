/**
 * `git mem hooks install|uninstall --claude [--local]` (and `--codex`,
 * `--droid`): merges the git-mem hooks into the agent's hook file —
 * `.claude/settings.json` (or `.claude/settings.local.json`),
 * `.codex/hooks.json`, `.factory/settings.json` — preserving everything else
 * there. The three agents share Claude Code's hook format; they differ in the
 * file and in the events they have. Idempotent: a second install changes
 * nothing. Uninstall removes exactly the entries install added (recognised by
 * their command), the groups and keys that only held them, and the file if
 * install created it.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { err } from '../errors.js';
import { openRepo } from '../gitstore/repo.js';

/**
 * The command written into the agent's (often committed) hook file: no path
 * of this machine, and nothing at all where git-mem is not installed (a
 * teammate without it sees no hook error, and the agent is never blocked).
 */
export const HOOK_COMMAND = 'if command -v git-mem >/dev/null 2>&1; then git mem hook claude-code; fi';
/** What earlier versions wrote: still ours, replaced on the next install. */
const LEGACY_COMMANDS = ['git mem hook claude-code'];

/** The events git-mem hooks, with the matcher (tool events) and timeout (seconds) it installs. */
const CLAUDE_EVENTS: Array<{ event: string; matcher?: string; timeout: number }> = [
  { event: 'SessionStart', timeout: 15 },
  { event: 'UserPromptSubmit', timeout: 10 },
  { event: 'PostToolUse', matcher: '*', timeout: 5 },
  { event: 'PostToolUseFailure', matcher: '*', timeout: 5 },
  { event: 'Stop', timeout: 10 },
  { event: 'SessionEnd', timeout: 5 },
];

/** An agent that reads Claude Code's hook format: where its project hook file is and which events it has. */
export interface AgentTarget {
  name: 'claude' | 'codex' | 'droid';
  /** the hook file, relative to the work tree */
  file: (local: boolean) => string;
  events: typeof CLAUDE_EVENTS;
}

export const AGENT_TARGETS: Record<AgentTarget['name'], AgentTarget> = {
  claude: {
    name: 'claude',
    file: (local) => join('.claude', local ? 'settings.local.json' : 'settings.json'),
    events: CLAUDE_EVENTS,
  },
  // Codex CLI (hooks behind `[features] codex_hooks = true`): no SessionEnd, no PostToolUseFailure
  codex: {
    name: 'codex',
    file: () => join('.codex', 'hooks.json'),
    events: CLAUDE_EVENTS.filter((e) =>
      ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'Stop'].includes(e.event),
    ),
  },
  // Factory Droid: the hooks key of the project settings; no PostToolUseFailure
  droid: {
    name: 'droid',
    file: (local) => join('.factory', local ? 'settings.local.json' : 'settings.json'),
    events: CLAUDE_EVENTS.filter((e) => e.event !== 'PostToolUseFailure'),
  },
};

type Json = Record<string, unknown>;
interface HookEntry {
  type?: string;
  command?: string;
  [k: string]: unknown;
}
interface HookGroup {
  matcher?: string;
  hooks?: HookEntry[];
  [k: string]: unknown;
}

function isOurs(h: HookEntry | undefined): boolean {
  if (!h || typeof h.command !== 'string') return false;
  const c = h.command.trim();
  return c === HOOK_COMMAND || LEGACY_COMMANDS.includes(c);
}

/** Pure: adds the git-mem hooks to a settings object; returns the events added. */
export function mergeHooks(settings: Json, events: typeof CLAUDE_EVENTS = CLAUDE_EVENTS): string[] {
  if (
    settings.hooks !== undefined &&
    (typeof settings.hooks !== 'object' || settings.hooks === null || Array.isArray(settings.hooks))
  ) {
    throw err(
      'E_INVALID_ARG',
      '"hooks" in the agent settings is not an object',
      'fix the file by hand, then run git mem hooks install again',
    );
  }
  const hooks = (settings.hooks ?? {}) as Record<string, HookGroup[]>;
  const added: string[] = [];
  for (const { event, matcher, timeout } of events) {
    const groups = Array.isArray(hooks[event]) ? hooks[event] : [];
    const ours = groups.flatMap((g) => (Array.isArray(g?.hooks) ? g.hooks.filter(isOurs) : []));
    if (ours.length) {
      // an entry an earlier version wrote gets today's command
      const old = ours.filter((h) => h.command !== HOOK_COMMAND);
      for (const h of old) h.command = HOOK_COMMAND;
      if (old.length) added.push(event);
      continue;
    }
    const group: HookGroup = {};
    if (matcher !== undefined) group.matcher = matcher;
    group.hooks = [{ type: 'command', command: HOOK_COMMAND, timeout }];
    hooks[event] = [...groups, group];
    added.push(event);
  }
  if (added.length) settings.hooks = hooks;
  return added;
}

/** Pure: removes the git-mem hooks (and what only held them); returns the events touched. */
export function removeHooks(settings: Json): string[] {
  const hooks = settings.hooks as Record<string, HookGroup[]> | undefined;
  if (!hooks || typeof hooks !== 'object' || Array.isArray(hooks)) return [];
  const removed: string[] = [];
  for (const event of Object.keys(hooks)) {
    const groups = hooks[event];
    if (!Array.isArray(groups)) continue;
    let touched = false;
    const kept: HookGroup[] = [];
    for (const g of groups) {
      if (!g || !Array.isArray(g.hooks) || !g.hooks.some(isOurs)) {
        kept.push(g);
        continue;
      }
      touched = true;
      const rest = g.hooks.filter((h) => !isOurs(h));
      if (rest.length) kept.push({ ...g, hooks: rest });
    }
    if (!touched) continue;
    removed.push(event);
    if (kept.length) hooks[event] = kept;
    else delete hooks[event];
  }
  if (removed.length && Object.keys(hooks).length === 0) delete settings.hooks;
  return removed;
}

export function readSettings(file: string): Json | undefined {
  if (!existsSync(file)) return undefined;
  const text = readFileSync(file, 'utf8');
  if (!text.trim()) return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw err(
      'E_INVALID_ARG',
      `cannot parse ${file}: ${(e as Error).message}`,
      'fix the JSON by hand, then run the command again',
    );
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw err('E_INVALID_ARG', `${file} does not hold a JSON object`, 'fix it by hand first');
  return v as Json;
}

export function writeSettings(file: string, v: Json): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(v, null, 2)}\n`);
  renameSync(tmp, file);
}

/** Local note of a settings file install created (so uninstall can remove it again). */
export async function markerFile(
  workTree: string,
  target: { name: string },
  local: boolean,
): Promise<string | undefined> {
  const common = (await openRepo(workTree).catch(() => undefined))?.commonDir;
  if (!common) return undefined;
  // Claude's name predates the other agents (kept so earlier installs uninstall cleanly)
  const name =
    target.name === 'claude'
      ? `claude-created-${local ? 'settings.local' : 'settings'}`
      : `${target.name}-created-${local ? 'local' : 'shared'}`;
  return join(common, 'mem', name);
}

export async function installAgentHooks(
  workTree: string,
  target: AgentTarget,
  o: { local: boolean },
): Promise<Record<string, unknown>> {
  const path = join(workTree, target.file(o.local));
  const existing = readSettings(path);
  const settings = existing ?? {};
  const added = mergeHooks(settings, target.events);
  if (!added.length) return { hook: target.name, action: 'already installed', path, events: [] };
  writeSettings(path, settings);
  if (!existing) {
    const m = await markerFile(workTree, target, o.local);
    if (m) {
      mkdirSync(dirname(m), { recursive: true });
      writeFileSync(m, path);
    }
  }
  return { hook: target.name, action: 'installed', path, events: added };
}

export async function uninstallAgentHooks(
  workTree: string,
  target: AgentTarget,
  o: { local: boolean },
): Promise<Record<string, unknown>> {
  const path = join(workTree, target.file(o.local));
  const settings = readSettings(path);
  if (!settings) return { hook: target.name, action: 'not installed', path, events: [] };
  const removed = removeHooks(settings);
  if (!removed.length) return { hook: target.name, action: 'not installed', path, events: [] };
  const m = await markerFile(workTree, target, o.local);
  if (m && existsSync(m) && Object.keys(settings).length === 0) {
    rmSync(path, { force: true });
    rmSync(m, { force: true });
    // and the agent's directory, if install made it and it is empty now
    try {
      rmdirSync(dirname(path));
    } catch {}
  } else writeSettings(path, settings);
  return { hook: target.name, action: 'removed', path, events: removed };
}
