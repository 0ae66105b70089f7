/**
 * The `verified` field end to end: its codec, its check at the sync boundary,
 * its merge (the later `at`), its place in ranking, the expiry it restarts,
 * and `git mem verify` with export and import.
 */
import { describe, expect, it } from 'vitest';
import { mergeEntry } from '../src/merge/engine.js';
import { blobProblem } from '../src/merge/validate.js';
import { renewedExpiry } from '../src/model/fields.js';
import { newId } from '../src/model/id.js';
import {
  type MemoryRecord,
  newRecord,
  parseRecord,
  recordPath,
  serializeRecord,
} from '../src/model/record.js';
import { recordFieldProblems } from '../src/model/schema.js';
import { docFromRecord } from '../src/search/docs.js';
import { type CorpusStats, rank } from '../src/search/rank.js';
import { terms } from '../src/search/text.js';
import { type Json, makeRepo, thrown } from './helpers.js';

const NOW = '2026-01-01T00:00:00.000Z';
const rec = (extra: Partial<Parameters<typeof newRecord>[0]> = {}, id = newId()): MemoryRecord =>
  newRecord({ id, type: 'decision', title: 'Pool size', body: 'pool size is ten\n', now: NOW, ...extra });

describe('the verified field', () => {
  it('round-trips through the record file, and an unreadable one is kept as it came', () => {
    const r = rec({ verified: { by: 'Alice <a@x>', at: '2026-02-01T00:00:00.000Z' } });
    const text = serializeRecord(r);
    expect(text).toContain('verified:\n  by: Alice <a@x>\n  at: 2026-02-01T00:00:00.000Z\n');
    expect(parseRecord(text).verified).toEqual(r.verified);
    const odd = text.replace('verified:\n  by: Alice <a@x>\n', 'verified:\n  who: Alice\n');
    const back = parseRecord(odd);
    expect(back.verified).toBeUndefined();
    expect(serializeRecord(back)).toBe(odd);
  });

  it('is checked from the table at the sync boundary as on a local write', () => {
    const id = newId();
    const good = serializeRecord(rec({ verified: { by: 'Alice', at: NOW } }, id));
    expect(blobProblem(recordPath(id), Buffer.from(good))).toBeNull();
    for (const bad of [
      good.replace(`at: ${NOW}`, 'at: someday'),
      good.replace('by: Alice', 'by: "A\\u001b[2Jlice"'),
      good.replace('verified:\n  by: Alice\n', 'verified:\n  who: Alice\n'),
    ]) {
      const p = blobProblem(recordPath(id), Buffer.from(bad));
      expect(p?.field, bad).toMatch(/^verified/);
    }
    expect(recordFieldProblems({ ...fmOf(good), verified: 'yes' }, '')[0]?.field).toBe('verified');
    expect(thrown(() => rec({ verified: { by: 'Alice', at: 'soon' } }))).toMatchObject({
      code: 'E_INVALID_ARG',
      data: { field: expect.stringMatching(/^verified/) },
    });
  });

  it('merges by the later at, whichever side it is on, without a conflict', () => {
    const base = rec();
    const early = { ...base, verified: { by: 'Alice', at: '2026-03-01T00:00:00.000Z' }, clock: 5 };
    const late = { ...base, verified: { by: 'Bob', at: '2026-04-01T00:00:00.000Z' }, clock: 2 };
    for (const [o, t] of [
      [early, late],
      [late, early],
    ]) {
      const m = mergeEntry({ rec: base }, { rec: o }, { rec: t });
      expect(m.state.rec?.verified).toEqual(late.verified);
      expect(m.conflict).toBeUndefined();
      expect(m.attic).toEqual([]);
    }
  });

  it('ranks a verified memory above an unverified one of equal relevance', () => {
    const plain = docFromRecord(rec());
    const checked = docFromRecord(rec({ verified: { by: 'Alice', at: NOW } }));
    const docs = plain.id < checked.id ? [plain, checked] : [checked, plain];
    const stats: CorpusStats = { n: 2, df: new Map([...plain.tf.t].map((t) => [t, 2])), avg: plain.len };
    const r = rank(docs, stats, { qterms: terms('pool size'), now: Date.parse(NOW) });
    expect(r.map((x) => x.doc.id)).toEqual([checked.id, plain.id]);
    expect(r[0].why).toContain('verified');
  });

  it('restarts the expiry: the same lifetime again, counted from now', () => {
    const now = new Date('2026-03-01T00:00:00.000Z');
    const r = { created: NOW, expires: '2026-01-31T00:00:00.000Z' };
    expect(renewedExpiry(r, now)).toBe('2026-03-31T00:00:00.000Z');
    const again = { ...r, expires: '2026-03-31T00:00:00.000Z', verified: { by: 'A', at: now.toISOString() } };
    expect(renewedExpiry(again, new Date('2026-03-11T00:00:00.000Z'))).toBe('2026-04-10T00:00:00.000Z');
    expect(renewedExpiry({ created: NOW }, now)).toBeUndefined();
  });

  it('git mem verify records who and when, shows in list and show, and survives export and import', async () => {
    const a = makeRepo({ commit: true });
    const { id } = await a.memJson(['add', '--title', 'Pool size', '--content', 'ten', '--expires', '10d']);
    const { id: other } = await a.memJson(['add', '--title', 'Other', '--content', 'x', '--force']);
    const before = await a.memJson(['show', id]);
    const v = await a.memJson<Json>(['verify', id, other, '--by', 'Alice']);
    expect(v.verified.map((r: Json) => r.id)).toEqual([id, other]);
    const after = await a.memJson(['show', id]);
    expect(after.verified).toEqual({ by: 'Alice', at: after.updated });
    // ten days again, from the verification
    expect(Date.parse(after.expires) - Date.parse(after.verified.at)).toBe(
      Date.parse(before.expires) - Date.parse(before.created),
    );
    expect((await a.mem(['list'])).stdout).toMatch(/Pool size.*✓ verified/);
    expect((await a.mem(['show', id])).stdout).toMatch(/verified: +\S+ by Alice/);
    const listed = (await a.memJson<Json[]>(['list'])).find((x) => x.id === id);
    expect(listed.verified).toBe(after.verified.at);
    // no memory named, or one that is not there: refused, nothing written
    const tip = a.git('rev-parse', 'refs/memory');
    expect((await a.mem(['verify', 'nosuch'])).code).toBe(3);
    expect((await a.mem(['verify', id, '--by', 'A\u001bB'])).code).toBe(2);
    expect(a.git('rev-parse', 'refs/memory')).toBe(tip);
    // export and import
    const dump = (await a.mem(['export'])).stdout;
    const b = makeRepo({ commit: true });
    expect((await b.mem(['import', '-'], { stdin: dump })).code).toBe(0);
    expect((await b.memJson(['show', id])).verified).toEqual(after.verified);
  }, 60_000);
});

function fmOf(text: string): Record<string, unknown> {
  const r = parseRecord(text);
  return { ...r, verified: r.verified } as unknown as Record<string, unknown>;
}
