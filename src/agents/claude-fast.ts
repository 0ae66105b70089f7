/**
 * Fast path of `git mem hook claude-code` for tool events (PostToolUse,
 * PostToolUseFailure), run by bin/git-mem.js before the CLI bundle loads:
 * it appends the event to the local buffer and returns, so a tool call costs
 * the agent little more than starting node. Built as its own entry point
 * (dist/claude-fast.js) and importing node built-ins only.
 *
 * Other events go straight to the hook handler (claude-hook.ts) without the
 * CLI's command table and argument parser; with extra arguments or
 * GIT_MEM_NO_FAST_HOOK set, everything falls through to the full CLI.
 */
import { fstatSync, readFileSync } from 'node:fs';
import { appendEvent, compactEvent, findCommonDir, logLine, sessionPaths, TOOL_EVENTS } from './events.js';

export interface FastIO {
  out(s: string): void;
  err(s: string): void;
  readStdin(): Promise<string | undefined>;
  isTTY: boolean;
  stdinIsTTY: boolean;
}

export type FastResult = { code: number } | { io: FastIO };

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

function passOn(text: string | undefined): FastResult {
  return {
    io: {
      out: (s) => process.stdout.write(s),
      err: (s) => process.stderr.write(s),
      isTTY: !!process.stdout.isTTY,
      stdinIsTTY: text === undefined,
      readStdin: async () => text,
    },
  };
}

/** Any other event: the hook handler itself, without loading the CLI's commands and argument parser. */
async function slowPath(text: string | undefined): Promise<FastResult> {
  const { io } = passOn(text) as { io: FastIO };
  // the CLI build's claude-hook entry (a runtime path, so this file's own build does not pull it in)
  const url = new URL('./claude-hook.js', import.meta.url).href;
  const { runClaudeHook } = (await import(url)) as typeof import('./claude-hook.js');
  return {
    code: await runClaudeHook({ io, cwd: process.cwd(), env: process.env, json: false, stores: [] }, []),
  };
}

export async function fastHook(argv: string[]): Promise<FastResult> {
  if (argv.length !== 2 || process.env.GIT_MEM_NO_FAST_HOOK) return passOn(await readAll());
  const text = await readAll();
  let p: Record<string, unknown>;
  try {
    p = JSON.parse(text ?? '');
  } catch {
    return slowPath(text);
  }
  if (
    !p ||
    typeof p !== 'object' ||
    !TOOL_EVENTS.has(String(p.hook_event_name)) ||
    typeof p.session_id !== 'string' ||
    !p.session_id
  ) {
    return slowPath(text);
  }
  const common =
    findCommonDir(process.cwd()) ?? (typeof p.cwd === 'string' ? findCommonDir(p.cwd) : undefined);
  if (!common) return slowPath(text);
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
