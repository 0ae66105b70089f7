/**
 * Why a memory is stale, from the check that made it stale to every place that
 * shows it: the SessionStart context, `git mem stale`, context packs.
 */
import { describe, expect, it } from 'vitest';
import {
  parseStaleReason,
  type StaleReason,
  staleReasons,
  staleReasonsField,
  staleReasonText,
} from '../src/anchors/types.js';
import { type Anchor, newRecord } from '../src/model/record.js';
import { makeRepo, runBin } from './helpers.js';

const POOL = [
  'import { Pool } from "pg";',
  'export function connect(url: string) {',
  '  return new Pool({ connectionString: url, max: 10 });',
  '}',
  '',
].join('\n');

function sessionStart(stdout: string): string {
  const j = JSON.parse(stdout);
  expect(j.hookSpecificOutput.hookEventName).toBe('SessionStart');
  return j.hookSpecificOutput.additionalContext as string;
}

describe('stale reasons', () => {
  it('made by a code edit and `git mem check`, are shown at SessionStart, by `stale` and in context packs', async () => {
    const repo = makeRepo();
    repo.write('src/db/pool.ts', POOL);
    repo.commitAll('pool');
    const { id } = await repo.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'The pg pool holds at most 10 connections',
      '--content',
      'The database allows 100 connections shared by ten services.',
      '--anchor',
      'src/db/pool.ts:2-4',
    ]);
    repo.write('src/db/pool.ts', POOL.replace('max: 10', 'max: 50'));
    repo.commitAll('a bigger pool');
    const rep = await repo.memJson(['check']);
    expect(rep.changes).toEqual([expect.objectContaining({ id, from: 'active', to: 'stale' })]);
    const line = rep.changes[0].reasons[0] as string;
    expect(line).toMatch(/^src\/db\/pool\.ts:2-4: changed: \S/);
    // on disk: the key and shape check has always written
    expect((await repo.memJson(['show', id])).extra.stale_reasons).toEqual([line]);

    // the agent's session start, through the installed program
    const payload = JSON.stringify({
      session_id: 's1',
      transcript_path: '/t',
      cwd: repo.dir,
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    const start = runBin(['hook', 'claude-code'], {
      cwd: repo.dir,
      env: { ...repo.env, GIT_MEM_HOOK_INLINE: '1' },
      stdin: payload,
    });
    expect(start.code).toBe(0);
    const ctx = sessionStart(start.stdout);
    const flagged = ctx.split('## Possibly stale')[1]?.split('\n')[1] ?? '';
    expect(line.length).toBeLessThan(120); // shown whole
    expect(flagged).toBe(`- [${id.slice(0, 12)}] The pg pool holds at most 10 connections — ${line}`);

    // `git mem stale`: the same reason, as JSON and as text
    const stale = await repo.memJson(['stale']);
    expect(stale).toEqual([expect.objectContaining({ id, reasons: [line] })]);
    const text = (await repo.mem(['stale'])).stdout;
    expect(text).toContain(`  changed        src/db/pool.ts:2-4  ${parseStaleReason(line).reason}`);

    // a context pack flags it with the reason
    const pack = await repo.mem(['context', '--query', 'pg pool connections', '--file', 'src/db/pool.ts']);
    expect(pack.code).toBe(0);
    expect(pack.stdout).toMatch(
      /### The pg pool holds at most 10 connections \(decision, stale; [0-9A-Z]{12}; /,
    );
    expect(pack.stdout).toContain(`stale: ${line}`);

    // confirmed again: no longer stale anywhere, the key is gone
    await repo.memJson(['reanchor', id]);
    expect((await repo.memJson(['show', id])).extra.stale_reasons).toBeUndefined();
    const again = sessionStart((await repo.mem(['hook', 'claude-code'], { stdin: payload })).stdout);
    expect(again).not.toContain('## Possibly stale');
  });

  it('read back from their one-line form, and from the anchors when a record has none recorded', () => {
    const lines = [
      'src/a.ts:3-5: changed: anchored lines edited',
      'src/b.ts: deleted: src/b.ts was deleted and the anchored text is found nowhere',
      'src/c.ts:1-9: symbol_renamed: symbol A.b renamed to A.c',
      'lib/x: y.ts:2-3: symbol_removed: symbol f no longer defined in lib/x: y.ts',
      'written by hand: no verdict here',
    ];
    const parsed = lines.map(parseStaleReason);
    expect(parsed[0]).toEqual({
      anchor: { path: 'src/a.ts', lines: [3, 5] },
      verdict: 'changed',
      reason: 'anchored lines edited',
    });
    expect(parsed[1]).toMatchObject({ anchor: { path: 'src/b.ts' }, verdict: 'deleted' });
    expect(parsed[3]).toMatchObject({
      anchor: { path: 'lib/x: y.ts', lines: [2, 3] },
      verdict: 'symbol_removed',
    });
    expect(parsed[4]).toEqual({ anchor: null, verdict: null, reason: 'written by hand: no verdict here' });
    expect(parsed.map(staleReasonText)).toEqual(lines);

    const verdict = (status: string, reason: string) => ({
      status,
      reason,
      confidence: 1,
      from: { path: 'src/a.ts', lines: [3, 5] },
      to: null,
      commit: 'c'.repeat(40),
      checked: '2026-01-01T00:00:00.000Z',
    });
    const r = newRecord({
      id: '01JD3KX9QF2A7M4W8B5N6C1D0E',
      type: 'decision',
      title: 't',
      body: '',
      now: '2026-01-01T00:00:00.000Z',
      anchors: [
        { path: 'src/a.ts', lines: [3, 5], verdict: verdict('changed', 'anchored lines edited') },
        { path: 'src/a.ts', lines: [3, 5], verdict: verdict('moved', 'text found') },
      ] as unknown as Anchor[],
    });
    const fromAnchors: StaleReason[] = [parsed[0]];
    expect(staleReasons(r)).toEqual(fromAnchors);
    r.extra = staleReasonsField(parsed.slice(1, 3));
    expect(r.extra).toEqual({ stale_reasons: lines.slice(1, 3) });
    expect(staleReasons(r)).toEqual(parsed.slice(1, 3));
    expect(staleReasonsField([])).toEqual({ stale_reasons: undefined });
  });
});
