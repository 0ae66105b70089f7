/**
 * The add operation with its steps, as the CLI, the MCP server and the hooks
 * run it: a likely secret is refused before the duplicate check sees the text
 * (it may go to an embedding endpoint); anchor specs are completed inside the
 * write (blob ids, hashes, symbols); the duplicate check runs while the objects
 * are written and only the ref waits for it (Store.write's gate).
 */

import { parseAnchorSpecs } from '../anchors/types.js';
import type { Store } from '../gitstore/store.js';
import { TEXT_FIELDS } from '../model/fields.js';
import type { MemoryRecord } from '../model/record.js';
import { assertRecordClean, scanRecord } from '../safety/secrets.js';
import { type AddInput, addMemory, pastExpiry, writerOf } from './memory.js';
import { decideSecrets, type SecretScan, secretScanOf, textsOf } from './secret-policy.js';

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
  /** A person's --allow-secret: store text that looks like a secret whatever the setting (agents have none). */
  allowSecret?: boolean;
  /**
   * The secret-scan policy when the caller has it (the CLI's settings, maybe still being read when
   * the add starts); read from the store's config otherwise (./secret-policy.ts).
   */
  secretScan?: SecretScan | Promise<SecretScan>;
  /** Notes and warnings, one line each (stderr in the CLI). */
  warn?: (line: string) => void;
}

export interface AddResult {
  record: MemoryRecord;
  commit: string;
  /** Lines describing the anchors made (and what was noticed making them). */
  notes: string[];
  /** Likely secrets stored because secret-scan is warn, one line each (also given to `warn`). */
  warnings: string[];
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
  // the text fields as given (src/model/fields.ts TEXT_FIELDS: title, tags, source, body, …)
  const given = input as unknown as Record<string, unknown>;
  const fields = Object.fromEntries(TEXT_FIELDS.map((k) => [k, given[k]]));
  const found = scanRecord(fields).length > 0;
  const anchors = parseAnchorSpecs(opts.anchors, opts.symbols);
  // the one secret policy (./secret-policy.ts) decides what a likely secret does, so it is read
  // where there may be one: in the text fields, in anchored code (scanned inside the write), or
  // in who writes (the git identity and the agent, which the record holds too). Elsewhere the
  // write scans the record as the strictest policy would, and finds what these scans found:
  // nothing. A person's --allow-secret reads no setting: it stores whatever.
  const policy = () => Promise.resolve(opts.secretScan ?? secretScanOf(store, opts.env));
  // who writes, as addMemory puts it in the record
  const who = writerOf(store);
  const whoFound = who.then((w) => scanRecord(w).length > 0);
  const scanP: Promise<SecretScan> = opts.allowSecret
    ? Promise.resolve('off')
    : opts.secretScan || found || anchors.length
      ? policy()
      : whoFound.then((f) => (f ? policy() : 'block'));
  scanP.catch(() => {});
  whoFound.catch(() => {});
  // a likely secret is refused before the duplicate check sees the text (it may go to an embedding endpoint)
  const decision = found ? decideSecrets(await scanP, textsOf(fields)) : undefined;
  if (found && !decision!.allow) assertRecordClean(fields);
  for (const w of decision?.warnings ?? []) opts.warn?.(`git-mem: warning: ${w}`);
  const anchorSteps = anchors.length
    ? (await import('../anchors/add-anchors.js')).anchorSteps(opts.cwd, store)
    : undefined;
  // the policy and the identity are read before the duplicate check starts: its reads and ranking
  // would otherwise come first, and the write (which needs both) would wait for the whole check
  // instead of writing its objects beside it (the only way to the ref is through that check)
  const [scan] = await Promise.all([scanP, store.ident()]);
  // under warn, a likely secret in who writes is said too
  const writer = scan === 'warn' && (await whoFound) ? await who : undefined;
  const whoWarnings = writer
    ? decideSecrets(scan, { author: writer.author, by: JSON.stringify(writer.by) }).warnings
    : [];
  for (const w of whoWarnings) opts.warn?.(`git-mem: warning: ${w}`);
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
  // anchored code is scanned inside the write: the policy decides for it too
  const allowSecret = decideSecrets(scan, {}).allow;
  const { record, commit } = await addMemory(
    store,
    { ...input, anchors, allowSecret },
    { prepareAnchors: anchorSteps?.prepareAnchors, gate },
  );
  const warnings = [...(decision?.warnings ?? []), ...whoWarnings, ...pastExpiry(record, opts.warn)];
  return { record, commit, notes: anchorSteps?.notes(record) ?? [], warnings };
}
