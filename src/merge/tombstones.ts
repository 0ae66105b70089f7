/**
 * Tombstones past their time-to-live (`tombstone-ttl-days` of the shared config): collected by a
 * merge, by the later of the two commit dates so both sides agree, and on their own.
 */
import { SHARED_CONFIG_PATH, type Store, type TreeEntry } from '../gitstore/store.js';
import { RecordParseError } from '../model/record.js';
import { parse as parseYaml } from '../model/yaml.js';
import { expiredTombstone, type Tombstone } from './engine.js';

/** Shared config key (config.yaml on refs/memory): days a tombstone is kept. */
const TOMBSTONE_TTL_KEY = 'tombstone-ttl-days';
const DEFAULT_TOMBSTONE_TTL_DAYS = 90;

export const TOMB_RE = /^tombstones\/[0-9A-Z]{2}\/([0-9A-Z]{26})\.yaml$/;

/** Parses a tombstone file; throws RecordParseError when it is not a YAML mapping. */
export function parseTombstone(text: string, id: string): Tombstone {
  let v: unknown;
  try {
    v = parseYaml(text, { maxAliasCount: 16 });
  } catch (e) {
    throw new RecordParseError(`invalid YAML: ${(e as Error).message.split('\n')[0]}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v))
    throw new RecordParseError('tombstone is not a mapping');
  const t = { ...(v as Record<string, unknown>) } as Tombstone;
  if (t.id !== undefined && String(t.id) !== id)
    throw new RecordParseError(`tombstone id ${String(t.id)} does not match its path`);
  t.id = id;
  if (t.clock !== undefined) {
    const c = Number(t.clock);
    t.clock = Number.isFinite(c) ? c : undefined;
    if (t.clock === undefined) delete t.clock;
  }
  return t;
}

export async function collectTombstones(
  store: Store,
  ours: string,
  oursTombs: TreeEntry[],
  now: number,
  changes: Map<string, { oid: string } | { text: string } | { remove: true }>,
  config: Record<string, unknown> | undefined,
): Promise<void> {
  let cfg = config;
  if (!cfg) {
    const c = changes.get(SHARED_CONFIG_PATH);
    const spec = c && 'oid' in c ? c.oid : `${ours}:${SHARED_CONFIG_PATH}`;
    const buf = await store.readBlob(spec).catch(() => null);
    try {
      cfg = buf ? ((parseYaml(buf.toString('utf8')) as Record<string, unknown>) ?? {}) : {};
    } catch {
      cfg = {};
    }
  }
  const ttl = tombstoneTtl(cfg);
  if (!(ttl > 0)) return;
  const present = new Map<string, string | { text: string }>();
  for (const e of oursTombs) present.set(e.path, e.oid);
  for (const [path, c] of changes) {
    if (!path.startsWith('tombstones/')) continue;
    if ('remove' in c) present.delete(path);
    else present.set(path, 'oid' in c ? c.oid : { text: c.text });
  }
  const entries = [...present.entries()];
  const oids = entries.filter(([, v]) => typeof v === 'string').map(([, v]) => v as string);
  const blobs = await store.catFile.readMany(oids);
  const byOid = new Map<string, string>();
  oids.forEach((o, i) => {
    const b = blobs[i];
    if (b) byOid.set(o, b.content.toString('utf8'));
  });
  for (const [path, v] of entries) {
    const textV = typeof v === 'string' ? byOid.get(v) : v.text;
    if (!textV) continue;
    const id = TOMB_RE.exec(path)?.[1];
    if (id && tombstoneExpired(textV, id, now, ttl)) changes.set(path, { remove: true });
  }
}

/**
 * Whether a tombstone file is past the TTL. Reads the `deleted:` line
 * directly (a merge looks at every tombstone, and YAML parsing thousands of
 * them would dominate it); anything unusual goes through the YAML parser.
 */
export function tombstoneExpired(text: string, id: string, now: number, ttlDays: number): boolean {
  const m = /^deleted: ["']?([0-9][0-9T:.+Z-]*)["']?$/m.exec(text);
  if (m) return expiredTombstone({ id, deleted: m[1] }, now, ttlDays);
  try {
    return expiredTombstone(parseTombstone(text, id), now, ttlDays);
  } catch {
    return false; // a malformed tombstone nobody touched is left alone
  }
}

/** The TTL of tombstones from a shared config mapping (days; 0 or less keeps them). */
function tombstoneTtl(cfg: Record<string, unknown> | undefined): number {
  const raw = cfg?.[TOMBSTONE_TTL_KEY];
  return raw === undefined || raw === null ? DEFAULT_TOMBSTONE_TTL_DAYS : Number(raw);
}

/**
 * Drops tombstones older than the shared `tombstone-ttl-days` from the store
 * in one commit (merges do the same on their own; this is for a store that
 * never merges). Returns the ids collected.
 */
export async function collectExpiredTombstones(
  store: Store,
  now = Date.now(),
): Promise<{ ids: string[]; commit: string | null }> {
  const res = await store.write(async (tx) => {
    if (!tx.base) return null;
    const cfgBuf = await tx.store.readPath(tx.base, SHARED_CONFIG_PATH);
    let cfg: Record<string, unknown> = {};
    try {
      cfg = cfgBuf ? ((parseYaml(cfgBuf.toString('utf8')) as Record<string, unknown>) ?? {}) : {};
    } catch {}
    const ttl = tombstoneTtl(cfg);
    if (!(ttl > 0)) return null;
    const tombs = await tx.store.lsTree(tx.base, 'tombstones');
    const blobs = await tx.store.catFile.readMany(tombs.map((e) => e.oid));
    const ids: string[] = [];
    tombs.forEach((e, i) => {
      const id = TOMB_RE.exec(e.path)?.[1];
      const b = blobs[i];
      if (id && b && tombstoneExpired(b.content.toString('utf8'), id, now, ttl)) {
        tx.remove(e.path);
        ids.push(id);
      }
    });
    if (!ids.length) return null;
    return {
      message: `mem: collect ${ids.length} tombstone${ids.length === 1 ? '' : 's'} older than ${ttl} day${ttl === 1 ? '' : 's'}`,
      value: ids,
    };
  });
  return { ids: res.value ?? [], commit: res.commit };
}
