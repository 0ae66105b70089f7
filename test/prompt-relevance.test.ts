/**
 * What a prompt is given beside a much better answer (src/search/relevance.ts CLOSE_TO_BEST):
 * a memory that clears the relevance bar on a word or two is noise next to one that answers
 * the prompt, and is given only when nothing better is there (eval/prompt-hook: precision).
 */
import { describe, expect, it } from 'vitest';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { CLOSE_TO_BEST, relevantMemories } from '../src/search/relevance.js';
import { makeRepo } from './helpers.js';

describe('prompt relevance beside a better answer', () => {
  it('gives the memory that answers the prompt, not one far below it that clears the bar too', async () => {
    const r = makeRepo({ commit: true });
    const add = async (title: string, content: string) =>
      (await r.memJson(['add', '--type', 'known_fix', '--title', title, '--content', content])).id as string;
    const best = await add(
      'Websocket reconnect storms after a deploy',
      'Clients reconnect with exponential backoff and jitter; a fixed delay makes every client return at once.',
    );
    const weak = await add(
      'Websocket reconnect logic lives in the client',
      'Ping every 30 s or the load balancer drops idle sockets.',
    );
    for (const [t, c] of [
      ['Tabs in Makefiles', 'Recipes need tabs.'],
      ['Release notes go first', 'The top section lists what changed for users.'],
      ['Dates are stored in UTC', 'Format them in the viewer timezone only when rendering.'],
    ])
      await add(t, c);
    const store = new Store(await openRepo(r.dir, { ...r.env, GIT_MEM_DAEMON: 'off' }));
    try {
      const prompt = 'Why do the websocket reconnect storms come back after a deploy?';
      const hits = await relevantMemories(store, prompt);
      expect(hits.map((h) => h.id)).toEqual([best]);
      // the weaker memory clears the bar on its own: it is left out only beside the better one
      const alone = await relevantMemories(store, prompt, { exclude: new Set([best]) });
      expect(alone.map((h) => h.id)).toEqual([weak]);
      expect(alone[0].score).toBeLessThan(hits[0].score * CLOSE_TO_BEST);
    } finally {
      store.close();
    }
  });

  it('gives a memory met only by words of its body, as a pasted error message meets the fix that quotes it', async () => {
    const r = makeRepo({ commit: true });
    const add = async (title: string, content: string) =>
      (await r.memJson(['add', '--type', 'known_fix', '--title', title, '--content', content])).id as string;
    const fix = await add(
      'Release images are built for one platform',
      "Images built on laptops were arm64, so the cluster failed with 'exec /usr/local/bin/node: exec format error'. CI builds with --platform linux/amd64.",
    );
    await add('Tabs in Makefiles', 'Recipes need tabs.');
    await add('Dates are stored in UTC', 'Format them in the viewer timezone only when rendering.');
    const store = new Store(await openRepo(r.dir, { ...r.env, GIT_MEM_DAEMON: 'off' }));
    try {
      const hits = await relevantMemories(store, 'exec format error in the new pods');
      expect(hits.map((h) => h.id)).toEqual([fix]);
      expect(hits[0].matched).toEqual(expect.arrayContaining(['exec', 'format', 'error']));
    } finally {
      store.close();
    }
  });
});
