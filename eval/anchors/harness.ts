/** In-process entry points for the anchors evaluation and benchmark (bundled by run.mjs / the bench). */
import { anchorSteps } from '../../src/anchors/add-anchors.js';
import { type CheckOptions, runCheck } from '../../src/anchors/check.js';
import { parseAnchorSpecs } from '../../src/anchors/types.js';
import { addMemory, initStore } from '../../src/commands/memory.js';
import { openRepo } from '../../src/gitstore/repo.js';
import { Store } from '../../src/gitstore/store.js';

export async function openStore(dir: string, env: NodeJS.ProcessEnv): Promise<Store> {
  return new Store(await openRepo(dir, env));
}

export async function init(store: Store) {
  return initStore(store);
}

/** Adds a memory anchored by `--anchor` or `--symbol` style specs; returns its id. */
export async function addAnchored(store: Store, title: string, anchor: string, symbol = false): Promise<string> {
  const [spec] = symbol ? parseAnchorSpecs([], [anchor]) : parseAnchorSpecs([anchor]);
  const { prepareAnchors } = anchorSteps(store.repo.workTree!, store);
  const { record } = await addMemory(
    store,
    { type: 'decision', title, body: title, anchors: [spec] },
    { prepareAnchors },
  );
  return record.id;
}

export async function check(store: Store, opts: CheckOptions = {}) {
  return runCheck(store, opts);
}

/**
 * Bulk set-up for the benchmark: completes many anchor specs with one preparer and writes all the
 * records (and the anchored blob entries) in one memory commit.
 */
export async function bulkAnchored(store: Store, items: Array<{ title: string; anchors: string[] }>): Promise<number> {
  const { AnchorPreparer, anchorBlobPath } = await import('../../src/anchors/prepare.js');
  const { newRecord } = await import('../../src/model/record.js');
  const { newId } = await import('../../src/model/id.js');
  const prep = new AnchorPreparer(store, { cwd: store.repo.workTree!, repoRelative: true });
  const records: ReturnType<typeof newRecord>[] = [];
  const blobs = new Set<string>();
  const now = new Date().toISOString();
  for (const it of items) {
    const anchors = [];
    for (const a of it.anchors) {
      const full = await prep.complete(parseAnchorSpecs([a])[0]);
      blobs.add(full.blob!);
      anchors.push(full);
    }
    records.push(newRecord({ id: newId(), type: 'decision', title: it.title, body: it.title, now, anchors }));
  }
  await store.write(async (tx) => {
    for (const r of records) tx.putRecord(r);
    for (const b of blobs) tx.putOid(anchorBlobPath(b), b);
    return { message: `bench: ${records.length} anchored memories`, value: records.length };
  });
  return records.length;
}
