/**
 * `git mem hook claude-code`: the handler Claude Code (and the agents that
 * copy its hook format: Codex CLI, Factory Droid) run on each hook event,
 * with the event's JSON on stdin.
 *
 *  SessionStart (startup, resume, clear, compact)  → context pack as additionalContext
 *  UserPromptSubmit                                 → relevant memories, only above the bar
 *  PostToolUse / PostToolUseFailure                 → append to .git/mem/events/ (claude-fast.ts, before the CLI)
 *  Stop / SessionEnd                                → checkpoint + session summary, detached
 *
 * `git mem hook cursor` is the same handler for Cursor (`.cursor/hooks.json`): its
 * payloads are read as Claude's (events.ts normalizePayload), and what it prints is
 * in Cursor's shape: `{"additional_context": …}` at sessionStart; at
 * beforeSubmitPrompt, which can add nothing to the prompt, `{"continue": true}`
 * once the prompt is recorded (no memory is searched for it, none counted as used).
 *
 * A memory failure must never break the agent's session: every path exits 0,
 * and anything malformed or unknown leaves one line in .git/mem/logs/hooks.log.
 */
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type AgentEvent,
  appendEvent,
  clearInjected,
  compactEvent,
  logLine as log,
  normalizePayload,
  noteInjectedIds,
  readInjected,
  type SessionPaths,
  sessionPaths,
} from '../agents/events.js';
import type { RunContext } from '../commands/context.js';
import { openRepo } from '../gitstore/repo.js';
import { Store } from '../gitstore/store.js';

const KNOWN_EVENTS = new Set([
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'Stop',
  'SubagentStop',
  'SessionEnd',
  'PreCompact',
  'Notification',
  'PermissionRequest',
]);

/** The CLI launcher, for detached work (found from this module in dist/ or in src/). */
export function binPath(): string | undefined {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const rel of ['../bin/git-mem.js', '../../bin/git-mem.js']) {
    const p = join(here, rel);
    if (existsSync(p)) return p;
  }
  return undefined;
}

function inline(ctx: RunContext): boolean {
  return ['1', 'true', 'yes'].includes(String(ctx.env.GIT_MEM_HOOK_INLINE ?? '').toLowerCase());
}

/** Runs `git mem checkpoint …` in a detached process (the agent does not wait), or inline when asked. */
async function handOff(
  ctx: RunContext,
  store: Store,
  session: string,
  o: { final?: boolean; trigger?: string; recover?: boolean },
): Promise<void> {
  if (inline(ctx)) {
    const { runCheckpoint, recoverSessions } = await import('../agents/checkpoint.js');
    if (o.recover) await recoverSessions(store, session);
    else await runCheckpoint(store, session, { final: o.final, trigger: o.trigger });
    return;
  }
  const bin = binPath();
  if (!bin) throw new Error('cannot find bin/git-mem.js for a detached checkpoint');
  const args = o.recover
    ? ['checkpoint', '--recover', '--exclude', session, '--quiet']
    : [
        'checkpoint',
        '--session',
        session,
        ...(o.final ? ['--final'] : []),
        ...(o.trigger ? ['--trigger', o.trigger] : []),
        '--quiet',
      ];
  const child = spawn(process.execPath, [bin, ...args], {
    cwd: ctx.cwd,
    env: ctx.env,
    detached: true,
    stdio: 'ignore',
  });
  child.on('error', () => {});
  child.unref();
}

/** The agents whose hooks run this handler, by the shape of what they read back. */
export type HookAgent = 'claude-code' | 'cursor';

function print(ctx: RunContext, event: string, text: string, agent: HookAgent = 'claude-code'): void {
  if (!text) return;
  if (agent === 'cursor') {
    // Cursor takes context from sessionStart only (its other events' outputs have no such field)
    if (event === 'SessionStart') ctx.io.out(`${JSON.stringify({ additional_context: text })}\n`);
    return;
  }
  ctx.io.out(
    `${JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: text } })}\n`,
  );
}

async function noteInjected(
  store: Store,
  paths: SessionPaths,
  ids: string[],
  countUse: boolean,
): Promise<void> {
  if (!ids.length) return;
  noteInjectedIds(paths, ids);
  if (!countUse) return;
  try {
    // a memory given for a prompt counts as used (importance from usage, seed 000); the start pack does not
    const { recordUse } = await import('../search/usage.js');
    recordUse(store.repo, ids);
  } catch {}
}

export async function runClaudeHook(
  ctx: RunContext,
  _args: string[],
  agent: HookAgent = 'claude-code',
): Promise<number> {
  let common: string | undefined;
  let event = '?';
  const logLine = (dir: string | undefined, msg: string) => log(dir, msg.replace(/^claude-code/, agent));
  try {
    common = (await openRepo(ctx.cwd, ctx.env).catch(() => undefined))?.commonDir;
    const text = await ctx.io.readStdin();
    let p: Record<string, unknown>;
    try {
      p = normalizePayload(JSON.parse(text ?? ''));
    } catch {
      logLine(common, `claude-code: malformed payload (not JSON, ${text?.length ?? 0} bytes)`);
      return 0;
    }
    if (!p || typeof p !== 'object' || Array.isArray(p) || typeof p.hook_event_name !== 'string') {
      logLine(common, 'claude-code: malformed payload (no hook_event_name)');
      return 0;
    }
    event = p.hook_event_name;
    if (!KNOWN_EVENTS.has(event)) {
      logLine(common, `claude-code: unknown hook event "${event.slice(0, 60)}" ignored`);
      return 0;
    }
    if (typeof p.session_id !== 'string' || !p.session_id) {
      logLine(common, `claude-code ${event}: payload without session_id ignored`);
      return 0;
    }
    if (!common) return 0; // not in a repository: nothing to remember into
    const session = p.session_id;
    const paths = sessionPaths(common, session);
    const ev: AgentEvent = compactEvent(p);
    switch (event) {
      case 'PostToolUse':
      case 'PostToolUseFailure': {
        const trigger = appendEvent(paths, ev);
        if (trigger) await withStore(ctx, (store) => handOff(ctx, store, session, { trigger }));
        return 0;
      }
      case 'SessionStart':
        appendEvent(paths, ev, false);
        // after compaction or /clear the agent no longer holds what it was given: it may be given again
        if (ev.source === 'compact' || ev.source === 'clear') clearInjected(paths);
        await withStore(ctx, async (store) => {
          const { sessionStartContext } = await import('../agents/inject.js');
          const global = await globalStore(ctx);
          const teams = await teamStores(store);
          try {
            const inj = await sessionStartContext(store, { currentSession: session, global, teams });
            print(ctx, 'SessionStart', inj.text, agent);
            await noteInjected(store, paths, inj.ids, false);
          } finally {
            global?.close();
            for (const t of teams) t.store.close();
          }
          await warmSearchDaemon(ctx, store);
          const { needsRecovery } = await import('../agents/checkpoint.js');
          if (needsRecovery(common!, session)) {
            await handOff(ctx, store, session, { recover: true });
          }
        });
        return 0;
      case 'UserPromptSubmit':
        appendEvent(paths, ev, false);
        if (agent === 'cursor') {
          ctx.io.out(`${JSON.stringify({ continue: true })}\n`);
          return 0;
        }
        if (typeof p.prompt !== 'string' || !p.prompt.trim()) return 0;
        await withStore(ctx, async (store) => {
          const { promptContext } = await import('../search/relevance.js');
          const inj = await promptContext(store, p.prompt as string, {
            exclude: new Set(readInjected(paths)),
          });
          print(ctx, 'UserPromptSubmit', inj.text);
          await noteInjected(store, paths, inj.ids, true);
        });
        return 0;
      case 'Stop':
      case 'SessionEnd':
        appendEvent(paths, ev, false);
        // the marker makes the end survive a finaliser that dies: the next SessionStart finishes it
        if (event === 'SessionEnd')
          writeFileSync(paths.end, JSON.stringify({ reason: ev.reason ?? null, at: ev.ts }), { mode: 0o600 });
        await withStore(ctx, (store) =>
          handOff(ctx, store, session, { final: true, trigger: event === 'Stop' ? 'stop' : 'session-end' }),
        );
        return 0;
      default:
        // PreToolUse, PreCompact, SubagentStop, Notification…: nothing to do
        return 0;
    }
  } catch (e) {
    logLine(common, `claude-code ${event}: ${(e as Error)?.message ?? e}`);
    return 0;
  }
}

/**
 * Starts the search daemon in the background (never waiting for it) when the
 * store is big enough that search keeps an index snapshot worth serving warm,
 * so the session's prompts are answered by a process whose catalog and git reader
 * are warm (the same answer as the hook's own, sooner).
 */
async function warmSearchDaemon(ctx: RunContext, store: Store): Promise<void> {
  const d = await import('../search/daemon-client.js');
  if (d.daemonMode(ctx.env) === 'off') return;
  try {
    const { statSync } = await import('node:fs');
    const sock = d.socketPath(store);
    if (existsSync(sock) || sock.length > 100) return;
    if (statSync(join(d.daemonDir(store), 'index.json')).size < d.AUTO_START_BYTES) return;
    const bin = d.binPath() ?? binPath();
    if (!bin) return;
    const child = spawn(process.execPath, [bin, 'daemon', 'run'], {
      cwd: ctx.cwd,
      env: { ...ctx.env, GIT_MEM_DAEMON: 'off' },
      detached: true,
      stdio: 'ignore',
    });
    child.on('error', () => {});
    child.unref();
  } catch {}
}

async function withStore(ctx: RunContext, fn: (store: Store) => Promise<void>): Promise<void> {
  const store = new Store(await openRepo(ctx.cwd, ctx.env));
  try {
    await fn(store);
  } finally {
    store.close();
  }
}

/** The team stores registered in this clone (none when the registry cannot be read: a hook never fails on it). */
async function teamStores(store: Store): Promise<import('../commands/stores.js').TeamStore[]> {
  try {
    const { openTeamStores } = await import('../commands/stores.js');
    return await openTeamStores(store.repo, store);
  } catch {
    return [];
  }
}

async function globalStore(ctx: RunContext): Promise<Store | undefined> {
  try {
    const { maybeGlobalStore } = await import('../commands/context.js');
    const s = await maybeGlobalStore({ ...ctx, stores: [] });
    return s;
  } catch {
    return undefined;
  }
}
