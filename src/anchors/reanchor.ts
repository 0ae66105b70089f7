/**
 * `git mem reanchor`: a person confirms a memory still holds. Its anchors are
 * made again where the code is now (the last verdict's location) or from new
 * --anchor/--symbol specs; the old anchor is kept in `reanchored.from` for the
 * record, and a stale memory becomes active again.
 */

import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { applyPatch } from '../model/patch.js';
import type { Anchor, MemoryRecord } from '../model/record.js';
import { sharedTarget } from './branch.js';
import { AnchorPreparer } from './prepare.js';
import { type FullAnchor, staleReasonsField } from './types.js';

export interface ReanchorResult {
  record: MemoryRecord;
  commit: string | null;
  dropped: string[];
  notes: string[];
  /** every anchor was already where its code is (and the memory not stale): nothing written */
  unchanged?: boolean;
}

/** The spec to re-anchor an existing anchor at its last known place; null when it is gone. */
function respec(a: FullAnchor): Anchor | null {
  const v = a.verdict;
  if (v && v.status === 'deleted') return null;
  if (v && v.status === 'symbol_removed') return null;
  const to =
    v?.to ??
    (a.current ? { path: a.current.path, lines: a.current.lines } : { path: a.path, lines: a.lines });
  if (!to) return null;
  if (a.sym || a.symbol) {
    const name = v?.to?.symbol ?? a.sym?.qualified ?? a.symbol;
    return { path: to.path, symbol: name };
  }
  return to.lines && a.lines ? { path: to.path, lines: [to.lines[0], to.lines[1]] } : { path: to.path };
}

export async function reanchor(
  store: Store,
  ref: string,
  cwd: string,
  specs?: Anchor[],
  /** move the shared record from a commit that is not the default branch's tip */
  anyBranch = false,
  /** write anchored content that looks like a secret anyway (a person's --allow-secret) */
  allowSecret = false,
): Promise<ReanchorResult> {
  const head = await store.catFile.read('HEAD^{commit}');
  if (!anyBranch) {
    // the shared record follows the default branch: anchoring it to a feature branch's code would
    // point every other checkout at lines it does not have
    if (head) {
      const st = await sharedTarget(store, head.oid);
      if (!st.shared)
        throw err(
          'E_ANCHOR',
          `HEAD is not ${st.branch.name}, which the shared record follows: the anchors move when this change reaches ${st.branch.name}`,
          `re-anchor on ${st.branch.name} after the merge, or pass --any-branch to move the shared record now`,
        );
    }
  }
  let notes: string[] = [];
  let dropped: string[] = [];
  let unchanged: MemoryRecord | undefined;
  const res = await store.write(async (tx) => {
    tx.allowSecret = allowSecret;
    if (!tx.base) throw err('E_NOT_FOUND', `no memory matches "${ref}"`, 'the store is empty');
    const cat = await tx.catalog();
    const id = cat.resolve(ref);
    const rec = await tx.get(id);
    // new specs are the person's own (the working tree may be anchored, as by add); where the
    // record says the code is, a teammate may have written: only HEAD's committed tree is read
    const own = !!specs?.length;
    if (!own && !head)
      throw err('E_ANCHOR', 'HEAD has no commit to re-anchor at', 'commit the code first, or pass --anchor');
    const prep = new AnchorPreparer(store, own ? { cwd } : { cwd, repoRelative: true, committed: head!.oid });
    dropped = [];
    let wanted: Anchor[];
    if (specs?.length) wanted = specs;
    else {
      if (!rec.anchors.length)
        throw err(
          'E_ANCHOR',
          `${id.slice(0, 12)} has no anchors`,
          'pass --anchor PATH[:START[-END]] or --symbol [PATH#]NAME',
        );
      wanted = [];
      for (const a of rec.anchors as FullAnchor[]) {
        const s = respec(a);
        if (s) wanted.push(s);
        else dropped.push(`${a.path}${a.lines ? `:${a.lines[0]}-${a.lines[1]}` : ''}`);
      }
      if (!wanted.length)
        throw err(
          'E_ANCHOR',
          `every anchor of ${id.slice(0, 12)} points at deleted code`,
          'pass --anchor or --symbol to anchor it anew',
        );
    }
    const fresh = await prep.prepare(tx, wanted);
    const old = rec.anchors as FullAnchor[];
    // every anchor already made where its code is, and nothing stale: already so, nothing written
    // (writing would only replace reanchored.from, where the code was before, with where it is)
    if (!specs?.length && rec.status !== 'stale' && !dropped.length && fresh.length === old.length) {
      if (fresh.every((a, i) => sameAnchor(a as FullAnchor, old[i]))) {
        notes = prep.notes;
        unchanged = rec;
        return null;
      }
    }
    fresh.forEach((a, i) => {
      const o = specs?.length ? undefined : old.filter((x) => respec(x))[i];
      a.reanchored = {
        at: new Date().toISOString(),
        ...(o
          ? { from: { path: o.path, lines: o.lines ?? null, commit: o.commit ?? null, blob: o.blob ?? null } }
          : {}),
      };
    });
    notes = prep.notes;
    const status = rec.status === 'stale' ? 'active' : rec.status;
    applyPatch(
      rec,
      { anchors: fresh, status, extra: staleReasonsField(undefined) },
      new Date().toISOString(),
    );
    tx.putRecord(rec);
    return {
      message: `mem: reanchor ${id.slice(0, 12)} (${fresh.length} anchor${fresh.length === 1 ? '' : 's'})`,
      value: rec,
    };
  });
  if (unchanged) return { record: unchanged, commit: null, dropped, notes, unchanged: true };
  return { record: res.value!, commit: res.commit, dropped, notes };
}

/** An anchor made again that says what the stored one says: the same text in the same blob at the same place. */
function sameAnchor(a: FullAnchor, o: FullAnchor): boolean {
  if (o.current || (o.verdict && o.verdict.status !== 'fresh')) return false;
  return (
    a.path === o.path &&
    a.blob === o.blob &&
    a.hash === o.hash &&
    (a.lines?.[0] ?? null) === (o.lines?.[0] ?? null) &&
    (a.lines?.[1] ?? null) === (o.lines?.[1] ?? null) &&
    (a.symbol ?? null) === (o.symbol ?? null)
  );
}
