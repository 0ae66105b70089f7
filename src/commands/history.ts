/**
 * A memory's history: every version of its record file with the commit,
 * author and date, and what made each commit (the operation, the agent, the
 * signature); and the store's own log. What `git mem history` prints and the
 * web UI's History page shows.
 */
import { err } from '../errors.js';
import { type CommitInfo, commitInfo } from '../gitstore/commit-info.js';
import type { Store } from '../gitstore/store.js';
import type { LogEntry } from '../model/json.js';
import { parseRecord, recordPath, recordToJSON, tombstonePath } from '../model/record.js';

/** Signatures verified per listing (each runs gpg or ssh-keygen); older entries have signature null. */
const VERIFY = 200;

/** What made a commit and its signature, as the JSON of an entry gives it. */
function provenanceOf(info: CommitInfo | undefined) {
  return {
    operation: info?.operation ?? null,
    ids: info?.ids ?? [],
    by: info?.by ?? null,
    signature: info?.signature ?? null,
  };
}

export type Annotated<T> = T & ReturnType<typeof provenanceOf>;

export type MemoryVersion = Annotated<LogEntry> & {
  /** the record is gone at this commit (a tombstone took its place) */
  deleted: boolean;
  /** the record as it was at this commit (recordToJSON), null when deleted or unreadable */
  record: ReturnType<typeof recordToJSON> | null;
};

/** Entries with what made their commits; `signed` when any of them is signed (then an unsigned one stands out). */
export interface History<T> {
  entries: T[];
  infos: Map<string, CommitInfo>;
  signed: boolean;
}

async function annotate<T extends { commit: string }>(
  store: Store,
  entries: T[],
): Promise<History<Annotated<T>>> {
  const infos = await commitInfo(
    store,
    entries.map((e) => e.commit),
    VERIFY,
  );
  const signed = [...infos.values()].some((i) => i.signature && i.signature.status !== 'none');
  return { entries: entries.map((e) => ({ ...e, ...provenanceOf(infos.get(e.commit)) })), infos, signed };
}

/** The store's commits, newest first. */
export async function storeLog(
  store: Store,
  limit = Number.POSITIVE_INFINITY,
): Promise<History<Annotated<LogEntry>>> {
  await store.requireTip();
  return annotate(store, (await store.log()).slice(0, limit));
}

/**
 * The id a reference names, deleted records included: a deleted record still
 * has a history, so full ids and prefixes of tombstones resolve too.
 */
export async function resolveWithTombstones(store: Store, ref: string): Promise<string> {
  try {
    return (await store.catalog()).resolve(ref);
  } catch (e) {
    const up = ref.toUpperCase();
    const tip = await store.requireTip();
    const tomb = (await store.lsTree(tip, 'tombstones')).map((t) =>
      t.path
        .split('/')
        .pop()!
        .replace(/\.yaml$/, ''),
    );
    const m = tomb.filter((t) => t.startsWith(up));
    if (m.length !== 1) throw e;
    return m[0];
  }
}

/** Every version of one memory, newest first (at most `limit`). */
export async function memoryHistory(
  store: Store,
  ref: string,
  limit = Number.POSITIVE_INFINITY,
): Promise<History<MemoryVersion> & { id: string }> {
  await store.requireTip();
  const id = await resolveWithTombstones(store, ref);
  const byPath = await store.log(recordPath(id));
  const tomb = await store.log(tombstonePath(id));
  const all = new Map([...byPath, ...tomb].map((l) => [l.commit, l]));
  const entries = [...all.values()].sort((x, y) => (x.date < y.date ? 1 : x.date > y.date ? -1 : 0));
  if (!entries.length) throw err('E_NOT_FOUND', `no history for ${ref}`);
  const shown = await annotate(store, entries.slice(0, limit));
  const versions: MemoryVersion[] = [];
  for (const l of shown.entries) {
    const buf = await store.readPath(l.commit, recordPath(id));
    let record = null;
    if (buf) {
      try {
        record = recordToJSON(parseRecord(buf.toString('utf8')));
      } catch {}
    }
    versions.push({ ...l, deleted: !buf, record });
  }
  return { id, entries: versions, infos: shown.infos, signed: shown.signed };
}
