/**
 * The catalog cache file (.git/mem/cache): a round trip gives the catalog
 * back; `list --json` and `show` answered from the file agree with the
 * catalog for every filter, including memories that expire after the cache
 * was written; a torn or foreign file is ignored, never trusted.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeFilter } from '../src/commands/list.js';
import { addMemory, removeMemory, updateMemory } from '../src/commands/memory.js';
import { Catalog, type CatalogRow } from '../src/gitstore/catalog.js';
import {
  findInCache,
  listJsonFromCache,
  loadCatalogCache,
  saveCatalogCache,
  scopedFromCache,
} from '../src/gitstore/catalog-cache.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { recordPath } from '../src/model/record.js';
import { makeRepo, rng } from './helpers.js';

describe('catalog cache file', () => {
  it('round-trips the catalog and answers list filters exactly as the catalog does', async () => {
    const r = makeRepo();
    const ids: string[] = [];
    const add = async (...args: string[]) => ids.push((await r.memJson(['add', ...args])).id);
    await add('--title', 'Plain decision', '--content', 'a');
    await add(
      '--type',
      'convention',
      '--title',
      'Ünïcode title, "quoted"',
      '--content',
      'b',
      '--alias',
      'standards/ts/uni',
      '--tags',
      'x,y',
    );
    await add(
      '--type',
      'known_fix',
      '--title',
      'Expires soon',
      '--content',
      'c',
      '--expires',
      '2030-01-01T00:00:00.000Z',
      '--tags',
      'y',
    );
    await add('--title', 'Archived one', '--content', 'd', '--status', 'archived', '--alias', 'standards/go');
    const store = new Store(await openRepo(r.dir, r.env));
    try {
      const cat = await store.catalog();
      const tip = (await store.tip())!;
      saveCatalogCache(store.repo, store.ref, cat);
      const back = loadCatalogCache(store.repo, store.ref)!;
      expect(back.tip).toBe(tip);
      expect([...back.rows.entries()]).toEqual([...cat.rows.entries()]);
      expect([...back.lines.entries()]).toEqual([...cat.lines.entries()]);

      const viaCatalog = (f: Parameters<typeof makeFilter>[0], now: number) => {
        const keep = makeFilter(f, now);
        const hits = cat.sortedIds.filter((id) =>
          keep({ ...cat.entries.get(id)!, type: cat.rows.get(id)!.type }),
        );
        return hits.length ? `[\n${hits.map((id) => cat.lines.get(id)).join(',\n')}\n]\n` : '[]\n';
      };
      const before = Date.parse('2029-06-01T00:00:00Z');
      const after = Date.parse('2031-06-01T00:00:00Z');
      const filters: Array<
        [Parameters<typeof makeFilter>[0], Array<'id' | 'alias' | 'type' | 'status' | 'expires' | 'tags'>]
      > = [
        [{}, ['expires']],
        [{ includeExpired: true }, []],
        [{ type: ['known_fix'] }, ['expires', 'type']],
        [{ tag: ['y'] }, ['expires', 'tags']],
        [{ status: ['archived'] }, ['expires', 'status']],
        [{ category: 'standards/' }, ['expires', 'alias']],
        [{ type: ['rule'] }, ['expires', 'type']],
      ];
      for (const now of [before, after]) {
        for (const [f, need] of filters) {
          const got = listJsonFromCache(store.repo, store.ref, tip, makeFilter(f, now), new Set(need), now);
          expect(got?.json.toString('utf8'), JSON.stringify({ f, now })).toBe(viaCatalog(f, now));
        }
      }
      // the expiring memory is listed before its date and not after it
      expect(
        listJsonFromCache(
          store.repo,
          store.ref,
          tip,
          makeFilter({}, after),
          new Set(['expires']),
          after,
        )!.json.toString(),
      ).not.toContain('Expires soon');
      expect(
        JSON.parse(
          listJsonFromCache(
            store.repo,
            store.ref,
            tip,
            makeFilter({}, before),
            new Set(['expires']),
            before,
          )!.json.toString(),
        ),
      ).toHaveLength(4);

      // show's lookups: an alias, a unique prefix, an ambiguous one
      expect(findInCache(store.repo, store.ref, tip, 'standards/ts/uni', undefined)?.id).toBe(ids[1]);
      expect(findInCache(store.repo, store.ref, tip, ids[3].slice(0, 26), ids[3])?.oid).toBe(
        cat.rows.get(ids[3])!.oid,
      );
      // every row resolves, the first in the file too
      for (const id of cat.sortedIds)
        expect(findInCache(store.repo, store.ref, tip, id, id)?.oid, id).toBe(cat.rows.get(id)!.oid);
      expect(findInCache(store.repo, store.ref, tip, '01', '01')).toBeUndefined();
      // a header longer than the first read (many malformed records listed): still resolved
      {
        const dir = join(r.dir, '.git', 'mem', 'cache');
        const file = join(dir, readdirSync(dir).find((f) => f.startsWith('catalog-'))!);
        const whole = readFileSync(file);
        const nl = whole.indexOf(10);
        const head = JSON.parse(whole.toString('utf8', 0, nl));
        head.bad = Array.from({ length: 3000 }, (_, i) => ({
          path: `memories/zz/${i}.md`,
          error: 'x'.repeat(30),
        }));
        writeFileSync(file, Buffer.concat([Buffer.from(JSON.stringify(head)), whole.subarray(nl)]));
        expect(findInCache(store.repo, store.ref, tip, 'standards/ts/uni', undefined)?.id).toBe(ids[1]);
        expect(findInCache(store.repo, store.ref, tip, ids[3].slice(0, 26), ids[3])?.id).toBe(ids[3]);
        writeFileSync(file, whole);
      }
      // another tip: nothing is answered from the file
      expect(listJsonFromCache(store.repo, store.ref, '0'.repeat(40), () => true, new Set())).toBeUndefined();

      // a torn file (cut short) or a file of another version is ignored
      const dir = join(r.dir, '.git', 'mem', 'cache');
      const file = join(dir, readdirSync(dir).find((f) => f.startsWith('catalog-'))!);
      const whole = readFileSync(file);
      writeFileSync(file, whole.subarray(0, whole.length - 5));
      expect(loadCatalogCache(store.repo, store.ref)).toBeUndefined();
      expect(listJsonFromCache(store.repo, store.ref, tip, () => true, new Set())).toBeUndefined();
      const older = whole.toString().replace(/"v":(\d+)/, (_, n) => `"v":${Number(n) - 1}`);
      expect(older).not.toBe(whole.toString());
      writeFileSync(file, older);
      expect(loadCatalogCache(store.repo, store.ref)).toBeUndefined();
      // and the CLI still answers (rebuilding the cache)
      expect(await r.memJson(['list', '--include-expired'])).toHaveLength(4);
      expect(readFileSync(file).equals(whole)).toBe(true);
    } finally {
      store.close();
    }
  });

  it('writes and reads an empty store', async () => {
    const r = makeRepo();
    await r.memJson(['init']);
    expect(await r.memJson(['list'])).toEqual([]);
    expect(await r.memJson(['list'])).toEqual([]);
  });
});

const TYPES = ['decision', 'rule', 'constraint'] as const;

describe('a catalog updated from the one built before', () => {
  it('sorts its ids as a full sort does (sortedWith)', () => {
    const rand = rng(5);
    const id = () =>
      Math.floor(rand() * 36 ** 4)
        .toString(36)
        .toUpperCase()
        .padStart(4, '0');
    for (let round = 0; round < 50; round++) {
      const rows = new Map<string, CatalogRow>();
      for (let i = 0; i < 200; i++) {
        const k = id();
        rows.set(k, { id: k, oid: '0'.repeat(40), type: 'decision', status: 'active', tags: [] });
      }
      const cat = new Catalog('x', rows, new Map(), []);
      const existing = [...rows.keys()];
      const removed = existing.filter(() => rand() < 0.1);
      const added = [...Array.from({ length: 20 }, id), ...existing.filter(() => rand() < 0.1)];
      const after = new Set(existing.filter((k) => !removed.includes(k)));
      for (const k of added) after.add(k);
      const stillRemoved = removed.filter((k) => !after.has(k));
      expect(cat.sortedWith(added, stillRemoved)).toEqual([...after].sort());
    }
  });

  it('in a long-lived store: each write updates the catalog in memory and the file follows on close', async () => {
    const r = makeRepo();
    expect((await r.mem(['init'])).code).toBe(0);
    expect((await r.mem(['list'])).code).toBe(0); // writes the catalog file
    const store = new Store(await openRepo(r.dir, r.env));
    store.longLived = true;
    const file = join(r.dir, '.git', 'mem', 'cache', readdirSync(join(r.dir, '.git', 'mem', 'cache'))[0]);
    const before = readFileSync(file, 'utf8');
    const added: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await addMemory(store, { type: 'decision', title: `m ${i}`, body: `b ${i}`, anchors: [] });
      added.push(res.record.id);
      expect([...(await store.catalog()).sortedIds]).toEqual([...added].sort());
    }
    expect(readFileSync(file, 'utf8')).toBe(before); // not rewritten after each write
    store.close();
    expect(loadCatalogCache(store.repo, 'refs/memory')?.tip).toBe(r.git('rev-parse', 'refs/memory').trim());
    expect([...loadCatalogCache(store.repo, 'refs/memory')!.sortedIds]).toEqual([...added].sort());
  });

  it('in a long-lived store: the catalog after adds, updates and removals equals one built from scratch', async () => {
    const r = makeRepo();
    expect((await r.mem(['init'])).code).toBe(0);
    const store = new Store(await openRepo(r.dir, r.env));
    store.longLived = true;
    const rand = rng(11);
    const live: string[] = [];
    for (let i = 0; i < 40; i++) {
      const pick = live[Math.floor(rand() * live.length)];
      if (pick && rand() < 0.25) {
        await updateMemory(store, pick, { title: `changed ${i}`, tags: [`t${i}`] });
      } else if (pick && rand() < 0.15) {
        // a row that moves from one type's list to another's
        await updateMemory(store, pick, { type: TYPES[(i + 1) % TYPES.length] });
      } else if (pick && rand() < 0.2) {
        await removeMemory(store, pick);
        live.splice(live.indexOf(pick), 1);
      } else {
        const res = await addMemory(store, {
          type: TYPES[i % TYPES.length],
          // a title quoting a scope is no scope (Catalog.scoped reads the lines before parsing them)
          title: i % 5 === 1 ? `m ${i} "scope":["src/x.ts"]` : `m ${i}`,
          body: `b ${i}`,
          anchors: [],
          ...(i % 4 === 0 ? { scope: [`src/m${i}/**`, 'lib/a.ts'] } : {}),
        });
        live.push(res.record.id);
      }
      // each tip's catalog is built from the previous one; its rows by type and its scoped
      // summaries are listed at once
      const cat = await store.catalog();
      cat.rowsOfType('rule');
      void cat.scoped;
    }
    const kept = await store.catalog();
    store.close();
    const fresh = await new Store(await openRepo(r.dir, r.env)).catalogAt(kept.tip, false);
    expect(kept.tip).toBe(r.git('rev-parse', 'refs/memory').trim());
    expect([...kept.sortedIds]).toEqual([...live].sort());
    expect([...kept.sortedIds]).toEqual([...fresh.sortedIds]);
    expect(new Map(kept.rows)).toEqual(new Map(fresh.rows));
    expect(new Map(kept.lines)).toEqual(new Map(fresh.lines));
    // the rows of each type: the same rows, in the same order, as the catalog from scratch has
    for (const t of TYPES) {
      // in id order, however the catalog came to be
      const ofType = kept.sortedIds.map((id) => kept.rows.get(id)!).filter((row) => row.type === t);
      expect(ofType.length, t).toBeGreaterThan(0);
      expect(kept.rowsOfType(t), t).toEqual(ofType);
      expect(fresh.rowsOfType(t), t).toEqual(ofType);
    }
    // the summaries with a scope: those of the catalog's entries, parsed alone
    const scoped = [...fresh.entries.values()].filter((e) => e.scope.length);
    expect(scoped.length).toBeGreaterThan(2);
    expect(scoped.length).toBeLessThan(fresh.size);
    expect(kept.scoped).toEqual(scoped);
    expect(fresh.scoped).toEqual(scoped);
    // and from the cache file the store left on close, as bytes searched (a one-shot check's way)
    const repo = await openRepo(r.dir, r.env);
    expect(loadCatalogCache(repo, 'refs/memory')?.tip).toBe(kept.tip);
    expect(scopedFromCache(repo, 'refs/memory', kept.tip!)).toEqual(
      scoped.map((e) => ({ id: e.id, title: e.title, scope: e.scope })),
    );
    expect(scopedFromCache(repo, 'refs/memory', '0'.repeat(40))).toBeUndefined();
    // what a check asks of its store: the same, from the file or from a catalog already built
    const pick = (xs: readonly { id: string; title: string; scope: string[] }[]) =>
      xs.map((e) => ({ id: e.id, title: e.title, scope: e.scope }));
    const oneShot = new Store(repo);
    expect(pick(await oneShot.scopedAt(kept.tip!))).toEqual(pick(scoped));
    await oneShot.catalogAt(kept.tip);
    expect(pick(await oneShot.scopedAt(kept.tip!))).toEqual(pick(scoped));
    oneShot.close();
  });

  it('in a long-lived store: every object its cat-file keeps is what git has under that name', async () => {
    const r = makeRepo();
    expect((await r.mem(['init'])).code).toBe(0);
    const store = new Store(await openRepo(r.dir, r.env));
    store.longLived = true;
    const first = await addMemory(store, { type: 'decision', title: 'one', body: 'b', anchors: [] });
    for (let i = 0; i < 4; i++) {
      await addMemory(store, { type: 'decision', title: `m ${i}`, body: `b ${i}`, anchors: [] });
      await updateMemory(store, first.record.id, { title: `one, version ${i}` });
      await store.catalog();
    }
    const names = store.catFile.keptNames();
    // the objects it wrote (blobs, trees, commits, and their ^{tree} / :path names) and the trees it diffed
    expect(names.filter((n) => n.endsWith('^{tree}')).length).toBeGreaterThanOrEqual(8);
    expect(names.some((n) => /^[0-9a-f]{40}:memories/.test(n))).toBe(true);
    expect(names.filter((n) => n.startsWith('refs/') || n === 'HEAD')).toEqual([]);
    // git's answer for every name, in one cat-file --batch
    const out = execFileSync('git', ['cat-file', '--batch'], {
      cwd: r.dir,
      env: r.env,
      input: `${names.join('\n')}\n`,
    });
    let at = 0;
    for (const name of names) {
      const nl = out.indexOf(10, at);
      const [oid, type, size] = out.toString('utf8', at, nl).split(' ');
      const content = out.subarray(nl + 1, nl + 1 + Number(size));
      at = nl + 1 + Number(size) + 1;
      const kept = store.catFile.cached(name)!;
      expect({ name, oid, type, content }).toEqual({
        name,
        oid: kept.oid,
        type: kept.type,
        content: kept.content,
      });
    }
    store.close();
  });

  it('in a long-lived store: a write still succeeds after something removed .git/mem/tmp', async () => {
    const r = makeRepo();
    expect((await r.mem(['init'])).code).toBe(0);
    const store = new Store(await openRepo(r.dir, r.env));
    store.longLived = true;
    try {
      await addMemory(store, { type: 'decision', title: 'first', body: 'b', anchors: [] });
      rmSync(join(r.dir, '.git', 'mem', 'tmp'), { recursive: true, force: true });
      const again = await addMemory(store, { type: 'decision', title: 'second', body: 'b', anchors: [] });
      expect(r.git('rev-parse', 'refs/memory').trim()).toBe(again.commit);
      expect(r.git('show', `refs/memory:${recordPath(again.record.id)}`)).toContain('title: second');
    } finally {
      store.close();
    }
  });
});
