/**
 * Judging anchors: significant indentation by language, anchors with too little information,
 * ambiguous relocations, and the range an edited anchor covers (what reanchor takes).
 */
import { describe, expect, it } from 'vitest';
import { diffLines, mapRange } from '../src/anchors/diff.js';
import { relocate } from '../src/anchors/relocate.js';
import { extractSymbols, findSymbol } from '../src/anchors/symbols.js';
import {
  hashLines,
  indentLanguage,
  informationOf,
  MIN_INFORMATION,
  rawLiterals,
  rawSyntax,
  squeezeWhitespace,
  wsHash,
} from '../src/anchors/text.js';
import { makeRepo } from './helpers.js';

const reloc = (path: string, oldLines: string[], newLines: string[], start: number, end: number) => {
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
    indent: !!indentLanguage(path),
    raw: rawSyntax(path),
  });
};
const L = (s: string) => s.split('\n');

describe('significant indentation, by language', () => {
  it('knows the languages by extension and by file name, and nothing else', () => {
    for (const p of [
      'a/test_x.py',
      'stubs/x.pyi',
      '.github/workflows/ci.yml',
      'k8s/app.yaml',
      'Makefile',
      'sub/GNUmakefile',
      'rules.mk',
      'src/Main.hs',
      'Lib.fs',
      'src/x.nim',
      'app.coffee',
      'views/index.pug',
      'BUILD.bazel',
      'defs.bzl',
    ])
      expect(indentLanguage(p), p).toBeTruthy();
    for (const p of ['src/a.ts', 'main.go', 'lib.rs', 'x.c', 'README.md', 'Makefile.am.txt', 'a.json'])
      expect(indentLanguage(p), p).toBeUndefined();
  });

  // [path, old text, anchored range, new text]: a whitespace-only change of indentation that
  // changes what the code means
  const meaningful: Array<[string, string, [number, number], string]> = [
    [
      'tests/test_parse.py',
      'def test_bad():\n    with pytest.raises(ValueError):\n        parse("x")\n        parse("y")\n    assert done()\n',
      [3, 4],
      'def test_bad():\n    with pytest.raises(ValueError):\n        parse("x")\n    parse("y")\n    assert done()\n',
    ],
    [
      'tests/test_parse.py',
      'def test_bad():\n    with pytest.raises(ValueError):\n        parse("x")\n        parse("y")\n    assert done()\n',
      [3, 4],
      'def test_bad():\n    with pytest.raises(ValueError):\n        pass\n    parse("x")\n    parse("y")\n    assert done()\n',
    ],
    [
      '.github/workflows/ci.yml',
      'jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm test\n        env:\n          CI: true\n',
      [6, 7],
      'jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: npm test\n    env:\n      CI: true\n',
    ],
    [
      'Makefile',
      'build:\n\tgo build ./...\n\tgo vet ./...\n\ntest:\n\tgo test ./...\n',
      [1, 3],
      'build:\n    go build ./...\n    go vet ./...\n\ntest:\n\tgo test ./...\n',
    ],
    [
      'src/Parse.hs',
      'parse xs = go xs\n  where\n    go [] = Nothing\n    go (y:ys) = Just y\n',
      [3, 4],
      'parse xs = go xs\n  where\n    go [] = Nothing\ngo (y:ys) = Just y\n',
    ],
    [
      'src/Calc.fs',
      'let total items =\n    let sum = List.sum items\n    sum * 2\n',
      [2, 3],
      'let total items =\n    let sum = List.sum items\nsum * 2\n',
    ],
    [
      'src/calc.nim',
      'proc total(xs: seq[int]): int =\n  for x in xs:\n    result += x\n    echo result\n',
      [3, 4],
      'proc total(xs: seq[int]): int =\n  for x in xs:\n    result += x\n  echo result\n',
    ],
    [
      'src/app.coffee',
      'handle = (req) ->\n  if req.ok\n    send req.body\n    log req.id\n',
      [3, 4],
      'handle = (req) ->\n  if req.ok\n    send req.body\n  log req.id\n',
    ],
    [
      'views/list.pug',
      'ul.items\n  each item in items\n    li= item.name\n    li.price= item.price\n',
      [3, 4],
      'ul.items\n  each item in items\n    li= item.name\n  li.price= item.price\n',
    ],
  ];
  for (const [path, before, [s, e], after] of meaningful) {
    it(`${path}: re-indenting lines ${s}-${e} is an edit`, () => {
      const r = reloc(path, L(before), L(after), s, e);
      expect(r.kind).toBe('lost');
      // the same change in a language where whitespace is layout is reformatting
      const same = reloc('src/x.js', L(before), L(after), s, e);
      expect(same.kind).not.toBe('lost');
    });
  }

  it('Python: spacing inside a line and shifted lines stay fresh or moved; exact moves stay exact', () => {
    const py = L('import os\n\n\ndef load(p):\n    with open(p) as f:\n        return f.read()\n');
    const spaced = L('import os\n\n\ndef load(p):\n    with open(p)  as  f:\n        return f.read()  \n');
    expect(reloc('a.py', py, spaced, 4, 6)).toMatchObject({ kind: 'found', start: 4, end: 6 });
    const shifted = L(`import sys\n${py.join('\n')}`);
    expect(reloc('a.py', py, shifted, 4, 6)).toMatchObject({
      kind: 'intact',
      start: 5,
      end: 7,
      confidence: 1,
    });
    // the whole function moved below another one, indented as before
    const moved = L(
      'import os\n\n\ndef other():\n    pass\n\n\ndef load(p):\n    with open(p) as f:\n        return f.read()\n',
    );
    const m = reloc('a.py', py, moved, 4, 6);
    expect(m).toMatchObject({ start: 8, end: 10, confidence: 1 });
    expect(m.kind).not.toBe('lost');
    // a method moved out of its class (dedented) is an edit in Python, a move in JavaScript
    const cls = L('class A:\n    def run(self):\n        return self.go()\n');
    const out = L('class A:\n    pass\n\ndef run(self):\n    return self.go()\n');
    expect(reloc('a.py', cls, out, 2, 3).kind).toBe('lost');
    expect(reloc('a.js', cls, out, 2, 3).kind).toBe('found');
  });

  it('JavaScript: re-indentation and re-wrapping stay whitespace-only', () => {
    const js = L('function f() {\n  if (a) {\n    call(a, b);\n  }\n}\n');
    const re = L('function f() {\n    if (a) {\n        call(a,\n             b);\n    }\n}\n');
    const r = reloc('src/f.js', js, re, 2, 4);
    expect(r.kind).toBe('found');
    expect(r.whitespace).toBe(true);
  });
});

describe('verbatim literals, by language', () => {
  it('finds raw strings, template literals, text blocks and Rust raw strings, open ones included', () => {
    expect(rawSyntax('cmd/main.go')).toBe('backtick');
    expect(rawSyntax('src/App.TSX')).toBe('backtick');
    expect(rawSyntax('Main.kt')).toBe('triple');
    expect(rawSyntax('src/lib.rs')).toBe('rust');
    expect(rawSyntax('a.c')).toBeUndefined();
    expect(rawLiterals(L('x := `a\n  b` + `c`'), 'backtick')).toEqual(['a\n  b', 'c']);
    expect(rawLiterals(L('s = `a \\` b` + f(`'), 'backtick')).toEqual(['a \\` b', '']);
    expect(rawLiterals(L('val q = """\n  select *\n""" + \'\'\'x\'\'\''), 'triple')).toEqual([
      '\n  select *\n',
      'x',
    ]);
    expect(rawLiterals(L('let s = r#"a "quoted"\n  b"#; let t = r"c";'), 'rust')).toEqual([
      'a "quoted"\n  b',
      'c',
    ]);
  });

  const cases: Array<[string, string, [number, number], string, string]> = [
    // [path, old text, anchored range, whitespace changed inside a literal, whitespace changed outside]
    [
      'cmd/usage.go',
      'package main\n\nconst usage = `Usage:\n  tool [flags]\n    -v  verbose`\n\nfunc main() {}\n',
      [3, 5],
      'package main\n\nconst usage = `Usage:\n    tool [flags]\n    -v  verbose`\n\nfunc main() {}\n',
      'package main\n\nconst   usage =  `Usage:\n  tool [flags]\n    -v  verbose`\n\nfunc main() {}\n',
    ],
    [
      'src/sql.ts',
      'export const q = sql`\n  SELECT id\n  FROM users`;\nrun(q);\n',
      [1, 3],
      'export const q = sql`\n  SELECT  id\n  FROM users`;\nrun(q);\n',
      'export const q =\n  sql`\n  SELECT id\n  FROM users`;\nrun(q);\n',
    ],
    [
      'src/Query.kt',
      'val q = """\n    select *\n    from t\n"""\nfun f() = 1\n',
      [1, 4],
      'val q = """\n    select *\n  from t\n"""\nfun f() = 1\n',
      'val q  =  """\n    select *\n    from t\n"""\nfun f() = 1\n',
    ],
    [
      'src/help.rs',
      'const HELP: &str = r#"usage:\n  run "x"\n"#;\nfn main() {}\n',
      [1, 3],
      'const HELP: &str = r#"usage:\n run "x"\n"#;\nfn main() {}\n',
      'const HELP:  &str  = r#"usage:\n  run "x"\n"#;\nfn main() {}\n',
    ],
  ];
  for (const [path, before, [s, e], inside, outside] of cases) {
    it(`${path}: whitespace inside a verbatim literal is an edit; outside it, layout`, () => {
      expect(reloc(path, L(before), L(inside), s, e).kind).toBe('lost');
      // the same change in a language without such literals is reformatting
      expect(reloc('src/x.c', L(before), L(inside), s, e).kind).not.toBe('lost');
      // spacing and wrapping around the literal, the literal as it was: the anchor is still there
      expect(['intact', 'found']).toContain(reloc(path, L(before), L(outside), s, e).kind);
    });
  }
});

describe('ambiguous relocation', () => {
  it('several copies the context does not tell apart are ambiguous, with candidates and low confidence', () => {
    const T = 'const total = computeTotal(items, tax);';
    // the old place is gone and the text is new in two places the diff does not align
    const old = ['alpha();', 'beta();', 'gamma();', 'delta();', T];
    const dup = ['xray();', T, 'yank();', T, 'zulu();', 'alpha();', 'beta();', 'gamma();'];
    const r = reloc('src/a.ts', old, dup, 5, 5);
    expect(r.kind).toBe('ambiguous');
    expect(r.confidence).toBeLessThan(0.5);
    expect(r.candidates).toEqual([
      { start: 2, end: 2 },
      { start: 4, end: 4 },
    ]);
    // context that came along with one copy decides it
    const one = ['xray();', T, 'yank();', 'delta();', T, 'zulu();', 'alpha();', 'beta();', 'gamma();'];
    expect(reloc('src/a.ts', old, one, 5, 5)).toMatchObject({ kind: 'found', start: 5, end: 5 });
  });
});

describe('information in an anchor', () => {
  it('punctuation and keywords carry none; names do', () => {
    for (const t of ['"""', '}\n  }\n}', 'end', '});', 'else:', 'return x'])
      expect(informationOf(L(t)), t).toBeLessThan(MIN_INFORMATION);
    for (const t of ['const total = computeTotal(items)', 'raise ValueError("bad")', 'def load(path):'])
      expect(informationOf(L(t)), t).toBeGreaterThanOrEqual(MIN_INFORMATION);
  });
});

describe('the range of an edited anchor covers what replaced it', () => {
  const base = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
  const cases: Array<[string, string[], [number, number]]> = [
    // anchor 4-8 throughout
    ['edit on the first line', [...base.slice(0, 3), 'LINE 4', ...base.slice(4)], [4, 8]],
    ['edit on the last line', [...base.slice(0, 7), 'LINE 8', ...base.slice(8)], [4, 8]],
    ['edit in the middle', [...base.slice(0, 5), 'LINE 6', ...base.slice(6)], [4, 8]],
    [
      'last line replaced by three',
      [...base.slice(0, 7), 'new a', 'new b', 'new c', ...base.slice(8)],
      [4, 10],
    ],
    ['last two lines removed', [...base.slice(0, 6), ...base.slice(8)], [4, 6]],
    ['first line replaced by two', [...base.slice(0, 3), 'new a', 'new b', ...base.slice(4)], [4, 9]],
    ['lines added inside at the end', [...base.slice(0, 7), 'added', ...base.slice(7)], [4, 9]],
  ];
  for (const [name, now, want] of cases) {
    it(name, () => {
      const m = mapRange(diffLines(base, now), 4, 8);
      expect([m.start, m.end]).toEqual(want);
      expect(m.intact).toBe(false);
    });
  }
});

// ------------------------------------------------------------------ through git and the CLI

const BODY = (tag: string) =>
  [
    `function ${tag}Start(x) {`,
    `  const ${tag}A = x + 1;`,
    `  const ${tag}B = ${tag}A * 2;`,
    `  const ${tag}C = ${tag}B - 3;`,
    `  return ${tag}C;`,
    '}',
    '',
    '',
  ].join('\n');

describe('reanchor after `changed` (real git edits)', () => {
  it('covers the edited lines at the start, end and middle, and lines added or removed at the end', async () => {
    const r = makeRepo();
    const tags = ['p', 'q', 's', 't', 'u'];
    r.write('src/m.js', tags.map(BODY).join(''));
    r.commitAll('init');
    await r.memJson(['init']);
    // each function is 7 lines: body lines 2-5 of function k start at 7k+2
    const ids: string[] = [];
    for (let k = 0; k < tags.length; k++) {
      const s = 7 * k + 2;
      ids.push(
        (
          await r.memJson([
            'add',
            '--title',
            tags[k],
            '--content',
            'x',
            '--force',
            '--anchor',
            `src/m.js:${s}-${s + 3}`,
          ])
        ).id,
      );
    }
    const text = tags.map(BODY).join('');
    const edited = text
      .replace('const pA = x + 1;', 'const pA = x + 10;') // start
      .replace('return qC;', 'return qC + 0;') // end
      .replace('const sB = sA * 2;', 'const sB = sA * 20;') // middle
      .replace('  return tC;\n', '  const tD = tC;\n  const tE = tD;\n  return tE;\n') // end replaced, lines added
      .replace('  const uC = uB - 3;\n  return uC;\n', '  return uB;\n'); // lines removed at the end
    r.write('src/m.js', edited);
    r.commitAll('edit');
    const rep = await r.memJson(['check']);
    const byId = new Map(rep.results.map((x: { id: string }) => [x.id, x]));
    for (const id of ids) expect((byId.get(id) as { status: string }).status).toBe('changed');
    const lines = edited.split('\n');
    const want: Array<[number, number, string]> = [
      [2, 5, 'x + 10'],
      [9, 12, 'qC + 0'],
      [16, 19, 'sA * 20'],
      [23, 28, 'return tE'],
      [32, 34, 'return uB'],
    ];
    for (let k = 0; k < ids.length; k++) {
      const re = await r.memJson(['reanchor', ids[k]]);
      const [s, e, must] = want[k];
      expect(re.anchors[0].lines, tags[k]).toEqual([s, e]);
      expect(re.anchors[0].text).toBe(lines.slice(s - 1, e).join('\n'));
      expect(re.anchors[0].text).toContain(must);
    }
    const again = await r.memJson(['check']);
    expect(again.counts.fresh).toBe(ids.length);
  });
});

describe('judging through git: indentation, weak anchors, ambiguity', () => {
  it('a Python block dedented out of `with pytest.raises` is changed; the same in JavaScript is moved', async () => {
    const r = makeRepo();
    const py =
      'import pytest\n\n\ndef test_bad():\n    with pytest.raises(ValueError):\n        parse("x")\n        check_rest()\n';
    const js = 'function testBad() {\n  expectThrow(() => {\n    parse("x");\n    checkRest();\n  });\n}\n';
    r.write('tests/test_p.py', py);
    r.write('tests/p.test.js', js);
    r.commitAll('init');
    await r.memJson(['init']);
    const a = await r.memJson(['add', '--title', 'py', '--content', 'x', '--anchor', 'tests/test_p.py:6-7']);
    const b = await r.memJson(['add', '--title', 'js', '--content', 'x', '--anchor', 'tests/p.test.js:3-4']);
    r.write('tests/test_p.py', py.replace('        check_rest()', '    check_rest()'));
    r.write('tests/p.test.js', js.replace('    checkRest();\n  });', '  });\n    checkRest();'));
    r.commitAll('dedent');
    const rep = await r.memJson(['check']);
    const st = (id: string) => rep.results.find((x: { id: string }) => x.id === id);
    expect(st(a.id)).toMatchObject({ status: 'changed', stale: true });
    // in JavaScript the two lines are no longer adjacent: not found as a block, but not for indentation
    r.write('tests/p.test.js', js.replace(/^ {4}/gm, '      '));
    r.commitAll('reindent js');
    const rep2 = await r.memJson(['check', b.id]);
    expect(rep2.results[0]).toMatchObject({ status: 'fresh', stale: false });
  });

  it('warns at add about a lone `"""` and repeated text, keeps wider context, and never moves it into another file', async () => {
    const r = makeRepo();
    const doc = [
      'def load(path):',
      '    """',
      '    Load the configuration at path.',
      '    """',
      '    return read(path)',
      '',
      '',
      'def save(path, data):',
      '    """Write data."""',
      '    write(path, data)',
      '    return None',
      '',
    ].join('\n');
    r.write('src/conf.py', doc);
    r.write('src/other.py', 'x = 1\n');
    r.commitAll('init');
    await r.memJson(['init']);
    const out = await r.mem(['add', '--title', 'doc', '--content', 'x', '--anchor', 'src/conf.py:4-4']);
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/warning: the text of src\/conf.py:4-4 is mostly punctuation or keywords/);
    expect(out.stdout.split('\n').filter((l) => l.includes('warning:'))).toHaveLength(1);
    const id = out.stdout.match(/Added (\S+)/)![1];
    const shown = await r.memJson(['show', id]);
    expect(shown.anchors[0].after.length).toBeGreaterThan(3);
    const twice = await r.mem(['add', '--title', 'ret', '--content', 'x', '--anchor', 'src/conf.py:10-11']);
    expect(twice.stdout).not.toMatch(/warning/);
    r.write('src/conf.py', `${doc}\n\ndef again(path, data):\n    write(path, data)\n    return None\n`);
    r.commitAll('dup');
    const rep = await r.mem(['add', '--title', 'dup', '--content', 'x', '--anchor', 'src/conf.py:10-11']);
    expect(rep.stdout).toMatch(/warning: the text of src\/conf.py:10-11 occurs 2 times in the file/);
    // the file goes; another file gains a lone `"""` in unrelated surroundings: not a move
    r.git('rm', '-q', 'src/conf.py');
    r.write(
      'src/other.py',
      'x = 1\n\n\ndef unrelated():\n    """\n    Something else.\n    """\n    return 2\n',
    );
    r.commitAll('delete conf');
    const chk = await r.memJson(['check', id]);
    expect(chk.results[0]).toMatchObject({ status: 'deleted', stale: true });
  });

  it('text moved into two new files alike is ambiguous: candidates, low confidence, the memory not stale', async () => {
    const r = makeRepo();
    const fn =
      'export function computeTotal(items, tax) {\n  return items.reduce((s, i) => s + i.price, 0) * (1 + tax);\n}\n';
    r.write('src/a.js', `// a\n${fn}`);
    r.write('src/keep.js', 'export const k = 1;\n');
    r.commitAll('init');
    await r.memJson(['init']);
    const { id } = await r.memJson(['add', '--title', 'total', '--content', 'x', '--anchor', 'src/a.js:2-4']);
    r.git('rm', '-q', 'src/a.js');
    // new files too unlike the old one for git to call either a rename
    const filler = (p: string) =>
      Array.from({ length: 30 }, (_, i) => `export const ${p}${i} = ${i};`).join('\n');
    r.write('src/b.js', `// b\n${fn}${filler('bee')}\n`);
    r.write('src/c.js', `// c\n${fn}${filler('sea')}\n`);
    r.commitAll('split');
    const rep = await r.memJson(['check']);
    expect(rep.results[0]).toMatchObject({ id, status: 'ambiguous', stale: false });
    expect(rep.results[0].confidence).toBeLessThan(0.5);
    expect(rep.counts.ambiguous).toBe(1);
    expect(rep.results[0].candidates).toEqual([
      { path: 'src/b.js', lines: [2, 4] },
      { path: 'src/c.js', lines: [2, 4] },
    ]);
    expect(rep.results[0].reason).toMatch(/src\/b.js:2-4.*src\/c.js:2-4/);
    const shown = await r.memJson(['show', id]);
    expect(shown.status).toBe('active');
    expect(shown.anchors[0].verdict.candidates).toEqual([
      { path: 'src/b.js', lines: [2, 4] },
      { path: 'src/c.js', lines: [2, 4] },
    ]);
    expect(shown.anchors[0].current).toBeUndefined();
  });
});

describe('JavaScript and TypeScript symbol shapes', () => {
  // shapes from expressjs/express (lib/response.js, lib/view.js, lib/application.js) and TS modules
  const SRC = [
    'var res = module.exports = { __proto__: http.ServerResponse.prototype };', // 1
    'res.redirect = function redirect(url) {', // 2
    '  this.location(url);', // 3
    '};', // 4
    'View.prototype.lookup = function lookup(name) {', // 5
    '  return name;', // 6
    '};', // 7
    'app.listen = function() { return 1; };', // 8
    'exports.compile = function (x) { return x; };', // 9
    'export const f = () => 1;', // 10
    'export const g = async (a) => {', // 11
    '  return a;', // 12
    '};', // 13
    'class K {', // 14
    '  m() { return 1; }', // 15
    '}', // 16
    '',
  ].join('\n');
  for (const lang of ['javascript', 'typescript']) {
    it(`${lang}: member assignments, prototype methods, exported arrows and class methods`, async () => {
      const defs = await extractSymbols(lang, SRC);
      const at = (q: string) => {
        const d = defs.find((x) => x.qualified === q);
        return d && [d.start, d.end];
      };
      expect(at('res.redirect')).toEqual([2, 4]);
      expect(at('View.lookup')).toEqual([5, 7]);
      expect(at('app.listen')).toEqual([8, 8]);
      expect(at('compile')).toEqual([9, 9]);
      expect(at('f')).toEqual([10, 10]);
      expect(at('g')).toEqual([11, 13]);
      expect(at('K.m')).toEqual([15, 15]);
      expect(findSymbol(defs, 'View.lookup').map((d) => d.qualified)).toEqual(['View.lookup']);
      expect(findSymbol(defs, 'redirect').map((d) => d.qualified)).toEqual(['res.redirect']);
      // a rename keeps the body hash; an edit changes it
      const renamed = await extractSymbols(lang, SRC.replace('res.redirect =', 'res.goTo ='));
      const edited = await extractSymbols(lang, SRC.replace('this.location(url)', 'this.location(url + 1)'));
      const h = (ds: typeof defs, q: string) => ds.find((d) => d.qualified === q)?.bodyHash;
      expect(h(renamed, 'res.goTo')).toBe(h(defs, 'res.redirect'));
      expect(h(edited, 'res.redirect')).not.toBe(h(defs, 'res.redirect'));
    });
  }

  it('add --symbol anchors `res.redirect` and check follows its edit', async () => {
    const r = makeRepo();
    r.write('lib/response.js', SRC);
    r.commitAll('init');
    await r.memJson(['init']);
    const { id } = await r.memJson([
      'add',
      '--title',
      'redirect',
      '--content',
      'x',
      '--symbol',
      'lib/response.js#res.redirect',
    ]);
    const a = (await r.memJson(['show', id])).anchors[0];
    expect(a).toMatchObject({ lines: [2, 4], sym: { qualified: 'res.redirect', kind: 'method' } });
    r.write('lib/response.js', SRC.replace('this.location(url)', 'this.location(url || "/")'));
    r.commitAll('edit');
    expect((await r.memJson(['check'])).results[0]).toMatchObject({ id, status: 'changed' });
  });
});

describe('the whitespace-free form a cross-file search filters on', () => {
  it('is what removing every \\s gives, for ASCII and wider whitespace alike', () => {
    const pieces = [
      'a',
      'é',
      '字',
      '😀',
      '{',
      ' ',
      '\t',
      '\n',
      '\r',
      '\v',
      '\f',
      '\u00a0',
      '\u2003',
      '\u2028',
      '\u3000',
      '\ufeff',
      '\u0085',
    ];
    let seed = 11;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let n = 0; n < 300; n++) {
      let s = '';
      const len = Math.floor(rnd() * 40);
      // half the texts keep to ASCII whitespace (the byte path), half may hold wider spaces
      const from = n % 2 ? pieces : pieces.filter((p) => !/[\u00a0\u2003\u2028\u3000\ufeff]/.test(p));
      for (let i = 0; i < len; i++) s += from[Math.floor(rnd() * from.length)];
      expect(squeezeWhitespace(s).toString('utf8')).toBe(s.replace(/\s+/g, ''));
    }
  });

  it('keeps a re-wrapped copy findable: the needle squeezed is inside the file squeezed', () => {
    const needle = ['const x = f(a,', '  b);'];
    const file = 'header\nconst x = f(\n  a, b);\nfooter\n';
    expect(squeezeWhitespace(file).includes(squeezeWhitespace(needle.join('')))).toBe(true);
    expect(squeezeWhitespace('const x = g(a, b);').includes(squeezeWhitespace(needle.join('')))).toBe(false);
  });
});
