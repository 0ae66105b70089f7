// The staleness benchmark's oracle, baseline systems and metrics (bench/staleness/) on a small
// history built with real git: no mirrors, no network.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ES modules of the benchmark, without type declarations
import { ADAPTERS } from '../bench/staleness/adapters/index.mjs';
// @ts-expect-error idem
import { reader, renamesBetween } from '../bench/staleness/git.mjs';
// @ts-expect-error idem
import { score } from '../bench/staleness/metrics.mjs';
// @ts-expect-error idem
import { label, truthOf } from '../bench/staleness/oracle.mjs';
// @ts-expect-error idem
import { definitions } from '../bench/staleness/sample.mjs';
import { type Json, makeRepo } from './helpers.js';

const block = (name: string, n: number) =>
  Array.from({ length: n }, (_, i) => `const ${name}_${i + 1} = compute(${i + 1}, "${name}");`);
const text = (l: string[]) => `${l.join('\n')}\n`;

let made: ReturnType<typeof build> | undefined;
/** One history for every test (built once: each test only reads it). */
const history = () => {
  made ??= build();
  return made;
};

function build() {
  const r = makeRepo();
  const a = block('alpha', 30);
  const b = block('beta', 20);
  const c = block('gamma', 20);
  const py = [
    'import os',
    '',
    'def helper(x):',
    '    y = os.path.join(x, "a")',
    '    return y',
    '',
    'def other():',
    '    return 1',
    '',
  ];
  r.write('src/a.js', text(a));
  r.write('src/b.js', text(b));
  r.write('src/c.js', text(c));
  r.write('src/d.py', text(py));
  const A = r.commitAll('A');
  // B: two lines above a1, an edit inside a2, b.js renamed, c.js 10-12 cut and appended to
  // a.js, c.js line 3 re-indented (whitespace only)
  const a2 = [...a];
  a2[15] = 'const alpha_16 = compute(16, "ALPHA");';
  const moved = c.slice(9, 12);
  r.write('src/a.js', text(['// header', '// more', ...a2, ...moved]));
  const c2 = [...c.slice(0, 9), ...c.slice(12)];
  c2[2] = `   ${c2[2]}`;
  r.write('src/c.js', text(c2));
  r.git('mv', 'src/b.js', 'src/lib-b.js');
  const B = r.commitAll('B');
  const lines = (l: string[], s: number, e: number) => l.slice(s - 1, e);
  const anchors = [
    { kind: 'lines', path: 'src/a.js', lines: [5, 7], text: lines(a, 5, 7) },
    { kind: 'lines', path: 'src/a.js', lines: [15, 17], text: lines(a, 15, 17) },
    { kind: 'lines', path: 'src/b.js', lines: [3, 5], text: lines(b, 3, 5) },
    { kind: 'lines', path: 'src/c.js', lines: [10, 12], text: lines(c, 10, 12) },
    { kind: 'lines', path: 'src/c.js', lines: [2, 4], text: lines(c, 2, 4) },
    { kind: 'symbol', path: 'src/d.py', symbol: 'helper', header: 3, lines: [3, 5], text: lines(py, 3, 5) },
  ];
  return { r, A, B, anchors, gitDir: join(r.dir, '.git') };
}

describe('staleness benchmark', () => {
  it('labels moves, edits, renames, cross-file moves and whitespace-only changes from git alone', () => {
    const { A, B, anchors, gitDir } = history();
    const rd = reader(gitDir);
    const renames = renamesBetween(gitDir, A, B);
    const got = anchors.map((an) => label(rd, A, B, renames, an));
    expect(got.map((o: Json) => o.label)).toEqual([
      'moved',
      'changed',
      'renamed',
      'moved',
      'unsure',
      'fresh',
    ]);
    expect(got[0].to).toEqual({ path: 'src/a.js', lines: [7, 9] });
    expect(got[2].to).toEqual({ path: 'src/lib-b.js', lines: [3, 5] });
    expect(got[3]).toMatchObject({ rule: 'R6', to: { path: 'src/a.js', lines: [33, 35] } });
    expect(got.map((o: Json) => truthOf(o.label))).toEqual([
      'valid',
      'stale',
      'valid',
      'valid',
      null,
      'valid',
    ]);
  });

  it('scores each system: stale served, false stale, exact relocation', async () => {
    const { A, B, anchors, gitDir } = history();
    const rd = reader(gitDir);
    const renames = renamesBetween(gitDir, A, B);
    const systems = ADAPTERS.filter((s: Json) => s.name !== 'git-mem');
    const verdicts: Record<string, Json> = {};
    for (const s of systems)
      verdicts[s.name] = (await s.judge({ rd: reader(gitDir), base: A, targets: [B], anchors }))[0];
    const rows = anchors.map((an, i) => {
      const oracle = label(rd, A, B, renames, an);
      const v: Record<string, Json> = {};
      for (const s of systems) v[s.name] = verdicts[s.name][i];
      return { anchor: an, oracle, truth: truthOf(oracle.label), verdicts: v };
    });
    const pick = (name: string) => {
      const x = score(rows, name);
      return [x.n, x.staleServedCount, x.falseStaleCount, x.relocationExactCount, x.moved];
    };
    // 5 judged (1 stale, 4 valid of which 3 moved); the whitespace-only change is left out
    expect(pick('line-numbers')).toEqual([5, 1, 1, 0, 3]); // serves the edit; b.js is gone
    expect(pick('file-hash')).toEqual([5, 0, 3, 0, 3]); // a.js, b.js, c.js changed
    expect(pick('exact-text')).toEqual([5, 0, 3, 0, 3]);
    expect(pick('memcite')).toEqual([5, 0, 2, 1, 3]); // relocates within a.js only
    expect(pick('git-blame')).toEqual([5, 0, 0, 3, 3]); // follows the rename and the copy (-M -C)
    expect(score(rows, 'memcite')).toMatchObject({
      staleServed: 0,
      falseStale: 0.5,
      relocationExact: 0.3333,
    });
  });

  it('finds whole definitions for symbol anchors (decorators included)', () => {
    const py = [
      '@cache',
      'def f(a):',
      '    return a',
      '',
      '',
      'class K:',
      '    def m(self):',
      '        pass',
      'x = 1',
    ];
    expect(definitions('m.py', py)).toEqual([
      { name: 'f', start: 1, header: 2, end: 3 },
      { name: 'K', start: 6, header: 6, end: 8 },
      { name: 'm', start: 7, header: 7, end: 8 },
    ]);
    const go = [
      'package p',
      '',
      'func (s *S) Run(x int) error {',
      '\tif x > 0 {',
      '\t\treturn nil',
      '\t}',
      '\treturn nil',
      '}',
    ];
    expect(definitions('p.go', go)).toEqual([{ name: 'Run', start: 3, header: 3, end: 8 }]);
  });
});
