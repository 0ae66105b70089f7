/**
 * One tokenizer and stemmer (src/search/text.ts): the search index, the duplicate
 * check, prompt relevance and context packs, the proposal gate and consolidation
 * cut a text into the same words. Before, the prompt hook, proposals and
 * consolidation had a tokenizer of their own (another stemmer, other stop words).
 */
import { describe, expect, it } from 'vitest';
import { gateProposalsDetailed, type Proposal, proposalKey } from '../src/agents/proposal.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { distinctive, requestWords } from '../src/search/relevance.js';
import { overlap, terms } from '../src/search/text.js';
import { makeRepo } from './helpers.js';

const TEXTS = [
  'Deploying the services retries every migration',
  'Websocket reconnect storms after deploys',
  'Connection pooling through pgbouncer in transaction mode',
  'camelCaseNames and snake_case_names in the PaymentWebhook handler',
];

describe('what a word is', () => {
  it('a proposal key, an overlap and a prompt are cut as the index cuts them', () => {
    for (const t of TEXTS) {
      const index = new Set(terms(t));
      expect(proposalKey({ title: t }), t).toBe([...index].sort().join(' '));
      expect(overlap(t, [...index]), t).toBe(1);
      // the prompt's words: the index's terms, less those every request to an agent uses
      expect(requestWords(t).terms, t).toEqual([...index].filter(distinctive));
    }
    // forms of one word meet everywhere: the index's stemmer
    expect(proposalKey({ title: 'Deploying services' })).toBe(proposalKey({ title: 'deploys service' }));
  });

  it('a prompt names a file as one word, and its other words are sought as their forms share them', () => {
    const w = requestWords('ok continue: check src/db/pool.ts before deploying the retries');
    expect(w.files).toEqual(['src/db/pool.ts']);
    expect(w.terms).toEqual(['check', 'deploi', 'retri']);
    expect(w.needles.get('deploi')).toBe('deplo'); // deploy, deploys, deployed
    expect(w.needles.get('retri')).toBe('retr'); // retry, retries
    expect(requestWords('ok continue').terms).toEqual([]);
  });

  it('a proposal rejected before is still recognised: keys an earlier build wrote are read with today’s words', async () => {
    const r = makeRepo({ commit: true });
    const store = new Store(await openRepo(r.dir, r.env));
    try {
      const p: Proposal = {
        type: 'convention',
        title: 'Deploys need the cache warmed',
        body: 'Warm the cache before switching traffic.',
        tags: [],
        source: 'test',
      };
      // the key the earlier tokenizer wrote (its light stemmer: deploys → deploy, warmed → warm)
      const [v] = await gateProposalsDetailed(store, [p], { rejectedKeys: ['cache deploy need warm'] });
      expect(v.reason).toBe('rejected-before');
      const [w] = await gateProposalsDetailed(store, [p], { rejectedKeys: [proposalKey(p)] });
      expect(w.reason).toBe('rejected-before');
      const [x] = await gateProposalsDetailed(store, [p], { rejectedKeys: ['something else'] });
      expect(x.accepted).toBe(true);
    } finally {
      store.close();
    }
  });
});
