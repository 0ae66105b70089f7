/**
 * Templates whose store holds a merge's outcome, for the ops tier. Two clones
 * of a real bare remote (test/merge-helpers.ts) share two records; each side
 * edits them, the first merges the second's tip with the merge operation
 * (mergeCommits) and moves refs/memory, and the clone is copied aside as the
 * template. Built once per worker on first use, both from one pair of clones;
 * each test takes a `fresh` copy (test/support/template.ts) and runs the
 * commands on it in-process (`f.mem`, `f.memJson`, `runOn`).
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { addMemory, removeMemory, updateMemory } from '../../src/commands/memory.js';
import { resolveConflict } from '../../src/merge/conflicts.js';
import { mergeCommits } from '../../src/merge/merge-commits.js';
import { tmpDir } from '../helpers.js';
import { type Clone, clones, fetchTheirs } from '../merge-helpers.js';
import { atFileEnd } from './per-file.js';
import type { Template } from './template.js';

export interface MergedTemplate extends Template {
  /** the flagged record's id (also ids[0]) */
  id: string;
  /** the ids mergeCommits reported as conflicts */
  conflicts: string[];
}

/** a merges b's refs/memory and moves its own to the merge */
async function merge(a: Clone, b: Clone): Promise<string[]> {
  const aTip = (await a.store.tip())!;
  const bTip = (await b.store.tip())!;
  fetchTheirs(a, b.dir);
  const m = await mergeCommits(a.store, aTip, bTip);
  a.git('update-ref', 'refs/memory', m.commit!, aTip);
  return m.conflicts;
}

/** the clone as it is now, copied aside (cp -a, as fresh copies it) */
function keep(a: Clone, id: string, conflicts: string[]): MergedTemplate {
  const dir = join(tmpDir('gm-merged-'), 'repo');
  execFileSync('cp', ['-a', a.dir, dir]);
  return { dir, env: a.env, records: [], ids: [id], id, conflicts };
}

let built: Promise<{ body: MergedTemplate; deletion: MergedTemplate }> | undefined;

async function build(): Promise<{ body: MergedTemplate; deletion: MergedTemplate }> {
  const {
    clones: [a, b],
  } = await clones(2);
  try {
    const x = (
      await addMemory(a.store, {
        type: 'decision',
        title: 'Deploys',
        body: 'deploy on friday\nrollback by script\n',
      })
    ).record.id;
    const y = (await addMemory(a.store, { type: 'decision', title: 'old way', body: 'x\n' })).record.id;
    a.git('push', '-q', 'origin', 'refs/memory:refs/mem/memory');
    b.git('fetch', '-q', 'origin', '+refs/mem/memory:refs/memory');
    // a removes y ("obsolete"), b renames it: the modification is kept, the deletion listed
    await removeMemory(a.store, y, 'obsolete');
    await updateMemory(b.store, y, { title: 'old way, still used' });
    const deletion = keep(a, y, await merge(a, b));
    // y settled and shared; then both edit the same line of x's body
    await resolveConflict(a.store, y, { take: 'ours' });
    a.git('push', '-q', 'origin', '+refs/memory:refs/mem/memory');
    b.git('fetch', '-q', 'origin', '+refs/mem/memory:refs/memory');
    await updateMemory(a.store, x, { body: 'deploy on monday\nrollback by script\n' });
    await updateMemory(b.store, x, { body: 'deploy on tuesday\nrollback by script\n' });
    const body = keep(a, x, await merge(a, b));
    return { body, deletion };
  } finally {
    a.store.close();
    b.store.close();
  }
}

const both = () => {
  if (!built) {
    built = build();
    atFileEnd(() => {
      built = undefined;
    });
  }
  return built;
};

/** a and b edited the same line of one record's body ("deploy on monday" / "tuesday"); it is flagged */
export const bodyConflict = async (): Promise<MergedTemplate> => (await both()).body;

/** a removed the record ("obsolete"), b renamed it: the modification is kept and flagged, the deletion listed */
export const deleteConflict = async (): Promise<MergedTemplate> => (await both()).deletion;
