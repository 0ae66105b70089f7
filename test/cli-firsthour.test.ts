/**
 * Lines a new user met in the first hour that misled or refused the wrong thing:
 * `supersede OLD NEW` (as the CI report suggests it), an empty filter result,
 * "1 commits", an empty context pack under a tiny budget, and a person's add
 * refused as a duplicate of a memory with another title.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { add } from '../src/commands/add.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { sameTitle } from '../src/search/duplicate-check.js';
import { errorOf, makeRepo, ROOT } from './helpers.js';
import { bareRemote, clone, tipOf } from './sync-helpers.js';

async function added(r: ReturnType<typeof makeRepo>, title: string, body: string, ...more: string[]) {
  const res = await r.mem(['add', '--title', title, '--content', body, '--json', ...more]);
  expect(res.code, res.stderr).toBe(0);
  return JSON.parse(res.stdout).id as string;
}

describe('first-hour lines', () => {
  // supersede OLD NEW and --by: test/ops/first-hour.test.ts
  it('a filter that matches nothing does not invite a first memory; stats counts in the singular', async () => {
    const r = makeRepo({ commit: true });
    const empty = await r.mem(['list']);
    expect(empty.stdout).toMatch(/^No memories\. Add one/);
    await added(r, 'only one', 'the only memory');
    const none = await r.mem(['list', '--status', 'pending']);
    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe('No memories match.');
    const stats = await r.mem(['stats']);
    expect(stats.stdout.split('\n')[0]).toMatch(/^1 memory, ~\d+ tokens, 1 commit on refs\/memory/);
    // and every other count a person reads
    const out = join(r.dir, 'one.jsonl');
    expect((await r.mem(['export', '--out', out])).stderr).toBe(`Exported 1 memory to ${out}\n`);
    expect((await r.mem(['doctor'])).stdout).toMatch(/records: 1 record parses, 0 malformed/);
    expect((await r.mem(['reindex'])).stdout).toMatch(/^Reindexed 1 memory at /);
    expect((await r.mem(['reindex', '--status'])).stdout).toMatch(/, 1 memory, /);
    const s = (
      await r.memJson(['strategy', 'add', '--title', 'small steps', '--content', 'one change a commit'])
    ).id;
    expect((await r.mem(['strategy', 'record', s, '--success'])).stdout).toMatch(/: 1 success, 0 failures,/);
  });

  it('a --budget too small for any memory in the pack is refused in one line naming the budget that fits', async () => {
    const r = makeRepo({ commit: true });
    await added(r, 'listen port in use', 'EADDRINUSE: stop the old dev server first (lsof -i :3000)');
    const tiny = await r.mem(['context', '-q', 'listen port in use', '--budget', '10', '--no-daemon']);
    expect(tiny.code).toBe(2);
    expect(tiny.stdout).toBe('');
    const m =
      /^git-mem: error: --budget 10 is too small for any memory in this pack \(the first needs (\d+) tokens whole: try --budget \1\)\n$/.exec(
        tiny.stderr,
      );
    expect(m, tiny.stderr).not.toBeNull();
    // the budget it names holds that memory whole
    const fits = await r.mem(['context', '-q', 'listen port in use', '--budget', m![1], '--no-daemon']);
    expect(fits.code, fits.stderr).toBe(0);
    expect(fits.stdout).toContain('EADDRINUSE: stop the old dev server first (lsof -i :3000)');
    expect(fits.stderr).toBe('');
    const json = await r.mem([
      'context',
      '-q',
      'listen port in use',
      '--budget',
      '10',
      '--no-daemon',
      '--json',
    ]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error.code).toBe('E_INVALID_ARG');
  });

  it('a pack asked only a question holds what clears the relevance bar, not rules scoped to other paths', async () => {
    const r = makeRepo({ commit: true });
    const fix = await added(
      r,
      'Port 3000 already in use: kill the stale dev server',
      'EADDRINUSE on npm run dev means an old dev server still listens on port 3000; kill it (lsof -i :3000) and start again.',
      '--type',
      'known_fix',
    );
    const rule = (title: string, body: string, scope: string) =>
      added(r, title, body, '--type', 'rule', '--scope', scope);
    await rule(
      'Use snake_case in migrations',
      'Migration files and their columns use snake_case.',
      'db/migrations/**',
    );
    await rule(
      'React components are function components',
      'No class components in the web app; hooks only.',
      'web/src/**',
    );
    await rule(
      'Python scripts pass ruff',
      'Scripts under tools/ must pass ruff check with the repo config.',
      'tools/**/*.py',
    );
    await added(
      r,
      'Use pnpm for installs',
      'pnpm install, never npm install, in this repository.',
      '--type',
      'decision',
    );
    // nothing for a question about something else: an empty pack, said on stderr
    const none = await r.mem(['context', '-q', 'kubernetes ingress annotations', '--no-daemon']);
    expect(none.code).toBe(0);
    expect(none.stderr).toBe('git-mem: note: no memory for this context\n');
    const everywhere = await added(
      r,
      'Commit messages say why',
      'The subject says what, the body why.',
      '--type',
      'rule',
    );
    const pack = (budget: string) =>
      r.memJson(['context', '-q', 'listen port in use', '--budget', budget, '--no-daemon']);
    for (const budget of ['150', '300', '2000']) {
      const p = await pack(budget);
      // the fix and the rule for every path; no rule scoped to other paths, no memory that only shares "use"
      expect(p.items.map((i: { id: string }) => i.id).sort()).toEqual([fix, everywhere].sort());
      expect(p.text).toContain('kill it (lsof -i :3000)');
      expect(p.text).not.toMatch(/snake_case|React|ruff|pnpm/);
      expect(p.text).toMatch(/\n[^#\n][^\n]*\n<\/memory>$/);
    }
    // with the file, its rules come back
    const withFile = await r.memJson(['context', '--file', 'db/migrations/001.sql', '--no-daemon']);
    expect(withFile.text).toContain('Use snake_case in migrations');
  });

  it("a person's add with another title warns and proceeds; the same title and text is refused", async () => {
    const r = makeRepo({ commit: true });
    await added(r, 'parallel writer 1 item 9', 'written by parallel writer 1 as item 9');
    const other = await r.mem([
      'add',
      '--title',
      'parallel writer 1 item 1',
      '--content',
      'written by parallel writer 1 as item 1',
    ]);
    expect(other.code, other.stderr).toBe(0);
    expect(other.stderr).toMatch(
      /warning: similar to .*"parallel writer 1 item 9".*added, since the titles differ/,
    );
    const tip = r.git('rev-parse', 'refs/memory');
    const same = await r.mem([
      'add',
      '--title',
      'Parallel writer 1 item 9',
      '--content',
      'Written by parallel writer 1, as item 9.',
      '--json',
    ]);
    expect(same.code).toBe(2);
    expect(errorOf(same)).toMatchObject({
      code: 'E_DUPLICATE',
      duplicates: expect.arrayContaining([expect.objectContaining({ title: 'parallel writer 1 item 9' })]),
    });
    expect(r.git('rev-parse', 'refs/memory')).toBe(tip);
    // an agent's add (the MCP tool calls the operation with its default) keeps the gate
    const store = new Store(await openRepo(r.dir, r.env));
    try {
      const input = {
        type: 'decision',
        title: 'parallel writer 1 item 2',
        body: 'written by parallel writer 1 as item 2',
      };
      await expect(add(store, input, { cwd: r.dir, env: r.env, daemon: false })).rejects.toMatchObject({
        code: 'E_DUPLICATE',
      });
    } finally {
      store.close();
    }
    expect(r.git('rev-parse', 'refs/memory')).toBe(tip);
  });

  it('check prints no empty "" title on lines unchanged since the last check', async () => {
    const r = makeRepo({ commit: true });
    r.write('a.ts', 'one\ntwo\n');
    r.commitAll('a');
    await added(r, 'anchored', 'about line one', '--anchor', 'a.ts:1-1');
    r.write('a.ts', 'changed\ntwo\n');
    r.commitAll('edit the anchored line');
    expect((await r.mem(['check'])).stdout).toContain('"anchored"');
    const again = await r.mem(['check']);
    expect(again.stdout).toContain('(unchanged since the last check)');
    expect(again.stdout).not.toContain('""');
  });

  it('sameTitle: numbers must agree, and half the words', () => {
    expect(sameTitle('parallel writer 1 item 9', 'parallel writer 1 item 1')).toBe(false);
    expect(sameTitle('Connection pooling via pgbouncer', 'Connection pooling through pgbouncer')).toBe(true);
    expect(sameTitle('use pnpm', 'deploy on fridays')).toBe(false);
  });
});

// refused scopes, scope lists, config set of an unknown key: test/ops/first-hour.test.ts

describe('output format from every layer', () => {
  it('output set in the local, shared or an included config is honoured as config list reports it', async () => {
    const r = makeRepo({ commit: true });
    await added(r, 'pnpm, not npm', 'faster installs');
    const human = await r.mem(['list']);
    expect(() => JSON.parse(human.stdout)).toThrow();
    // the default layer for set is this clone's git config
    expect((await r.mem(['config', 'set', 'output', 'json'])).code).toBe(0);
    expect(JSON.parse((await r.mem(['list'])).stdout)[0].title).toBe('pnpm, not npm');
    expect((await r.memJson(['config', 'get', 'output'])) as unknown).toMatchObject({ origin: 'local' });
    // the environment and --json still win over every layer
    expect((await r.mem(['stats'], { env: { ...r.env, GIT_MEM_OUTPUT: 'human' } })).stdout).toMatch(
      /^1 memory, /,
    );
    // the team's file in refs/memory, below this clone's setting
    expect((await r.mem(['config', 'set', 'output', 'yaml', '--shared'])).code).toBe(0);
    expect(JSON.parse((await r.mem(['stats'])).stdout).records).toBe(1);
    expect((await r.mem(['config', 'unset', 'output'])).code).toBe(0);
    expect((await r.mem(['stats'])).stdout).toMatch(/^records: 1$/m);
    expect((await r.mem(['list'])).stdout).toMatch(/^- id: /m);
    expect(JSON.parse((await r.mem(['stats', '--json'])).stdout).records).toBe(1);
    // this clone's human beats the team's yaml, and the global file is below both
    expect((await r.mem(['config', 'set', 'output', 'json', '--global'])).code).toBe(0);
    expect((await r.mem(['config', 'set', 'output', 'human', '--local'])).code).toBe(0);
    expect((await r.mem(['list'])).stdout).toMatch(/^\w{12} {2}decision/m);
    // a mem.* entry that lives in an included file is found too
    r.git('config', '--local', '--unset', 'mem.output');
    expect(readFileSync(join(r.dir, '.git', 'config'), 'utf8')).not.toMatch(/\[mem/i);
    r.write('extra.gitconfig', '[mem]\n\toutput = json\n');
    r.git('config', '--local', 'include.path', join(r.dir, 'extra.gitconfig'));
    expect(JSON.parse((await r.mem(['list'])).stdout)[0].title).toBe('pnpm, not npm');
  });
});

describe("a teammate's clone", () => {
  async function teamRemote() {
    const remote = bareRemote();
    const a = clone(remote.url);
    const id = await added(a, 'use pnpm', 'pnpm for installs');
    const s = await a.mem(['sync']);
    expect(s.code, s.stderr).toBe(0);
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(tipOf(a));
    return { remote, a, id };
  }

  it('the first read takes in the remote memory (auto-fetch), and init adopts it rather than starting a second root', async () => {
    const { remote, a, id } = await teamRemote();
    const b = clone(remote.url);
    const list = await b.mem(['list']);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain('use pnpm');
    expect(list.stderr).toMatch(/^git-mem: this clone had no memory yet: fetched origin's \(\w{12}\)/);
    expect(list.stderr.trim().split('\n')).toHaveLength(1);
    expect(tipOf(b)).toBe(tipOf(a));
    // the next read is silent
    expect((await b.mem(['list'])).stderr).toBe('');
    // show in a fresh clone finds the record the same way
    const c = clone(remote.url);
    const show = await c.memJson(['show', id]);
    expect(show.title).toBe('use pnpm');
    // init in a fresh clone adopts: the same commit, no second root
    const d = clone(remote.url);
    const init = await d.memJson(['init']);
    expect(init).toMatchObject({ created: false, adopted: { remote: 'origin', commit: tipOf(a) } });
    expect(tipOf(d)).toBe(tipOf(a));
    expect(d.git('rev-list', '--max-parents=0', 'refs/memory').trim()).toBe(
      a.git('rev-list', '--max-parents=0', 'refs/memory').trim(),
    );
    // a clone whose remote has no memory starts its own store, and reads stay quiet
    const empty = clone(bareRemote().url);
    const none = await empty.mem(['list']);
    expect(none.stdout).toMatch(/^No memories\. Add one/);
    expect(none.stderr).toBe('');
    expect((await empty.memJson(['init'])).created).toBe(true);
  });

  it('with auto-fetch off, reads and doctor name git mem pull once git fetch brought memory; show of a remote-only id too', async () => {
    const { remote, id } = await teamRemote();
    const b = clone(remote.url);
    b.git('fetch', '-q', 'origin');
    b.git('config', 'mem.autoFetch', 'false');
    // nothing fetched yet, no network: the plain empty answer
    const before = await b.mem(['list']);
    expect(before.stderr).toBe('');
    expect(tipOf(b, 'refs/mem-remotes/origin/memory')).toBeNull();
    // after remote setup a plain git fetch brings the memory into refs/mem-remotes/origin/
    expect((await b.mem(['remote', 'setup'])).code).toBe(0);
    b.git('fetch', '-q', 'origin');
    expect(tipOf(b, 'refs/mem-remotes/origin/memory')).toBe(
      remote.git('rev-parse', 'refs/mem/memory').trim(),
    );
    const list = await b.mem(['list']);
    expect(list.stderr).toBe(
      'git-mem: origin has memory (refs/mem-remotes/origin/memory) and this clone has none yet: run git mem pull\n',
    );
    expect(tipOf(b)).toBeNull();
    const doctor = await b.mem(['doctor']);
    expect(doctor.stdout).toContain('fix: run git mem pull: origin has memory');
    expect(doctor.stdout).not.toContain('git mem init');
    const show = await b.mem(['show', id.slice(0, 12), '--json']);
    expect(show.code).toBe(3);
    expect(show.stderr.trim().split('\n')).toHaveLength(1);
    // the memory, the remote that has it and where (no data field holds them), and the fix
    const notYet = errorOf(show);
    expect(notYet).toMatchObject({ code: 'E_NOT_FOUND', hint: 'run git mem pull' });
    for (const named of [id.slice(0, 12), 'refs/mem-remotes/origin/memory'])
      expect(notYet.message).toContain(named);
    expect(tipOf(b)).toBeNull();
    // the one command it names
    expect((await b.mem(['pull'])).code).toBe(0);
    expect((await b.memJson(['show', id])).title).toBe('use pnpm');
    // deleted here: origin still has it, but a pull would not bring it back; show says what happened
    await b.memJson(['rm', id]);
    const gone = await b.mem(['show', id, '--json']);
    expect(gone.code).toBe(3);
    expect(gone.stderr).toMatch(/^git-mem: error: [^\n]*\n$/);
    // the memory and the remote that still has it (no data field holds them), and the commands that
    // show its versions and send the deletion (the hint)
    const deleted = errorOf(gone);
    expect(deleted).toMatchObject({
      code: 'E_NOT_FOUND',
      hint: `git mem history ${id.slice(0, 12)} shows its versions; git mem sync sends the deletion`,
    });
    for (const named of [id.slice(0, 12), 'origin']) expect(deleted.message).toContain(named);
  });

  it('an unreachable remote: one line naming git mem pull, then quiet; the read still answers', async () => {
    const b = makeRepo({ commit: true });
    b.git('remote', 'add', 'origin', join(b.dir, 'no-such-remote.git'));
    const first = await b.mem(['list']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^No memories/);
    expect(first.stderr).toMatch(
      /^git-mem: this clone has no memory yet and fetching origin's failed \(.*\); run git mem pull to try again\n$/,
    );
    const second = await b.mem(['list']);
    expect(second.stderr).toBe('');
  });
});

describe('the demo', () => {
  it('prints commands a shell reads back as they ran: backticks stay text', () => {
    const demo = spawnSync(process.execPath, [join(ROOT, 'scripts', 'demo.mjs')], { encoding: 'utf8' });
    expect(demo.status, demo.stderr).toBe(0);
    const lines = demo.stdout
      .split('\n')
      .filter((l) => l.startsWith('$ git mem ') && !l.includes('…'))
      .map((l) => l.slice(2));
    expect(lines.some((l) => l.includes('`'))).toBe(true);
    for (const line of lines) {
      // a git that prints its words, one per line; no PATH, so a command substitution would fail loudly
      const sh = spawnSync('/bin/sh', ['-c', `git() { for a; do printf '%s\\n' "$a"; done; }; ${line}`], {
        env: { PATH: '' },
        encoding: 'utf8',
      });
      expect(sh.stderr, line).toBe('');
      expect(sh.status, line).toBe(0);
      if (line.includes('pg_isready'))
        expect(sh.stdout).toContain('Postgres starts after the tests on CI: run `pg_isready -t 30` first.\n');
      if (line.includes('any')) expect(sh.stdout).toContain('No `any`; prefer unknown and narrow.\n');
    }
  }, 60_000);
});
