/**
 * `verify`: someone confirms that memories still hold. Each gets `verified: {by, at}`, and one
 * that expires gets its lifetime again from now (src/model/fields.ts renewedExpiry). The CLI
 * (`git mem verify`), the MCP tool `verify` and the UI's Verify button call verifyMemories.
 */
import { err } from '../errors.js';
import { ensureFormat } from '../gitstore/format.js';
import type { Store } from '../gitstore/store.js';
import { renewedExpiry } from '../model/fields.js';
import { applyPatch } from '../model/patch.js';
import { type MemoryRecord, validateRecord } from '../model/record.js';
import { valueProblem } from '../model/schema.js';
import { assertRecordClean } from '../safety/secrets.js';

export interface VerifyOptions {
  /** who confirms them (default: the git identity, `Name <email>`) */
  by?: string;
  /** when (default: now) */
  now?: Date;
}

export interface VerifyResult {
  /** the records as verified, in the order asked */
  records: MemoryRecord[];
  commit: string | null;
}

/**
 * Marks the memories `refs` (ids, prefixes or aliases) verified by `opts.by` at `opts.now`, in
 * one commit. Throws E_INVALID_ARG (no ref, a bad `by`), E_NOT_FOUND, E_AMBIGUOUS; nothing is
 * written unless every ref resolves.
 */
export async function verifyMemories(
  store: Store,
  refs: readonly string[],
  opts: VerifyOptions = {},
): Promise<VerifyResult> {
  if (!refs.length) throw err('E_INVALID_ARG', 'verify: no memory given', 'name one or more ids or aliases');
  const now = opts.now ?? new Date();
  const ident = opts.by === undefined ? await store.ident() : undefined;
  const by = opts.by ?? `${ident!.name} <${ident!.email}>`;
  const bad = valueProblem('line', 'by', by) ?? (by.trim() ? null : { message: 'by is empty', field: 'by' });
  if (bad)
    throw err('E_INVALID_ARG', bad.message, 'give the name of who confirms it', { field: 'verified.by' });
  assertRecordClean({ source: by });
  const at = now.toISOString();
  const res = await store.write(async (tx) => {
    if (!tx.base)
      throw err(
        'E_NOT_FOUND',
        `no memory matches "${refs[0]}"`,
        'the store is empty; add one with git mem add',
      );
    await ensureFormat(tx);
    const cat = await tx.catalog();
    const ids = [...new Set(refs.map((r) => cat.resolve(String(r))))];
    const records: MemoryRecord[] = [];
    for (const id of ids) {
      const r = await tx.get(id);
      applyPatch(r, { verified: { by, at }, expires: renewedExpiry(r, now) }, at);
      validateRecord(r);
      tx.putRecord(r);
      records.push(r);
    }
    const names = ids.map((id) => id.slice(0, 12)).join(', ');
    return { message: `mem: verify ${names}`, value: records };
  });
  return { records: res.value!, commit: res.commit };
}
