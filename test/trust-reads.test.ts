/**
 * Reading what was never shared: a teammate's record names what this clone reads only as
 * committed content of the commit being judged (and a blob it names by id). A hostile remote
 * crafts records whose anchors lack their blob and hash and name a local-only branch,
 * `stash@{0}`, a gitignored `.env`, or whose `current.path` / `verdict.to.path` point at `.env`
 * or outside the repository. The victim syncs, checks and re-anchors as usual: no byte of its
 * secrets reaches refs/memory, the remote, or what `check` prints.
 */
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashLines } from '../src/anchors/text.js';
import { newId } from '../src/model/id.js';
import { isolatedEnv, type Json, sh, type TestRepo } from './helpers.js';
import { plumber, recordText } from './hostile-helpers.js';
import { bareRemote, clone, type Remote } from './sync-helpers.js';

const BRANCH_SECRET = 'marker-local-branch-q7w3';
const STASH_SECRET = 'marker-stashed-edit-k2p9';
const ENV_SECRET = 'marker-dotenv-value-x5m1';
const OUTSIDE_SECRET = 'marker-outside-repo-z8d4';
const SECRETS = [BRANCH_SECRET, STASH_SECRET, ENV_SECRET, OUTSIDE_SECRET];

/** Every object reachable from a ref, as text (records, anchor blobs, trees, commit messages). */
function everything(repo: { dir: string; env: NodeJS.ProcessEnv }, ref: string): string {
  // every object must be there and readable: a store broken by a half-written anchor fails here
  const list = sh('git', ['rev-list', '--objects', ref], repo.dir, repo.env);
  const oids = list
    .split('\n')
    .map((l) => l.split(' ')[0])
    .filter(Boolean);
  return sh('git', ['cat-file', '--batch'], repo.dir, repo.env, `${oids.join('\n')}\n`);
}

function leaked(text: string): string[] {
  return SECRETS.filter((s) => text.includes(s));
}

interface Scene {
  v: TestRepo;
  remote: Remote;
  id: string;
  /** the victim's sync refused the record at the boundary (it was planted in its ref instead) */
  refused: boolean;
}

/** The blob id git gives `content` (what an honest anchor names). */
function blobOf(v: TestRepo, content: string): string {
  return sh('git', ['hash-object', '--stdin'], v.dir, v.env, content).trim();
}

/**
 * A remote whose memory holds one record with `anchors` (YAML lines under `anchors:`), and a
 * victim with a committed local-only branch, a stash and a gitignored `.env` holding secrets,
 * and a file next to its work tree. The victim has synced (the remote may be refused at the
 * boundary: then nothing arrived, which is also fine).
 */
async function scene(anchors: (v: TestRepo) => string): Promise<Scene> {
  const { remote, base } = await sharedRemote();
  // the remote as the seed left it: the scene before pushed its victim's merge (and notes)
  for (const ref of remote.git('for-each-ref', '--format=%(refname)', 'refs/mem/').split('\n'))
    if (ref && ref !== 'refs/mem/memory') remote.git('update-ref', '-d', ref);
  remote.git('update-ref', 'refs/mem/memory', base);
  const v = clone(remote.url);
  v.write('notes.txt', 'public notes\n');
  v.write('.gitignore', '.env\n');
  v.commitAll('code');
  v.git('checkout', '-q', '-b', 'private');
  v.write('secret.txt', `${BRANCH_SECRET}\n`);
  v.commitAll('private work');
  v.git('checkout', '-q', 'main');
  v.write('notes.txt', `${STASH_SECRET}\n`);
  v.git('stash', '-q');
  v.write('.env', `${ENV_SECRET}\n`);
  writeFileSync(join(v.dir, '..', `${basename(v.dir)}-outside.txt`), `${OUTSIDE_SECRET}\n`);

  const id = newId();
  const p = plumber(remote.dir, isolatedEnv());
  const text = recordText(id, 'hostile anchors', 'b\n', `anchors:\n${anchors(v)}`);
  const hostile = p.commitOver(base, {
    memories: { tree: { [id.slice(-2)]: { tree: { [`${id}.md`]: { blob: text } } } } },
  });
  remote.git('update-ref', 'refs/mem/memory', hostile);
  const synced = await v.mem(['sync', '--json']);
  // a path outside the repository is refused at the sync boundary (src/model/schema.ts); the
  // readers must still never follow it, so such a record is planted in the victim's ref directly
  const refused = synced.code !== 0;
  if (refused) {
    v.git('fetch', '-q', remote.dir, `+refs/mem/memory:refs/hostile`);
    v.git('update-ref', 'refs/memory', v.git('rev-parse', 'refs/hostile').trim());
  }
  return { v, remote, id, refused };
}

let shared: Promise<{ remote: Remote; base: string }> | undefined;

/** One remote for every scene, its memory seeded with one record by a teammate's sync. */
function sharedRemote(): Promise<{ remote: Remote; base: string }> {
  shared ??= (async () => {
    const remote = bareRemote();
    const seed = clone(remote.url);
    await seed.memJson(['add', '--title', 'seed', '--content', 'seed\n']);
    await seed.memJson(['sync']);
    return { remote, base: remote.git('rev-parse', 'refs/mem/memory').trim() };
  })();
  return shared;
}

/** Runs what a victim runs every day, then asserts nothing secret was written, printed or pushed. */
async function judge(s: Scene, steps: Array<'check' | 'reanchor'>): Promise<Json> {
  const { v, remote, id } = s;
  const printed: string[] = [];
  let checked: Json;
  for (const step of steps) {
    const r = step === 'check' ? await v.mem(['check', '--json']) : await v.mem(['reanchor', id, '--json']);
    // a refusal is fine (one line, a typed code); a crash is not
    expect(r.code, `${step}: ${r.stderr}`).not.toBe(70);
    if (step === 'check') {
      expect(r.code, `check: ${r.stderr}`).toBe(0);
      checked ??= JSON.parse(r.stdout);
    } else if (r.code !== 0) expect(JSON.parse(r.stdout).error.code, r.stdout).toBe('E_ANCHOR');
    printed.push(r.stdout, r.stderr);
  }
  await v.mem(['sync']);
  expect(leaked(everything(v, 'refs/memory')), 'refs/memory').toEqual([]);
  expect(leaked(everything({ dir: remote.dir, env: v.env }, 'refs/mem/memory')), 'the remote').toEqual([]);
  expect(leaked(printed.join('\n')), 'printed').toEqual([]);
  return checked;
}

/** The check reported the anchor it could not complete: stale, saying why, nothing completed. */
function reported(checked: Json, why: RegExp): void {
  expect(checked.results).toHaveLength(1);
  expect(checked.results[0]).toMatchObject({ stale: true, reason: expect.stringMatching(why) });
}

describe('an incomplete remote anchor is never completed from local data', () => {
  it('a commit field naming a local-only branch', async () => {
    const s = await scene(() => '  - path: secret.txt\n    commit: private');
    reported(await judge(s, ['check']), /names commit "private"/);
  });

  it('a commit field naming stash@{0}', async () => {
    const s = await scene(() => "  - path: notes.txt\n    commit: 'stash@{0}'");
    reported(await judge(s, ['check']), /names commit "stash@\{0\}"/);
  });

  it('a blob field naming a revision and a path (stash@{0}:notes.txt)', async () => {
    const s = await scene(() => "  - path: notes.txt\n    blob: 'stash@{0}:notes.txt'");
    reported(await judge(s, ['check']), /no object id/);
  });

  it('a path naming a gitignored .env in the working tree', async () => {
    const s = await scene(() => '  - path: .env');
    reported(await judge(s, ['check']), /no file "\.env"/);
  });

  it('a commit field naming a full id of a commit outside the checked history', async () => {
    // the id of the local-only commit, as a note or a log line could have told it
    const s = await scene(
      (v) => `  - path: secret.txt\n    commit: ${v.git('rev-parse', 'private').trim()}\n    lines: [1, 1]`,
    );
    reported(await judge(s, ['check']), /not [0-9a-f]{12} or in its history/);
  });

  it('is completed from the committed file at the checked commit, not the edited working tree', async () => {
    const s = await scene(() => '  - path: notes.txt\n    lines: [1, 1]');
    s.v.write('notes.txt', `${ENV_SECRET}\n`); // an uncommitted edit
    const checked = await judge(s, ['check']);
    expect(checked.results[0]).toMatchObject({ status: 'fresh', stale: false });
    const a = (await s.v.memJson(['show', s.id])).anchors[0];
    expect(a).toMatchObject({ path: 'notes.txt', text: 'public notes', blob: blobOf(s.v, 'public notes\n') });
    expect(a.commit).toBe(s.v.git('rev-parse', 'HEAD').trim());
  });
});

describe('check --worktree', () => {
  it('reads no ignored file a record names, and still an untracked one the person anchored', async () => {
    const s = await scene(
      (v) =>
        `  - path: .env\n    blob: ${blobOf(v, 'A=1\n')}\n    hash: ${hashLines(['A=1'])}\n    text: A=1\n    lines: [1, 1]`,
    );
    s.v.write('draft.txt', 'a draft\n');
    const own = await s.v.memJson(['add', '--title', 'draft', '--content', 'x', '--anchor', 'draft.txt:1']);
    const wt = await s.v.memJson(['check', '--worktree', '--verbose']);
    const of = (id: string) => wt.results.find((x: Json) => x.id === id);
    // the .env is not there for the check: its anchor's file is gone, nothing of it was compared
    expect(of(s.id)).toMatchObject({ status: 'deleted' });
    expect(of(own.id)).toMatchObject({ status: 'fresh' });
  });
});

describe('the post-commit hook judges the same way', () => {
  it('a commit touching the anchored file completes nothing from stash@{0}', async () => {
    const s = await scene(() => "  - path: notes.txt\n    commit: 'stash@{0}'");
    await s.v.memJson(['hooks', 'install']);
    s.v.write('notes.txt', 'public notes, edited\n');
    s.v.commitAll('edit notes'); // the hook (bin/git-mem.js) checks the anchors of notes.txt
    expect(s.v.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(/^mem: post-commit/);
    await judge(s, []);
  });
});

describe('reanchor follows a remote location only into HEAD’s committed tree', () => {
  const complete = (v: TestRepo, extra: string) =>
    [
      '  - path: README.md',
      '    lines: [1, 1]',
      `    blob: ${blobOf(v, '# test\n')}`,
      `    hash: ${hashLines(['# test'])}`,
      `    commit: ${v.git('rev-parse', 'main').trim()}`,
      extra,
    ].join('\n');
  const verdictTo = (path: string) => (v: TestRepo) =>
    complete(
      v,
      [
        '    verdict:',
        '      status: moved',
        '      reason: moved',
        '      confidence: 1',
        '      from: { path: README.md, lines: [1, 1] }',
        `      to: { path: '${path}', lines: [1, 1] }`,
        `      commit: ${v.git('rev-parse', 'main').trim()}`,
        '      checked: 2024-01-01T00:00:00.000Z',
      ].join('\n'),
    );
  const currentAt = (path: string) => (v: TestRepo) =>
    complete(
      v,
      [
        '    current:',
        `      path: '${path}'`,
        '      lines: [1, 1]',
        `      blob: ${blobOf(v, '# test\n')}`,
        `      commit: ${v.git('rev-parse', 'main').trim()}`,
      ].join('\n'),
    );

  it('verdict.to.path naming .env', async () => {
    await judge(await scene(verdictTo('.env')), ['reanchor', 'check']);
  });

  it('current.path naming .env', async () => {
    await judge(await scene(currentAt('.env')), ['reanchor', 'check']);
  });

  it('verdict.to.path and current.path outside the repository', async () => {
    const outside = (v: TestRepo) => `../${basename(v.dir)}-outside.txt`;
    for (const [make, steps] of [
      [(v: TestRepo) => verdictTo(outside(v))(v), ['reanchor', 'check']],
      [(v: TestRepo) => currentAt(outside(v))(v), ['check', 'reanchor']],
      [currentAt('../../etc/passwd'), ['check', 'reanchor']],
    ] as const) {
      const s = await scene(make);
      expect(s.refused, 'the sync boundary refuses a path outside the repository').toBe(true);
      await judge(s, [...steps]);
    }
  });
});
