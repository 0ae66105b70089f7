/**
 * Provenance: trailers on every memory commit (git's own interpret-trailers reads them), who wrote
 * each record (a person or an agent), signed memory commits where git signs commits, signature
 * status in show and history, and sync refusing unsigned or untrusted remote commits when
 * sync.require-signed is set. Signing uses ssh keys made with ssh-keygen in a temp dir.
 */
import { describe, expect, it } from 'vitest';
import { actorFromEnv, MAX_TRAILER_IDS, memTrailers, parseTrailerLines } from '../src/model/provenance.js';
import { parseRecord, serializeRecord } from '../src/model/record.js';
import { makeRepo, sh, type TestRepo } from './helpers.js';

const trailers = (r: TestRepo, rev = 'refs/memory') =>
  sh('git', ['interpret-trailers', '--parse'], r.dir, r.env, r.git('log', '-1', '--format=%B', rev));

describe('provenance of records and commits', () => {
  it('names the operation, the ids and the agent in trailers, and keeps who wrote each record', async () => {
    const r = makeRepo({ commit: true });
    const mine = await r.memJson(['add', '--type', 'decision', '--title', 'Use pnpm', '--content', 'pnpm.']);
    expect(trailers(r)).toBe(`Mem-Operation: add\nMem-Id: ${mine.id}\n`);

    const agentEnv = {
      ...r.env,
      GIT_MEM_AGENT: 'codex',
      GIT_MEM_AGENT_SESSION: 'sess-42',
      GIT_MEM_AGENT_MODEL: 'gpt-test',
    };
    const res = await r.mem(
      ['add', '--type', 'known_fix', '--title', 'Retry 503', '--content', 'Retry.', '--json'],
      {
        env: agentEnv,
      },
    );
    const theirs = JSON.parse(res.stdout);
    expect(trailers(r)).toBe(
      `Mem-Operation: add\nMem-Id: ${theirs.id}\nMem-Agent: codex\nMem-Session: sess-42\nMem-Model: gpt-test\n`,
    );
    // a person edits the agent's memory: the record still says an agent wrote it; the commit is the person's
    await r.memJson(['update', theirs.id, '--content', 'Retry three times.']);
    expect(trailers(r)).toBe(`Mem-Operation: update\nMem-Id: ${theirs.id}\n`);
    const shown = await r.memJson(['show', theirs.id]);
    expect(shown.by).toEqual({ kind: 'agent', agent: 'codex', session: 'sess-42', model: 'gpt-test' });
    expect(shown.lastChange).toMatchObject({
      operation: 'update',
      by: { kind: 'person' },
      signature: { status: 'none' },
    });
    expect((await r.memJson(['show', mine.id])).by).toEqual({ kind: 'person' });
    const text = await r.mem(['show', theirs.id]);
    expect(text.stdout).toContain('by:         agent codex (session sess-42, model gpt-test)');
    expect(text.stdout).toMatch(/changed: {4}[0-9a-f]{12} \S+ update, person; unsigned\n/);

    const versions = await r.memJson(['history', theirs.id]);
    expect(
      versions.map((v: { operation: string; by: { kind: string } }) => [v.operation, v.by.kind]),
    ).toEqual([
      ['update', 'person'],
      ['add', 'agent'],
    ]);
    const log = await r.mem(['history', '-n', '3']);
    expect(log.stdout.split('\n')[1]).toMatch(
      /mem: add .* "Retry 503" {2}\[agent codex \(session sess-42, model gpt-test\)\]$/,
    );

    await r.memJson(['rm', mine.id]);
    expect(trailers(r)).toBe(`Mem-Operation: rm\nMem-Id: ${mine.id}\n`);
    // Claude Code's commands (CLAUDECODE=1) are an agent's
    expect(actorFromEnv({ CLAUDECODE: '1' })).toEqual({ kind: 'agent', agent: 'claude-code' });
    expect(actorFromEnv({ GIT_MEM_AGENT: 'x\ny', GIT_MEM_AGENT_MODEL: ' ' })).toEqual({
      kind: 'agent',
      agent: 'x y',
    });
  });

  it('reads records without `by`, keeps a shape it does not know, and caps the ids a commit names', () => {
    const old =
      '---\nid: "01M8AG3CBP3X1R6JP7RCE65WN0"\ntype: decision\ntitle: Old\nstatus: active\ntags: []\nconfidence: 0.8\ncreated: x\nupdated: x\nclock: 1\n---\nBody\n';
    const r = parseRecord(old);
    expect(r.by).toBeUndefined();
    expect(serializeRecord(r)).toBe(old);
    const future = old.replace('clock: 1\n', 'clock: 1\nby:\n  kind: team-bot\n  team: infra\n');
    const f = parseRecord(future);
    expect(f.by).toBeUndefined();
    expect(serializeRecord(f)).toContain('by:\n  kind: team-bot\n  team: infra\n');
    const ids = Array.from(
      { length: MAX_TRAILER_IDS + 5 },
      (_, i) => `01M8AG3CBP3X1R6JP7RCE6${String(i).padStart(4, '0')}`,
    );
    const lines = memTrailers('mem: import 105 records', ids, { kind: 'person' });
    expect(lines.filter((l) => l.startsWith('Mem-Id: '))).toHaveLength(MAX_TRAILER_IDS);
    expect(lines).toContain(`Mem-Id-Count: ${MAX_TRAILER_IDS + 5}`);
    expect(parseTrailerLines(lines.join('\n'))).toMatchObject({
      operation: 'import',
      idCount: MAX_TRAILER_IDS + 5,
    });
  });
});
