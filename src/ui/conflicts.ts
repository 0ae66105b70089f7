/**
 * The Conflicts page: each memory a merge flagged (src/merge/conflicts.ts,
 * what `git mem conflicts` lists), the version it holds beside each other
 * version kept in the attic, with the fields that differ and a line diff of
 * the bodies, and who wrote each side. Settling one is `resolveConflict`, as
 * `git mem resolve` does.
 */
import { git } from '../gitstore/git.js';
import type { Store } from '../gitstore/store.js';
import { listConflicts } from '../merge/conflicts.js';
import { CONFLICT_KEY, DELETION_KEY } from '../merge/engine.js';
import { COMPARED_FIELDS } from '../model/fields.js';
import { type MemoryRecord, parseRecord, recordPath } from '../model/record.js';
import { diffRows, splitText } from './diff.js';
import { storeNamed, type UiEnv } from './env.js';
import { recordJSON } from './memories.js';
import type { Conflict, ConflictAuthor, ConflictOther, RecordJson } from './wire.js';

/** The fields the page compares, from the field table (src/model/fields.ts). */
const COMPARED = COMPARED_FIELDS as readonly (keyof MemoryRecord)[];

function shown(r: MemoryRecord): RecordJson {
  const j = recordJSON(r);
  const extra = { ...j.extra };
  delete extra[CONFLICT_KEY];
  delete extra[DELETION_KEY];
  delete extra.attic;
  return { ...j, extra };
}

const COMMIT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/;

/**
 * Who wrote a side: the author of the last commit (not a merge) that changed the record, in
 * `rev`'s history and not in `not`'s. The other version's side is the commit the merge named
 * (the attic's `from`, checked to be a commit id: it comes from a remote); the kept version's is
 * the store's tip, without the other side's history. Null when git cannot tell.
 */
async function authorOf(store: Store, id: string, rev: string, not?: string): Promise<ConflictAuthor | null> {
  const r = await git(
    [
      'log',
      '-1',
      '--no-merges',
      '--format=%H%x1f%aI%x1f%an%x1f%ae',
      rev,
      ...(not ? [`^${not}`] : []),
      '--',
      recordPath(id),
    ],
    { cwd: store.repo.cwd, env: store.repo.env, allowFail: true },
  );
  const [commit, date, name, email] = r.stdout.toString('utf8').trim().split('\x1f');
  if (r.code !== 0 || !commit || !COMMIT_ID.test(commit)) return null;
  return { name: name ?? '', email: email ?? '', date: date ?? '', commit };
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
    // the other sides' commits, as the merge named them (only commit ids are asked of git)
    const froms = c.attic.map((a) => a.from).filter((f): f is string => !!f && COMMIT_ID.test(f));
    const oursAuthor = await authorOf(store, c.id, tip, froms.length === 1 ? froms[0] : undefined);
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
        author: a.from && COMMIT_ID.test(a.from) ? await authorOf(store, c.id, a.from) : null,
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
      oursAuthor,
      others,
    });
  }
  return out;
}
