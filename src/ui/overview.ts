/**
 * The Overview page: the counts of `git mem stats`, memories created per
 * month by type, the status of the store at a dozen points of its history,
 * the stale share, and which folders of the code have memory and which
 * have none.
 */
import { storeStats } from '../commands/stats.js';
import type { Store } from '../gitstore/store.js';
import { idFromPath } from '../model/record.js';
import { codeIndex } from './code.js';
import { type Memo, memoOf, type UiEnv } from './env.js';
import type { Overview } from './wire.js';

const POINTS = 12;

/**
 * Status counts at up to POINTS commits spread over the store's history,
 * oldest first. Walked back from the tip: its catalog gives every status at
 * once, and each earlier point reads only the records that changed since.
 */
async function statusOverTime(store: Store, tip: string): Promise<Overview['overTime']> {
  const log = await store.log();
  if (!log.length) return [];
  const first = Date.parse(log[log.length - 1].date);
  const last = Date.parse(log[0].date);
  // the newest commit at or before each of POINTS evenly spaced times (newest first)
  const picks: Array<{ commit: string; date: string }> = [];
  let at = 0;
  for (let k = POINTS - 1; k >= 0; k--) {
    const t = first + ((last - first) * k) / (POINTS - 1);
    while (at < log.length && Date.parse(log[at].date) > t) at++;
    if (at >= log.length) break;
    if (!picks.length || picks[picks.length - 1].commit !== log[at].commit)
      picks.push({ commit: log[at].commit, date: log[at].date });
  }
  const state = new Map<string, string>();
  for (const r of (await store.catalogAt(tip)).rows.values()) state.set(r.id, r.status);
  const out: Overview['overTime'] = [];
  let prev = tip;
  for (const p of picks) {
    if (p.commit !== prev) {
      const changed = await store.diffPaths(prev, p.commit, 'memories');
      const read: Array<{ id: string; oid: string }> = [];
      for (const c of changed) {
        const id = idFromPath(c.path);
        if (!id) continue;
        if (c.oid === null) state.delete(id);
        else read.push({ id, oid: c.oid });
      }
      const records = await store.readRecords(read);
      const got = new Set(records.map((r) => r.id));
      for (const r of records) state.set(r.id, r.status);
      for (const r of read) if (!got.has(r.id)) state.delete(r.id); // unreadable then
    }
    const byStatus: Record<string, number> = {};
    for (const s of state.values()) byStatus[s] = (byStatus[s] ?? 0) + 1;
    out.push({ date: p.date, commit: p.commit, byStatus });
    prev = p.commit;
  }
  return out.reverse();
}

async function build(env: UiEnv, tip: string | null): Promise<Overview> {
  const stats = await storeStats(env.store);
  const cat = await env.store.catalog();
  // memories created per month, by type (the last 12 months that have any)
  const months = new Map<string, Record<string, number>>();
  for (const e of cat.entries.values()) {
    const m = e.created.slice(0, 7);
    const row = months.get(m) ?? {};
    row[e.type] = (row[e.type] ?? 0) + 1;
    months.set(m, row);
  }
  const byMonth = [...months]
    .sort((a, b) => (a[0] < b[0] ? -1 : 1))
    .slice(-12)
    .map(([month, byType]): Overview['byMonth'][number] => ({ month, byType }));
  const overTime = tip ? await statusOverTime(env.store, tip) : [];
  // folders of the code at HEAD, two levels deep: how many files, how many have memory
  const code = await codeIndex(env);
  const folders = [...code.dirs]
    .filter(([d]) => d && d.split('/').length <= 2)
    .map(([path, i]): Overview['folders'][number] => ({
      path,
      files: i.files,
      covered: i.covered,
      memories: i.memories.size,
    }))
    .sort((a, b) => b.files - a.files || (a.path < b.path ? -1 : 1))
    .slice(0, 60);
  const anchoredLive = [...cat.entries.values()].filter(
    (e) => e.anchors.length && e.status !== 'archived' && e.status !== 'superseded',
  );
  return {
    stats,
    byMonth,
    overTime,
    stale: {
      stale: stats.byStatus.stale ?? 0,
      anchored: anchoredLive.length,
      share: anchoredLive.length ? (stats.byStatus.stale ?? 0) / anchoredLive.length : 0,
    },
    code: { head: code.head, files: code.files.length, covered: code.dirs.get('')?.covered ?? 0 },
    folders,
  };
}

const memo = new WeakMap<UiEnv, Memo<Overview>>();

export async function overview(env: UiEnv): Promise<Overview> {
  const tip = await env.store.tip();
  const head = (await env.store.catFile.read('HEAD^{commit}').catch(() => null))?.oid ?? null;
  return memoOf(memo, env).get(`${tip}:${head}`, () => build(env, tip));
}
