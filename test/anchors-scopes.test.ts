import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from './helpers.js';

// #30 items 5-7: scopes follow renames, `show` says where the code is now,
// and a branch the record does not follow says once how to make it so.

describe('a branch the record does not follow says so once (#30 item 7)', () => {
  it('the post-commit hook on a feature branch names the command once; on main, nothing', async () => {
    const r = makeRepo({ commit: true });
    r.git('branch', '-M', 'main');
    await r.memJson(['init']);
    r.write('a.txt', 'a\n');
    r.commitAll('on main');
    const onMain = await r.mem(['hook', 'post-commit']);
    expect(onMain.stderr).not.toContain('default-branch');
    r.git('checkout', '-q', '-b', 'feature');
    r.write('b.txt', 'b\n');
    r.commitAll('on feature');
    const first = await r.mem(['hook', 'post-commit']);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('git mem config set default-branch feature --shared');
    expect(existsSync(join(r.dir, '.git', 'mem', 'default-branch-hint'))).toBe(true);
    r.write('c.txt', 'c\n');
    r.commitAll('again');
    const second = await r.mem(['hook', 'post-commit']);
    expect(second.stderr).not.toContain('default-branch');
  });

  it('init on a feature branch says it (in --json too); a default-branch setting silences it', async () => {
    const r = makeRepo({ commit: true });
    r.git('branch', '-M', 'main');
    r.git('checkout', '-q', '-b', 'feature');
    const j = await r.memJson(['init']);
    expect(j.hint).toContain('git mem config set default-branch feature --shared');
    const again = await r.mem(['init']);
    expect(again.stdout).not.toContain('default-branch');

    const s = makeRepo({ commit: true });
    s.git('branch', '-M', 'main');
    s.git('checkout', '-q', '-b', 'feature');
    s.git('config', 'mem.default-branch', 'main');
    const set = await s.mem(['init']);
    expect(set.code).toBe(0);
    expect(set.stdout).not.toContain('default-branch');
  });
});

const SRC = `${Array.from(
  { length: 14 },
  (_, i) => `export function fn${i + 1}(x) { return x * ${i + 1} + ${(i * 7) % 5}; }`,
).join('\n')}\n`;

describe('where the code is now, in words that match the verdict (#30 item 6)', () => {
  it('show prints a moved anchor where its code is now and where it was', async () => {
    const r = makeRepo();
    r.git('checkout', '-q', '-b', 'main');
    r.write('f.js', SRC);
    r.commitAll('init');
    await r.memJson(['init']);
    const { id } = await r.memJson(['add', '--title', 'fn5', '--content', 'x', '--anchor', 'f.js:5-10']);
    r.write('f.js', `// one\n// two\n// three\n${SRC}`);
    r.commitAll('three lines on top');
    await r.memJson(['check']);
    const shown = await r.mem(['show', id]);
    expect(shown.stdout).toMatch(/^anchor: +f\.js:8-13 +\[moved\] +was at f\.js:5-10$/m);
  });

  it('a changed anchor says how many of its lines differ, never "100% of the text left"', async () => {
    const r = makeRepo();
    r.git('checkout', '-q', '-b', 'main');
    r.write('f.js', SRC);
    r.commitAll('init');
    await r.memJson(['init']);
    const { id } = await r.memJson(['add', '--title', 'fn5', '--content', 'x', '--anchor', 'f.js:5-10']);
    // the same words in another order: every token is left, the lines are not
    r.write('f.js', SRC.replace('return x * 7 + 2', 'return 2 + 7 * x'));
    r.commitAll('reorder');
    const rep = await r.memJson(['check']);
    const item = JSON.stringify(rep);
    expect(item).toContain('"changed"');
    expect(item).not.toContain('text left');
    expect(item).toMatch(/17% of the lines differ/);
    expect((await r.memJson(['show', id])).anchors[0].verdict.status).toBe('changed');
  });

  it('the CI annotation of a memory whose code only moved says so and asks nothing', async () => {
    const { formatGithub } = await import('../src/anchors/ci-format.js');
    const out = formatGithub({
      base: 'a'.repeat(40),
      head: 'b'.repeat(40),
      failOn: 'stale',
      failed: false,
      items: [
        {
          id: 'c'.repeat(26),
          title: 'moved one',
          anchor: 0,
          status: 'moved',
          reason: 'found 3 lines lower',
          confidence: 1,
          from: { path: 'f.js', lines: [5, 10] },
          to: { path: 'f.js', lines: [8, 13] },
          stale: false,
        },
      ],
    });
    const line = out.split('\n')[0];
    expect(line).toMatch(/^::notice file=f\.js,line=8,endLine=13/);
    expect(line).toContain('now at f.js:8-13, was at f.js:5-10');
    expect(line).not.toContain('git mem update');
    expect(line).not.toContain('reanchor');
  });
});

describe('literal scopes follow their file (#30 item 5)', () => {
  async function ruleRepo(anchored = true) {
    const r = makeRepo();
    r.git('checkout', '-q', '-b', 'main');
    r.write('lib/router/route.js', SRC);
    r.write('lib/other.js', 'x\n');
    r.commitAll('init');
    await r.memJson(['init']);
    const rule = await r.memJson([
      'add',
      '--type',
      'convention',
      '--title',
      'routes are pure',
      '--content',
      'x',
      '--scope',
      'lib/router/route.js,lib/**/*.ts',
    ]);
    if (!anchored) return { r, rule: rule.id as string, both: '' };
    const both = await r.memJson([
      'add',
      '--title',
      'fn5',
      '--content',
      'x',
      '--anchor',
      'lib/router/route.js:5-10',
      '--scope',
      'lib/router/route.js',
    ]);
    return { r, rule: rule.id as string, both: both.id as string };
  }
  const scopeOf = async (r: ReturnType<typeof makeRepo>, id: string) =>
    (await r.memJson(['show', id])).scope as string[];
  const memCommits = (r: ReturnType<typeof makeRepo>) =>
    Number(r.git('rev-list', '--count', 'refs/memory').trim());

  it('the post-commit hook moves a renamed literal scope in the same write as the anchors', async () => {
    const { r, rule, both } = await ruleRepo();
    r.git('mv', 'lib/router/route.js', 'lib/router/Route.js');
    r.commitAll('rename');
    const before = memCommits(r);
    const hook = await r.mem(['hook', 'post-commit']);
    expect(hook.code).toBe(0);
    expect(await scopeOf(r, rule)).toEqual(['lib/router/Route.js', 'lib/**/*.ts']);
    expect(await scopeOf(r, both)).toEqual(['lib/router/Route.js']);
    const shown = await r.memJson(['show', both]);
    expect(shown.anchors[0].current.path).toBe('lib/router/Route.js');
    expect(memCommits(r)).toBe(before + 1);
    // nothing is lost now
    const rep = await r.memJson(['check']);
    expect(rep.scopes).toEqual({ moved: [], lost: [] });
  });

  it('the hook records a renamed scope of a rule no anchor names (no anchor judged)', async () => {
    const { r, rule } = await ruleRepo(false);
    r.git('mv', 'lib/router/route.js', 'lib/router/Route.js');
    r.commitAll('rename');
    expect((await r.mem(['hook', 'post-commit'])).code).toBe(0);
    expect(await scopeOf(r, rule)).toEqual(['lib/router/Route.js', 'lib/**/*.ts']);
  });

  it('the hook says which scope a commit that deletes its file leaves matching no file; not for other files', async () => {
    const { r, rule } = await ruleRepo(false);
    r.git('rm', '-q', 'lib/other.js');
    r.commitAll('remove another file');
    const quiet = await r.mem(['hook', 'post-commit']);
    expect(quiet.code).toBe(0);
    expect(quiet.stderr).not.toContain('matching no file');
    r.git('rm', '-q', 'lib/router/route.js');
    r.commitAll('remove the scoped file');
    const said = await r.mem(['hook', 'post-commit']);
    expect(said.code).toBe(0);
    expect(said.stderr).toContain(`scope lib/router/route.js of ${rule.slice(0, 12)} matching no file`);
    expect(await scopeOf(r, rule)).toEqual(['lib/router/route.js', 'lib/**/*.ts']);
  });

  it('check --since follows a rename for a scope-only rule; a branch that is not the default records nothing', async () => {
    const { r, rule } = await ruleRepo();
    r.git('checkout', '-q', '-b', 'feature');
    r.git('mv', 'lib/router/route.js', 'lib/router/Route.js');
    r.commitAll('rename on feature');
    const off = await r.memJson(['check', '--since', 'HEAD~1']);
    expect(off.scopes.moved).toEqual(
      expect.arrayContaining([{ id: rule, from: 'lib/router/route.js', to: 'lib/router/Route.js' }]),
    );
    expect(off.recorded).toBe(false);
    expect(await scopeOf(r, rule)).toEqual(['lib/router/route.js', 'lib/**/*.ts']);
    r.git('checkout', '-q', 'main');
    r.git('merge', '-q', '--ff-only', 'feature');
    const on = await r.memJson(['check', '--since', 'HEAD~1']);
    expect(on.recorded).toBe(true);
    expect(await scopeOf(r, rule)).toEqual(['lib/router/Route.js', 'lib/**/*.ts']);
  });

  it('a literal scope that matches no file is reported by check (and --json) and listed by doctor', async () => {
    const { r, rule } = await ruleRepo();
    r.git('rm', '-q', 'lib/router/route.js');
    r.commitAll('gone');
    const rep = await r.memJson(['check']);
    expect(rep.scopes.lost).toEqual(
      expect.arrayContaining([{ id: rule, title: 'routes are pure', path: 'lib/router/route.js' }]),
    );
    const text = await r.mem(['check']);
    expect(text.stdout).toContain('scope lost');
    const doc = await r.mem(['doctor', '--json']);
    const findings = JSON.parse(doc.stdout).findings as Array<{ check: string; id?: string }>;
    expect(findings.filter((f) => f.check === 'scope' && f.id === rule)).toHaveLength(1);
  });
});

describe('isLiteralScope', () => {
  it('a path is literal; a glob, a negation or a folder with a slash is not', async () => {
    const { isLiteralScope } = await import('../src/model/glob.js');
    expect(['lib/router/route.js', 'src', 'a b.txt'].map(isLiteralScope)).toEqual([true, true, true]);
    expect(['src/**', '*.ts', 'src/[ab].ts', 'src/{a,b}.ts', '!x', 'src/'].map(isLiteralScope)).toEqual(
      Array(6).fill(false),
    );
  });
});
