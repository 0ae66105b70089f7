/**
 * Team and organisation stores: another repository's memory (a standards
 * repository, an organisation's conventions) registered by name in this
 * clone's git config, `mem.store.<name>.url` and `mem.store.<name>.writable`,
 * and kept at `refs/mem-stores/<name>/memory` beside the project's own
 * `refs/memory`. What a fetch brings lands in `refs/mem-stores/<name>/remote/`
 * first and passes the one sync path (src/merge/sync.ts: git's object checks,
 * then the boundary validator) before the store's ref moves: a team store's
 * remote is untrusted like any other.
 *
 * A store is read-only unless registered --writable: its ref then follows the
 * remote's tip (no merge commits of its own) and Store.write refuses. A
 * writable one syncs like `git mem sync`: fetch, merge, push.
 *
 * Reads consult project > team stores (in the order registered) > global.
 * The registry is per clone (git config, never the shared config in
 * refs/memory): whoever can push memory must not be able to make every clone
 * fetch a URL of their choosing.
 */
import { isAbsolute, resolve } from 'node:path';
import { err } from '../errors.js';
import { mayHaveLocalMem } from '../gitstore/config.js';
import { git } from '../gitstore/git.js';
import type { Repo } from '../gitstore/repo.js';
import { Store } from '../gitstore/store.js';
import type { PullResult, SyncResult } from '../merge/sync.js';

/** A store's name: a safe ref component and git config subsection (no dots, no case folding surprises). */
const NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
/** Labels of the other stores a result can come from: a team store cannot take them. */
const RESERVED = new Set(['project', 'global']);

export interface TeamStoreInfo {
  name: string;
  url: string;
  writable: boolean;
  /** the local ref that holds it */
  ref: string;
}

export interface TeamStore extends TeamStoreInfo {
  store: Store;
}

export const storeRef = (name: string) => `refs/mem-stores/${name}/memory`;

/** Refuses a name that is not a safe ref component (E_INVALID_ARG). */
export function checkStoreName(name: string): void {
  if (RESERVED.has(name))
    throw err(
      'E_INVALID_ARG',
      `"${name}" names the ${name} store already`,
      'pick another name for the team store, e.g. standards',
    );
  if (!NAME.test(name))
    throw err(
      'E_INVALID_ARG',
      `invalid store name "${name}"`,
      'use 1-40 lowercase letters, digits and inner dashes, e.g. standards or acme-platform',
    );
}

/** The URL schemes a team store may use: git's own transports, nothing that runs a helper. */
const SCHEMES = new Set(['https', 'http', 'ssh', 'git', 'file', 'git+ssh', 'ssh+git']);

/**
 * A URL as given (https://, http://, ssh://, git://, file://, user@host:path), or a local path
 * made absolute, so the registration holds from any directory. Never an option (git is handed
 * the URL as an argument), and never a transport that runs a program or reads a descriptor:
 * `ext::CMD` runs CMD, `fd::3` waits on a descriptor for ever, `X::ADDR` and `X://` start
 * `git-remote-X` (anything of git's helpers the machine has): all E_INVALID_ARG.
 */
export function normalizeStoreUrl(url: string, cwd: string): string {
  const u = url.trim();
  if (!u) throw err('E_INVALID_ARG', 'the store URL is empty', 'give a URL or the path of a repository');
  const shown = () => u.replace(/[^\x20-\x7e]/g, '?');
  const refuse = (why: string) =>
    err(
      'E_INVALID_ARG',
      `invalid store URL "${shown()}": ${why}`,
      'give an https://, ssh://, git://, file:// URL, user@host:path, or the path of a repository',
    );
  if (u.startsWith('-')) throw refuse('it would be read as an option');
  if (/[\u0000-\u001f\u007f]/.test(u)) throw refuse('it holds a control character');
  // git's transport-helper syntax, `<transport>::<address>`, before anything else: `ext::`, `fd::`
  const helper = /^([A-Za-z0-9][A-Za-z0-9+.-]*)::/.exec(u);
  if (helper) throw refuse(`the ${helper[1]}:: transport is not allowed`);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(u);
  if (scheme) {
    if (!SCHEMES.has(scheme[1].toLowerCase())) throw refuse(`the ${scheme[1]}:// transport is not allowed`);
    return u;
  }
  // scp-like user@host:path (git reads a colon before the first slash so)
  if (/^[^/\\:]+:/.test(u)) {
    if (!/^(?:[A-Za-z0-9._~+-]+@)?(?:[A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(?!:)/.test(u))
      throw refuse('not a user@host:path address');
    return u;
  }
  return isAbsolute(u) ? u : resolve(cwd, u);
}

const cfg = (repo: Repo) => ({ cwd: repo.cwd, env: repo.env });

/**
 * The registered team stores, in the order registered. `store` lends its
 * already-read git config (the agent hooks pay no extra process); names that
 * are not valid (a hand-edited config) are skipped.
 */
export async function listStores(repo: Repo, store?: Store): Promise<TeamStoreInfo[]> {
  let entries: Array<{ key: string; value: string }>;
  if (store) {
    entries = (await store.gitConfig()).filter((e) => e.scope === 'local' || e.scope === 'worktree');
  } else {
    if (!mayHaveLocalMem(repo)) return [];
    const r = await git(['config', '--local', '-z', '--get-regexp', '^mem\\.store\\.'], {
      ...cfg(repo),
      allowFail: true,
    });
    entries = [];
    for (const kv of r.stdout.toString('utf8').split('\0')) {
      const nl = kv.indexOf('\n');
      if (nl >= 0) entries.push({ key: kv.slice(0, nl), value: kv.slice(nl + 1) });
      else if (kv) entries.push({ key: kv, value: 'true' });
    }
  }
  const byName = new Map<string, { url?: string; writable: boolean }>();
  for (const e of entries) {
    const m = /^mem\.store\.(.+)\.(url|writable)$/i.exec(e.key);
    if (!m || !NAME.test(m[1]) || RESERVED.has(m[1])) continue;
    const s = byName.get(m[1]) ?? { writable: false };
    if (m[2].toLowerCase() === 'url') s.url = e.value;
    else s.writable = /^(true|yes|on|1)$/i.test(e.value.trim());
    byName.set(m[1], s);
  }
  return [...byName]
    .filter(([, s]) => s.url)
    .map(([name, s]) => ({ name, url: s.url!, writable: s.writable, ref: storeRef(name) }));
}

/** A Store on the team store's ref, in the project's repository; read-only unless registered --writable. */
export function openTeamStore(repo: Repo, info: TeamStoreInfo): TeamStore {
  const store = new Store(repo, info.ref);
  if (!info.writable) store.readOnly = () => readOnlyError(info);
  return { ...info, store };
}

function readOnlyError(info: TeamStoreInfo) {
  return err(
    'E_FORBIDDEN',
    `team store ${info.name} is read-only`,
    `register it writable: git mem store add ${info.name} ${info.url} --writable`,
    { store: info.name },
  );
}

/** Every registered team store, opened (the caller closes them, or tracks them in its run context). */
export async function openTeamStores(repo: Repo, project?: Store): Promise<TeamStore[]> {
  return (await listStores(repo, project)).map((i) => openTeamStore(repo, i));
}

/** One registered store by name (E_NOT_FOUND names the registered ones and the fix). */
export async function findStore(repo: Repo, name: string): Promise<TeamStoreInfo> {
  checkStoreName(name);
  const all = await listStores(repo);
  const found = all.find((s) => s.name === name);
  if (found) return found;
  throw err(
    'E_NOT_FOUND',
    `no team store named "${name}"${all.length ? ` (registered: ${all.map((s) => s.name).join(', ')})` : ''}`,
    `register it: git mem store add ${name} URL`,
    { store: name, registered: all.map((s) => s.name) },
  );
}

/** A writable store by name, for writes (`add --store`): E_FORBIDDEN for a read-only one. */
export async function writableStore(repo: Repo, name: string): Promise<TeamStore> {
  const info = await findStore(repo, name);
  if (!info.writable) throw readOnlyError(info);
  return openTeamStore(repo, info);
}

export type StoreSyncResult = (PullResult | SyncResult) & { store: string; writable: boolean };

/**
 * Brings a team store up to date through the one sync path: a read-only one
 * follows the remote's tip (fetch, validate, move the ref); a writable one
 * also merges and pushes, like `git mem sync`.
 */
export async function syncStore(
  t: TeamStore,
  opts: { interactive?: boolean; retries?: number } = {},
): Promise<StoreSyncResult> {
  const { pull, sync } = await import('../merge/sync.js');
  const to = { name: t.name, url: t.url, store: true };
  const r = t.writable
    ? await sync(t.store, { to, interactive: opts.interactive, retries: opts.retries })
    : await pull(t.store, { to, follow: true, interactive: opts.interactive });
  return { ...r, store: t.name, writable: t.writable };
}

export interface AddStoreResult {
  store: TeamStoreInfo;
  /** false: the name was registered already with this URL (its writable flag may have changed) */
  created: boolean;
  sync?: StoreSyncResult;
}

/**
 * Registers a store and (unless `fetch` is false) fetches it. A new
 * registration whose first fetch fails is undone: nothing is left behind.
 * The same name and URL again changes only the writable flag.
 */
export async function addStore(
  repo: Repo,
  o: { name: string; url: string; writable?: boolean; fetch?: boolean; cwd: string; interactive?: boolean },
): Promise<AddStoreResult> {
  checkStoreName(o.name);
  const url = normalizeStoreUrl(o.url, o.cwd);
  const existing = (await listStores(repo)).find((s) => s.name === o.name);
  if (existing && existing.url !== url)
    throw err(
      'E_INVALID_ARG',
      `team store ${o.name} is registered already, at ${existing.url}`,
      `to point it elsewhere: git mem store remove ${o.name}, then add it again`,
    );
  const key = `mem.store.${o.name}`;
  const register = async () => {
    if (!existing) await git(['config', '--local', `${key}.url`, url], cfg(repo));
    if (o.writable) await git(['config', '--local', `${key}.writable`, 'true'], cfg(repo));
    else
      await git(['config', '--local', '--unset-all', `${key}.writable`], { ...cfg(repo), allowFail: true });
  };
  const info: TeamStoreInfo = { name: o.name, url, writable: !!o.writable, ref: storeRef(o.name) };
  // a new store is registered once its first fetch succeeded: a fetch that fails, or that is
  // interrupted, leaves no registration behind (and what it fetched is removed when it fails)
  if (existing || o.fetch === false) await register();
  if (o.fetch === false) return { store: info, created: !existing };
  const t = openTeamStore(repo, info);
  try {
    const sync = await syncStore(t, { interactive: o.interactive });
    if (!existing) await register();
    return { store: info, created: !existing, sync };
  } catch (e) {
    if (!existing) await dropStoreData(repo, info).catch(() => {});
    throw e;
  } finally {
    t.store.close();
  }
}

/**
 * Unregisters a store and deletes its refs and local caches. A writable store
 * holding memory its remote does not have is refused unless `force`.
 */
export async function removeStore(
  repo: Repo,
  name: string,
  opts: { force?: boolean } = {},
): Promise<{ name: string; refs: string[] }> {
  const info = await findStore(repo, name);
  if (!opts.force && (await unpushed(repo, info)))
    throw err(
      'E_INVALID_ARG',
      `team store ${name} holds memory its remote does not have yet`,
      `push it first: git mem store sync ${name} (or drop it: git mem store remove ${name} --force)`,
      { store: name },
    );
  const refs = await dropStoreData(repo, info);
  await git(['config', '--local', '--remove-section', `mem.store.${name}`], {
    ...cfg(repo),
    allowFail: true,
  });
  return { name, refs };
}

/** Deletes a store's refs and its local caches; the refs deleted. */
async function dropStoreData(repo: Repo, info: TeamStoreInfo): Promise<string[]> {
  const r = await git(['for-each-ref', '--format=%(refname)', `refs/mem-stores/${info.name}/`], cfg(repo));
  const refs = r.stdout.toString('utf8').split('\n').filter(Boolean);
  if (refs.length)
    await git(['update-ref', '--stdin'], {
      ...cfg(repo),
      input: refs.map((ref) => `delete ${ref}\n`).join(''),
    });
  const store = new Store(repo, info.ref);
  try {
    const [{ dropIndex }, { dropCatalogCache }] = await Promise.all([
      import('../search/store-index.js'),
      import('../gitstore/catalog-cache.js'),
    ]);
    dropIndex(store);
    dropCatalogCache(repo, info.ref);
  } finally {
    store.close();
  }
  return refs;
}

/** Whether a writable store holds memory its remote does not have yet (what `remove` would lose). */
export async function unpushed(repo: Repo, info: TeamStoreInfo): Promise<boolean> {
  if (!info.writable) return false;
  const r = await git(['rev-list', '--count', info.ref, `^refs/mem-stores/${info.name}/remote/memory`], {
    ...cfg(repo),
    allowFail: true,
  });
  if (r.code !== 0) {
    const tip = await git(['rev-parse', '-q', '--verify', `${info.ref}^{commit}`], {
      ...cfg(repo),
      allowFail: true,
    });
    return tip.code === 0;
  }
  return Number(r.stdout.toString().trim()) > 0;
}
