/**
 * The one line diff (src/anchors/diff.ts): its runs of changed lines, and the web UI's rows laid
 * out on them, which must stay what they were when the UI walked the line mapping itself.
 */
import { describe, expect, it } from 'vitest';
import { changedRuns, diffLines } from '../src/anchors/diff.js';
import { bodyDiff } from '../src/merge/conflicts.js';
import { diffRows } from '../src/ui/diff.js';
import type { DiffRow } from '../src/ui/wire.js';
import { rng } from './helpers.js';

/** The UI's rows as src/ui/diff.ts made them before it was laid on changedRuns (the reference). */
function rowsBefore(a: readonly string[], b: readonly string[]): DiffRow[] {
  const d = diffLines(a, b);
  const rows: DiffRow[] = [];
  let i = 1;
  let j = 1;
  while (i <= a.length || j <= b.length) {
    if (i <= a.length && j <= b.length && d.oldToNew[i] === j) {
      rows.push({ op: ' ', old: i, new: j, text: a[i - 1] });
      i++;
      j++;
    } else if (i <= a.length && d.oldToNew[i] === 0) {
      rows.push({ op: '-', old: i, text: a[i - 1] });
      i++;
    } else if (j <= b.length && d.newToOld[j] === 0) {
      rows.push({ op: '+', new: j, text: b[j - 1] });
      j++;
    } else if (i <= a.length) {
      rows.push({ op: '-', old: i, text: a[i - 1] });
      i++;
    } else {
      rows.push({ op: '+', new: j, text: b[j - 1] });
      j++;
    }
  }
  return rows;
}

function randomPair(next: () => number): [string[], string[]] {
  const words = ['a', 'b', 'c', 'd', '', '}', 'return x;'];
  const a = Array.from({ length: Math.floor(next() * 40) }, () => words[Math.floor(next() * words.length)]);
  const b: string[] = [];
  for (const line of a) {
    const r = next();
    if (r < 0.1) continue; // removed
    if (r < 0.2)
      b.push(words[Math.floor(next() * words.length)]); // replaced
    else b.push(line);
    if (next() < 0.1) b.push(`new ${Math.floor(next() * 5)}`); // added
  }
  return [a, b];
}

describe('the one line diff', () => {
  it('gives the UI the rows it gave before, on a thousand random edits', () => {
    const next = rng(29);
    for (let n = 0; n < 1000; n++) {
      const [a, b] = randomPair(next);
      expect(diffRows(a, b), JSON.stringify([a, b])).toEqual(rowsBefore(a, b));
    }
  });

  it('runs of changed lines: where they start on each side, and applying them to the old text gives the new', () => {
    expect(changedRuns(['a', 'b', 'c', 'd'], ['a', 'B', 'c', 'd', 'e'])).toEqual([
      { old: 2, new: 2, removed: ['b'], added: ['B'] },
      { old: 5, new: 5, removed: [], added: ['e'] },
    ]);
    expect(changedRuns(['x'], [])).toEqual([{ old: 1, new: 1, removed: ['x'], added: [] }]);
    expect(changedRuns(['same'], ['same'])).toEqual([]);
    const next = rng(5);
    for (let n = 0; n < 500; n++) {
      const [a, b] = randomPair(next);
      const out: string[] = [];
      let i = 0;
      for (const r of changedRuns(a, b)) {
        out.push(...a.slice(i, r.old - 1));
        expect(a.slice(r.old - 1, r.old - 1 + r.removed.length)).toEqual(r.removed);
        expect(out.length + 1).toBe(r.new);
        out.push(...r.added);
        i = r.old - 1 + r.removed.length;
      }
      out.push(...a.slice(i));
      expect(out).toEqual(b);
    }
  });
});

describe('bodyDiff (a body conflict on the Conflicts page and in git mem conflicts)', () => {
  it('gives the runs where the kept body and the other differ, numbered in the kept body', () => {
    expect(bodyDiff('a\nb\nc\nd\n', 'a\nB\nc\nd\ne\n')).toEqual([
      { line: 2, kept: ['b'], other: ['B'] },
      { line: 5, kept: [], other: ['e'] },
    ]);
    expect(bodyDiff('same\n', 'same\n')).toEqual([]);
    expect(bodyDiff('x\ny\n', 'y\n')).toEqual([{ line: 1, kept: ['x'], other: [] }]);
  });
});
