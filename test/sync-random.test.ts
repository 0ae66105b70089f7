/**
 * Convergence: five clones run 50 seeded random operations each, syncing with
 * a shared remote at random; after a final round every clone holds the same
 * commit and tree as the remote, every created record is present unless it
 * was deleted, and every edit is present (in the record or its attic) unless
 * it was knowingly overwritten or deleted. Against a bare repository and
 * against a real `git daemon` on 127.0.0.1. All real git, the CLI in-process.
 *
 * The model tracks what each clone "knows" (its own edits plus what syncs
 * brought it), which is exactly what decides whether an overwrite or a
 * deletion was deliberate (it saw the edit) or concurrent (it must not lose it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { addMemory, removeMemory, updateMemory } from '../src/commands/memory.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import type { TestRepo } from './helpers.js';
import { isolatedEnv, sh, tmpDir } from './helpers.js';
import { allText, clone, tipOf, treeOf } from './sync-helpers.js';

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Kind = 'add' | 'body' | 'title' | 'tag';
interface Edit {
  token: string;
  kind: Kind;
  id: string;
}
interface Model {
  edits: Edit[];
  /** id → tokens known by each clone that deleted it */
  deleters: Map<string, Array<Set<string>>>;
  /** tokens knowingly overwritten (a title replaced, a tag removed, by a clone that had seen them) */
  superseded: Set<string>;
}

interface Client {
  repo: TestRepo;
  /** The operations go through the core library (the CLI's own code path minus argument parsing); syncs through the CLI. */
  store: Store;
  known: Set<string>;
}

const stores: Store[] = [];
afterAll(() => {
  for (const s of stores) s.close();
});

const OPS: Array<[string, number]> = [
  ['add', 26],
  ['body', 20],
  ['title', 10],
  ['tag', 14],
  ['untag', 5],
  ['rm', 5],
  ['sync', 20],
];

function pickOp(r: number): string {
  const total = OPS.reduce((s, [, w]) => s + w, 0);
  let x = r * total;
  for (const [op, w] of OPS) {
    if (x < w) return op;
    x -= w;
  }
  return 'sync';
}

function visibleIds(repo: TestRepo): string[] {
  if (!tipOf(repo)) return [];
  return repo
    .git('ls-tree', '-r', '--name-only', 'refs/memory', '--', 'memories')
    .split('\n')
    .filter(Boolean)
    .map((p) => /([0-9A-Z]{26})\.md$/.exec(p)![1])
    .sort();
}

const timing = { sync: 0, syncs: 0 };
async function sync(c: Client, remoteKnown: Set<string>): Promise<void> {
  const t = performance.now();
  const r = await c.repo.mem(['sync', '--json']);
  timing.sync += performance.now() - t;
  timing.syncs++;
  if (r.code !== 0) throw new Error(`sync failed: ${r.stderr}`);
  for (const t of remoteKnown) c.known.add(t);
  remoteKnown.clear();
  for (const t of c.known) remoteKnown.add(t);
}

async function runScenario(seed: number, remoteUrl: string, clients = 5, opsEach = 50): Promise<void> {
  const rand = mulberry32(seed);
  const cs: Client[] = [];
  for (let i = 0; i < clients; i++) {
    const repo = clone(remoteUrl);
    const store = new Store(await openRepo(repo.dir, repo.env));
    stores.push(store);
    cs.push({ repo, store, known: new Set() });
  }
  const model: Model = { edits: [], deleters: new Map(), superseded: new Set() };
  const remoteKnown = new Set<string>();
  const titleTokens = new Map<string, string[]>();
  // a seeded global schedule: each clone gets exactly opsEach operations, interleaved at random
  const schedule: number[] = [];
  for (let i = 0; i < clients; i++) for (let k = 0; k < opsEach; k++) schedule.push(i);
  for (let i = schedule.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [schedule[i], schedule[j]] = [schedule[j], schedule[i]];
  }
  let step = 0;
  for (const who of schedule) {
    step++;
    const c = cs[who];
    const token = `zq${seed}n${String(step).padStart(4, '0')}z`;
    let op = pickOp(rand());
    const ids = (await c.store.catalog()).sortedIds;
    const target = ids.length ? ids[Math.floor(rand() * ids.length)] : undefined;
    if (!target && op !== 'sync') op = 'add';
    const edit = (kind: Kind, id: string) => {
      model.edits.push({ token, kind, id });
      c.known.add(token);
    };
    switch (op) {
      case 'add': {
        const { record } = await addMemory(c.store, {
          type: 'decision',
          title: `R ${token}`,
          body: `${token}\n`,
        });
        const id = record.id;
        edit('add', id);
        titleTokens.set(id, [token]);
        break;
      }
      case 'body': {
        const { record } = await c.store.get(target!);
        await updateMemory(c.store, target!, { body: `${record.body}${token}\n` });
        edit('body', target!);
        break;
      }
      case 'title': {
        for (const t of titleTokens.get(target!) ?? []) if (c.known.has(t)) model.superseded.add(t);
        await updateMemory(c.store, target!, { title: `T ${token}` });
        edit('title', target!);
        titleTokens.set(target!, [...(titleTokens.get(target!) ?? []), token]);
        break;
      }
      case 'tag': {
        await updateMemory(c.store, target!, { addTags: [token] });
        edit('tag', target!);
        break;
      }
      case 'untag': {
        const { record } = await c.store.get(target!);
        const tag = record.tags.find((t) => t.startsWith('zq'));
        if (!tag) break;
        await updateMemory(c.store, target!, { removeTags: [tag] });
        model.superseded.add(tag);
        break;
      }
      case 'rm': {
        await removeMemory(c.store, target!);
        const list = model.deleters.get(target!) ?? [];
        list.push(new Set(c.known));
        model.deleters.set(target!, list);
        break;
      }
      case 'sync':
        await sync(c, remoteKnown);
        break;
    }
  }
  if (process.env.SYNC_TIMING) console.log(JSON.stringify(timing));
  // final round, twice: the first gathers everything, the second hands it out
  for (let round = 0; round < 2; round++) for (const c of cs) await sync(c, remoteKnown);

  const tip = tipOf(cs[0].repo)!;
  for (const c of cs) {
    expect(tipOf(c.repo)).toBe(tip);
    expect(treeOf(c.repo)).toBe(treeOf(cs[0].repo));
  }
  expect(
    sh('git', ['ls-remote', remoteUrl, 'refs/mem/memory'], cs[0].repo.dir, cs[0].repo.env).split('\t')[0],
  ).toBe(tip);

  const text = allText(cs[0].repo);
  const present = new Set(visibleIds(cs[0].repo));
  const tombs = cs[0].repo.git('ls-tree', '-r', '--name-only', 'refs/memory', '--', 'tombstones');
  const byId = new Map<string, Edit[]>();
  for (const e of model.edits) byId.set(e.id, [...(byId.get(e.id) ?? []), e]);
  let checkedTokens = 0;
  for (const [id, edits] of byId) {
    const deleters = model.deleters.get(id) ?? [];
    const knownByDeleter = (t: string) => deleters.some((d) => d.has(t));
    if (!present.has(id)) {
      // gone only by a deletion that saw every edit (deletion against modification keeps the modification)
      expect(deleters.length, `record ${id} vanished without a deletion`).toBeGreaterThan(0);
      expect(tombs, `record ${id} deleted without a tombstone`).toContain(id);
      for (const e of edits)
        expect(knownByDeleter(e.token), `edit ${e.token} of ${id} lost to a concurrent deletion`).toBe(true);
      continue;
    }
    for (const e of edits) {
      if (model.superseded.has(e.token) || knownByDeleter(e.token)) continue;
      checkedTokens++;
      expect(
        text.includes(e.token),
        `edit ${e.kind} ${e.token} of ${id} is neither in the record nor its attic`,
      ).toBe(true);
    }
  }
  // not a vacuous run: a fifth of the operations left an edit the final state is checked for
  expect(checkedTokens).toBeGreaterThan((clients * opsEach) / 5);
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

const daemons: ChildProcess[] = [];
afterAll(() => {
  for (const d of daemons) d.kill('SIGTERM');
});

/** A real git server on 127.0.0.1: `git daemon` serving a bare repository, pushes enabled. */
async function gitDaemon(): Promise<string> {
  const base = tmpDir('gm-daemon-');
  const env = isolatedEnv();
  mkdirSync(`${base}/shared.git`);
  sh('git', ['init', '-q', '--bare', `${base}/shared.git`], base, env);
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const d = spawn(
      'git',
      [
        'daemon',
        '--export-all',
        '--enable=receive-pack',
        '--reuseaddr',
        `--base-path=${base}`,
        '--listen=127.0.0.1',
        `--port=${port}`,
        base,
      ],
      { env, stdio: 'ignore' },
    );
    daemons.push(d);
    const url = `git://127.0.0.1:${port}/shared.git`;
    for (let i = 0; i < 100; i++) {
      try {
        sh('git', ['ls-remote', url], base, env);
        return url;
      } catch {
        if (d.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    d.kill('SIGTERM');
    if (attempt > 3) throw new Error('git daemon did not start');
  }
}

/**
 * The default run covers seed 1 against a bare repository (five clones, 50 operations each, about
 * 15 s of CPU, minutes on a loaded 2-core runner) and seed 2 against git daemon (three clones, 20
 * operations each: the transport under the same model); SYNC_RANDOM_SEEDS=3,4,5 runs more seeds
 * against bare repositories (seed 3 was in the default run until the suite neared CI's 15 minutes).
 */
const extraSeeds = (process.env.SYNC_RANDOM_SEEDS ?? '')
  .split(',')
  .map((x) => Number(x.trim()))
  .filter((x) => Number.isInteger(x) && x > 0);

// A scenario takes ~35 s alone and ~60-120 s beside the suite's heavier files (seed 1, measured
// 2026-11-26 on the 2-core machine); once, in a full run, over 180 s. The limit is there to catch a
// hang, not to time it.
const SCENARIO_MS = 300_000;

describe('five clones converge under random operations and syncs', () => {
  for (const seed of [...new Set([1, ...extraSeeds])]) {
    it(
      `against a bare repository (seed ${seed})`,
      async () => {
        const dir = `${tmpDir('gm-remote-')}/shared.git`;
        sh('git', ['init', '-q', '--bare', dir], '/', isolatedEnv());
        await runScenario(seed, dir);
      },
      SCENARIO_MS,
    );
  }

  // the merge is the bare scenario's to test; this one is the git:// transport under the same
  // model (fetches, rejected pushes, retries), so three clones and 20 operations each suffice
  it(
    'against git daemon on 127.0.0.1 (seed 2, three clones)',
    async () => {
      await runScenario(2, await gitDaemon(), 3, 20);
    },
    SCENARIO_MS,
  );

  it('when all five sync at the same moment (pushes race, rejected ones retry)', async () => {
    const url = await gitDaemon();
    const cs = Array.from({ length: 5 }, () => clone(url));
    const ids: string[] = [];
    for (const [i, c] of cs.entries()) {
      for (let k = 0; k < 3; k++)
        ids.push((await c.memJson(['add', '--title', `c${i} r${k}`, '--content', `c${i} r${k}\n`])).id);
    }
    const results = await Promise.all(cs.map((c) => c.memJson(['sync', '--retries', '20'])));
    expect(results.every((r) => r.pushed)).toBe(true);
    expect(Math.max(...results.map((r) => r.attempts))).toBeGreaterThan(1);
    for (const c of cs) await c.memJson(['sync']);
    const tip = tipOf(cs[4]);
    for (const c of cs) expect(tipOf(c)).toBe(tip);
    expect(visibleIds(cs[0])).toEqual([...ids].sort());
  }, 60_000);
});
