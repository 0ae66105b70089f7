/**
 * The Conflicts page: each memory a merge flagged (src/merge/conflicts.ts,
 * what `git mem conflicts` lists), the version it holds beside each other
 * version kept in the attic, with the fields that differ and a line diff of
 * the bodies. Settling one is `resolveConflict`, as `git mem resolve` does.
 */
import { listConflicts } from '../merge/conflicts.js';
import { CONFLICT_KEY, DELETION_KEY } from '../merge/engine.js';
import { type MemoryRecord, parseRecord } from '../model/record.js';
import { diffRows, splitText } from './diff.js';
import { storeNamed, type UiEnv } from './env.js';
import { recordJSON } from './memories.js';
import type { Conflict, ConflictOther, RecordJson } from './wire.js';

const COMPARED = [
  'title',
  'type',
  'status',
  'alias',
  'tags',
  'scope',
  'confidence',
  'expires',
  'links',
] as const;

function shown(r: MemoryRecord): RecordJson {
  const j = recordJSON(r);
  const extra = { ...j.extra };
  delete extra[CONFLICT_KEY];
  delete extra[DELETION_KEY];
  delete extra.attic;
  return { ...j, extra };
}

export async function conflictsView(env: UiEnv, opts: { store?: string } = {}): Promise<Conflict[]> {
  const store = storeNamed(env, opts.store);
  const tip = await store.tip();
  if (!tip) return [];
  const list = await listConflicts(store, tip);
  const out: Conflict[] = [];
  for (const c of list) {
    const ours = await store.readRecord(tip, c.id);
    const others: ConflictOther[] = [];
    for (const a of c.attic) {
      const buf = await store.readPath(tip, a.path);
      let theirs: MemoryRecord | null = null;
      try {
        theirs = buf ? parseRecord(buf.toString('utf8'), a.path) : null;
      } catch {}
      others.push({
        hash: a.hash,
        reason: a.reason ?? null,
        from: a.from ?? null,
        fields: theirs
          ? COMPARED.filter((k) => JSON.stringify(ours[k] ?? null) !== JSON.stringify(theirs[k] ?? null))
          : [],
        record: theirs ? shown(theirs) : null,
        body: theirs ? diffRows(splitText(ours.body), splitText(theirs.body)) : [],
      });
    }
    out.push({
      id: c.id,
      title: c.title,
      reasons: c.reasons,
      lostAlias: c.lostAlias ?? null,
      deletion: c.deletion ?? null,
      ours: shown(ours),
      others,
    });
  }
  return out;
}
