/**
 * Code anchors on a store: add --anchor / --symbol, check (moves, renames,
 * edits, deletions, symbols, scopes, the one commit a run records), reanchor,
 * the post-commit hook's count and the record cache — each command's run
 * function in-process on a template copy (test/support/template.ts). The pure
 * parts (line diff, relocation, symbols) are test/unit/anchors-relocate.test.ts.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from '../helpers.js';
import { freshRepo, storeOn } from '../support/anchors.js';
import { runOn, template } from '../support/template.js';

const SRC = [
  '// header',
  'export function alpha(x: number) {',
  '  const y = x * 2;',
  '  return y + 1;',
  '}',
  '',
  'export function beta() {',
  "  return 'b';",
  '}',
  '',
].join('\n');

/** README.md and src/m.ts committed, the store initialised. */
const M = template('anchors-m', { files: { 'src/m.ts': SRC } });
/** M with one memory, "alpha", anchored to src/m.ts:2-5 (its id: ids[0]). */
const ALPHA = template('anchors-alpha', {
  files: { 'src/m.ts': SRC },
  commands: [['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']],
});

describe('git mem add --anchor', () => {
  it('completes the anchor: blob, commit, hashes, text, context; keeps the blob reachable', async () => {
    const r = await freshRepo(M);
    const head = r.git('rev-parse', 'HEAD').trim();
    const { id } = await r.memJson([
      'add',
      '--title',
      'alpha doubles',
      '--content',
      'x',
      '--anchor',
      'src/m.ts:2-5',
    ]);
    const shown = await r.memJson(['show', id]);
    const a = shown.anchors[0];
    const blob = r.git('rev-parse', 'HEAD:src/m.ts').trim();
    expect(a).toMatchObject({
      path: 'src/m.ts',
      lines: [2, 5],
      commit: head,
      blob,
      text: SRC.split('\n').slice(1, 5).join('\n'),
    });
    expect(a.hash).toMatch(/^[0-9a-f]{32}$/);
    expect(a.wshash).toMatch(/^[0-9a-f]{32}$/);
    expect(a.before).toEqual(['// header']);
    expect(a.after).toEqual(['', 'export function beta() {', "  return 'b';"]);
    expect(r.git('ls-tree', '-r', 'refs/memory', '--', `anchors/${blob.slice(0, 2)}/${blob}`)).toContain(
      blob,
    );
  });
  it('refuses paths outside the repository and ranges outside the file, leaving the store as it was', async () => {
    const r = await freshRepo(M);
    const before = r.tip();
    const add = (anchor: string) => r.mem(['add', '--title', 't', '--content', 'x', '--anchor', anchor]);
    const esc = await add('../etc/passwd');
    expect(esc).toMatchObject({ code: 2, error: 'E_ANCHOR' });
    expect(esc.message).toContain('"../etc/passwd"');
    const range = await add('src/m.ts:5-99');
    expect(range).toMatchObject({ code: 2, error: 'E_ANCHOR' });
    // the range and the file's length, as data
    expect(range.message).toContain('5-99');
    expect(range.message).toContain('src/m.ts (9 lines)');
    const missing = await add('nope.ts');
    expect(missing).toMatchObject({ code: 2, error: 'E_ANCHOR' });
    expect(missing.message).toContain('"nope.ts"');
    // a file of a submodule (a repository inside this one) is another history's
    r.write('libs/sub/s.py', 'def s(): pass\n');
    r.git('-C', 'libs/sub', 'init', '-q');
    const sub = await add('libs/sub/s.py:1');
    expect(sub).toMatchObject({ code: 2, error: 'E_ANCHOR' });
    // names the anchor and the nested repository it is in
    expect(sub.message).toContain('"libs/sub/s.py"');
    expect(sub.message).toContain('inside libs/sub,');
    expect(sub.hint).toContain('cd libs/sub ');
    expect(r.tip()).toBe(before);
  });
  it('anchors uncommitted content, writes its blob and says so', async () => {
    const r = await freshRepo(M);
    r.write('src/new.py', 'def gamma():\n    return 3\n');
    const res = await r.mem(['add', '--title', 'gamma', '--content', 'x', '--symbol', 'src/new.py#gamma']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/uncommitted content of src\/new.py/);
    const id = /Added (\w+)/.exec(res.stdout)![1];
    const a = (await r.memJson(['show', id])).anchors[0];
    expect(a).toMatchObject({
      path: 'src/new.py',
      lines: [1, 2],
      worktree: true,
      symbol: 'gamma',
      sym: { lang: 'python', kind: 'function', qualified: 'gamma' },
    });
    expect(r.git('cat-file', '-t', a.blob).trim()).toBe('blob');
  });
  it('resolves a symbol without a path and refuses an unknown one', async () => {
    const r = await freshRepo(M);
    const { id } = await r.memJson(['add', '--title', 'beta', '--content', 'x', '--symbol', 'beta']);
    const a = (await r.memJson(['show', id])).anchors[0];
    expect(a).toMatchObject({ path: 'src/m.ts', lines: [7, 9], sym: { qualified: 'beta' } });
    const tip = r.tip();
    const bad = await r.mem(['add', '--title', 'x', '--content', 'x', '--symbol', 'src/m.ts#nothere']);
    expect(bad).toMatchObject({ code: 2, error: 'E_ANCHOR' });
    expect(bad.message).toContain('"nothere" in src/m.ts');
    expect(r.tip()).toBe(tip);
  });
});

describe('git mem check', () => {
  it('moves an anchor when lines are inserted above, and records it', async () => {
    const r = await freshRepo(ALPHA);
    const id = r.ids[0];
    r.write('src/m.ts', `// one\n// two\n${SRC}`);
    r.commitAll('insert above');
    const rep = await r.memJson(['check']);
    expect(rep.counts.moved).toBe(1);
    expect(rep.results[0]).toMatchObject({ id, status: 'moved', to: { path: 'src/m.ts', lines: [4, 7] } });
    const a = (await r.memJson(['show', id])).anchors[0];
    expect(a.lines).toEqual([2, 5]); // original never overwritten
    expect(a.current).toMatchObject({ path: 'src/m.ts', lines: [4, 7] });
    expect(a.verdict.status).toBe('moved');
    // a second check has nothing new to record
    const again = await r.memJson(['check']);
    expect(again.recorded).toBe(false);
    expect(again.counts.fresh).toBe(1);
  });
  it('marks a memory stale when its anchored lines are edited, and active again when restored', async () => {
    const r = await freshRepo(ALPHA);
    const id = r.ids[0];
    r.write('src/m.ts', SRC.replace('x * 2', 'x * 3'));
    r.commitAll('edit');
    const rep = await r.memJson(['check']);
    expect(rep.results[0]).toMatchObject({ status: 'changed', stale: true });
    expect(rep.changes).toEqual([expect.objectContaining({ id, from: 'active', to: 'stale' })]);
    const shown = await r.memJson(['show', id]);
    expect(shown.status).toBe('stale');
    expect(shown.extra.stale_reasons[0]).toMatch(/src\/m.ts:2-5: changed: anchored lines edited/);
    const stale = await r.memJson(['stale']);
    expect(stale.map((s: { id: string }) => s.id)).toEqual([id]);
    // checked again with the file as it was judged: still stale, decided from the index, nothing recorded
    const again = await r.memJson(['check']);
    expect(again.recorded).toBe(false);
    expect(again.results[0]).toMatchObject({
      status: 'changed',
      reason: expect.stringMatching(/unchanged since the last check/),
    });
    r.write('src/m.ts', `// new top\n${SRC}`);
    r.commitAll('restore (and shift)');
    const back = await r.memJson(['check']);
    expect(back.results[0]).toMatchObject({ status: 'moved', to: { lines: [3, 6] } });
    const after = await r.memJson(['show', id]);
    expect(after.status).toBe('active');
    expect(after.extra.stale_reasons).toBeUndefined();
  });
  it('follows a rename and reports a deletion', async () => {
    const r = await freshRepo(ALPHA);
    const id = r.ids[0];
    r.git('mv', 'src/m.ts', 'src/main.ts');
    r.commitAll('rename');
    const rep = await r.memJson(['check']);
    expect(rep.results[0]).toMatchObject({
      id,
      status: 'renamed',
      to: { path: 'src/main.ts', lines: [2, 5] },
    });
    // the memory is about the file where its code is now: listed, searched and ranked there
    const at = async (f: string) =>
      (await r.memJson(['list', '--scope-file', f])).map((m: { id: string }) => m.id);
    expect(await at('src/main.ts')).toEqual([id]);
    expect(await at('src/m.ts')).toEqual([]);
    expect((await r.memJson(['list']))[0].anchors).toEqual(['src/main.ts']);
    const hits = await r.memJson(['search', '--file', 'src/main.ts', 'alpha']);
    expect(hits[0]).toMatchObject({ id });
    expect(hits[0].why).toContain('anchored to src/main.ts');
    r.git('rm', '-q', 'src/main.ts');
    r.commitAll('delete');
    const del = await r.memJson(['check']);
    expect(del.results[0]).toMatchObject({ status: 'deleted', stale: true });
  });
  it('reports symbol renames and removals, and --dry-run records nothing', async () => {
    const r = await freshRepo(M);
    const { id } = await r.memJson(['add', '--title', 'beta', '--content', 'x', '--symbol', 'src/m.ts#beta']);
    r.write('src/m.ts', SRC.replace('function beta', 'function betaRenamed'));
    r.commitAll('rename symbol');
    const tip = r.tip();
    const dry = await r.memJson(['check', '--dry-run']);
    expect(dry.results[0]).toMatchObject({ id, status: 'symbol_renamed', to: { symbol: 'betaRenamed' } });
    expect(r.tip()).toBe(tip);
    r.write('src/m.ts', SRC.split('export function beta')[0]);
    r.commitAll('remove symbol');
    const rm = await r.memJson(['check']);
    expect(rm.results[0]).toMatchObject({ status: 'symbol_removed' });
    expect((await r.memJson(['show', id])).status).toBe('stale');
  });
  it('completes anchors stored as given by git mem import', async () => {
    const r = await freshRepo(M);
    const line = JSON.stringify({
      title: 'imported',
      body: 'b',
      anchors: [{ path: 'src/m.ts', lines: [7, 9] }],
    });
    r.write('in.jsonl', `${line}\n`);
    await r.memJson(['import', '--jsonl', 'in.jsonl']);
    const rep = await r.memJson(['check']);
    expect(rep.results[0]).toMatchObject({
      status: 'fresh',
      reason: expect.stringMatching(/anchor completed/),
    });
    const id = rep.results[0].id;
    const a = (await r.memJson(['show', id])).anchors[0];
    expect(a.blob).toBe(r.git('rev-parse', 'HEAD:src/m.ts').trim());
    expect(a.text).toBe("export function beta() {\n  return 'b';\n}");
  });
  it('reanchor makes a stale memory active at the new code', async () => {
    const r = await freshRepo(ALPHA);
    const id = r.ids[0];
    r.write('src/m.ts', SRC.replace('x * 2', 'x * 3'));
    r.commitAll('edit');
    await r.memJson(['check']);
    const re = await r.memJson(['reanchor', id]);
    expect(re.status).toBe('active');
    expect(re.anchors[0]).toMatchObject({
      path: 'src/m.ts',
      lines: [2, 5],
      text: expect.stringContaining('x * 3'),
      reanchored: { from: { lines: [2, 5] } },
    });
    const rep = await r.memJson(['check']);
    expect(rep.counts.fresh).toBe(1);
    expect(await r.memJson(['stale'])).toEqual([]);
    // again, with nothing moved since: already so; where the code was before stays recorded
    const from = re.anchors[0].reanchored.from;
    expect(from.commit).toBeTruthy();
    r.write('README.md', 'other\n');
    r.commitAll('unrelated');
    const tip = r.tip();
    const again = await r.memJson(['reanchor', id]);
    expect(again).toMatchObject({ unchanged: true, commit: null });
    expect(r.tip()).toBe(tip);
    expect((await r.memJson(['show', id])).anchors[0].reanchored.from).toEqual(from);
    // the human view says nothing changed
    expect((await r.mem(['reanchor', id])).stdout).toMatch(
      /is already anchored where its code is: nothing changed/,
    );
  });
});

describe('git mem check: scopes', () => {
  it('--worktree reports against uncommitted edits and records nothing; --since limits to changed files', async () => {
    const r = await freshRepo(M);
    r.write('src/other.ts', 'export const k = 1;\nexport const j = 2;\n');
    r.commitAll('other');
    const a = await r.memJson(['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']);
    const b = await r.memJson(['add', '--title', 'k', '--content', 'x', '--anchor', 'src/other.ts:1']);
    const tip = r.tip();
    r.write('src/m.ts', SRC.replace('x * 2', 'x * 5'));
    const wt = await r.memJson(['check', '--worktree']);
    expect(wt.target).toBe('worktree');
    expect(wt.results).toEqual([expect.objectContaining({ id: a.id, status: 'changed' })]);
    expect(wt.counts).toMatchObject({ fresh: 1, changed: 1 });
    expect(wt.recorded).toBe(false);
    expect(r.tip()).toBe(tip);
    // committed: --since the previous commit only checks src/m.ts's anchor
    r.commitAll('edit m');
    r.write('src/other.ts', 'export const k = 100;\nexport const j = 2;\n');
    const since = await r.memJson(['check', '--since', 'HEAD~1', '--dry-run']);
    expect(since.checked).toBe(1);
    expect(since.results[0]).toMatchObject({ id: a.id, status: 'changed' });
    const one = await r.memJson(['check', b.id, '--dry-run']);
    expect(one).toMatchObject({ checked: 1, counts: { fresh: 1 } });
    const bad = await r.mem(['check', '--since', 'no-such-rev']);
    expect(bad).toMatchObject({ code: 2, error: 'E_REV' });
    expect(bad.message).toContain('"no-such-rev"');
    expect(r.tip()).toBe(tip);
  });
});

describe('anchor paths and repositories without commits', () => {
  it('resolves --anchor relative to the current directory', async () => {
    const r = await freshRepo(M);
    const res = await runOn(r, ['add', '--title', 'from src', '--content', 'x', '--anchor', 'm.ts:2-5'], {
      cwd: join(r.dir, 'src'),
    });
    expect(res.exit).toBe(0);
    const a = (await r.memJson(['show', res.json.id])).anchors[0];
    expect(a).toMatchObject({ path: 'src/m.ts', lines: [2, 5] });
  });
  it('anchors a file in a repository with no commit yet, then follows it once committed and shifted', async () => {
    const repo = makeRepo();
    repo.write('a.py', 'def f():\n    return 1\n');
    const r = await storeOn(repo);
    await r.memJson(['init']);
    const add = await r.mem(['add', '--title', 'f', '--content', 'x', '--anchor', 'a.py:1-2']);
    expect(add.code).toBe(0);
    expect(add.stdout).toMatch(/uncommitted content of a.py/);
    r.write('a.py', '# top\ndef f():\n    return 1\n');
    r.commitAll('first');
    const rep = await r.memJson(['check']);
    expect(rep.results[0]).toMatchObject({ status: 'moved', to: { path: 'a.py', lines: [2, 3] } });
  });
});

describe('git mem check records in one memory commit', () => {
  it('writes every verdict of a run in a single commit on refs/memory', async () => {
    const r = await freshRepo(ALPHA);
    const a = { id: r.ids[0] };
    const b = await r.memJson(['add', '--title', 'beta', '--content', 'x', '--anchor', 'src/m.ts:7-9']);
    const c = await r.memJson(['add', '--title', 'readme', '--content', 'x', '--anchor', 'README.md']);
    const before = r.git('rev-list', '--count', 'refs/memory').trim();
    r.write('src/m.ts', `// new\n${SRC.replace("return 'b'", "return 'B'")}`);
    r.write('README.md', '# changed\n');
    r.commitAll('several');
    const rep = await r.memJson(['check']);
    expect(rep.recorded).toBe(true);
    expect(Number(r.git('rev-list', '--count', 'refs/memory').trim())).toBe(Number(before) + 1);
    const byId = Object.fromEntries(rep.results.map((x: { id: string; status: string }) => [x.id, x.status]));
    expect(byId).toEqual({ [a.id]: 'moved', [b.id]: 'changed', [c.id]: 'changed' });
    expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(
      /^mem: check [0-9a-f]{12}: 3 records updated \(2 went stale, 1 moved\)/,
    );
  });

  it('the post-commit commit counts the memories that went stale, as the hook line does', async () => {
    const r = await freshRepo(M);
    // one memory with two anchors that both go stale, one already stale, one that only moves
    const two = ['--anchor', 'src/m.ts:2-3', '--anchor', 'src/m.ts:7-8'];
    await r.memJson(['add', '--title', 'alpha and beta', '--content', 'x', ...two]);
    await r.memJson(['add', '--title', 'readme', '--content', 'x', '--anchor', 'README.md']);
    r.write('README.md', '# changed\n');
    r.commitAll('readme');
    await r.memJson(['check']);
    r.write('src/m.ts', `// new\n${SRC}`);
    r.commitAll('shift');
    await r.memJson(['check']);
    await r.memJson(['add', '--title', 'tail', '--content', 'x', '--anchor', 'src/m.ts:10-10']);
    r.write('src/m.ts', `// new\n// two\n${SRC.replace('x * 2', 'x * 3').replace("'b'", "'B'")}`);
    r.write('README.md', '# changed again\n');
    r.commitAll('edit alpha and beta');
    // the hook's line is its product: what the committer reads
    expect(await r.hook('post-commit')).toBe(
      'git-mem: 1 memory went stale with this commit (git mem stale; git log --notes=memory)\n',
    );
    expect(r.git('log', '-1', '--format=%s', 'refs/memory').trim()).toMatch(
      /^mem: post-commit [0-9a-f]{12}: \d records? updated \(1 went stale, 1 moved\)$/,
    );
  });
});

describe('record cache', () => {
  it('reuses parsed records by blob id and ignores a damaged cache entry', async () => {
    const r = await freshRepo(ALPHA);
    const id = r.ids[0];
    r.write('src/m.ts', `${SRC}// tail\n`);
    r.commitAll('edit elsewhere');
    const first = await r.memJson(['check', '--dry-run']);
    expect(first.results[0]).toMatchObject({ id, status: 'fresh', reason: 'anchored lines unchanged' });
    const dir = join(r.dir, '.git', 'mem', 'cache', 'records');
    const files = readdirSync(dir, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.json'));
    expect(files).toHaveLength(1);
    writeFileSync(join(dir, files[0]), JSON.stringify({ id: 'SOMETHING-ELSE', anchors: [] }));
    // a second store, as a new process: it knows only what is on disk
    const again = await (await storeOn(r)).memJson(['check', '--dry-run']);
    expect(again.results[0]).toMatchObject({ id, status: 'fresh', reason: 'anchored lines unchanged' });
  });

  it('does not cache the old version of a record the check rewrites', async () => {
    const r = await freshRepo(ALPHA);
    const before = r.tip();
    r.write('src/m.ts', `// moved down\n${SRC}`);
    r.commitAll('shift');
    const rep = await r.memJson(['check']);
    expect(rep).toMatchObject({ recorded: true, counts: { moved: 1 } });
    const oldOid = r.git('ls-tree', '-r', before, 'memories').split(/\s+/)[2];
    const dir = join(r.dir, '.git', 'mem', 'cache', 'records');
    const files = existsSync(dir) ? readdirSync(dir, { recursive: true }).map(String) : [];
    expect(files.filter((f) => f.includes(oldOid))).toEqual([]);
  });
});
