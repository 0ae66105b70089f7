import type { Ctx } from '../cli/context.js';

/** Stub: the agents capability fills this in (Claude Code hook payloads on stdin). */
export async function runClaudeHook(_ctx: Ctx, _args: string[]): Promise<number> {
  return 0;
}
