/**
 * The query daemon answers a question exactly as the process asking it would
 * answer it alone: the same prompts (the agent's UserPromptSubmit injection),
 * searches and context packs, asked of a store in process and of a daemon
 * serving the same repository, give the same memories in the same order.
 * Among the prompts: one naming a file a memory is anchored to, one with no
 * content ("ok continue"), one paraphrase. The daemon is served from this
 * process (src/search/daemon.ts serve) with its own store, as `daemon run`
 * does; the real hook through a real daemon is test/agents-daemon-prompt.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { type DaemonHandle, serve } from '../src/search/daemon.js';
import { ask } from '../src/search/daemon-wire.js';
import { buildContextPack, providerFor, searchMemories } from '../src/search/index.js';
import { promptContext } from '../src/search/relevance.js';
import { makeRepo, type TestRepo } from './helpers.js';

const MEMORIES: Array<[type: string, title: string, body: string, anchor?: string]> = [
  [
    'known_fix',
    'Websocket reconnect storms',
    'Reconnect with exponential backoff and jitter; a fixed delay makes every client return at once.',
  ],
  [
    'decision',
    'Connection limits for Postgres',
    'Every service goes through pgbouncer in transaction mode; never open more than twenty connections per pod.',
    'src/db/pool.ts:1-3',
  ],
  ['convention', 'Tabs in Makefiles', 'Recipes need tabs, not spaces.'],
  [
    'environment',
    'Timezones in the billing report',
    'The billing cron runs in UTC; invoices use the customer zone.',
  ],
  ['known_fix', 'Flaky payment webhook retries', 'Each webhook delivery needs an idempotency key.'],
  ['convention', 'Commit messages', 'Area first, then what now holds.'],
  ['decision', 'Feature flags live in LaunchDarkly', 'No flags in environment variables.'],
  ['failed_attempt', 'Caching sessions in Redis', 'Evictions logged users out; sessions stay in Postgres.'],
  ['constraint', 'No network in unit tests', 'Tests run offline; stub the HTTP client.'],
  [
    'dependency',
    'Docker build cache and lockfiles',
    'Copy the lockfile before the sources or every build reinstalls.',
  ],
  ['known_fix', 'Memory leak in the image resizer', 'Release the sharp pipeline after each request.'],
  ['decision', 'Logs as JSON lines', 'One object per line, a level and a request id in each.'],
];

const PROMPTS = [
  'Why do the websocket reconnect storms come back after a deploy?',
  'Please check src/db/pool.ts before you touch it',
  'ok continue',
  'clients all come back at the same moment once the server restarts, how do we spread them out',
  'the payment webhook retries are flaky again',
  'what timezone do invoices and the billing cron use',
];

const SEARCHES = ['websocket jitter', 'pgbouncer', 'src/db/pool.ts', 'billing timezone utc', 'continue'];

let r: TestRepo;
let local: Store;
let daemonStore: Store;
let daemon: DaemonHandle;

beforeAll(async () => {
  r = makeRepo({ commit: true });
  r.write('src/db/pool.ts', 'export const pool = createPool({\n  max: 20,\n});\n');
  r.commitAll('pool');
  for (const [type, title, body, anchor] of MEMORIES)
    await r.memJson([
      'add',
      '--type',
      type,
      '--title',
      title,
      '--content',
      body,
      ...(anchor ? ['--anchor', anchor] : []),
    ]);
  // the process asking alone: no daemon to consult
  local = new Store(await openRepo(r.dir, { ...r.env, GIT_MEM_DAEMON: 'off' }));
  daemonStore = new Store(await openRepo(r.dir, r.env));
  daemon = await serve(daemonStore, { idleMs: 60_000 });
}, 60_000);

afterAll(async () => {
  daemon?.stop();
  await daemon?.done;
  local?.close();
  daemonStore?.close();
});

async function viaDaemon<T>(op: 'prompt' | 'search' | 'context', q: unknown): Promise<T> {
  const reply = await ask(daemon.path, { op, q, count: false }, 30_000);
  expect(reply.ok, JSON.stringify(reply.error)).toBe(true);
  return reply.result as T;
}

describe('the daemon answers as the process would alone', { timeout: 60_000 }, () => {
  it('prompts: the same memories injected, in the same order, with the same text', async () => {
    const answers: string[][] = [];
    for (const prompt of PROMPTS) {
      const alone = await promptContext(local, prompt, { exclude: new Set() });
      const served = await viaDaemon<{ text: string; ids: string[] }>('prompt', { prompt, exclude: [] });
      expect(served.ids, prompt).toEqual(alone.ids);
      expect(served.text, prompt).toBe(alone.text);
      answers.push(alone.ids);
    }
    // and the answers are the ones wanted: the anchored file's memory for the prompt naming it,
    // nothing for a prompt without content
    const byTitle = new Map<string, string>();
    for (const e of (await local.catalog()).entries.values()) byTitle.set(e.title, e.id);
    expect(answers[0]).toContain(byTitle.get('Websocket reconnect storms'));
    expect(answers[1]).toEqual([byTitle.get('Connection limits for Postgres')]);
    expect(answers[2]).toEqual([]);
    expect(answers[4]).toContain(byTitle.get('Flaky payment webhook retries'));
  });

  it('a session that was given a memory is not given it again, either way', async () => {
    const alone = await promptContext(local, PROMPTS[1], { exclude: new Set() });
    expect(alone.ids.length).toBeGreaterThan(0);
    const exclude = alone.ids;
    const again = await promptContext(local, PROMPTS[1], { exclude: new Set(exclude) });
    const served = await viaDaemon<{ ids: string[] }>('prompt', { prompt: PROMPTS[1], exclude });
    expect(served.ids).toEqual(again.ids);
    expect(again.ids).not.toContain(exclude[0]);
    // a process asking once (its catalog's text built for this prompt) answers as one asking often
    const fresh = new Store(await openRepo(r.dir, { ...r.env, GIT_MEM_DAEMON: 'off' }));
    try {
      for (const prompt of PROMPTS) {
        const once = await promptContext(fresh, prompt, { exclude: new Set(exclude) });
        const often = await promptContext(local, prompt, { exclude: new Set(exclude) });
        expect(once, prompt).toEqual(often);
      }
    } finally {
      fresh.close();
    }
  });

  it('searches: the same hits in the same order', async () => {
    const provider = await providerFor(local);
    for (const query of SEARCHES) {
      const alone = await searchMemories(local, { query, limit: 20 }, { provider, recordUsage: false });
      const served = await viaDaemon<Array<{ id: string }>>('search', { query, limit: 20 });
      expect(
        served.map((h) => h.id),
        query,
      ).toEqual(alone.map((h) => h.id));
    }
    // with a file, as `search --file` asks
    const alone = await searchMemories(
      local,
      { query: 'connections', file: 'src/db/pool.ts' },
      { provider, recordUsage: false },
    );
    const served = await viaDaemon<Array<{ id: string }>>('search', {
      query: 'connections',
      file: 'src/db/pool.ts',
    });
    expect(served.map((h) => h.id)).toEqual(alone.map((h) => h.id));
  });

  it('context packs: the same items in the same order, the same text', async () => {
    const provider = await providerFor(local);
    const asks = [
      ...PROMPTS.map((query) => ({ query })),
      { file: 'src/db/pool.ts' },
      { query: 'how many connections', file: 'src/db/pool.ts' },
    ];
    for (const o of asks) {
      const alone = await buildContextPack(local, o, { provider });
      const served = await viaDaemon<{ text: string; items: Array<{ id: string }> }>('context', o);
      expect(
        served.items.map((i) => i.id),
        JSON.stringify(o),
      ).toEqual(alone.items.map((i) => i.id));
      expect(served.text, JSON.stringify(o)).toBe(alone.text);
    }
  });
});
