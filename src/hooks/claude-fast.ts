/**
 * What bin/git-mem.js runs for `git mem hook claude-code` before loading the
 * CLI, for the two events an agent waits on most:
 *  - tool events (PostToolUse, PostToolUseFailure) are appended to the local
 *    buffer, so a tool call costs the agent little more than starting node;
 *  - UserPromptSubmit, when a search daemon serves the store, is answered by
 *    the daemon as a whole (op `prompt`: candidates, the relevance bar and the
 *    framed text), so the hook process loads no store code.
 * Built from the CLI's own modules (the repository from openRepo, the event
 * buffer of events.ts); everything else, or anything unusual, goes to the CLI
 * (`hook claude-code`, claude-code.ts) with the stdin already read.
 */
import { existsSync, fstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  appendEvent,
  compactEvent,
  logLine,
  normalizePayload,
  noteInjectedIds,
  readInjected,
  sessionPaths,
  TOOL_EVENTS,
} from '../agents/events.js';
import { openRepo } from '../gitstore/repo.js';
import { unframe } from '../safety/frame.js';
import { ask, DEFAULT_SOCKET, daemonMode } from '../search/daemon-wire.js';

/** Done (the exit code), or the CLI's to do with this stdin. */
export type FastResult = { code: number } | { stdin: string | undefined };

/** All of stdin, read synchronously from fd 0 (cheaper than instantiating process.stdin); undefined on a terminal. */
async function readAll(): Promise<string | undefined> {
  try {
    if (fstatSync(0).isCharacterDevice()) return undefined;
    return readFileSync(0, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EAGAIN') {
      // a non-blocking pipe: fall back to the stream
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    }
    return '';
  }
}

/** The common git dir of the repository at `cwd` (the CLI's finder), undefined outside one. */
async function commonDirOf(cwd: string): Promise<string | undefined> {
  try {
    return (await openRepo(cwd, process.env)).commonDir;
  } catch {
    return undefined;
  }
}

/** How long a prompt waits for the daemon before the in-process path takes over. */
const PROMPT_WAIT_MS = 1500;
/** The part of a prompt sent to the daemon (its JSON stays far below the daemon's request limit). */
const MAX_PROMPT_CHARS = 100_000;

/**
 * UserPromptSubmit through a running search daemon. Undefined when there is
 * none (or it fails): the hook handler then does the work itself.
 */
async function promptViaDaemon(p: Record<string, unknown>): Promise<FastResult | undefined> {
  const env = process.env;
  if (daemonMode(env) === 'off') return undefined;
  const prompt = p.prompt;
  if (typeof prompt !== 'string' || !prompt.trim()) return undefined;
  const common = await commonDirOf(process.cwd());
  if (!common) return undefined;
  const sock = join(common, ...DEFAULT_SOCKET);
  if (!existsSync(sock)) return undefined;
  const paths = sessionPaths(common, p.session_id as string);
  const exclude = readInjected(paths);
  let result: { text?: unknown; ids?: unknown } | undefined;
  try {
    // relevance reads the prompt's first words; a pasted log must not exceed the daemon's request limit
    const q = { prompt: prompt.slice(0, MAX_PROMPT_CHARS), exclude, countUse: true };
    const reply = await ask(sock, { op: 'prompt', q }, PROMPT_WAIT_MS);
    if (!reply.ok || !reply.result || typeof reply.result !== 'object') return undefined;
    result = reply.result as typeof result;
  } catch (e) {
    // a daemon too busy to answer in time would make the handler wait for it again: not this time
    if ((e as Error).message === 'daemon timed out') env.GIT_MEM_DAEMON = 'off';
    return undefined;
  }
  const text = typeof result?.text === 'string' ? result.text : '';
  // only ever a text the one framing function made (a daemon of another build may differ): else do it here
  if (text && unframe(text) === undefined) return undefined;
  const ids = Array.isArray(result?.ids) ? result.ids.map(String) : [];
  try {
    appendEvent(paths, compactEvent(p as Parameters<typeof compactEvent>[0]), false);
    noteInjectedIds(paths, ids);
  } catch (e) {
    logLine(common, `claude-code UserPromptSubmit: ${(e as Error).message}`);
  }
  if (text)
    process.stdout.write(
      `${JSON.stringify({ hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: text } })}\n`,
    );
  return { code: 0 };
}

export async function fastHook(argv: string[]): Promise<FastResult> {
  const stdin = await readAll();
  if (argv.length !== 2 || process.env.GIT_MEM_NO_FAST_HOOK) return { stdin };
  let p: Record<string, unknown>;
  try {
    p = normalizePayload(JSON.parse(stdin ?? ''));
  } catch {
    return { stdin };
  }
  if (!p || typeof p !== 'object' || typeof p.session_id !== 'string' || !p.session_id) return { stdin };
  if (p.hook_event_name === 'UserPromptSubmit') return (await promptViaDaemon(p)) ?? { stdin };
  if (!TOOL_EVENTS.has(String(p.hook_event_name))) return { stdin };
  const common = await commonDirOf(process.cwd());
  if (!common) return { stdin };
  try {
    const paths = sessionPaths(common, p.session_id);
    const trigger = appendEvent(paths, compactEvent(p));
    if (trigger) {
      // checkpoints load the store: leave them to a detached process so the agent does not wait
      const { spawn } = await import('node:child_process');
      const child = spawn(
        process.execPath,
        [process.argv[1], 'checkpoint', '--session', p.session_id, '--trigger', trigger, '--quiet'],
        {
          cwd: process.cwd(),
          detached: true,
          stdio: 'ignore',
          env: process.env,
        },
      );
      child.on('error', () => {});
      child.unref();
    }
  } catch (e) {
    logLine(common, `claude-code ${String(p.hook_event_name)}: ${(e as Error).message}`);
  }
  return { code: 0 };
}
