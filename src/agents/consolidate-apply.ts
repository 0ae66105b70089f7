import { markSuperseded, removeInTx } from '../commands/memory.js';
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { identLine } from '../gitstore/store-config.js';
import { applyPatch } from '../model/patch.js';
import { type MemoryRecord, validateRecord } from '../model/record.js';
import { consolidationOf } from './consolidate-pairs.js';
import { clip } from './consolidate-text.js';
// ------------------------------------------------------------------ approval

export interface ApplyEdit {
  title?: string;
  body?: string;
}

/**
 * Approves one consolidation review item, in one commit: a merge's record
 * becomes active and supersedes every member; a supersede or an archive is
 * carried out and its note removed. Refused (E_STALE_PROPOSAL, nothing
 * changed) when a memory it names is gone or no longer active.
 */
export async function applyConsolidation(
  store: Store,
  ref: string,
  edit: ApplyEdit = {},
): Promise<MemoryRecord> {
  const ident = await store.ident();
  const by = identLine(ident);
  const res = await store.write(async (tx) => {
    const cat = await tx.catalog();
    const id = cat.resolve(ref);
    const item = await tx.get(id);
    const c = consolidationOf(item);
    if (!c || item.status !== 'pending')
      throw err('E_INVALID_ARG', `${id.slice(0, 12)} is not a pending consolidation`, 'see git mem review');
    if (c.kind !== 'merge' && (edit.title !== undefined || edit.body !== undefined))
      throw err(
        'E_INVALID_ARG',
        `a ${c.kind} proposal has no text to edit`,
        'approve it without --title/--content',
      );
    const members: MemoryRecord[] = [];
    for (const m of c.ids) {
      const e = cat.entries.get(m);
      if (e?.status !== 'active')
        throw err(
          'E_STALE_PROPOSAL',
          `${id.slice(0, 12)} is out of date: ${m.slice(0, 12)} is ${e ? e.status : 'deleted'}`,
          `reject it with git mem review --reject ${id.slice(0, 12)}`,
        );
      members.push(await tx.get(m));
    }
    const now = new Date().toISOString();
    const review = {
      state: edit.title !== undefined || edit.body !== undefined ? 'edited' : 'approved',
      by,
      at: now,
    };
    if (c.kind === 'merge') {
      applyPatch(
        item,
        {
          status: 'active',
          ...(edit.title !== undefined ? { title: edit.title } : {}),
          ...(edit.body !== undefined
            ? { body: edit.body.endsWith('\n') ? edit.body : `${edit.body}\n` }
            : {}),
          extra: { review },
        },
        now,
      );
      // the name people use for it follows the knowledge: the first member's alias moves to the merged record
      const named = members.find((m) => m.alias);
      if (named && !item.alias) {
        item.alias = named.alias;
        delete named.alias;
      }
      validateRecord(item);
      for (const m of members) {
        markSuperseded(m, item, now);
        tx.putRecord(m);
      }
      tx.putRecord(item);
      return {
        message: `mem: consolidate ${members.length} into ${id.slice(0, 12)} "${clip(item.title, 60)}"`,
        value: item,
      };
    }
    const [target, other] = members;
    if (c.kind === 'supersede') {
      markSuperseded(target, other, now);
      tx.putRecord(other);
    } else {
      applyPatch(
        target,
        {
          status: 'archived',
          extra: { archived_reason: `consolidated: kept ${other.id}`, review },
        },
        now,
      );
    }
    tx.putRecord(target);
    removeInTx(tx, item, by, `consolidation approved (${c.kind})`);
    return {
      message:
        c.kind === 'supersede'
          ? `mem: consolidate: supersede ${target.id.slice(0, 12)} by ${other.id.slice(0, 12)}`
          : `mem: consolidate: archive ${target.id.slice(0, 12)}, kept ${other.id.slice(0, 12)}`,
      value: target,
    };
  });
  return res.value!;
}
