/**
 * Seeded random histories: three clones (refs in one repository, so no
 * transport is involved) add, edit, tag, rename and delete memories and merge
 * through a hub ref at random, with mergeCommits. After a final round every
 * clone holds the same tree, every created memory is there unless someone
 * deleted it, and every appended body line and every tag survived (in the
 * record, or in its attic).
 */
import { describe, expect, it } from 'vitest';
import { addMemory, initStore, moveMemory, removeMemory, updateMemory } from '../src/commands/memory.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { mergeCommits } from '../src/merge/merge-commits.js';
import { parseRecord, recordPath } from '../src/model/record.js';
import { makeRepo } from './helpers.js';

function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function run(seed: number, nClones: number, nOps: number) {
  const r = makeRepo();
  const repo = await openRepo(r.dir, r.env);
  const hub = new Store(repo, 'refs/mem-test/hub');
  await initStore(hub);
  const clones = Array.from({ length: nClones }, (_, i) => new Store(repo, `refs/mem-test/c${i}`));
  for (const c of clones) r.git('update-ref', c.ref, (await hub.tip())!);
  const rand = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
  const created = new Set<string>();
  const deleted = new Set<string>();
  const lines = new Map<string, string[]>();
  const tags = new Map<string, string[]>();
  let n = 0;

  /** clone merges the hub in, then the hub moves to the clone's tip when that is a fast-forward */
  const sync = async (c: Store) => {
    const mine = (await c.tip())!;
    const theirs = (await hub.tip())!;
    const m = await mergeCommits(c, mine, theirs);
    if (m.commit !== mine) r.git('update-ref', c.ref, m.commit!, mine);
    const anc = r.git('merge-base', m.commit!, theirs).trim();
    if (anc === theirs) r.git('update-ref', hub.ref, m.commit!, theirs);
  };

  for (let i = 0; i < nOps * nClones; i++) {
    const c = pick(clones);
    const live = [...(await c.catalog()).entries.keys()];
    const op = rand();
    n++;
    if (op < 0.12 || live.length < 3) {
      const res = await addMemory(c, { type: 'decision', title: `title ${n}`, body: `start ${n}\n` });
      created.add(res.record.id);
      lines.set(res.record.id, [`start ${n}`]);
      tags.set(res.record.id, []);
    } else if (op < 0.4) {
      const id = pick(live);
      const cur = (await c.get(id)).record;
      const line = `line ${n}`;
      await updateMemory(c, id, { body: `${cur.body}${line}\n` });
      lines.get(id)!.push(line);
    } else if (op < 0.55) {
      const id = pick(live);
      await updateMemory(c, id, { addTags: [`tag-${n}`] });
      tags.get(id)!.push(`tag-${n}`);
    } else if (op < 0.65) {
      await updateMemory(c, pick(live), {
        title: `renamed ${n}`,
        confidence: Math.round(rand() * 100) / 100,
      });
    } else if (op < 0.7) {
      await moveMemory(c, pick(live), `alias/n${n}`);
    } else if (op < 0.75) {
      const id = pick(live);
      await removeMemory(c, id, `rm ${n}`);
      deleted.add(id);
    } else {
      await sync(c);
    }
  }
  // final rounds: everyone syncs twice, in order
  for (let round = 0; round < 2; round++) for (const c of clones) await sync(c);

  const trees = await Promise.all(
    clones.map(async (c) => r.git('rev-parse', `${(await c.tip())!}^{tree}`).trim()),
  );
  expect(new Set(trees).size).toBe(1);
  const tip = (await clones[0].tip())!;
  const files = r.git('ls-tree', '-r', '--name-only', tip).split('\n');
  const attic = (id: string) =>
    files
      .filter((f) => f.startsWith(`attic/${id.slice(-2)}/${id}/`))
      .map((f) => parseRecord(r.git('show', `${tip}:${f}`)));
  for (const id of created) {
    const present = files.includes(recordPath(id));
    if (!deleted.has(id)) expect(present, `${id} lost`).toBe(true);
    if (!present) continue;
    const rec = parseRecord(r.git('show', `${tip}:${recordPath(id)}`));
    const versions = [rec, ...attic(id)];
    for (const l of lines.get(id)!) {
      expect(
        versions.some((v) => v.body.split('\n').includes(l)),
        `${id}: "${l}" lost`,
      ).toBe(true);
    }
    for (const t of tags.get(id)!)
      expect(
        versions.some((v) => v.tags.includes(t)),
        `${id}: tag ${t} lost`,
      ).toBe(true);
  }
  hub.close();
  for (const c of clones) c.close();
  return { created: created.size, deleted: deleted.size, ops: n };
}

describe('random histories converge through mergeCommits', () => {
  for (const seed of [1, 7]) {
    it(`seed ${seed}: three clones, 15 operations each`, async () => {
      const s = await run(seed, 3, 15);
      expect(s.created).toBeGreaterThan(3);
    }, 60_000);
  }
});
