import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffLines, mapRange } from '../src/anchors/diff.js';
import { gate, relocate } from '../src/anchors/relocate.js';
import { extractSymbols } from '../src/anchors/symbols.js';
import { hashLines, wsHash } from '../src/anchors/text.js';
import { makeRepo } from './helpers.js';

const lines = (n: number, p = 'line') => Array.from({ length: n }, (_, i) => `${p} ${i + 1}`);
const reloc = (oldLines: string[], newLines: string[], start: number, end: number) => {
  const needle = oldLines.slice(start - 1, end);
  return relocate({
    oldLines,
    newLines,
    start,
    end,
    hash: hashLines(needle),
    wshash: wsHash(needle),
    before: oldLines.slice(Math.max(0, start - 4), start - 1),
    after: oldLines.slice(end, end + 3),
  });
};

describe('line diff and range mapping', () => {
  it('maps a range shifted by lines inserted and removed above it', () => {
    const a = lines(20);
    const b = ['new 1', 'new 2', ...a.slice(0, 3), ...a.slice(5)];
    const d = diffLines(a, b);
    expect(mapRange(d, 10, 12)).toEqual({ start: 10, end: 12, intact: true });
    expect(mapRange(d, 4, 6).intact).toBe(false);
  });
  it('marks a range with an inserted line inside as not intact', () => {
    const a = lines(10);
    const b = [...a.slice(0, 5), 'inserted', ...a.slice(5)];
    expect(mapRange(diffLines(a, b), 4, 7).intact).toBe(false);
    expect(mapRange(diffLines(a, b), 1, 3)).toEqual({ start: 1, end: 3, intact: true });
    expect(mapRange(diffLines(a, b), 8, 10)).toEqual({ start: 9, end: 11, intact: true });
  });
});

describe('relocate', () => {
  const file = [
    'import x',
    '',
    'function a() {',
    '  return 1;',
    '}',
    '',
    'function b() {',
    '  return 2;',
    '}',
    '',
  ];
  it('follows a block moved below another one', () => {
    const moved = [
      'import x',
      '',
      'function b() {',
      '  return 2;',
      '}',
      '',
      'function a() {',
      '  return 1;',
      '}',
      '',
    ];
    const r = reloc(file, moved, 3, 5);
    expect(r.kind).not.toBe('lost');
    expect([r.start, r.end]).toEqual([7, 9]);
  });
  it('never reports an edited range as found', () => {
    const edited = [...file];
    edited[3] = '  return 42;';
    expect(reloc(file, edited, 3, 5).kind).toBe('lost');
  });
  it('does not take a copy that already existed elsewhere for the edited anchored copy', () => {
    const dup = ['function a() {', '  return 1;', '}', 'x', 'function a() {', '  return 1;', '}'];
    const edited = ['function a() {', '  return 2;', '}', 'x', 'function a() {', '  return 1;', '}'];
    expect(reloc(dup, edited, 1, 3).kind).toBe('lost');
  });
  it('accepts whitespace-only reformatting through the hash gate', () => {
    const reformatted = file.map((l) => l.replace(/^ {2}/, '    '));
    const r = reloc(file, reformatted, 3, 5);
    expect(r.kind).toBe('found');
    expect([r.start, r.end]).toEqual([3, 5]);
    const needle = ['foo(a,', '    b)'];
    expect(gate(['foo(a, b)'], hashLines(needle), wsHash(needle))).toBe('whitespace');
  });
  it('prefers the copy whose context matches when the text is duplicated', () => {
    const a = ['ctx A1', 'ctx A2', 'dup', 'after A', 'x', 'y', 'z'];
    const b = ['other', 'dup', 'noise', 'ctx A1', 'ctx A2', 'dup', 'after A', 'x', 'y', 'z'];
    const r = reloc(a, b, 3, 3);
    expect([r.start, r.end]).toEqual([6, 6]);
  });
});

describe('symbols (tree-sitter grammars load for every supported language)', () => {
  const cases: Array<[string, string, string]> = [
    [
      'typescript',
      'export function foo(a: number) {\n  return a;\n}\nclass K {\n  bar() { return 1; }\n}\n',
      'K.bar',
    ],
    ['javascript', 'const foo = (a) => a;\nclass K { bar() { return 1; } }\n', 'K.bar'],
    ['python', 'def foo(a):\n    return a\n\nclass K:\n    def bar(self):\n        return 1\n', 'K.bar'],
    [
      'go',
      'package p\n\nfunc foo(a int) int {\n\treturn a\n}\n\ntype K struct{}\n\nfunc (k *K) bar() int { return 1 }\n',
      'K.bar',
    ],
    [
      'rust',
      'fn foo(a: i32) -> i32 {\n    a\n}\nstruct K;\nimpl K {\n    fn bar(&self) -> i32 { 1 }\n}\n',
      'K.bar',
    ],
    ['java', 'class K {\n  int foo(int a) {\n    return a;\n  }\n  int bar() { return 1; }\n}\n', 'K.bar'],
  ];
  for (const [lang, src, qualified] of cases) {
    it(`${lang}: finds definitions with qualified names`, async () => {
      const defs = await extractSymbols(lang, src);
      expect(defs.map((d) => d.qualified)).toContain(qualified);
      expect(defs.some((d) => d.name === 'foo' || d.qualified.endsWith('.foo'))).toBe(true);
    });
  }
  it('keeps the body hash across a rename and changes it on an edit', async () => {
    const a = await extractSymbols('python', 'def foo(a):\n    return a + 1\n');
    const b = await extractSymbols('python', 'def bar(a):\n    return a + 1\n');
    const c = await extractSymbols('python', 'def foo(a):\n    return a + 2\n');
    expect(a[0].bodyHash).toBe(b[0].bodyHash);
    expect(a[0].bodyHash).not.toBe(c[0].bodyHash);
  });
});

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

async function setup() {
  const r = makeRepo();
  r.write('src/m.ts', SRC);
  r.write('README.md', '# r\n');
  r.commitAll('init');
  await r.memJson(['init']);
  return r;
}

describe('git mem add --anchor', () => {
  it('completes the anchor: blob, commit, hashes, text, context; keeps the blob reachable', async () => {
    const r = await setup();
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
    const r = await setup();
    const before = r.git('rev-parse', 'refs/memory').trim();
    const esc = await r.mem(['add', '--title', 't', '--content', 'x', '--anchor', '../etc/passwd']);
    expect(esc.code).toBe(2);
    expect(esc.stderr).toMatch(/outside the repository/);
    const range = await r.mem(['add', '--title', 't', '--content', 'x', '--anchor', 'src/m.ts:5-99']);
    expect(range.code).toBe(2);
    expect(range.stderr).toMatch(/outside src\/m.ts \(9 lines\)/);
    const missing = await r.mem(['add', '--title', 't', '--content', 'x', '--anchor', 'nope.ts']);
    expect(missing.code).toBe(2);
    // a file of a submodule (a repository inside this one) is another history's
    r.write('libs/sub/s.py', 'def s(): pass\n');
    r.git('-C', 'libs/sub', 'init', '-q');
    const sub = await r.mem(['add', '--title', 't', '--content', 'x', '--anchor', 'libs/sub/s.py:1']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toBe(
      'git-mem: error: anchor path "libs/sub/s.py" is inside libs/sub, another repository (a submodule?) (anchor it from there: cd libs/sub && git mem add …)\n',
    );
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(before);
  });
  it('anchors uncommitted content, writes its blob and says so', async () => {
    const r = await setup();
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
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 'beta', '--content', 'x', '--symbol', 'beta']);
    const a = (await r.memJson(['show', id])).anchors[0];
    expect(a).toMatchObject({ path: 'src/m.ts', lines: [7, 9], sym: { qualified: 'beta' } });
    const bad = await r.mem(['add', '--title', 'x', '--content', 'x', '--symbol', 'src/m.ts#nothere']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/no symbol "nothere" in src\/m.ts/);
  });
});

describe('git mem check', () => {
  it('moves an anchor when lines are inserted above, and records it', async () => {
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']);
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
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']);
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
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']);
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
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 'beta', '--content', 'x', '--symbol', 'src/m.ts#beta']);
    r.write('src/m.ts', SRC.replace('function beta', 'function betaRenamed'));
    r.commitAll('rename symbol');
    const tip = r.git('rev-parse', 'refs/memory').trim();
    const dry = await r.memJson(['check', '--dry-run']);
    expect(dry.results[0]).toMatchObject({ id, status: 'symbol_renamed', to: { symbol: 'betaRenamed' } });
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip);
    r.write('src/m.ts', SRC.split('export function beta')[0]);
    r.commitAll('remove symbol');
    const rm = await r.memJson(['check']);
    expect(rm.results[0]).toMatchObject({ status: 'symbol_removed' });
    expect((await r.memJson(['show', id])).status).toBe('stale');
  });
  it('completes anchors stored as given by git mem import', async () => {
    const r = await setup();
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
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']);
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
    const tip = r.git('rev-parse', 'refs/memory').trim();
    const again = await r.memJson(['reanchor', id]);
    expect(again).toMatchObject({ unchanged: true, commit: null });
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip);
    expect((await r.memJson(['show', id])).anchors[0].reanchored.from).toEqual(from);
    expect((await r.mem(['reanchor', id])).stdout).toMatch(
      /is already anchored where its code is: nothing changed/,
    );
  });
});

describe('git mem check: scopes', () => {
  it('--worktree reports against uncommitted edits and records nothing; --since limits to changed files', async () => {
    const r = await setup();
    r.write('src/other.ts', 'export const k = 1;\nexport const j = 2;\n');
    r.commitAll('other');
    const a = await r.memJson(['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']);
    const b = await r.memJson(['add', '--title', 'k', '--content', 'x', '--anchor', 'src/other.ts:1']);
    const tip = r.git('rev-parse', 'refs/memory').trim();
    r.write('src/m.ts', SRC.replace('x * 2', 'x * 5'));
    const wt = await r.memJson(['check', '--worktree']);
    expect(wt.target).toBe('worktree');
    expect(wt.results).toEqual([expect.objectContaining({ id: a.id, status: 'changed' })]);
    expect(wt.counts).toMatchObject({ fresh: 1, changed: 1 });
    expect(wt.recorded).toBe(false);
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip);
    // committed: --since the previous commit only checks src/m.ts's anchor
    r.commitAll('edit m');
    r.write('src/other.ts', 'export const k = 100;\nexport const j = 2;\n');
    const since = await r.memJson(['check', '--since', 'HEAD~1', '--dry-run']);
    expect(since.checked).toBe(1);
    expect(since.results[0]).toMatchObject({ id: a.id, status: 'changed' });
    const one = await r.memJson(['check', b.id, '--dry-run']);
    expect(one).toMatchObject({ checked: 1, counts: { fresh: 1 } });
    const bad = await r.mem(['check', '--since', 'no-such-rev']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/cannot resolve --since "no-such-rev"/);
  });
});

describe('relocate: common lines', () => {
  it('takes the copy of a common line that its distinctive context surrounds, not the one the diff aligned', () => {
    const block = (n: string) => [
      `function ${n}() {`,
      `  const ${n}1 = ${n}(1);`,
      `  const ${n}2 = ${n}(2);`,
      '  return a + b;',
      '}',
      '',
    ];
    const old = [...block('p'), ...block('q'), ...block('r')];
    const shuffled = [...block('r'), ...block('q'), ...block('p')];
    const r = reloc(old, shuffled, 4, 4); // p's return line
    expect([r.start, r.end]).toEqual([16, 16]);
  });
});

describe('anchor paths and repositories without commits', () => {
  it('resolves --anchor relative to the current directory', async () => {
    const r = await setup();
    const res = await r.mem(
      ['add', '--title', 'from src', '--content', 'x', '--anchor', 'm.ts:2-5', '--json'],
      { cwd: join(r.dir, 'src') },
    );
    expect(res.code).toBe(0);
    const a = (await r.memJson(['show', JSON.parse(res.stdout).id])).anchors[0];
    expect(a).toMatchObject({ path: 'src/m.ts', lines: [2, 5] });
  });
  it('anchors a file in a repository with no commit yet, then follows it once committed and shifted', async () => {
    const r = makeRepo();
    r.write('a.py', 'def f():\n    return 1\n');
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
    const r = await setup();
    const a = await r.memJson(['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']);
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
    const r = await setup();
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
    const hook = await r.mem(['hook', 'post-commit']);
    expect(hook.stderr).toBe(
      'git-mem: 1 memory went stale with this commit (git mem stale; git log --notes=memory)\n',
    );
    expect(r.git('log', '-1', '--format=%s', 'refs/memory').trim()).toMatch(
      /^mem: post-commit [0-9a-f]{12}: \d records? updated \(1 went stale, 1 moved\)$/,
    );
  });
});

describe('record cache', () => {
  it('reuses parsed records by blob id and ignores a damaged cache entry', async () => {
    const { readdirSync, writeFileSync } = await import('node:fs');
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']);
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
    const again = await r.memJson(['check', '--dry-run']);
    expect(again.results[0]).toMatchObject({ id, status: 'fresh', reason: 'anchored lines unchanged' });
  });

  it('does not cache the old version of a record the check rewrites', async () => {
    const { existsSync, readdirSync } = await import('node:fs');
    const r = await setup();
    await r.memJson(['add', '--title', 'alpha', '--content', 'x', '--anchor', 'src/m.ts:2-5']);
    const before = r.git('rev-parse', 'refs/memory').trim();
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
