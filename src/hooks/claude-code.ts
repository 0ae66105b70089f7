/**
 * `git mem hook claude-code`: the one dispatcher of the agent hooks, which
 * Claude Code (and the agents that copy its hook format: Codex CLI, Factory
 * Droid) run on each hook event, with the event's JSON on stdin.
 *
 *  SessionStart (startup, resume, clear, compact)  → context pack as additionalContext
 *  UserPromptSubmit                                 → relevant memories, only above the bar
 *                                                     (asked of a running query daemon first)
 *  PostToolUse / PostToolUseFailure                 → append to .git/mem/events/
 *  Stop / SessionEnd                                → checkpoint + session summary, detached
 *
 * `git mem hook cursor` is the same handler for Cursor (`.cursor/hooks.json`): its
 * payloads are read as Claude's (events.ts normalizePayload), and what it prints is
 * in Cursor's shape: `{"additional_context": …}` at sessionStart; at
 * beforeSubmitPrompt, which can add nothing to the prompt, `{"continue": true}`
 * once the prompt is recorded (no memory is searched for it, none counted as used).
 *
 * Two ways in, one code path: the CLI's `hook claude-code` (src/cli/hook.ts) calls
 * runClaudeHook with its context, and bin/git-mem.js, for that exact command line,
 * loads this module alone (dist/agent-hook.js) and calls hookMain, which calls
 * runClaudeHook with a context of its own, so a tool event does not pay for loading
 * the CLI. Hence the module's own imports are light (node built-ins, the event
 * buffer, the repository finder, the daemon's wire, the framing check); the store
 * and everything that reads it are imported when an event needs them.
 *
 * A memory failure must never break the agent's session: every path exits 0,
 * and anything malformed or unknown leaves one line in .git/mem/logs/hooks.log.
 */
import { existsSync, fstatSync, readFileSync, writeFileSync } from 'node:fs';
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
  TOOL_EVENTS,
} from '../agents/events.js';
import type { RunContext } from '../commands/context.js';
import { ask, DEFAULT_SOCKET, daemonMode } from '../daemon/wire.js';
import { openRepo } from '../gitstore/repo.js';
import type { Store } from '../gitstore/store.js';
import { unframe } from '../safety/frame.js';
import { mark } from '../trace.js';

/** What the dispatcher needs of a run: where, with which environment, its stdin and stdout. */
export type HookContext = Pick<RunContext, 'cwd' | 'env'> & {
  io: Pick<RunContext['io'], 'out' | 'err' | 'readStdin'>;
};

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

function inline(ctx: HookContext): boolean {
  return ['1', 'true', 'yes'].includes(String(ctx.env.GIT_MEM_HOOK_INLINE ?? '').toLowerCase());
}

/** Runs `git mem checkpoint …` in a detached process (the agent does not wait), or inline when asked. */
async function handOff(
  ctx: HookContext,
  session: string,
  o: { final?: boolean; trigger?: string; recover?: boolean },
): Promise<void> {
  if (inline(ctx)) {
    await withStore(ctx, async (store) => {
      const { runCheckpoint, recoverSessions } = await import('../agents/checkpoint.js');
      if (o.recover) await recoverSessions(store, session);
      else await runCheckpoint(store, session, { final: o.final, trigger: o.trigger });
    });
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
  const { spawn } = await import('node:child_process');
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

function print(ctx: HookContext, event: string, text: string, agent: HookAgent = 'claude-code'): void {
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

/** How long a prompt waits for a running daemon before this process answers it itself. */
const PROMPT_WAIT_MS = 1500;
/** The part of a prompt sent to the daemon (its JSON stays far below the daemon's request limit). */
const MAX_PROMPT_CHARS = 100_000;

/**
 * The prompt's injection from a running query daemon of this repository (op `prompt`: the
 * same promptContext this process would run, on the daemon's warm catalog; the daemon counts
 * the use). Undefined when none runs, it does not answer in time, or its answer is not one the
 * framing function made: this process then answers itself. Never starts a daemon.
 */
async function promptFromDaemon(
  ctx: HookContext,
  common: string,
  prompt: string,
  exclude: string[],
): Promise<{ text: string; ids: string[] } | undefined> {
  if (daemonMode(ctx.env) === 'off') return undefined;
  const sock = join(common, ...DEFAULT_SOCKET);
  if (!existsSync(sock)) return undefined;
  try {
    // relevance reads the prompt's first words; a pasted log must not exceed the daemon's request limit
    const q = { prompt: prompt.slice(0, MAX_PROMPT_CHARS), exclude, countUse: true };
    const reply = await ask(sock, { op: 'prompt', q }, PROMPT_WAIT_MS);
    if (!reply.ok || !reply.result || typeof reply.result !== 'object') return undefined;
    const r = reply.result as { text?: unknown; ids?: unknown };
    const text = typeof r.text === 'string' ? r.text : '';
    // only ever a text the one framing function made (a daemon of another build may differ)
    if (text && unframe(text) === undefined) return undefined;
    mark('daemon answered prompt');
    return { text, ids: Array.isArray(r.ids) ? r.ids.map(String) : [] };
  } catch {
    return undefined;
  }
}

export async function runClaudeHook(
  ctx: HookContext,
  _args: string[] = [],
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
    if (TOOL_EVENTS.has(event)) {
      // the hot path: one append, and a checkpoint handed to a detached process now and then
      const trigger = appendEvent(paths, ev);
      if (trigger) await handOff(ctx, session, { trigger });
      return 0;
    }
    switch (event) {
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
        });
        {
          const { needsRecovery } = await import('../agents/checkpoint.js');
          if (needsRecovery(common, session)) await handOff(ctx, session, { recover: true });
        }
        return 0;
      case 'UserPromptSubmit': {
        appendEvent(paths, ev, false);
        if (agent === 'cursor') {
          ctx.io.out(`${JSON.stringify({ continue: true })}\n`);
          return 0;
        }
        const prompt = p.prompt;
        if (typeof prompt !== 'string' || !prompt.trim()) return 0;
        const exclude = readInjected(paths);
        // a running daemon answers with the same function on its warm catalog (it counts the use)
        const served = await promptFromDaemon(ctx, common, prompt, exclude);
        if (served) {
          print(ctx, 'UserPromptSubmit', served.text);
          noteInjectedIds(paths, served.ids);
          return 0;
        }
        await withStore(ctx, async (store) => {
          const { promptContext } = await import('../search/relevance.js');
          const inj = await promptContext(store, prompt, { exclude: new Set(exclude) });
          print(ctx, 'UserPromptSubmit', inj.text);
          await noteInjected(store, paths, inj.ids, true);
        });
        return 0;
      }
      case 'Stop':
      case 'SessionEnd':
        appendEvent(paths, ev, false);
        // the marker makes the end survive a finaliser that dies: the next SessionStart finishes it
        if (event === 'SessionEnd')
          writeFileSync(paths.end, JSON.stringify({ reason: ev.reason ?? null, at: ev.ts }), { mode: 0o600 });
        await handOff(ctx, session, { final: true, trigger: event === 'Stop' ? 'stop' : 'session-end' });
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

/** All of stdin, read synchronously from fd 0 (cheaper than instantiating process.stdin); undefined on a terminal. */
async function readAll(): Promise<string | undefined> {
  try {
    if (fstatSync(0).isCharacterDevice()) return undefined;
    return readFileSync(0, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EAGAIN') {
      // a non-blocking pipe: read it as a stream
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    }
    return '';
  }
}

/**
 * What bin/git-mem.js runs for `git mem hook claude-code` and `hook cursor` (dist/agent-hook.js):
 * the same dispatcher as the CLI's, with this process's directory, environment, stdin and stdout,
 * without loading the CLI. Its exit code.
 */
export function hookMain(agent: HookAgent = 'claude-code'): Promise<number> {
  return runClaudeHook(
    {
      cwd: process.cwd(),
      env: process.env,
      io: {
        out: (s) => process.stdout.write(s),
        err: (s) => process.stderr.write(s),
        readStdin: readAll,
      },
    },
    [],
    agent,
  );
}

/**
 * Starts the query daemon in the background (never waiting for it) when the
 * store is big enough that search keeps an index snapshot worth serving warm,
 * so the session's prompts are answered by a process whose catalog and git reader
 * are warm (the same answer as the hook's own, sooner). Only an agent's session
 * start and `git mem daemon start` start it for a session; the git hooks never do.
 */
async function warmSearchDaemon(ctx: HookContext, store: Store): Promise<void> {
  const d = await import('../daemon/client.js');
  if (d.daemonMode(ctx.env) === 'off') return;
  try {
    const { statSync } = await import('node:fs');
    const sock = d.socketPath(store);
    if (existsSync(sock) || sock.length > 100) return;
    if (statSync(join(d.daemonDir(store), 'index.json')).size < d.AUTO_START_BYTES) return;
    d.launchDaemon(store, ctx.env);
  } catch {}
}

async function withStore(ctx: HookContext, fn: (store: Store) => Promise<void>): Promise<void> {
  const { Store } = await import('../gitstore/store.js');
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

async function globalStore(ctx: HookContext): Promise<Store | undefined> {
  try {
    const { maybeGlobalStore } = await import('../commands/context.js');
    // what it reads of a run: the environment, and stderr for a warning
    const run = { ...ctx, stores: [] } as unknown as RunContext;
    return await maybeGlobalStore(run);
  } catch {
    return undefined;
  }
}
