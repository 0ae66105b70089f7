/**
 * Tier-0 extraction measured on its labelled set (eval/extraction/cases.jsonl: corrections,
 * "remember" requests and error→fix sequences among bug reports, review comments, questions and
 * one-off instructions), the measurement `npm run eval:extraction` prints, so that a change that
 * takes bug reports for corrections again, or loses recall, fails here. No git, no process.
 */
import { describe, expect, it } from 'vitest';
import { loadCases, METHODS, score } from '../eval/extraction/score.mjs';
import { compactEvent } from '../src/agents/events.js';
import { extractTier0 } from '../src/agents/extract.js';

describe('tier-0 extraction on its labelled set', () => {
  const cases = loadCases();
  const r = score({ compactEvent: (p) => compactEvent(p as never), extractTier0 }, cases);

  it('holds at least 200 cases, hard negatives among them', () => {
    expect(cases.length).toBeGreaterThanOrEqual(200);
    expect(cases.filter((c) => !c.expected.proposal).length).toBeGreaterThanOrEqual(60);
  });

  for (const m of METHODS)
    it(`${m}: precision ≥ 0.9 and recall ≥ 0.7`, () => {
      const x = r.methods[m];
      const misses = r.misses
        .filter((mi) => mi.method === m)
        .map((mi) => `${mi.kind} ${JSON.stringify(mi.case.input).slice(0, 200)}`)
        .join('\n');
      expect(x.precision, misses).toBeGreaterThanOrEqual(0.9);
      expect(x.recall, misses).toBeGreaterThanOrEqual(0.7);
    });

  it('takes the bug report of #30 for no proposal at all', () => {
    const named = cases.find((c) => typeof c.input === 'string' && c.input.includes('decode_param'));
    expect(named?.expected).toEqual({ proposal: false });
    const events = [
      compactEvent({
        hook_event_name: 'UserPromptSubmit',
        session_id: 's',
        prompt: named?.input as string,
      }),
    ];
    expect(extractTier0(events)).toEqual([]);
  });
});
