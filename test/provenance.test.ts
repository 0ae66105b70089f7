/**
 * Provenance: trailers on every memory commit (git's own interpret-trailers reads them), who wrote
 * each record (a person or an agent), signed memory commits where git signs commits, signature
 * status in show and history, and sync refusing unsigned or untrusted remote commits when
 * sync.require-signed is set. Signing uses ssh keys made with ssh-keygen in a temp dir.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { actorFromEnv, MAX_TRAILER_IDS, memTrailers, parseTrailerLines } from '../src/model/provenance.js';
import { parseRecord, serializeRecord } from '../src/model/record.js';
import { errorOf, makeRepo, sh, type TestRepo, tmpDir } from './helpers.js';
import { fresh, template } from './support/template.js';
import { withEnv } from './support/with-env.js';

/** a first commit and no store: the first add creates it (the record and commit cases copy it) */
const NO_STORE = template('no-store', { init: false });

const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const trailers = (r: Pick<TestRepo, 'dir' | 'env' | 'git'>, rev = 'refs/memory') =>
  sh('git', ['interpret-trailers', '--parse'], r.dir, r.env, r.git('log', '-1', '--format=%B', rev));

describe('provenance of records and commits', () => {
  it('names the operation, the ids and the agent in trailers, and keeps who wrote each record', async () => {
    const r = await fresh(NO_STORE);
    const mine = await r.memJson(['add', '--type', 'decision', '--title', 'Use pnpm', '--content', 'pnpm.']);
    expect(trailers(r)).toBe(`Mem-Operation: add\nMem-Id: ${mine.id}\n`);

    const agentEnv = {
      ...r.env,
      GIT_MEM_AGENT: 'codex',
      GIT_MEM_AGENT_SESSION: 'sess-42',
      GIT_MEM_AGENT_MODEL: 'gpt-test',
    };
    // the agent's command: a store opened with its environment
    const agent = await withEnv(r, agentEnv);
    const theirs = await agent.memJson([
      'add',
      '--type',
      'known_fix',
      '--title',
      'Retry 503',
      '--content',
      'Retry.',
    ]);
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

  it('export and import keep who wrote each record: a round trip changes nothing', async () => {
    const r = await fresh(NO_STORE);
    const mine = await r.memJson(['add', '--type', 'decision', '--title', 'Use pnpm', '--content', 'pnpm.']);
    const agentEnv = {
      ...r.env,
      GIT_MEM_AGENT: 'codex',
      GIT_MEM_AGENT_SESSION: 's-1',
      GIT_MEM_AGENT_MODEL: 'm',
    };
    const theirs = await (await withEnv(r, agentEnv)).memJson([
      'add',
      '--title',
      'Retry 503',
      '--content',
      'Retry.',
    ]);
    const agent = { kind: 'agent', agent: 'codex', session: 's-1', model: 'm' };
    const exported = (await r.mem(['export'])).stdout;
    const lines = exported
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.by)).toEqual([{ kind: 'person' }, agent]);
    // into the same store: nothing changed, no commit
    const tip = r.git('rev-parse', 'refs/memory').trim();
    expect(await r.memJson(['import', '--jsonl', '-'], { stdin: exported })).toMatchObject({
      unchanged: 2,
      commit: null,
    });
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip);
    // into another: the same authors
    const other = await fresh(NO_STORE);
    await other.memJson(['import', '--jsonl', '-'], { stdin: exported });
    expect((await other.memJson(['show', mine.id])).by).toEqual({ kind: 'person' });
    expect((await other.memJson(['show', theirs.id])).by).toEqual(agent);
    // a line that does not say (an older export) keeps the stored author; one that says nonsense is refused
    const older = JSON.stringify({ ...lines[1], by: undefined, title: 'Retry 503 twice' });
    expect(await r.memJson(['import', '--jsonl', '-'], { stdin: older })).toMatchObject({ replaced: 1 });
    expect(await r.memJson(['show', theirs.id])).toMatchObject({ title: 'Retry 503 twice', by: agent });
    const before = r.git('rev-parse', 'refs/memory').trim();
    const bad = await r.mem(['import', '--jsonl', '-'], { stdin: JSON.stringify({ ...lines[0], by: 'me' }) });
    expect(bad).toMatchObject({ code: 2, error: 'E_INVALID_ARG' });
    // names the line and the field
    for (const named of ['line 1', '"by"']) expect(bad.message).toContain(named);
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(before);
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

/** An ssh signing key and an allowed-signers file naming it. */
function sshKey(name: string): { pub: string; allowed: string } {
  const dir = tmpDir('gm-ssh-');
  const key = join(dir, 'id');
  spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', key]);
  const allowed = join(dir, 'allowed_signers');
  writeFileSync(allowed, `${name}@example.com ${readFileSync(`${key}.pub`, 'utf8')}`);
  return { pub: `${key}.pub`, allowed };
}

function signWith(r: TestRepo, key: { pub: string }) {
  r.git('config', 'gpg.format', 'ssh');
  r.git('config', 'user.signingkey', key.pub);
  r.git('config', 'commit.gpgsign', 'true');
}

describe.runIf(has('ssh-keygen'))('signed memory commits', () => {
  it('signs where git signs, reports the signature, and sync refuses what a trusted key did not sign', async () => {
    const ada = sshKey('ada');
    const eve = sshKey('eve');
    const remote = makeRepo({ bare: true });
    const a = makeRepo({ commit: true });
    const b = makeRepo({ commit: true });
    for (const x of [a, b]) x.git('remote', 'add', 'origin', remote.dir);
    // history from before signing: a clone that requires signatures refuses it whole
    await a.memJson(['add', '--type', 'decision', '--title', 'Before signing', '--content', 'old']);
    await a.memJson(['push']);
    b.git('config', 'mem.sync.requireSigned', 'true');
    const refs = b.git('for-each-ref').trim();
    const unsigned = await b.mem(['sync', '--json']);
    expect(unsigned.code).toBe(4);
    expect(unsigned.stderr).toMatch(/^git-mem: error: [^\n]*\n$/); // one line
    // the oldest commit it brings, unsigned
    expect(errorOf(unsigned)).toMatchObject({
      code: 'E_MERGE',
      problem: 'unsigned',
      signature: 'none',
      commit: a.git('rev-list', '--reverse', 'refs/memory').split('\n')[0],
    });
    expect(unsigned.stderr).toContain('nothing was merged and the local memory is unchanged'); // the hint
    expect(b.git('for-each-ref').trim()).toBe(refs);
    // taken in once with the setting off in this clone; from then on only new commits are checked
    b.git('config', 'mem.sync.requireSigned', 'false');
    await b.memJson(['sync']);
    b.git('config', 'mem.sync.requireSigned', 'true');
    b.git('config', 'gpg.ssh.allowedSignersFile', ada.allowed);

    signWith(a, ada);
    a.git('config', 'gpg.ssh.allowedSignersFile', ada.allowed);
    const signed = await a.memJson(['add', '--type', 'decision', '--title', 'Signed', '--content', 'yes']);
    expect(spawnSync('git', ['verify-commit', 'refs/memory'], { cwd: a.dir, env: a.env }).status).toBe(0);
    expect(trailers(a)).toBe(`Mem-Operation: add\nMem-Id: ${signed.id}\n`);
    const shown = await a.memJson(['show', signed.id]);
    expect(shown.lastChange.signature).toMatchObject({
      status: 'good',
      code: 'G',
      signer: 'ada@example.com',
    });
    const log = await a.mem(['history', '-n', '2']);
    expect(log.stdout).toMatch(/"Signed" {2}\[signature good \(key SHA256:\S+, ada@example.com\)\]\n/);
    expect(log.stdout).toMatch(/"Before signing" {2}\[unsigned\]\n/);

    // b trusts ada's key: her signed commit comes in
    await a.memJson(['push']);
    const ok = await b.mem(['sync']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(b.git('rev-parse', 'refs/memory').trim()).toBe(a.git('rev-parse', 'refs/memory').trim());

    // a commit signed by a key b does not trust: refused whole, b unchanged
    a.git('config', 'user.signingkey', eve.pub);
    await a.memJson(['add', '--type', 'decision', '--title', 'By eve', '--content', 'x']);
    await a.memJson(['push']);
    const before = b.git('for-each-ref').trim();
    const refused = await b.mem(['sync', '--json']);
    expect(refused.code).toBe(4);
    expect(refused.stderr.trim().split('\n')).toHaveLength(1);
    expect(errorOf(refused)).toMatchObject({
      code: 'E_MERGE',
      problem: 'unsigned',
      signature: 'untrusted',
      commit: a.git('rev-parse', 'refs/memory').trim(),
    });
    // the key it does not trust (no data field holds it)
    expect(errorOf(refused).message).toMatch(/SHA256:\S+/);
    expect(b.git('for-each-ref').trim()).toBe(before);

    // a signing set-up that cannot sign: the add fails in one line, the store unchanged
    const tip = a.git('rev-parse', 'refs/memory').trim();
    a.git('config', 'commit.gpgsign', 'true');
    a.git('config', 'user.signingkey', join(tmpDir('gm-ssh-'), 'missing.pub'));
    const bad = await a.mem([
      'add',
      '--type',
      'decision',
      '--title',
      'Cannot sign',
      '--content',
      'x',
      '--json',
    ]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^git-mem: error: [^\n]*\n$/); // one line
    expect(errorOf(bad).code).toBe('E_GIT');
    expect(errorOf(bad).hint).toContain('git config commit.gpgsign false'); // the way out it names
    expect(a.git('rev-parse', 'refs/memory').trim()).toBe(tip);
    // the setting is a known key (config set refuses unknown ones)
    expect((await b.mem(['config', 'set', 'sync.require-signed', 'true'])).code).toBe(0);
  });
});
