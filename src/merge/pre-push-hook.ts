import type { Ctx } from '../cli/context.js';

/** Stub: the sync capability fills this in (push refs/memory along, never blocking). */
export async function runPrePushHook(_ctx: Ctx, _args: string[]): Promise<number> {
  return 0;
}
