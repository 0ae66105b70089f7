/**
 * Summaries do not crowd out knowledge (issue #30, item 2): a curated memory ranks above session
 * summaries and pending proposals of equal relevance; `list` and `search` show sessions and pending
 * proposals apart; a context pack keeps summaries to their own small section.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../src/agents/events.js';
import { writeSessionSummary } from '../src/agents/sessions.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { type Json, makeRepo, type TestRepo } from './helpers.js';

const QUERY = 'percent decoding failure status code';

/** Five sessions that worked on the same bug: their prompts and commands carry the query's words. */
async function addSessions(repo: TestRepo): Promise<void> {
  const store = new Store(await openRepo(repo.dir, repo.env));
  try {
    for (let i = 0; i < 5; i++) {
      const t = Date.parse('2026-11-20T09:00:00Z') + i * 86_400_000;
      const at = (s: number) => new Date(t + s * 1000).toISOString();
      const session = `sess-${i}`;
      const events: AgentEvent[] = [
        { ts: at(0), event: 'SessionStart', session, source: 'startup' },
        {
          ts: at(1),
          event: 'UserPromptSubmit',
          session,
          prompt: `The percent decoding failure returns the wrong status code (${i}). Find why the status code is 500 on a percent decoding failure.`,
        },
        {
          ts: at(2),
          event: 'PostToolUse',
          session,
          tool: 'Bash',
          input: { command: `npm test -- percent-decoding status-code failure ${i}` },
          exit: 1,
          response: { stdout: 'FAIL percent decoding failure: expected status code 400, got 500' },
        },
        {
          ts: at(3),
          event: 'PostToolUse',
          session,
          tool: 'Edit',
          input: { file_path: `src/http/decode${i}.ts`, old_string: 'a', new_string: 'b' },
          files: [{ path: `src/http/decode${i}.ts`, added: 1, removed: 1 }],
        },
      ];
      await writeSessionSummary(store, events, { keepFull: 10 });
    }
  } finally {
    store.close();
  }
}

describe('curated memories before summaries and pending proposals', () => {
  let repo: TestRepo;
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    repo = makeRepo({ commit: true });
    ids.fix = (
      await repo.memJson([
        'add',
        '--type',
        'known_fix',
        '--title',
        'A percent decoding failure must give 400, not 500',
        '--content',
        'decodeURIComponent throws URIError on a malformed percent escape; catch it in the router and answer status code 400 (bad request), not 500.',
      ])
    ).id;
    ids.other = (
      await repo.memJson([
        'add',
        '--type',
        'convention',
        '--title',
        'HTTP handlers live in src/http',
        '--content',
        'One file per route.',
      ])
    ).id;
    await addSessions(repo);
    ids.pending = (
      await repo.memJson([
        'add',
        '--type',
        'known_fix',
        '--status',
        'pending',
        '--title',
        'Percent decoding failure status code',
        '--content',
        'The percent decoding failure gave status code 500; the status code on a percent decoding failure should be 400.',
      ])
    ).id;
  });

  it('search ranks the known fix first, above five session summaries and a pending proposal', async () => {
    const hits: Json[] = await repo.memJson(['search', QUERY, '--no-daemon']);
    expect(hits[0].id).toBe(ids.fix);
    const types = hits.map((h) => (h.status === 'pending' ? 'pending' : h.type));
    expect(types.filter((t) => t === 'session')).toHaveLength(5);
    expect(types).toContain('pending');
    // read by a person: the curated memories, then the others under their own heading
    const out = (await repo.mem(['search', QUERY, '--no-daemon'])).stdout;
    const [head, rest] = out.split('Pending proposals and session summaries:\n');
    expect(head).toContain(ids.fix.slice(0, 12));
    expect(head).not.toMatch(/Session 2026|\[pending\]/);
    expect(rest.match(/^\S{12} {2}session/gm)).toHaveLength(5);
    expect(rest).toContain(ids.pending.slice(0, 12));
  });

  it('list shows the curated memories, counts sessions and pending proposals apart, and --json lists every record', async () => {
    const human = await repo.mem(['list']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('percent decoding failure must give 400');
    expect(human.stdout).toContain('HTTP handlers live in src/http');
    expect(human.stdout).not.toMatch(/Session 2026/);
    expect(human.stdout).not.toContain(ids.pending.slice(0, 12));
    expect(human.stdout).toMatch(/^1 pending proposal .*--pending/m);
    expect(human.stdout).toMatch(/^5 session summaries .*--sessions/m);
    const sessions: Json[] = await repo.memJson(['list', '--sessions']);
    expect(sessions.map((r) => r.type)).toEqual(Array(5).fill('session'));
    const humanSessions = await repo.mem(['list', '--sessions']);
    expect(humanSessions.stdout.match(/Session 2026/g)).toHaveLength(5);
    const pending: Json[] = await repo.memJson(['list', '--pending']);
    expect(pending.map((r) => r.id)).toEqual([ids.pending]);
    const both: Json[] = await repo.memJson(['list', '--pending', '--sessions']);
    expect(both).toHaveLength(6);
    // --json is as it was: every record the filters keep, oldest first
    const all: Json[] = await repo.memJson(['list']);
    expect(all).toHaveLength(8);
    expect(all.map((r) => r.id)).toEqual([...all.map((r) => r.id)].sort());
    // an explicit type or status shows exactly that
    expect((await repo.mem(['list', '--status', 'pending'])).stdout).toContain(ids.pending.slice(0, 12));
  });

  it('a context pack keeps the session summaries to their own small section', async () => {
    const budget = 2000;
    const pack: Json = await repo.memJson([
      'context',
      '--query',
      QUERY,
      '--sessions',
      '5',
      '--budget',
      String(budget),
    ]);
    const items: Json[] = pack.items;
    expect(items.find((i) => i.section === 'matches')?.id).toBe(ids.fix);
    expect(items.filter((i) => i.section === 'matches').map((i) => i.type)).not.toContain('session');
    const sessions = items.filter((i) => i.section === 'sessions');
    expect(sessions.length).toBeGreaterThan(0);
    const section = pack.text.slice(
      pack.text.indexOf('## Recent sessions'),
      pack.text.lastIndexOf('</memory>'),
    );
    expect(Math.ceil(section.trimEnd().length / 4)).toBeLessThanOrEqual(budget / 4);
  });
});
