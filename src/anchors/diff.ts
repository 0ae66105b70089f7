/**
 * The one line diff of the project (Myers, O((N+M)·D), common prefix and
 * suffix trimmed first): the mapping of old line numbers to new ones that
 * relocation needs, and the runs of changed lines that the web UI lays out
 * (src/ui/diff.ts) and a body conflict shows. Pure.
 */

export interface LineDiff {
  /** old line (1-based) → new line, or 0 when the old line was deleted or replaced. */
  oldToNew: Int32Array;
  /** new line (1-based) → old line, or 0 when the new line was inserted. */
  newToOld: Int32Array;
  oldLen: number;
  newLen: number;
}

/** Beyond this many edits the middle part is treated as replaced wholesale (text search still relocates). */
const MAX_D = 3000;

export function diffLines(a: readonly string[], b: readonly string[]): LineDiff {
  const n = a.length;
  const m = b.length;
  const oldToNew = new Int32Array(n + 1);
  const newToOld = new Int32Array(m + 1);
  let pre = 0;
  while (pre < n && pre < m && a[pre] === b[pre]) {
    oldToNew[pre + 1] = pre + 1;
    newToOld[pre + 1] = pre + 1;
    pre++;
  }
  let suf = 0;
  while (suf < n - pre && suf < m - pre && a[n - 1 - suf] === b[m - 1 - suf]) {
    oldToNew[n - suf] = m - suf;
    newToOld[m - suf] = n - suf;
    suf++;
  }
  const aLen = n - pre - suf;
  const bLen = m - pre - suf;
  if (aLen > 0 && bLen > 0) {
    // intern lines to ints for fast comparison
    const ids = new Map<string, number>();
    const ai = new Int32Array(aLen);
    const bi = new Int32Array(bLen);
    for (let i = 0; i < aLen; i++) {
      const s = a[pre + i];
      let v = ids.get(s);
      if (v === undefined) {
        v = ids.size;
        ids.set(s, v);
      }
      ai[i] = v;
    }
    for (let j = 0; j < bLen; j++) {
      const s = b[pre + j];
      let v = ids.get(s);
      if (v === undefined) {
        v = ids.size;
        ids.set(s, v);
      }
      bi[j] = v;
    }
    const pairs = myers(ai, bi);
    if (pairs) {
      for (const [x, y] of pairs) {
        oldToNew[pre + x + 1] = pre + y + 1;
        newToOld[pre + y + 1] = pre + x + 1;
      }
    }
  }
  return { oldToNew, newToOld, oldLen: n, newLen: m };
}

/** Matched (x, y) index pairs of an LCS-like alignment, or null when D exceeds MAX_D. */
function myers(a: Int32Array, b: Int32Array): Array<[number, number]> | null {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_D);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && v[off + k - 1] < v[off + k + 1])) x = v[off + k + 1];
      else x = v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  if (found < 0) return null;
  // backtrack
  const pairs: Array<[number, number]> = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const vd = trace[d]; // covers k in [-d-1, d+1] at index k + d + 1
    const get = (k: number) => vd[k + d + 1];
    const k = x - y;
    let prevK: number;
    if (k === -d || (k !== d && get(k - 1) < get(k + 1))) prevK = k + 1;
    else prevK = k - 1;
    const prevX = get(prevK);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      pairs.push([x, y]);
    }
    x = prevX;
    y = prevY;
  }
  while (x > 0 && y > 0) {
    x--;
    y--;
    pairs.push([x, y]);
  }
  return pairs;
}

/** One place two texts differ: the lines of `a` from line `old` replaced by the lines of `b` from line `new` (1-based). */
export interface ChangedRun {
  old: number;
  new: number;
  removed: string[];
  added: string[];
}

/** The runs of lines where `b` differs from `a`, in order (the lines both hold are left out). */
export function changedRuns(a: readonly string[], b: readonly string[], d = diffLines(a, b)): ChangedRun[] {
  const runs: ChangedRun[] = [];
  let i = 1;
  let j = 1;
  while (i <= a.length || j <= b.length) {
    if (i <= a.length && j <= b.length && d.oldToNew[i] === j) {
      i++;
      j++;
      continue;
    }
    const run: ChangedRun = { old: i, new: j, removed: [], added: [] };
    // a line matched out of order (the differ never gives one; kept safe) counts as changed
    while (i <= a.length && (d.oldToNew[i] === 0 || d.oldToNew[i] < j)) run.removed.push(a[i++ - 1]);
    while (j <= b.length && (d.newToOld[j] === 0 || d.newToOld[j] < i)) run.added.push(b[j++ - 1]);
    if (!run.removed.length && !run.added.length) {
      // crossing matches: give way on the side that is behind
      if (i <= a.length) run.removed.push(a[i++ - 1]);
      else run.added.push(b[j++ - 1]);
    }
    runs.push(run);
  }
  return runs;
}

/**
 * Maps a 1-based inclusive old range through the diff. `intact` when every old
 * line of the range survives, in order and contiguous, in the new file.
 */
export function mapRange(
  d: LineDiff,
  start: number,
  end: number,
): { start: number; end: number; intact: boolean } {
  let intact = true;
  let prev = -1;
  for (let i = start; i <= end; i++) {
    const j = d.oldToNew[i] ?? 0;
    if (!j || (prev >= 0 && j !== prev + 1)) intact = false;
    prev = j;
  }
  if (intact) return { start: d.oldToNew[start], end: d.oldToNew[end], intact };
  // an edited range covers what replaced it: an end line that survived keeps its place; an end
  // line edited or removed gives way to everything between the surviving lines around the range
  // (the replacement lines, lines added or removed at that end included)
  const after = (i: number) => {
    for (let k = i; k >= 1; k--) if (d.oldToNew[k]) return d.oldToNew[k] + 1;
    return 1;
  };
  const before = (i: number) => {
    for (let k = i; k <= d.oldLen; k++) if (d.oldToNew[k]) return d.oldToNew[k] - 1;
    return d.newLen;
  };
  const s = d.oldToNew[start] || after(start - 1);
  const e = d.oldToNew[end] || before(end + 1);
  if (e >= s && s >= 1) return { start: s, end: e, intact };
  // range wholly deleted: the position where it used to be
  const at = Math.min(after(start - 1), Math.max(1, d.newLen));
  return { start: at, end: Math.min(Math.max(at, at + (end - start)), Math.max(1, d.newLen)), intact: false };
}
