/**
 * One search operation (src/search/search.ts): `git mem search`, the web UI and the MCP tool
 * ask the same question the same way. The CLI's --json hits and the UI API's list of the same
 * query hold the same ids in the same order; the operation itself refuses, labels, merges team
 * stores and counts uses as every surface needs.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufferIO } from '../src/cli/context.js';
import { openStore } from '../src/commands/context.js';
import type { Store } from '../src/gitstore/store.js';
import { runSearch } from '../src/search/search.js';
import { usageCounts } from '../src/search/usage.js';
import { startUi, type UiServer } from '../src/ui/server.js';
import { makeRepo, ROOT, type TestRepo } from './helpers.js';

const MEMORIES = [
  [
    'decision',
    'Postgres connection pool sized at twenty',
    'The pool holds twenty postgres connections per worker.',
  ],
  ['known_fix', 'Flaky postgres tests on CI', 'Wait for postgres with pg_isready before the suite starts.'],
  [
    'convention',
    'Migrations run in one transaction',
    'Every postgres migration is wrapped in a transaction.',
  ],
  ['constraint', 'Cache entries expire after an hour', 'The redis cache keeps entries sixty minutes.'],
  ['decision', 'Invalidate the cache on deploy', 'A deploy flushes the redis cache so stale pages vanish.'],
  ['environment', 'Timezones in reports', 'Reports render in UTC; the browser converts to local time.'],
  ['convention', 'Feature flags named by team', 'A flag name starts with the owning team: payments.retry.'],
  [
    'known_fix',
    'Deploy hangs on asset upload',
    'Uploading assets to the bucket retries three times then deploys.',
  ],
] as const;

async function openIn(r: TestRepo): Promise<{ store: Store; close: () => void }> {
  const ctx = { io: bufferIO(), cwd: r.dir, env: r.env, stores: [] as Store[] };
  const store = await openStore(ctx);
  return {
    store,
    close: () => {
      for (const s of ctx.stores) s.close();
    },
  };
}

async function seed(r: TestRepo, rows: ReadonlyArray<readonly [string, string, string]>): Promise<void> {
  const lines = rows.map(([type, title, body]) => JSON.stringify({ type, title, body }));
  expect((await r.mem(['import', '-'], { stdin: lines.join('\n') })).code).toBe(0);
}

describe('the CLI and the UI search the same way', () => {
  let repo: TestRepo;
  let ui: UiServer;
  let close: () => void;
  let archived: string;
  const uiIds = async (q: string, extra = ''): Promise<string[]> => {
    const r = await fetch(
      `http://127.0.0.1:${ui.port}/api/memories?q=${encodeURIComponent(q)}&size=100${extra}`,
      {
        headers: { 'x-git-mem-token': ui.token },
      },
    );
    expect(r.status).toBe(200);
    return ((await r.json()) as { items: Array<{ id: string }> }).items.map((m) => m.id);
  };
  const cliIds = async (args: string[]): Promise<string[]> =>
    ((await repo.memJson(['search', '--limit', '100', ...args])) as Array<{ id: string }>).map((h) => h.id);

  beforeAll(async () => {
    repo = makeRepo({ commit: true });
    await seed(repo, MEMORIES);
    // a retired memory: the UI lists every status unless one is picked, as `search --all` does
    const old = await repo.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'Postgres pool of ten',
      '--content',
      'Ten postgres connections.',
    ]);
    expect((await repo.mem(['update', old.id, '--status', 'archived'])).code).toBe(0);
    archived = old.id;
    const o = await openIn(repo);
    close = o.close;
    ui = await startUi(
      { store: o.store, cwd: repo.dir, env: repo.env },
      { assets: join(ROOT, 'dist'), log: () => {} },
    );
  });
  afterAll(async () => {
    await ui?.close();
    close?.();
  });

  it('returns the same ids in the same order', async () => {
    expect(await uiIds('postgres connections')).toContain(archived);
    expect(await uiIds('postgres connections', '&status=active')).not.toContain(archived);
    for (const q of [
      'postgres connections',
      'redis cache deploy',
      'deploy',
      'reports timezone utc',
      'team flags',
    ]) {
      const cli = await cliIds(['--no-daemon', '--all', q]);
      expect(cli.length, q).toBeGreaterThan(0);
      expect(await uiIds(q), q).toEqual(cli);
      // a status picked in the UI: the default search (no retired memories)
      expect(await uiIds(q, '&status=active'), q).toEqual(await cliIds(['--no-daemon', q]));
    }
  });

  it('a limit gives the first hits of the whole list: the bar is applied before the cut', async () => {
    // each ranks, between memories that clear the search bar, one that misses it (it matches
    // one common word of the three), so a cut made before the bar would return too few
    for (const q of ['postgres pool deploy', 'postgres cache reports', 'postgres deploy assets']) {
      const all = await cliIds(['--no-daemon', q]);
      for (let k = 1; k <= all.length + 1; k++) {
        const hits = (await repo.memJson(['search', '--no-daemon', '--limit', String(k), q])) as Array<{
          id: string;
        }>;
        expect(
          hits.map((h) => h.id),
          `${q} --limit ${k}`,
        ).toEqual(all.slice(0, k));
      }
    }
  });
});

describe('runSearch, the one operation', () => {
  it('refuses nothing to search for (typed), unless the last word may be unfinished', async () => {
    const r = makeRepo({ commit: true });
    await seed(r, MEMORIES.slice(0, 3));
    const { store, close } = await openIn(r);
    try {
      for (const query of ['', 'the and of', '.*'])
        await expect(runSearch(store, { query }), query).rejects.toMatchObject({ code: 'E_INVALID_ARG' });
      await expect(runSearch(store, { query: 'the', prefix: true })).resolves.toBeInstanceOf(Array);
      await expect(runSearch(store, { query: 'x', types: ['nope'] })).rejects.toMatchObject({
        code: 'E_INVALID_ARG',
      });
      // filters alone are a search
      expect((await runSearch(store, { query: '', types: ['convention'] })).map((h) => h.title)).toEqual([
        'Migrations run in one transaction',
      ]);
    } finally {
      close();
    }
  });

  it("labels the store's hits, merges a team store's, and counts as used only its own hits given", async () => {
    const project = makeRepo({ commit: true });
    const team = makeRepo({ commit: true });
    await seed(project, MEMORIES.slice(0, 3));
    await seed(team, [['decision', 'Postgres replicas for reads', 'Read queries go to postgres replicas.']]);
    const p = await openIn(project);
    const t = await openIn(team);
    try {
      const q = { query: 'postgres', limit: 10 };
      const alone = await runSearch(p.store, q);
      expect(alone.length).toBe(3);
      expect(alone.every((h) => h.store === 'project')).toBe(true);
      expect(usageCounts(p.store.repo).size).toBe(0); // a person's search is no use
      const both = await runSearch(p.store, q, {
        teams: [{ name: 'platform', store: t.store }],
        recordUsage: true,
      });
      expect(both.filter((h) => h.store === 'platform').map((h) => h.title)).toEqual([
        'Postgres replicas for reads',
      ]);
      expect(both.filter((h) => h.store === 'project').map((h) => h.id)).toEqual(alone.map((h) => h.id));
      expect([...usageCounts(p.store.repo).keys()].sort()).toEqual(alone.map((h) => h.id).sort());
      expect(usageCounts(t.store.repo).size).toBe(0);
      expect((await runSearch(p.store, { ...q, limit: 2 }, { label: 'global' })).map((h) => h.store)).toEqual(
        ['global', 'global'],
      );
    } finally {
      p.close();
      t.close();
    }
  });
});
