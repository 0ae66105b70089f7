/**
 * `git mem consolidate`: proposals as pending review items, approved or
 * rejected through the review queue, idempotent; the LLM's merged text
 * against a server on 127.0.0.1 speaking the OpenAI wire format; the
 * once-a-day run of the session-end path. Real git, operations in process.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consolidate, consolidateDaily, judgePair, mergeText } from '../src/agents/consolidate.js';
import { approveProposal, listPending, rejectProposal } from '../src/agents/review.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { type MemoryRecord, newRecord } from '../src/model/record.js';
import { errorOf, makeRepo, type TestRepo } from './helpers.js';

let n = 0;
function rec(type: string, title: string, body: string, tags: string[] = [], day = 1): MemoryRecord {
  n++;
  const id = `01J${String(day).padStart(2, '0')}0000000000000000${String(n).padStart(5, '0')}`.slice(0, 26);
  return newRecord({
    id: id.replace(/[ILOU]/g, '0'),
    type: type as MemoryRecord['type'],
    title,
    body,
    tags,
    now: `2026-01-${String(day).padStart(2, '0')}T00:00:00.000Z`,
  });
}

describe('judgePair (pure)', () => {
  it('sees a reversal on the same subject, a newer value, and leaves agreement alone', () => {
    const jest = rec('convention', 'Use Jest for unit tests', 'npm test runs jest.', ['testing'], 1);
    const vitest = rec(
      'convention',
      'Unit tests run with Vitest',
      'We switched from Jest to Vitest; npm test runs vitest.',
      ['testing'],
      2,
    );
    const v = judgePair(vitest, jest);
    expect(v?.kind).toBe('supersede');
    expect(v?.ids).toEqual([jest.id, vitest.id]);
    expect(v?.evidence.phrases[0]).toMatch(/switched from jest/);

    const n18 = rec(
      'environment',
      'CI runs on Node 18',
      'The CI image uses Node 18 for every job.',
      ['ci'],
      1,
    );
    const n20 = rec(
      'environment',
      'CI runs on Node 20',
      'The CI image uses Node 20 for every job.',
      ['ci'],
      3,
    );
    expect(judgePair(n18, n20)?.evidence.values).toEqual({ old: ['18'], new: ['20'] });

    // both say the same thing, one with "instead of": agreement, not a reversal
    const dont = rec('convention', 'Do not use moment.js', "Don't use moment.js, it is heavy.", ['dates'], 1);
    const dateFns = rec(
      'convention',
      'Use date-fns for dates',
      'Use date-fns instead of moment.js.',
      ['dates'],
      2,
    );
    expect(judgePair(dont, dateFns)).toBeUndefined();
    // another family (a fix and a convention) is never paired
    const fix = rec('known_fix', 'Use Jest for unit tests', 'We no longer use jest.', ['testing'], 4);
    expect(judgePair(jest, fix)).toBeUndefined();

    // the newer one says all the older says and more: a supersede also when add's duplicate
    // check did not flag the pair (no `dup` given)
    const short = rec(
      'decision',
      'Use pnpm for installs',
      'pnpm is faster than npm for installs.',
      ['build'],
      1,
    );
    const more = rec(
      'decision',
      'Use pnpm for package installs',
      'pnpm is faster than npm for installs and saves disk with its store.',
      ['build'],
      2,
    );
    expect(judgePair(short, more)).toMatchObject({ kind: 'supersede', ids: [short.id, more.id] });
    expect(judgePair(short, more)?.reason).toMatch(/says all .* says, and more/);
  });

  it('merges text deterministically: the newest first, then what the older adds', () => {
    const a = rec(
      'known_fix',
      'Postgres ECONNREFUSED on CI',
      'Wait with pg_isready.\nSet PGPORT=5433 on CI.',
      ['db'],
      1,
    );
    const b = rec(
      'known_fix',
      'ECONNREFUSED from Postgres in CI',
      'On CI wait with pg_isready before npm test.',
      ['ci'],
      2,
    );
    const m = mergeText([a, b]);
    expect(m.title).toBe(b.title);
    expect(m.body).toBe('On CI wait with pg_isready before npm test.\n\nSet PGPORT=5433 on CI.\n');
    expect(m.tags.sort()).toEqual(['ci', 'db']);
  });
});

const MEMS = [
  {
    id: 'jest',
    type: 'convention',
    title: 'Use Jest for unit tests',
    tags: ['testing'],
    body: 'Unit tests run with Jest: npm test runs jest.',
    created: '2026-01-01T00:00:00Z',
  },
  {
    id: 'vitest',
    type: 'convention',
    title: 'Run the unit tests with Vitest',
    tags: ['testing'],
    body: 'We switched from Jest to Vitest for unit tests; npm test runs vitest.',
    created: '2026-02-01T00:00:00Z',
  },
  {
    id: 'pg1',
    type: 'known_fix',
    title: 'Postgres ECONNREFUSED on CI',
    tags: ['db', 'ci'],
    body: 'Postgres starts after the tests on CI. Wait with pg_isready before npm test. Use the socket.',
    created: '2026-01-02T00:00:00Z',
  },
  {
    id: 'pg2',
    type: 'known_fix',
    title: 'ECONNREFUSED from Postgres in CI',
    tags: ['db'],
    body: 'On CI postgres starts after the tests. Wait with pg_isready before npm test, retry 10 times.',
    created: '2026-02-02T00:00:00Z',
  },
  {
    id: 'dup1',
    type: 'decision',
    title: 'Errors are returned, not thrown, in the parser',
    tags: ['parser'],
    body: 'The parser returns Result values; it never throws.',
    created: '2026-01-03T00:00:00Z',
  },
  {
    id: 'dup2',
    type: 'decision',
    title: 'Errors are returned, not thrown, in the parser',
    tags: ['parser'],
    body: 'The parser returns Result values; it never throws.',
    created: '2026-02-03T00:00:00Z',
  },
  {
    id: 'pnpm',
    type: 'decision',
    title: 'pnpm for installs',
    body: 'Use pnpm, it is faster.',
    created: '2026-01-04T00:00:00Z',
  },
];

async function setup(): Promise<{ r: TestRepo; store: Store; ids: Record<string, string> }> {
  const r = makeRepo();
  const imp = await r.mem(['import', '--jsonl', '-'], {
    stdin: MEMS.map((m) => JSON.stringify(m)).join('\n'),
  });
  expect(imp.code, imp.stderr).toBe(0);
  const list = await r.memJson<Array<{ id: string; alias: string }>>(['list']);
  const ids = Object.fromEntries(list.map((e) => [e.alias, e.id]));
  return { r, store: new Store(await openRepo(r.dir, r.env)), ids };
}

const kinds = (ps: Array<{ kind: string }>) => ps.map((p) => p.kind).sort();

describe('consolidate', () => {
  it('proposes for review, is idempotent, and applies what review approves', async () => {
    const { r, store, ids } = await setup();
    try {
      const tip0 = await store.tip();
      const dry = await consolidate(store, { dryRun: true });
      expect(kinds(dry.proposals)).toEqual(['archive', 'merge', 'supersede']);
      expect(dry.commit).toBeNull();
      expect(await store.tip()).toBe(tip0);

      const first = await consolidate(store);
      expect(first.proposals.every((p) => p.state === 'new' && p.reviewId)).toBe(true);
      const pending = await listPending(store);
      expect(pending).toHaveLength(3);
      // nothing active changed
      const statuses = await r.memJson<Array<{ alias: string; status: string }>>(['list']);
      expect(statuses.filter((e) => e.alias).every((e) => e.status === 'active')).toBe(true);

      // a second run finds the same and writes nothing
      const tip1 = await store.tip();
      const again = await consolidate(store);
      expect(again.proposals.map((p) => p.state)).toEqual(['pending', 'pending', 'pending']);
      expect(again.commit).toBeNull();
      expect(await store.tip()).toBe(tip1);

      // the review queue shows what approving does
      const q = await r.memJson<Array<{ id: string; consolidate?: { kind: string; ids: string[] } }>>([
        'review',
      ]);
      const merge = q.find((x) => x.consolidate?.kind === 'merge')!;
      expect(merge.consolidate!.ids).toEqual([ids.pg1, ids.pg2]);

      // approve the merge: the merged record is active and supersedes both
      const merged = await approveProposal(store, merge.id);
      expect(merged.status).toBe('active');
      expect(merged.links.supersedes.sort()).toEqual([ids.pg1, ids.pg2].sort());
      expect(merged.body).toMatch(/retry 10 times[\s\S]*the socket/);
      for (const id of [ids.pg1, ids.pg2]) expect((await store.get(id)).record.status).toBe('superseded');
      // the first member's alias now names the merged record; the other keeps its own
      expect(merged.alias).toBe('pg1');
      expect((await store.get(ids.pg1)).record.alias).toBeUndefined();
      expect((await store.get(ids.pg2)).record.alias).toBe('pg2');
      expect((await r.memJson(['show', 'pg1'])).id).toBe(merged.id);

      // approve the archive through the CLI: the note is removed, the copy archived
      const archive = first.proposals.find((p) => p.kind === 'archive')!;
      const out = await r.mem(['review', '--approve', archive.reviewId!]);
      expect(out.code, out.stderr).toBe(0);
      expect((await store.get(ids.dup2)).record.status).toBe('archived');
      expect((await store.get(ids.dup1)).record.status).toBe('active');

      // reject the supersede: removed, and never proposed again here
      const sup = first.proposals.find((p) => p.kind === 'supersede')!;
      await rejectProposal(store, sup.reviewId!);
      expect((await store.get(ids.jest)).record.status).toBe('active');
      const third = await consolidate(store);
      expect(third.proposals).toHaveLength(0);
      expect(third.skipped.rejected).toBe(1);
      expect(await listPending(store)).toHaveLength(0);
    } finally {
      store.close();
    }
  });

  it('--apply carries everything out; a stale proposal is refused; bad flags exit 2', async () => {
    const { r, store, ids } = await setup();
    try {
      const bad = await r.mem(['consolidate', '--dry-run', '--apply', '--json']);
      expect(bad.code).toBe(2);
      expect(errorOf(bad).code).toBe('E_INVALID_ARG');

      // a proposal whose memory changed since is refused whole
      await consolidate(store);
      const sup = (await listPending(store)).find((p) => /Supersede/.test(p.title))!;
      await r.mem(['update', ids.vitest, '--status', 'archived']);
      await expect(approveProposal(store, sup.id)).rejects.toMatchObject({ code: 'E_STALE_PROPOSAL' });
      expect((await store.get(ids.jest)).record.status).toBe('active');
      await rejectProposal(store, sup.id);

      const res = await r.memJson<{ proposals: Array<{ kind: string; state: string }> }>([
        'consolidate',
        '--apply',
      ]);
      expect(res.proposals.map((p) => p.state)).toEqual(['applied', 'applied']);
      expect(await listPending(store)).toHaveLength(0);
      expect((await store.get(ids.dup2)).record.status).toBe('archived');
      expect((await store.get(ids.pg1)).record.status).toBe('superseded');
    } finally {
      store.close();
    }
  });
});

describe('consolidate --llm, then once a day', () => {
  let server: Server;
  let base = '';
  let reply: (res: ServerResponse) => void = () => {};
  let shared: ReturnType<typeof setup>;
  beforeAll(async () => {
    shared = setup();
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => reply(res));
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  });

  it('uses the model for merged text, and the deterministic text when it fails', async () => {
    const { store } = await shared;
    const settings = { 'llm.provider': 'openai', 'llm.url': base, 'llm.model': 'test-model' };
    try {
      reply = (res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            model: 'test-model',
            choices: [
              {
                index: 0,
                message: {
                  role: 'assistant',
                  content:
                    '{"title":"Postgres is not ready on CI","body":"Wait with pg_isready, retry 10 times."}',
                },
                finish_reason: 'stop',
              },
            ],
          }),
        );
      };
      const ok = await consolidate(store, { dryRun: true, llm: { settings, env: {} } });
      const m = ok.proposals.find((p) => p.kind === 'merge')!.merged!;
      expect(m).toMatchObject({ writer: 'llm', title: 'Postgres is not ready on CI' });

      reply = (res) => {
        res.writeHead(500);
        res.end('no');
      };
      const failed = await consolidate(store, { dryRun: true, llm: { settings, env: {} } });
      const f = failed.proposals.find((p) => p.kind === 'merge')!.merged!;
      expect(f).toMatchObject({ writer: 'deterministic', llmFailure: 'http 500' });
    } finally {
      store.close();
    }
  });

  // the same store (dry runs wrote nothing): the session-end path's run
  it('runs once a day from the session-end path, and not when turned off', async () => {
    const { r } = await shared;
    const store = new Store(await openRepo(r.dir, r.env));
    try {
      expect(await consolidateDaily(store, { 'consolidate-daily': false })).toBeNull();
      const now = Date.parse('2026-03-01T10:00:00Z');
      const first = await consolidateDaily(store, {}, now);
      expect(first?.proposals).toHaveLength(3);
      const stamp = join(r.git('rev-parse', '--absolute-git-dir').trim(), 'mem', 'consolidate.last');
      expect(existsSync(stamp)).toBe(true);
      expect(await consolidateDaily(store, {}, now + 3_600_000)).toBeNull();
      expect((await consolidateDaily(store, {}, now + 25 * 3_600_000))?.commit).toBeNull();
    } finally {
      store.close();
    }
  });
});
