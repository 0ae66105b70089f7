/**
 * Records a merge flagged for review, and settling them: `git mem conflicts`
 * and `git mem resolve`. A flagged record carries `conflict: {reasons, attic,
 * alias?}` in its frontmatter; the versions it did not keep are whole record
 * files under attic/<xx>/<id>/<hash>.md.
 */

import { changedRuns } from '../anchors/diff.js';
import { err } from '../errors.js';
import { git } from '../gitstore/git.js';
import type { Store } from '../gitstore/store.js';
import { identLine } from '../gitstore/store-config.js';
import {
  type MemoryRecord,
  parseRecord,
  recordPath,
  tombstonePath,
  validateRecord,
} from '../model/record.js';
import { nextClock } from '../model/schema.js';
import { assertNoSecrets } from '../safety/secrets.js';
import { CONFLICT_KEY, type ConflictFlag, conflictOf, DELETION_KEY } from './engine.js';

export interface AtticInfo {
  path: string;
  /** The 16-hex-digit name of the entry: what `resolve --take` accepts. */
  hash: string;
  reason?: string;
  fields?: string[];
  from?: string;
  title?: string;
  clock?: number;
  body?: string;
  /** For a body conflict: where the kept body and this version's body differ. */
  bodyDiff?: BodyHunk[];
}

/** One place two bodies differ: the kept record's lines and the other version's, from `line` (1-based, in the kept body). */
export interface BodyHunk {
  line: number;
  kept: string[];
  other: string[];
}

/** Where two bodies differ, line by line (the lines both hold are left out): the project's one line diff. Pure. */
export function bodyDiff(kept: string, other: string): BodyHunk[] {
  const split = (s: string) => s.replace(/\n$/, '').split('\n');
  return changedRuns(split(kept), split(other)).map((r) => ({
    line: r.old,
    kept: r.removed,
    other: r.added,
  }));
}

export interface ConflictInfo {
  id: string;
  title: string;
  alias?: string;
  reasons: string[];
  attic: AtticInfo[];
  /** The alias this record lost to an older record (reason alias). */
  lostAlias?: string;
  /** The deletion that lost against a modification (reason delete). */
  deletion?: Record<string, unknown>;
}

async function readAttic(
  store: Store,
  entries: Array<{ path: string; oid?: string }>,
  withBody: boolean,
  commit?: string,
) {
  const blobs = await store.catFile.readMany(entries.map((e) => e.oid ?? `${commit}:${e.path}`));
  const out: AtticInfo[] = [];
  entries.forEach((e, i) => {
    const hash = e.path.split('/').pop()!.replace(/\.md$/, '');
    const info: AtticInfo = { path: e.path, hash };
    const b = blobs[i];
    if (b) {
      try {
        const r = parseRecord(b.content.toString('utf8'), e.path);
        const meta = (r.extra.attic ?? {}) as Record<string, unknown>;
        if (typeof meta.reason === 'string') info.reason = meta.reason;
        if (Array.isArray(meta.fields)) info.fields = meta.fields.map(String);
        if (typeof meta.from === 'string') info.from = meta.from;
        info.title = r.title;
        info.clock = r.clock;
        if (withBody) info.body = r.body;
      } catch {
        info.reason = 'unreadable';
      }
    }
    out.push(info);
  });
  return out;
}

function toInfo(r: MemoryRecord, flag: ConflictFlag, attic: AtticInfo[]): ConflictInfo {
  const c: ConflictInfo = { id: r.id, title: r.title, reasons: flag.reasons, attic };
  if (r.alias) c.alias = r.alias;
  if (flag.alias) c.lostAlias = flag.alias;
  const del = r.extra[DELETION_KEY];
  if (del && typeof del === 'object') c.deletion = del as Record<string, unknown>;
  return c;
}

/**
 * Every record flagged for review at a commit. `git grep` finds the
 * candidates (a top-level `conflict:` key) without parsing every record.
 */
export async function listConflicts(store: Store, commit?: string | null): Promise<ConflictInfo[]> {
  const tip = commit === undefined ? await store.tip() : commit;
  if (!tip) return [];
  const r = await git(['grep', '-l', '-z', '-E', `^${CONFLICT_KEY}:`, tip, '--', 'memories'], {
    cwd: store.repo.cwd,
    env: store.repo.env,
    allowFail: true,
  });
  if (r.code > 1) throw err('E_GIT', `git grep failed: ${r.stderr.trim().split('\n').pop()}`);
  const paths = r.stdout
    .toString('utf8')
    .split('\0')
    .filter(Boolean)
    .map((p) => p.slice(tip.length + 1));
  const blobs = await store.catFile.readMany(paths.map((p) => `${tip}:${p}`));
  const out: ConflictInfo[] = [];
  for (const [i, p] of paths.entries()) {
    const b = blobs[i];
    if (!b) continue;
    let rec: MemoryRecord;
    try {
      rec = parseRecord(b.content.toString('utf8'), p);
    } catch {
      continue; // doctor reports malformed records
    }
    const flag = conflictOf(rec);
    if (!flag) continue;
    // a body conflict is read with the other version's body: what differs is the point, not its title
    const body = flag.reasons.includes('body');
    const attic = await readAttic(
      store,
      flag.attic.map((path) => ({ path })),
      body,
      tip,
    );
    if (body) {
      for (const a of attic) {
        if (a.body !== undefined && a.body !== rec.body) a.bodyDiff = bodyDiff(rec.body, a.body);
        delete a.body;
      }
    }
    out.push(toInfo(rec, flag, attic));
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** A change of this clone's that a merge did not keep: the record it is on, and what became of it. */
export interface LostChange {
  id: string;
  title: string;
  /**
   * `attic`: this clone's version is in the attic and the record is flagged for review;
   * `deletion`: this clone's deletion lost to an edit (the record came back, flagged);
   * `fields`: a field both sides changed took the later edit, this clone's value is in the attic
   * (not flagged: the later clock decided).
   */
  reason: 'attic' | 'deletion' | 'fields';
  /** The attic entries (their hashes) that hold this clone's version. */
  attic?: string[];
  /** For `fields`: the fields whose value of this clone's lost. */
  fields?: string[];
}

const COMMIT = /^[0-9a-f]{40}(?:[0-9a-f]{24})?$/;

/**
 * The records a pull or sync from `before` (this clone's tip) to `after` newly
 * flagged where the losing side is this clone's own change: an attic entry
 * whose `from` commit this clone already had, or a deletion of this clone's
 * (the record was a tombstone at `before`) that lost against an edit. Whoever
 * built the merge (this clone, or a teammate whose merge came in by a
 * fast-forward), the answer is the same. Only merges flag records, so a range
 * without one costs one `rev-list`.
 */
export async function lostChanges(
  store: Store,
  before: string | null,
  after: string | null,
): Promise<LostChange[]> {
  if (!before || !after || before === after) return [];
  const merges = await git(['rev-list', '--merges', '-n', '1', after, `^${before}`, '--'], {
    cwd: store.repo.cwd,
    env: store.repo.env,
    allowFail: true,
  });
  if (merges.code !== 0 || !merges.stdout.toString('utf8').trim()) return [];
  const changed = (await store.diffPaths(before, after, 'memories')).filter(
    (c) => c.oid && c.path.endsWith('.md'),
  );
  const blobs = await store.catFile.readMany(changed.map((c) => c.oid!));
  const out: LostChange[] = [];
  for (const [i, c] of changed.entries()) {
    const b = blobs[i];
    if (!b) continue;
    let rec: MemoryRecord;
    try {
      rec = parseRecord(b.content.toString('utf8'), c.path);
    } catch {
      continue;
    }
    const flag = conflictOf(rec);
    if (!flag) continue;
    // what was flagged already at `before` was reported then
    let had: Set<string> = new Set();
    const prev = c.status === 'M' ? await store.readPath(before, c.path) : null;
    if (prev) {
      try {
        had = new Set(conflictOf(parseRecord(prev.toString('utf8'), c.path))?.attic ?? []);
      } catch {}
    }
    if (
      flag.reasons.includes('delete') &&
      !prev &&
      DELETION_KEY in rec.extra &&
      (await store.readPath(before, tombstonePath(rec.id)))
    ) {
      out.push({ id: rec.id, title: rec.title, reason: 'deletion' });
      continue;
    }
    const fresh = flag.attic.filter((p) => !had.has(p));
    if (!fresh.length) continue;
    const ours: string[] = [];
    for (const a of await readAttic(
      store,
      fresh.map((path) => ({ path })),
      false,
      after,
    )) {
      // `from` comes from the record file: only a full commit id is asked about
      if (a.from && COMMIT.test(a.from) && (await store.isAncestor(a.from, before))) ours.push(a.hash);
    }
    if (ours.length) out.push({ id: rec.id, title: rec.title, reason: 'attic', attic: ours });
  }
  // a field both sides changed goes to the later clock without a flag: its attic entry alone says so
  const flaggedAttic = new Set(out.flatMap((o) => (o.attic ?? []).map((h) => `${o.id}/${h}`)));
  const added = (await store.diffPaths(before, after, 'attic')).filter(
    (c) => c.status === 'A' && /^attic\/[^/]+\/[^/]+\/[0-9a-f]{16}\.md$/.test(c.path),
  );
  const fields = new Map<string, LostChange>();
  for (const a of await readAttic(store, added as Array<{ path: string; oid: string }>, false)) {
    const id = a.path.split('/')[2];
    if (flaggedAttic.has(`${id}/${a.hash}`) || !a.from || !COMMIT.test(a.from)) continue;
    if (!(await store.isAncestor(a.from, before))) continue;
    const now = await store.readPath(after, recordPath(id));
    if (!now) continue;
    let rec: MemoryRecord;
    try {
      rec = parseRecord(now.toString('utf8'), recordPath(id));
    } catch {
      continue;
    }
    // one whose flag lists it was reported above (or is not this clone's)
    if (conflictOf(rec)?.attic.includes(a.path)) continue;
    const f = fields.get(id) ?? { id, title: rec.title, reason: 'fields' as const, attic: [], fields: [] };
    f.attic!.push(a.hash);
    for (const x of a.fields ?? []) if (!f.fields!.includes(x)) f.fields!.push(x);
    fields.set(id, f);
  }
  out.push(...fields.values());
  return out.sort((a, b) => (a.id < b.id ? -1 : 1));
}

export interface ResolveOptions {
  /** ours = keep the version the record holds; theirs = the attic version (or the deletion); or an attic hash. */
  take?: string;
  /** New body for the record (the settled text). */
  content?: string;
  allowSecret?: boolean;
  now?: Date;
}

export interface ResolveResult {
  id: string;
  action: 'kept' | 'took-attic' | 'deleted' | 'content';
  commit: string | null;
  removedAttic: string[];
}

/** Settles a flagged record in one commit: clears the flag and the attic entries it listed. */
export async function resolveConflict(
  store: Store,
  ref: string,
  opts: ResolveOptions = {},
): Promise<ResolveResult> {
  const take = opts.take ?? 'ours';
  if (opts.content !== undefined && opts.take !== undefined) {
    throw err('E_INVALID_ARG', 'pass either --take or --content, not both');
  }
  if (opts.content !== undefined) assertNoSecrets({ body: opts.content }, opts.allowSecret);
  const ident = await store.ident();
  const res = await store.write(async (tx) => {
    tx.allowSecret = !!opts.allowSecret;
    if (!tx.base) throw err('E_NOT_FOUND', `no memory matches "${ref}"`, 'the store is empty');
    const cat = await tx.catalog();
    const id = cat.resolve(ref);
    const rec = await tx.get(id);
    const flag = conflictOf(rec);
    if (!flag) {
      throw err(
        'E_INVALID_ARG',
        `${cat.abbrev(id)} is not flagged for review`,
        'see git mem conflicts for the records that are',
      );
    }
    const now = (opts.now ?? new Date()).toISOString();
    const attic = await readAttic(
      tx.store,
      flag.attic.map((path) => ({ path })),
      true,
      tx.base,
    );
    const clear = (r: MemoryRecord): MemoryRecord => {
      const extra = { ...r.extra };
      delete extra[CONFLICT_KEY];
      delete extra[DELETION_KEY];
      delete extra.attic;
      return { ...r, extra, clock: nextClock(Math.max(r.clock, rec.clock)), updated: now };
    };
    let action: ResolveResult['action'] = 'kept';
    let next: MemoryRecord | undefined = clear(rec);
    if (opts.content !== undefined) {
      next.body = opts.content;
      action = 'content';
    } else if (take === 'ours') {
      action = 'kept';
    } else {
      let pick: AtticInfo | undefined;
      if (take === 'theirs') {
        if (!attic.length && flag.reasons.includes('delete')) {
          next = undefined;
          action = 'deleted';
        } else if (attic.length === 1) pick = attic[0];
        else if (!attic.length)
          throw err(
            'E_INVALID_ARG',
            `${cat.abbrev(id)} has no other version to take`,
            'use --take ours or --content',
          );
        else {
          throw err(
            'E_AMBIGUOUS',
            `${cat.abbrev(id)} has ${attic.length} attic versions`,
            `pick one: --take ${attic.map((a) => a.hash).join(' | --take ')}`,
          );
        }
      } else {
        pick = attic.find((a) => a.hash.startsWith(take.toLowerCase()));
        if (!pick) {
          throw err(
            'E_INVALID_ARG',
            `unknown --take "${take}"`,
            `use ours, theirs${attic.length ? `, or ${attic.map((a) => a.hash).join(', ')}` : ''}`,
          );
        }
      }
      if (pick) {
        const buf = await tx.store.readPath(tx.base, pick.path);
        const other = parseRecord(buf!.toString('utf8'), pick.path);
        next = clear({ ...other, id });
        // an alias another record holds now stays where it is
        if (next.alias && cat.aliases.get(next.alias) && cat.aliases.get(next.alias) !== id)
          next.alias = rec.alias;
        action = 'took-attic';
      }
    }
    for (const a of flag.attic) tx.remove(a);
    if (next) {
      validateRecord(next);
      tx.putRecord(next);
    } else {
      const del = (rec.extra[DELETION_KEY] ?? {}) as Record<string, unknown>;
      tx.removeRecord(id, {
        id,
        deleted: now,
        by: identLine(ident),
        title: rec.title,
        ...(rec.alias ? { alias: rec.alias } : {}),
        clock: nextClock(rec.clock),
        reason: typeof del.reason === 'string' ? del.reason : 'deletion taken on resolve',
      });
    }
    return {
      message: `mem: resolve ${id.slice(0, 12)} (${action})`,
      value: { id, action, removedAttic: flag.attic },
    };
  });
  return { ...res.value!, commit: res.commit };
}
