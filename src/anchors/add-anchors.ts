/** The anchor step of the add operation (src/commands/add.ts): completes --anchor/--symbol specs inside the write. */
import type { Store, Tx } from '../gitstore/store.js';
import type { Anchor, MemoryRecord } from '../model/record.js';
import { AnchorPreparer } from './prepare.js';
import { locString } from './types.js';

export function anchorSteps(
  cwd: string,
  store: Store,
): {
  prepareAnchors: (tx: Tx, anchors: Anchor[]) => Promise<Anchor[]>;
  notes: (r: MemoryRecord) => string[];
} {
  let prep: AnchorPreparer | undefined;
  return {
    prepareAnchors: async (tx, anchors) => {
      // a fresh preparer per attempt: the write may be rebuilt on a new tip
      prep = new AnchorPreparer(store, { cwd });
      return prep.prepare(tx, anchors);
    },
    notes: (r) => {
      const lines = r.anchors.map(
        (a) => `  anchor ${locString({ path: a.path, lines: a.lines })}${a.symbol ? ` (${a.symbol})` : ''}`,
      );
      return [...lines, ...[...new Set(prep?.notes ?? [])].map((n) => `  note: ${n}`)];
    },
  };
}
