/**
 * Line diffs as the web UI shows them: rows of kept, removed and added lines
 * with their numbers on each side, cut to hunks. The lines are matched by the
 * one line differ of the project (src/anchors/diff.ts, the one anchors use to
 * follow code); this only lays its answer out. Pure.
 */
import { changedRuns } from '../anchors/diff.js';
import type { DiffRow } from './wire.js';

/** Text → lines, without the empty line after a final newline. */
export function splitText(text: string): string[] {
  if (!text) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Every line of both texts in order, each marked kept, removed or added. */
export function diffRows(a: readonly string[], b: readonly string[]): DiffRow[] {
  const rows: DiffRow[] = [];
  let i = 1;
  let j = 1;
  const keep = (toOld: number) => {
    for (; i < toOld; i++, j++) rows.push({ op: ' ', old: i, new: j, text: a[i - 1] });
  };
  for (const run of changedRuns(a, b)) {
    keep(run.old);
    for (const [k, text] of run.removed.entries()) rows.push({ op: '-', old: run.old + k, text });
    for (const [k, text] of run.added.entries()) rows.push({ op: '+', new: run.new + k, text });
    i = run.old + run.removed.length;
    j = run.new + run.added.length;
  }
  keep(a.length + 1);
  return rows;
}

/**
 * The changed rows with `context` kept rows around each, runs in between
 * folded into one '…' row. With `focus` (old line numbers), only the hunks
 * that touch that range are kept.
 */
export function hunks(rows: readonly DiffRow[], context = 3, focus?: [number, number]): DiffRow[] {
  const keep = new Uint8Array(rows.length);
  // the old line each row sits at (an added row: the old line before it)
  let last = 0;
  const at = rows.map((r) => {
    if (r.old !== undefined) last = r.old;
    return last;
  });
  const inFocus = (k: number): boolean => !focus || (at[k] >= focus[0] - 1 && at[k] <= focus[1]);
  rows.forEach((r, k) => {
    if (r.op === ' ' || !inFocus(k)) return;
    for (let x = Math.max(0, k - context); x <= Math.min(rows.length - 1, k + context); x++) keep[x] = 1;
  });
  const out: DiffRow[] = [];
  let skipped = 0;
  let changed = 0;
  const fold = () => {
    if (!skipped) return;
    const lines = `${skipped} ${changed ? '' : 'unchanged '}line${skipped === 1 ? '' : 's'}`;
    out.push({
      op: '…',
      text: changed ? `${lines} (${changed} changed, away from the anchored lines)` : lines,
    });
    skipped = 0;
    changed = 0;
  };
  rows.forEach((r, k) => {
    if (keep[k]) {
      fold();
      out.push(r);
    } else {
      skipped++;
      if (r.op !== ' ') changed++;
    }
  });
  if (out.length) fold();
  return out;
}
