/**
 * Extension points of `add` that later capabilities fill in (anchors resolve
 * --anchor/--symbol; search warns about duplicates). Kept here so add.ts stays
 * small and the core never imports heavy modules.
 */
import type { AddHooks, AddInput } from '../commands/memory.js';
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import type { Anchor, MemoryRecord } from '../model/record.js';
import type { Ctx } from './context.js';

export interface CliAddHooks extends AddHooks {
  anchors?: Anchor[];
  /** Return an exit code to stop the add (e.g. a duplicate without --force). */
  beforeAdd?: (input: AddInput) => Promise<number | undefined>;
  notes?: (r: MemoryRecord) => string[];
}

/** Parses PATH[:START[-END]] into a bare anchor spec (the anchors module completes it). */
export function parseAnchorSpec(spec: string): Anchor {
  const m = /^(.+?)(?::(\d+)(?:-(\d+))?)?$/.exec(spec.trim());
  if (!m || !m[1])
    throw err('E_INVALID_ARG', `invalid --anchor "${spec}"`, 'use PATH, PATH:LINE or PATH:START-END');
  const a: Anchor = { path: m[1] };
  if (m[2]) {
    const start = Number(m[2]);
    const end = m[3] ? Number(m[3]) : start;
    if (start < 1 || end < start)
      throw err(
        'E_INVALID_ARG',
        `invalid line range in --anchor "${spec}"`,
        'lines start at 1 and END ≥ START',
      );
    a.lines = [start, end];
  }
  return a;
}

/**
 * `person`: the add is a person's explicit `git mem add`, where a likely duplicate
 * with a different title warns and proceeds (agents and automatic adds keep the gate).
 */
export async function addHooks(
  _ctx: Ctx,
  _store: Store,
  a: Record<string, any>,
  o: { person?: boolean } = {},
): Promise<CliAddHooks> {
  const anchors: Anchor[] = [...(a.anchor ?? []).map(String).map(parseAnchorSpec)];
  for (const s of (a.symbol ?? []).map(String)) {
    const hash = s.lastIndexOf('#');
    anchors.push(hash > 0 ? { path: s.slice(0, hash), symbol: s.slice(hash + 1) } : { path: '', symbol: s });
  }
  // anchors: completed inside the add transaction (blob ids, hashes, symbols; blobs kept reachable)
  const anchorHooks = anchors.length
    ? (await import('../anchors/add-hooks.js')).anchorAddHooks(_ctx.cwd, _store)
    : {};
  // likely duplicates stop the add unless --force (src/search/add-hook.ts)
  return {
    beforeAdd: (await import('../search/add-hook.js')).duplicateGuard(_ctx, _store, a, o),
    anchors,
    ...anchorHooks,
  };
}
