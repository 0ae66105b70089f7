/**
 * `git mem hooks install|uninstall --cursor`: merges the git-mem hooks into
 * Cursor's project hook file, `.cursor/hooks.json`
 * (`{"version": 1, "hooks": {"<event>": [{"command": "…"}, …]}}`), keeping
 * every other hook and key there. Idempotent: a second install changes
 * nothing. Uninstall removes exactly the entries install added (recognised by
 * their command), the events that only held them, and the file if install
 * created it. The command runs `git mem hook cursor`, which reads Cursor's
 * payloads as Claude Code's and answers in Cursor's shape (claude-code.ts).
 */
import { existsSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { err } from '../errors.js';
import { markerFile, readSettings, writeSettings } from './claude-settings.js';

/** As for Claude Code: no path of this machine, and nothing at all where git-mem is not installed. */
export const CURSOR_HOOK_COMMAND = 'if command -v git-mem >/dev/null 2>&1; then git mem hook cursor; fi';

/** The hook file, relative to the work tree. */
export const CURSOR_HOOKS_FILE = join('.cursor', 'hooks.json');

/**
 * The Cursor events git-mem hooks (see CURSOR_EVENTS in src/agents/events.ts for what each is read
 * as): the session's start (context), each prompt, shell commands, file edits and MCP calls (the
 * session's events), and the agent's stop and the session's end (checkpoint and summary).
 */
export const CURSOR_HOOK_EVENTS = [
  'sessionStart',
  'beforeSubmitPrompt',
  'afterShellExecution',
  'afterFileEdit',
  'afterMCPExecution',
  'stop',
  'sessionEnd',
] as const;

type Json = Record<string, unknown>;
interface CursorEntry {
  command?: unknown;
  [k: string]: unknown;
}

const isOurs = (h: CursorEntry | undefined): boolean =>
  !!h && typeof h.command === 'string' && h.command.trim() === CURSOR_HOOK_COMMAND;

function hooksOf(file: Json): Record<string, unknown> | undefined {
  const h = file.hooks;
  if (h === undefined) return undefined;
  if (typeof h !== 'object' || h === null || Array.isArray(h))
    throw err(
      'E_INVALID_ARG',
      '"hooks" in .cursor/hooks.json is not an object',
      'fix the file by hand, then run git mem hooks install --cursor again',
    );
  return h as Record<string, unknown>;
}

/** Pure: adds the git-mem hooks to a Cursor hooks file's object; returns the events added. */
export function mergeCursorHooks(file: Json): string[] {
  const hooks = hooksOf(file) ?? {};
  const added: string[] = [];
  for (const event of CURSOR_HOOK_EVENTS) {
    const entries = hooks[event];
    if (entries !== undefined && !Array.isArray(entries))
      throw err(
        'E_INVALID_ARG',
        `"hooks.${event}" in .cursor/hooks.json is not a list`,
        'fix the file by hand, then run git mem hooks install --cursor again',
      );
    const list = (entries ?? []) as CursorEntry[];
    if (list.some(isOurs)) continue;
    hooks[event] = [...list, { command: CURSOR_HOOK_COMMAND }];
    added.push(event);
  }
  if (added.length) {
    // Cursor's format version; a file without one gets it, a newer one is left as it is
    if (file.version === undefined) file.version = 1;
    file.hooks = hooks;
  }
  return added;
}

/** Pure: removes the git-mem hooks (and the events that only held them); returns the events touched. */
export function removeCursorHooks(file: Json): string[] {
  const h = file.hooks;
  if (!h || typeof h !== 'object' || Array.isArray(h)) return [];
  const hooks = h as Record<string, unknown>;
  const removed: string[] = [];
  for (const event of Object.keys(hooks)) {
    const list = hooks[event];
    if (!Array.isArray(list) || !list.some(isOurs)) continue;
    removed.push(event);
    const rest = list.filter((e) => !isOurs(e));
    if (rest.length) hooks[event] = rest;
    else delete hooks[event];
  }
  return removed;
}

const TARGET = { name: 'cursor' };

export async function installCursorHooks(workTree: string): Promise<Record<string, unknown>> {
  const path = join(workTree, CURSOR_HOOKS_FILE);
  const existing = readSettings(path);
  const file = existing ?? {};
  const added = mergeCursorHooks(file);
  if (!added.length) return { hook: 'cursor', action: 'already installed', path, events: [] };
  writeSettings(path, file);
  if (!existing) {
    const m = await markerFile(workTree, TARGET, false);
    if (m) {
      mkdirSync(dirname(m), { recursive: true });
      writeFileSync(m, path);
    }
  }
  return { hook: 'cursor', action: 'installed', path, events: added };
}

export async function uninstallCursorHooks(workTree: string): Promise<Record<string, unknown>> {
  const path = join(workTree, CURSOR_HOOKS_FILE);
  const file = readSettings(path);
  const removed = file ? removeCursorHooks(file) : [];
  if (!file || !removed.length) return { hook: 'cursor', action: 'not installed', path, events: [] };
  const m = await markerFile(workTree, TARGET, false);
  const hooks = file.hooks as Record<string, unknown>;
  // what install created and nothing else holds: the version key alone is ours too
  const onlyOurs =
    Object.keys(hooks).length === 0 && Object.keys(file).every((k) => k === 'hooks' || k === 'version');
  if (m && existsSync(m) && onlyOurs) {
    rmSync(path, { force: true });
    rmSync(m, { force: true });
    try {
      rmdirSync(dirname(path));
    } catch {}
  } else writeSettings(path, file);
  return { hook: 'cursor', action: 'removed', path, events: removed };
}
