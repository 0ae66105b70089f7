import type { Ctx } from '../cli/context.js';

/** Stub: the anchors capability fills this in (check the anchors the commit touched). */
export async function runPostCommitHook(_ctx: Ctx, _args: string[]): Promise<number> {
  return 0;
}
