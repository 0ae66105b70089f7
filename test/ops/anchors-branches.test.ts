/**
 * The shared record follows the default branch: on any other branch the
 * post-commit hook and `check` give the verdicts of that commit (a note, the
 * report) and never move or mark the record; the change reaches the record
 * once, when it reaches the default branch. Each command and hook runs
 * in-process on a template copy's store (test/support/anchors.ts): a hook's
 * operation is run where git would run the installed hook. That git runs the
 * installed hooks (post-commit, post-merge, post-rewrite) is
 * test/system/anchors-branches-hooks.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { defaultBranch } from '../../src/anchors/branch.js';
import { makeRepo } from '../helpers.js';
import { type AnchorRepo, freshRepo, notesOf as notes, FN_SRC as SRC, storeOn } from '../support/anchors.js';
import { template } from '../support/template.js';
import { bareRemote, tipOf } from '../sync-helpers.js';

type Case = {
  name: 'rename' | 'move' | 'edit' | 'delete';
  change: (r: AnchorRepo) => void;
  status: string;
  to: unknown;
  stale: boolean;
  merge: 'ff' | 'no-ff';
  /** the record moves by the post-merge hook, or (hooks uninstalled) by a check after the merge */
  by: 'hook' | 'check';
};

const CASES: Case[] = [
  {
    name: 'rename',
    change: (r) => r.git('mv', 'f.js', 'g.js'),
    status: 'renamed',
    to: { path: 'g.js', lines: [5, 10] },
    stale: false,
    merge: 'no-ff',
    by: 'hook',
  },
  {
    name: 'move',
    change: (r) => r.write('f.js', `// one\n// two\n// three\n${SRC}`),
    status: 'moved',
    to: { path: 'f.js', lines: [8, 13] },
    stale: false,
    merge: 'ff',
    by: 'check',
  },
  {
    name: 'edit',
    change: (r) => r.write('f.js', SRC.replace('return x * 7 +', 'return x * 70 +')),
    status: 'changed',
    to: { path: 'f.js', lines: [5, 10] },
    stale: true,
    merge: 'ff',
    by: 'hook',
  },
  {
    name: 'delete',
    change: (r) => r.git('rm', '-q', 'f.js'),
    status: 'deleted',
    to: null,
    stale: true,
    merge: 'no-ff',
    by: 'check',
  },
];

/** main with f.js and other.txt, a memory anchored to f.js:5-10 (its id: ids[0]). */
const ANCHORED = template('anchors-branches', {
  files: { 'f.js': SRC, 'other.txt': 'x\n' },
  commands: [['add', '--title', 'fn5 to fn10', '--content', 'x', '--anchor', 'f.js:5-10']],
});

async function anchoredRepo(): Promise<{ r: AnchorRepo; id: string }> {
  const r = await freshRepo(ANCHORED);
  return { r, id: r.ids[0] };
}

/** A teammate's clone of the remote's main (origin/HEAD names main), its store open in-process. */
async function teammate(url: string): Promise<AnchorRepo> {
  const repo = makeRepo();
  repo.git('remote', 'add', 'origin', url);
  repo.git('fetch', '-q', 'origin');
  repo.git('checkout', '-q', '-B', 'main', 'origin/main');
  repo.git('remote', 'set-head', 'origin', 'main');
  const b = await storeOn(repo);
  await b.memJson(['sync']);
  return b;
}

describe('the record follows the default branch', () => {
  for (const c of CASES) {
    it(`${c.name} on a feature branch: noted and reported there, recorded once merged (${c.merge}, by ${c.by})`, async () => {
      const { r, id } = await anchoredRepo();
      const tip0 = r.tip();

      // the feature branch: the hook notes the commit's verdict, the shared record is untouched
      r.git('checkout', '-q', '-b', 'feature');
      c.change(r);
      const featureCommit = r.commitAll(`${c.name} on feature`);
      await r.hook('post-commit');
      expect(r.tip()).toBe(tip0);
      expect(notes(r)).toEqual([expect.objectContaining({ id, verdict: c.status, to: c.to })]);
      const onFeature = await r.memJson(['check']);
      expect(onFeature).toMatchObject({
        target: featureCommit,
        recorded: false,
        branch: { name: 'main', shared: false },
      });
      expect(onFeature.results).toEqual([
        expect.objectContaining({ id, status: c.status, to: c.to, stale: c.stale }),
      ]);
      expect(onFeature.counts[c.status]).toBe(1);
      // the human report is the product here: what the committer reads on the feature branch
      const human = await r.mem(['check']);
      expect(human.code).toBe(0);
      expect(human.stdout).toContain(`${c.status.padEnd(14)} ${id.slice(0, 12)} f.js:5-10`);
      expect(human.stdout).toMatch(
        /^Nothing recorded: the shared record follows main, and \w{12} is not its tip/m,
      );
      if (c.stale)
        expect(human.stdout).toContain(`${id.slice(0, 12)} active → stale at this commit "fn5 to fn10"`);
      else expect(human.stdout).not.toContain('→ stale');
      expect(r.tip()).toBe(tip0);
      // `stale` shows what is stale at this HEAD, not the shared record's view
      const staleHere = await r.memJson(['stale']);
      if (c.stale)
        expect(staleHere).toEqual([
          expect.objectContaining({
            id,
            at: featureCommit,
            anchors: [expect.objectContaining({ status: c.status })],
          }),
        ]);
      else expect(staleHere).toEqual([]);
      expect(r.tip()).toBe(tip0);

      // back on main: fresh, and nothing moves back (no flip-flop); again on feature: the same
      r.git('checkout', '-q', 'main');
      const onMain = await r.memJson(['check', '--verbose']);
      expect(onMain).toMatchObject({ recorded: false, branch: { name: 'main', shared: true } });
      expect(onMain.results).toEqual([expect.objectContaining({ id, status: 'fresh', stale: false })]);
      r.git('checkout', '-q', 'feature');
      expect((await r.memJson(['check'])).results[0].status).toBe(c.status);
      r.git('checkout', '-q', 'main');
      expect(r.tip()).toBe(tip0);
      expect((await r.memJson(['show', id])).status).toBe('active');

      // the pull request: what it does to the anchor as it stands at the merge base
      const pr = await r.mem(['ci', '--base', 'main', '--head', 'feature', '--format', 'json']);
      expect(pr.code).toBe(c.stale ? 1 : 0);
      const items = JSON.parse(pr.stdout).items;
      expect(items).toEqual([
        expect.objectContaining({
          id,
          status: c.status,
          stale: c.stale,
          from: { path: 'f.js', lines: [5, 10] },
          to: c.to,
        }),
      ]);
      expect(r.tip()).toBe(tip0);

      // merged into main: the record moves (or is marked) once, by the post-merge hook or a check
      if (c.merge === 'ff') r.git('merge', '-q', '--ff-only', 'feature');
      else r.git('merge', '-q', '--no-ff', '-m', 'merge feature', 'feature');
      if (c.by === 'hook') await r.hook('post-merge', '0');
      else {
        expect(r.tip()).toBe(tip0);
        const rep = await r.memJson(['check']);
        expect(rep).toMatchObject({ recorded: true, branch: { name: 'main', shared: true } });
      }
      expect(r.git('rev-list', '--count', `${tip0}..refs/memory`).trim()).toBe('1');
      expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(
        c.by === 'hook'
          ? /^mem: post-merge \w{12}: 1 record updated/
          : /^mem: check \w{12}: 1 record updated/,
      );
      const rec = await r.memJson(['show', id]);
      expect(rec.status).toBe(c.stale ? 'stale' : 'active');
      if (c.stale) expect(rec.anchors[0].verdict).toMatchObject({ status: c.status });
      else expect(rec.anchors[0].current).toMatchObject(c.to as object);
      // once: checking again, on main or on the feature branch, writes nothing
      const once = r.tip();
      expect((await r.memJson(['check'])).recorded).toBe(false);
      r.git('checkout', '-q', 'feature');
      expect((await r.memJson(['check'])).recorded).toBe(false);
      expect(r.tip()).toBe(once);
    });
  }

  it('mem.defaultBranch names the branch the record follows (here: feature, so main only reports)', async () => {
    const { r, id } = await anchoredRepo();
    const tip0 = r.tip();
    r.git('config', 'mem.defaultBranch', 'feature');
    r.reread();
    r.git('checkout', '-q', '-b', 'feature');
    r.git('mv', 'f.js', 'g.js');
    r.commitAll('rename on feature');
    // the hook of the default branch records, as before
    await r.hook('post-commit');
    expect(r.git('rev-list', '--count', `${tip0}..refs/memory`).trim()).toBe('1');
    expect((await r.memJson(['show', id])).anchors[0].current).toMatchObject({
      path: 'g.js',
      lines: [5, 10],
    });
    const tip1 = r.tip();
    // main is another branch now: its commits and checks leave the record alone
    r.git('checkout', '-q', 'main');
    r.write('f.js', SRC.replace('return x * 7 +', 'return x * 70 +'));
    r.commitAll('edit on main');
    // (the hook of main finds no anchor there: the record has it at g.js, which main does not touch)
    await r.hook('post-commit');
    expect(r.tip()).toBe(tip1);
    const rep = await r.memJson(['check']);
    expect(rep).toMatchObject({ recorded: false, branch: { name: 'feature', shared: false } });
    expect(rep.results).toEqual([expect.objectContaining({ id, stale: true })]);
    expect(r.tip()).toBe(tip1);
  });

  it('a detached HEAD records only at the default branch tip', async () => {
    const { r, id } = await anchoredRepo();
    r.git('checkout', '-q', '-b', 'feature');
    r.git('rm', '-q', 'f.js');
    const gone = r.commitAll('delete');
    const tip0 = r.tip();
    r.git('checkout', '-q', '--detach', gone);
    expect(await r.memJson(['check'])).toMatchObject({ recorded: false, branch: { shared: false } });
    expect(r.tip()).toBe(tip0);
    // detached at the default branch's tip: that commit is the default branch's, so it records
    r.git('checkout', '-q', 'main');
    r.write('f.js', SRC.replace('return x * 7 +', 'return x * 70 +'));
    r.commitAll('edit on main');
    r.git('checkout', '-q', '--detach', 'main');
    const rep = await r.memJson(['check']);
    expect(rep).toMatchObject({ recorded: true, branch: { name: 'main', shared: true } });
    expect((await r.memJson(['show', id])).status).toBe('stale');
  });
});

describe('two clones', () => {
  it("a teammate's check and sync on a feature branch change nothing shared; the PR check reports it", async () => {
    const remote = bareRemote();
    const { r: a, id } = await anchoredRepo();
    a.git('remote', 'add', 'origin', remote.url);
    a.git('push', '-q', 'origin', 'main');
    await a.memJson(['sync']);
    const shared0 = remote.git('rev-parse', 'refs/mem/memory').trim();

    // the teammate: a clone of main (origin/HEAD names main); its post-commit hook runs after each commit
    const b = await teammate(remote.url);
    expect(tipOf(b)).toBe(shared0);
    b.git('checkout', '-q', '-b', 'feature');
    b.git('mv', 'f.js', 'g.js');
    b.write('g.js', SRC.replace('return x * 7 +', 'return x * 70 +'));
    b.commitAll('rename and edit');
    await b.hook('post-commit');
    expect(notes(b)).toEqual([expect.objectContaining({ id, verdict: 'changed' })]);
    expect(await b.memJson(['check'])).toMatchObject({
      recorded: false,
      branch: { name: 'main', shared: false },
    });
    await b.memJson(['sync']);
    b.git('push', '-q', 'origin', 'feature');
    expect(remote.git('rev-parse', 'refs/mem/memory').trim()).toBe(shared0);

    // the first clone, still on main: fresh, nothing to record, nothing new from the sync
    await a.memJson(['sync']);
    expect(tipOf(a)).toBe(shared0);
    const onMain = await a.memJson(['check', '--verbose']);
    expect(onMain.results).toEqual([expect.objectContaining({ id, status: 'fresh' })]);
    expect(tipOf(a)).toBe(shared0);
    // and the pull request, judged from the merge base
    a.git('fetch', '-q', 'origin');
    const pr = await a.mem(['ci', '--base', 'main', '--head', 'origin/feature', '--format', 'json']);
    expect(pr.code).toBe(1);
    expect(JSON.parse(pr.stdout).items).toEqual([
      expect.objectContaining({ id, status: 'changed', stale: true, from: { path: 'f.js', lines: [5, 10] } }),
    ]);
  });
});

describe('a checkout behind the record', () => {
  it("a local main behind origin's never moves the record back; once pulled, it agrees", async () => {
    const remote = bareRemote();
    const { r: a, id } = await anchoredRepo();
    a.git('remote', 'add', 'origin', remote.url);
    a.git('push', '-q', 'origin', 'main');
    await a.memJson(['sync']);
    // the teammate clones main as it is now
    const b = await teammate(remote.url);
    // on main, the first clone renames the file; its check moves the record, and both are pushed
    a.git('mv', 'f.js', 'g.js');
    a.commitAll('rename');
    expect(await a.memJson(['check'])).toMatchObject({ recorded: true });
    a.git('push', '-q', 'origin', 'main');
    await a.memJson(['sync']);
    const moved = a.tip();
    // the teammate syncs memory but not code: main there still has f.js
    await b.memJson(['sync']);
    expect(tipOf(b)).toBe(moved);
    const behind = await b.memJson(['check']);
    expect(behind).toMatchObject({ recorded: false, newer: 1 });
    expect(behind.results).toEqual([expect.objectContaining({ id, newer: true })]);
    expect(tipOf(b)).toBe(moved); // the record still says g.js
    // the human report says why nothing was recorded, and what to do
    const human = await b.mem(['check']);
    expect(human.stdout).toMatch(/1 anchor was confirmed at a commit .* does not contain .*git pull/);
    // pulled: the record and the checkout agree, nothing to write
    b.git('pull', '-q', '--ff-only', 'origin', 'main');
    const after = await b.memJson(['check', '--verbose']);
    expect(after.newer).toBe(0);
    expect(after.results).toEqual([expect.objectContaining({ id, status: 'fresh', path: 'g.js' })]);
    expect(tipOf(b)).toBe(moved);
  });

  it('reanchor on a feature branch is refused (the record follows main), and allowed with --any-branch', async () => {
    const { r, id } = await anchoredRepo();
    const tip0 = r.tip();
    r.git('checkout', '-q', '-b', 'feature');
    r.write('f.js', `// one\n${SRC}`);
    r.commitAll('shift');
    const refused = await r.mem(['reanchor', id]);
    expect(refused).toMatchObject({ code: 2, error: 'E_ANCHOR' });
    // one line, naming the branch the record follows
    expect(refused.message).not.toContain('\n');
    expect(refused.message).toMatch(/\bmain\b/);
    // and the flag that does it anyway
    expect(refused.hint).toContain('--any-branch');
    expect(r.tip()).toBe(tip0);
    const forced = await r.memJson(['reanchor', id, '--anchor', 'f.js:6-11', '--any-branch']);
    expect(forced.anchors[0]).toMatchObject({ path: 'f.js', lines: [6, 11] });
    expect(r.tip()).not.toBe(tip0);
  });
});

describe('git mem ci judges from the merge base, whatever the record says', () => {
  it('a record already moved to the feature branch (an older git-mem, a reanchor there) still shows the rename and the edit', async () => {
    const { r, id } = await anchoredRepo();
    const { id: id2 } = await r.memJson(['add', '--title', 'fn1', '--content', 'x', '--anchor', 'f.js:1-2']);
    r.git('checkout', '-q', '-b', 'feature');
    r.git('mv', 'f.js', 'g.js');
    r.write('g.js', SRC.replace('return x * 1 +', 'return x * 10 +'));
    r.commitAll('rename, edit fn1');
    // as the old behaviour did: record the feature branch's verdicts
    r.git('config', 'mem.default-branch', 'feature');
    r.reread();
    expect((await r.memJson(['check'])).recorded).toBe(true);
    r.git('config', '--unset', 'mem.default-branch');
    r.reread();
    expect((await r.memJson(['show', id])).anchors[0].current).toMatchObject({ path: 'g.js' });
    expect((await r.memJson(['show', id2])).status).toBe('stale');
    // the record says g.js (and stale for fn1) at the feature's head; the PR still renames and edits
    const pr = await r.mem(['ci', '--base', 'main', '--head', 'feature', '--format', 'json']);
    const items = JSON.parse(pr.stdout).items;
    expect(items).toHaveLength(2);
    expect(items.find((i: { id: string }) => i.id === id)).toMatchObject({
      status: 'renamed',
      from: { path: 'f.js', lines: [5, 10] },
      to: { path: 'g.js', lines: [5, 10] },
    });
    expect(items.find((i: { id: string }) => i.id === id2)).toMatchObject({ status: 'changed', stale: true });
    expect(pr.code).toBe(1);

    // reanchored on the feature branch (refused unless asked for: --any-branch): the anchor is made at
    // g.js there; the PR still renames it
    const r2 = (await anchoredRepo()).r;
    const mem2 = (await r2.memJson(['list'])).map((m: { id: string }) => m.id)[0];
    r2.git('checkout', '-q', '-b', 'feature');
    r2.git('mv', 'f.js', 'g.js');
    r2.commitAll('rename');
    await r2.memJson(['reanchor', mem2, '--anchor', 'g.js:5-10', '--any-branch']);
    const pr2 = JSON.parse(
      (await r2.mem(['ci', '--base', 'main', '--head', 'feature', '--format', 'json'])).stdout,
    );
    expect(pr2.items).toEqual([
      expect.objectContaining({ id: mem2, status: 'renamed', to: { path: 'g.js', lines: [5, 10] } }),
    ]);
  });

  it('an anchor moved on the base branch after the record was made is judged from where it is at the merge base', async () => {
    const { r, id } = await anchoredRepo();
    // main moves the text down (no check records it), then the feature edits it there
    r.write('f.js', `// a\n// b\n${SRC}`);
    r.commitAll('shift on main');
    r.git('checkout', '-q', '-b', 'feature');
    r.write('f.js', `// a\n// b\n${SRC.replace('return x * 7 +', 'return x * 70 +')}`);
    r.commitAll('edit');
    const pr = JSON.parse(
      (await r.mem(['ci', '--base', 'main', '--head', 'feature', '--format', 'json'])).stdout,
    );
    expect(pr.items).toEqual([
      expect.objectContaining({ id, status: 'changed', from: { path: 'f.js', lines: [7, 12] } }),
    ]);
    // a PR that only touches another part of that file leaves the anchor fresh where it is
    r.git('checkout', '-q', '-b', 'other', 'main');
    r.write('f.js', `// a\n// b\n${SRC}// end\n`);
    r.commitAll('append');
    const ok = await r.mem(['ci', '--base', 'main', '--head', 'other', '--format', 'json']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout).items).toEqual([expect.objectContaining({ id, status: 'fresh' })]);
  });
});

describe('the default branch', () => {
  it('is the setting, else origin/HEAD, else init.defaultBranch, else main or master', async () => {
    const r = await storeOn(makeRepo({ commit: true }));
    // each answer as a new process would find it: the git configuration read afresh
    const resolved = async () => {
      r.reread();
      const b = await defaultBranch(r.store);
      return { name: b.name, source: b.source, tip: b.tip };
    };
    const main = r.git('rev-parse', 'HEAD').trim();
    // isolatedEnv sets init.defaultBranch = main
    expect(await resolved()).toEqual({ name: 'main', source: 'init', tip: main });
    r.git('checkout', '-q', '-b', 'trunk');
    r.write('t.txt', 't\n');
    const trunk = r.commitAll('trunk');
    // init.defaultBranch names a branch that does not exist: main or master, whichever exists
    r.git('config', 'init.defaultBranch', 'nope');
    expect(await resolved()).toEqual({ name: 'main', source: 'guess', tip: main });
    r.git('branch', '-m', 'main', 'master');
    expect(await resolved()).toEqual({ name: 'master', source: 'guess', tip: main });
    r.git('branch', '-D', 'master');
    expect(await resolved()).toEqual({ name: 'nope', source: 'guess', tip: null });
    // the remote's HEAD (a remote-tracking branch is enough)
    r.git('update-ref', 'refs/remotes/origin/trunk', trunk);
    r.git('symbolic-ref', 'refs/remotes/origin/HEAD', 'refs/remotes/origin/trunk');
    expect(await resolved()).toEqual({ name: 'trunk', source: 'origin', tip: trunk });
    // the setting, as git config mem.defaultBranch or mem.default-branch, or shared
    r.git('branch', 'dev', main);
    r.git('config', 'mem.defaultBranch', 'dev');
    expect(await resolved()).toEqual({ name: 'dev', source: 'setting', tip: main });
    r.git('config', '--unset', 'mem.defaultBranch');
    await r.memJson(['init']);
    await r.memJson(['config', 'set', 'default-branch', 'refs/heads/dev', '--shared']);
    expect(await resolved()).toEqual({ name: 'dev', source: 'setting', tip: main });
    await r.memJson(['config', 'set', 'default-branch', 'trunk', '--local']);
    expect(await resolved()).toEqual({ name: 'trunk', source: 'setting', tip: trunk });
  });
});
