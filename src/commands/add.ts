/**
 * The add operation with its steps, as the CLI, the MCP server and the hooks
 * run it: a likely secret is refused before the duplicate check sees the text
 * (it may go to an embedding endpoint); anchor specs are completed inside the
 * write (blob ids, hashes, symbols); the duplicate check runs while the objects
 * are written and only the ref waits for it (Store.write's gate).
 */

import { parseAnchorSpecs } from '../anchors/types.js';
import type { Store } from '../gitstore/store.js';
import type { MemoryRecord } from '../model/record.js';
import { assertRecordClean, scanRecord } from '../safety/secrets.js';
import { type AddInput, addMemory } from './memory.js';

export interface AddOptions {
  /** Where relative anchor paths are resolved from. */
  cwd: string;
  /** The environment (the search daemon's mode and socket). */
  env: NodeJS.ProcessEnv;
  /** Anchors to code: PATH[:START[-END]]. */
  anchors?: readonly string[];
  /** Anchors to symbols: [PATH#]NAME. */
  symbols?: readonly string[];
  /**
   * A likely duplicate refuses the add (E_DUPLICATE), is only noted through warn (`force`), or is
   * not looked for. `person`: a person's explicit add, refused only by a near-identical memory (the
   * same text, or the same title and similar text); otherwise it warns and proceeds. Agents and
   * automatic adds keep the gate (`refuse`).
   */
  duplicates?: 'refuse' | 'person' | 'force' | 'off';
  /** Ask the search daemon for the duplicate check (not for the global store). Default true. */
  daemon?: boolean;
  /** Store text that looks like a secret; may still be settling (a setting being read) when the add starts. */
  allowSecret?: boolean | Promise<boolean>;
  /** Notes and warnings, one line each (stderr in the CLI). */
  warn?: (line: string) => void;
}

export interface AddResult {
  record: MemoryRecord;
  commit: string;
  /** Lines describing the anchors made (and what was noticed making them). */
  notes: string[];
}

export async function add(
  store: Store,
  input: Omit<AddInput, 'anchors' | 'allowSecret'>,
  opts: AddOptions,
): Promise<AddResult> {
  // the duplicate check's modules load (files read off the main thread) while the processes start
  const dupes = opts.duplicates ?? 'refuse';
  const dupCheck = dupes === 'off' ? undefined : import('../search/duplicate-check.js');
  dupCheck?.then((m) => m.preload(store, opts.env, opts.daemon ?? true)).catch(() => {});
  // what the write needs (its git processes, git config) starts now, beside the checks below
  store.prepareWrite();
  const allowP = Promise.resolve(opts.allowSecret ?? false);
  allowP.catch(() => {});
  const fields = {
    title: input.title,
    body: input.body,
    source: input.source,
    tags: input.tags ?? [],
    scope: input.scope ?? [],
    alias: input.alias,
  };
  if (scanRecord(fields).length && !(await allowP)) assertRecordClean(fields);
  const anchors = parseAnchorSpecs(opts.anchors, opts.symbols);
  const anchorSteps = anchors.length
    ? (await import('../anchors/add-anchors.js')).anchorSteps(opts.cwd, store)
    : undefined;
  const gate =
    dupCheck === undefined
      ? undefined
      : (await dupCheck).checkDuplicates(
          store,
          { title: input.title, body: input.body, tags: input.tags },
          {
            env: opts.env,
            daemon: opts.daemon ?? true,
            force: dupes === 'force',
            person: dupes === 'person',
            warn: opts.warn,
          },
        );
  gate?.catch(() => {}); // awaited by the write; this only marks it handled until then
  const [allowSecret] = await Promise.all([allowP, store.ident()]);
  const { record, commit } = await addMemory(
    store,
    { ...input, anchors, allowSecret },
    { prepareAnchors: anchorSteps?.prepareAnchors, gate },
  );
  return { record, commit, notes: anchorSteps?.notes(record) ?? [] };
}
