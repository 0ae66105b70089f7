/**
 * The core operations on memories, free of any CLI concern: the CLI, the MCP
 * server and the agent hooks all call these. Each validates its input, builds
 * one change and commits it through Store.write (compare-and-swap, retried).
 */

import { err } from '../errors.js';
import { ensureFormat } from '../gitstore/format.js';
import { FORMAT_PATH, FORMAT_TEXT, type Store, type Tx } from '../gitstore/store.js';
import { identLine } from '../gitstore/store-config.js';
import { validateScopes } from '../model/glob.js';
import { newId } from '../model/id.js';
import {
  type AddFields,
  applyPatch,
  type FieldPatch,
  parseUpdateInput,
  tableValuesOf,
  validateStatus,
  validateType,
} from '../model/patch.js';
import type { Provenance } from '../model/provenance.js';
import {
  type Anchor,
  idFromPath,
  isExpired,
  type Links,
  type MemoryRecord,
  newRecord,
  pastExpiryWarning,
  recordPath,
  type Status,
  validateAlias,
  validateRecord,
} from '../model/record.js';
import { nextClock } from '../model/schema.js';
import { assertRecordClean, scanSecrets } from '../safety/secrets.js';
import { decideSecrets, type SecretScan, secretScanOf, textsOf } from './secret-policy.js';

// moved down (src/model/patch.ts, src/gitstore/format.ts); named here too for callers not yet moved
export { applyPatch, ensureFormat };

export interface WriteOptions {
  /** Skip the secret scan (the user confirmed it is not a secret). */
  allowSecret?: boolean;
}

/** The fields of an add (src/model/patch.ts, from the field table), and what an operation adds to them. */
export interface AddInput extends AddFields, WriteOptions {
  anchors?: Anchor[];
  links?: Partial<Links>;
  extra?: Record<string, unknown>;
  /** Fixed id (imports); generated otherwise. */
  id?: string;
  now?: Date;
}

/** Hooks that later layers (anchors, duplicate detection) plug into without the core knowing them. */
export interface AddHooks {
  /** Turns anchor specs into full anchors and may add tree entries (anchored blobs). */
  prepareAnchors?: (tx: Tx, anchors: Anchor[]) => Promise<Anchor[]>;
  /** Settled before the ref moves; a rejection stops the add (see Store.write). */
  gate?: Promise<unknown>;
}

function shortTitle(t: string): string {
  return t.length > 60 ? `${t.slice(0, 57)}...` : t;
}

/** Who an add's record says wrote it: the git identity (`author`) and the person or agent (`by`). */
export async function writerOf(store: Store): Promise<{ author: string; by: Provenance }> {
  return { author: identLine(await store.ident()), by: store.writerActor() };
}

export async function addMemory(
  store: Store,
  input: AddInput,
  hooks: AddHooks = {},
): Promise<{ record: MemoryRecord; commit: string }> {
  const type = validateType(input.type);
  if (input.status) validateStatus(input.status);
  // every field as given (tags are lowercased later, which would hide an AWS key id), before git is touched
  assertRecordClean(input, { allow: input.allowSecret });
  const alias = input.alias ? validateAlias(input.alias) : undefined;
  const id = input.id ?? newId((input.now ?? new Date()).getTime());
  const { author, by } = await writerOf(store);
  // validate everything we can before touching git
  const draft = newRecord({
    id,
    type,
    title: input.title.trim(),
    body: input.body,
    now: (input.now ?? new Date()).toISOString(),
    author,
    by,
    tags: input.tags,
    scope: input.scope && validateScopes(input.scope),
    alias,
    status: input.status as Status | undefined,
    // confidence, source, expires (a date or a duration, 30d) …: the table's own fields
    ...tableValuesOf(input, (f) => f.add),
    // specs still to complete (a symbol without its path) are checked once complete, below
    anchors: hooks.prepareAnchors ? [] : input.anchors,
    links: input.links,
    extra: input.extra,
  });
  const res = await store.write(
    async (tx) => {
      tx.allowSecret = !!input.allowSecret;
      await ensureFormat(tx);
      const record: MemoryRecord = { ...draft, anchors: [...(input.anchors ?? [])] };
      if (alias) {
        const cat = await tx.catalog();
        const owner = cat.aliases.get(alias);
        if (owner) {
          throw err(
            'E_ALIAS_TAKEN',
            `alias "${alias}" is already used by ${cat.abbrev(owner)}`,
            'choose another alias or git mem mv the other one',
          );
        }
      }
      if (record.anchors.length && hooks.prepareAnchors) {
        record.anchors = await hooks.prepareAnchors(tx, record.anchors);
        validateRecord(record);
        assertRecordClean(record, { allow: input.allowSecret, only: ['anchors'] });
      }
      tx.putRecord(record);
      return { message: `mem: add ${id.slice(0, 12)} "${shortTitle(record.title)}"`, value: record };
    },
    { gate: hooks.gate },
  );
  return { record: res.value!, commit: res.commit! };
}

/** How updateFromInput applies the secret policy (./secret-policy.ts), as add does. */
export interface UpdateOptions {
  /** A person's --allow-secret (agents have none). */
  allowSecret?: boolean;
  /** The secret-scan policy when the caller has it; read from the store's config otherwise. */
  secretScan?: SecretScan | Promise<SecretScan>;
  /** Warnings, one line each (stderr in the CLI). */
  warn?: (line: string) => void;
}

/** A change of some fields (src/model/patch.ts), and whether a likely secret may be stored. */
export interface UpdatePatch extends FieldPatch, WriteOptions {}

/**
 * The update every surface calls: `input` as the surface received it, keyed by the fields'
 * JSON names (src/model/fields.ts; `add_tags`, `remove_tags`), read by the one parser
 * (src/model/patch.ts parseUpdateInput), then updateMemory.
 */
export async function updateFromInput(
  store: Store,
  ref: string,
  input: Record<string, unknown>,
  opts: UpdateOptions = {},
): Promise<{ record: MemoryRecord; commit: string | null; changed: string[]; warnings: string[] }> {
  // a setting the caller is still reading settles unawaited when no text needs it
  Promise.resolve(opts.secretScan).catch(() => {});
  const patch = parseUpdateInput(input);
  const texts = textsOf(patch);
  // the one secret policy (./secret-policy.ts), as add applies it; read only when a text holds a
  // likely secret (most updates hold none: no config read per MCP or UI update)
  const found = Object.values(texts).some((t) => !!t && scanSecrets(t).length > 0);
  const decision = found
    ? decideSecrets(
        opts.allowSecret ? 'off' : await (opts.secretScan ?? secretScanOf(store, store.repo.env)),
        texts,
      )
    : { allow: false, warnings: [] };
  for (const w of decision.warnings) opts.warn?.(`git-mem: warning: ${w}`);
  const res = await updateMemory(store, ref, { ...patch, allowSecret: decision.allow });
  const warnings = [
    ...decision.warnings,
    ...(res.changed.includes('expires') ? pastExpiry(res.record, opts.warn) : []),
  ];
  return { ...res, warnings };
}

/**
 * The warning of a write that sets an expiry already past (add, and an update of `expires`), given
 * to `warn` (stderr in the CLI) and returned for the caller's `warnings` (MCP, the UI's API).
 */
export function pastExpiry(record: MemoryRecord, warn?: (line: string) => void): string[] {
  const past = pastExpiryWarning(record);
  if (!past) return [];
  warn?.(`git-mem: warning: ${past}`);
  return [past];
}

export async function updateMemory(
  store: Store,
  ref: string,
  patch: UpdatePatch,
): Promise<{ record: MemoryRecord; commit: string | null; changed: string[] }> {
  // the new text only: a secret stored earlier with --allow-secret does not block a later update
  // tags added land in tags: a secret there is named as in tags (as --tags and add name it)
  const added = patch.addTags?.length ? { tags: [...(patch.tags ?? []), ...patch.addTags] } : {};
  assertRecordClean(
    { ...patch, ...added, addTags: undefined, removeTags: undefined },
    { allow: patch.allowSecret },
  );
  const res = await store.write(async (tx) => {
    tx.allowSecret = !!patch.allowSecret;
    const cat = await tx.catalog();
    if (!tx.base)
      throw err('E_NOT_FOUND', `no memory matches "${ref}"`, 'the store is empty; add one with git mem add');
    const id = cat.resolve(ref);
    const record = await tx.get(id);
    const changed = applyPatch(record, patch, new Date().toISOString());
    if (!changed.length) return { message: '', value: { record, changed } };
    validateRecord(record);
    if (changed.includes('alias') && record.alias) {
      const owner = cat.aliases.get(record.alias);
      if (owner && owner !== id)
        throw err('E_ALIAS_TAKEN', `alias "${record.alias}" is already used by ${cat.abbrev(owner)}`);
    }
    tx.putRecord(record);
    return {
      message: `mem: update ${id.slice(0, 12)} "${shortTitle(record.title)}" (${changed.join(', ')})`,
      value: { record, changed },
    };
  });
  return { ...res.value!, commit: res.value!.changed.length ? res.commit : null };
}

/** Removes a record inside a change, leaving its tombstone (who, when, why) so a sync cannot resurrect it. */
export function removeInTx(tx: Tx, record: MemoryRecord, by: string, reason?: string): void {
  tx.removeRecord(record.id, {
    id: record.id,
    deleted: new Date().toISOString(),
    by,
    title: record.title,
    alias: record.alias,
    clock: nextClock(record.clock),
    ...(reason ? { reason } : {}),
  });
}

/**
 * Removes every memory REFS name in one commit (the one remove every surface calls; one ref is a
 * list of one). All refs are resolved before anything changes: one that matches nothing refuses
 * the whole list. A memory named twice (its id and its alias) is removed once.
 */
export async function removeMemories(
  store: Store,
  refs: string[],
  reason?: string,
): Promise<{ removed: { id: string; title: string }[]; commit: string }> {
  if (!refs.length) throw err('E_INVALID_ARG', 'name at least one memory to remove', 'git mem rm ID [ID...]');
  // the reason is stored in the tombstone, on the shared ref like any record
  if (reason) assertRecordClean({ reason });
  const ident = await store.ident();
  const by = identLine(ident);
  const res = await store.write(async (tx) => {
    const cat = await tx.catalog();
    if (!tx.base) throw err('E_NOT_FOUND', `no memory matches "${refs[0]}"`);
    // resolve every ref first (an unknown one throws before anything is removed)
    const targets = new Map<string, { broken?: { oid: string } }>();
    for (const ref of refs) {
      // a record that does not parse (git mem doctor names it by its full id): removed by that id alone
      const broken = cat.entries.has(ref.toUpperCase())
        ? undefined
        : cat.bad.find((b) => idFromPath(b.path) === ref.toUpperCase());
      const id = broken ? ref.toUpperCase() : cat.resolve(ref);
      if (!targets.has(id)) targets.set(id, { broken });
    }
    const removed: { id: string; title: string }[] = [];
    for (const [id, { broken }] of targets) {
      if (broken) {
        const raw = (await tx.store.catFile.read(broken.oid))?.content.toString('utf8') ?? '';
        const clock = nextClock(Number(/^clock: *(\d+)\s*$/m.exec(raw)?.[1] ?? 0));
        tx.removeRecord(id, {
          id,
          deleted: new Date().toISOString(),
          by,
          title: '',
          clock,
          reason: reason ?? 'malformed record removed',
        });
        removed.push({ id, title: '' });
        continue;
      }
      const record = await tx.get(id);
      removeInTx(tx, record, by, reason);
      removed.push({ id, title: cat.entries.get(id)!.title });
    }
    const [one] = removed;
    const message =
      removed.length > 1
        ? `mem: rm ${removed.length} memories`
        : one.title
          ? `mem: rm ${one.id.slice(0, 12)} "${shortTitle(one.title)}"`
          : `mem: rm ${one.id.slice(0, 12)} (malformed)`;
    return { message, value: removed };
  });
  return { removed: res.value!, commit: res.commit! };
}

/** One memory: removeMemories with a list of one. */
export async function removeMemory(
  store: Store,
  ref: string,
  reason?: string,
): Promise<{ id: string; title: string; commit: string }> {
  const r = await removeMemories(store, [ref], reason);
  return { ...r.removed[0], commit: r.commit };
}

export async function moveMemory(store: Store, ref: string, newAlias: string) {
  const alias = validateAlias(newAlias);
  return updateMemory(store, ref, { alias });
}

/** OLD becomes superseded by NEW, and both link each other (pure; the one place supersede is decided). */
export function markSuperseded(o: MemoryRecord, n: MemoryRecord, now: string): void {
  applyPatch(o, { status: 'superseded' }, now);
  if (!o.links.superseded_by.includes(n.id)) {
    o.links.superseded_by = [...o.links.superseded_by, n.id];
    o.updated = now;
    o.clock = nextClock(o.clock);
  }
  if (!n.links.supersedes.includes(o.id)) {
    n.links.supersedes = [...n.links.supersedes, o.id];
    n.updated = now;
    n.clock = nextClock(n.clock);
  }
}

export async function supersede(store: Store, oldRef: string, newRef: string) {
  // already so: nothing to build (the store then writes nothing and starts no git process)
  let already: { old: MemoryRecord; new: MemoryRecord } | undefined;
  const res = await store.write(async (tx) => {
    const cat = await tx.catalog();
    const oldId = cat.resolve(oldRef);
    const newId = cat.resolve(newRef);
    if (oldId === newId) throw err('E_INVALID_ARG', 'a memory cannot supersede itself');
    const now = new Date().toISOString();
    const o = await tx.get(oldId);
    const n = await tx.get(newId);
    // a replacement that is itself replaced would hide both (the two superseding each other: neither
    // is searched any more)
    if (n.status === 'superseded')
      throw err(
        'E_INVALID_ARG',
        `${cat.abbrev(newId)} is itself superseded${n.links.superseded_by.length ? ` by ${n.links.superseded_by.map((x) => cat.abbrev(x)).join(', ')}` : ''}`,
        'supersede it by the memory that replaces both, or git mem update --status active it first',
      );
    const done =
      o.status === 'superseded' &&
      o.links.superseded_by.includes(newId) &&
      n.links.supersedes.includes(oldId);
    if (done) {
      already = { old: o, new: n };
      return null;
    }
    already = undefined;
    markSuperseded(o, n, now);
    tx.putRecord(o);
    tx.putRecord(n);
    return {
      message: `mem: supersede ${oldId.slice(0, 12)} by ${newId.slice(0, 12)}`,
      value: { old: o, new: n },
    };
  });
  if (already) return { ...already, commit: null };
  return { ...res.value!, commit: res.commit };
}

export async function pruneExpired(store: Store, now = Date.now(), dryRun = false) {
  const ident = await store.ident();
  const res = await store.write(async (tx) => {
    const cat = await tx.catalog();
    const expired = [...cat.entries.values()].filter((e) => isExpired(e, now));
    if (!expired.length || dryRun) return { message: '', value: expired };
    for (const e of expired) {
      tx.removeRecord(e.id, {
        id: e.id,
        deleted: new Date(now).toISOString(),
        by: identLine(ident),
        title: e.title,
        reason: 'expired',
      });
    }
    return { message: `mem: prune ${expired.length} expired`, value: expired };
  });
  return { pruned: res.value ?? [], commit: res.commit };
}

export async function initStore(
  store: Store,
): Promise<{ created: boolean; repaired?: boolean; commit: string }> {
  const res = await store.write(async (tx) => {
    const existing = await tx.store.readPath(tx.base, FORMAT_PATH);
    try {
      await ensureFormat(tx);
    } catch (e) {
      // a FORMAT that does not say any version (not a newer one: that is left to a newer git-mem)
      // is written again when every record reads as this format: init is the repair doctor names
      if (!/unreadable FORMAT/.test((e as Error).message)) throw e;
      if ((await tx.catalog()).bad.length)
        throw err(
          'E_FORMAT',
          'refs/memory has an unreadable FORMAT file, and records that do not read as format 1',
          'run git mem doctor: mend or remove those records first, then git mem init',
        );
      tx.put(FORMAT_PATH, FORMAT_TEXT);
      return { message: 'mem: init: FORMAT written again (it was unreadable)', value: 'repaired' as const };
    }
    if (existing) return null;
    return { message: 'mem: init store (format 1)', value: 'created' as const };
  });
  return { created: res.value === 'created', repaired: res.value === 'repaired', commit: res.commit! };
}

export { recordPath };
