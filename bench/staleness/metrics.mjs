// Scores of the staleness benchmark: rows {truth, oracle, anchor, verdicts: {system: {stale, to}}}.
//   staleServed     — of the anchors the oracle calls stale, the share a system serves (not stale)
//   falseStale      — of the anchors the oracle calls valid, the share a system withholds as stale
//   relocationExact — of the valid anchors whose text moved (another path or other lines), the
//                     share a system serves at exactly the oracle's new place
// Rows the oracle is unsure about count in none of them.

const sameRange = (a, b) => a && b && a.path === b.path && a.lines?.[0] === b.lines?.[0] && a.lines?.[1] === b.lines?.[1];

/** Whether a verdict's place is the oracle's. A symbol anchor's extent is the sampler's: its header line must be inside the range the system gives, in the same file. */
export function exactPlace(row, to) {
  const want = row.oracle.to;
  if (!want || !to?.lines) return false;
  if (row.anchor.kind !== 'symbol') return sameRange(to, want);
  const header = want.lines[0] + (row.anchor.header - row.anchor.lines[0]);
  return to.path === want.path && to.lines[0] <= header && header <= to.lines[1];
}

/** Whether the anchor's text moved (valid, at a place other than where it was made). */
export const movedRow = (row) =>
  row.truth === 'valid' && !!row.oracle.to && !sameRange(row.oracle.to, { path: row.anchor.path, lines: row.anchor.lines });

export function score(rows, system) {
  let stale = 0;
  let valid = 0;
  let moved = 0;
  let staleServed = 0;
  let falseStale = 0;
  let relocExact = 0;
  for (const r of rows) {
    const v = r.verdicts[system];
    if (!v || !r.truth) continue;
    if (r.truth === 'stale') {
      stale++;
      if (!v.stale) staleServed++;
    } else {
      valid++;
      if (v.stale) falseStale++;
      if (movedRow(r)) {
        moved++;
        if (!v.stale && exactPlace(r, v.to)) relocExact++;
      }
    }
  }
  const rate = (a, b) => (b ? Number((a / b).toFixed(4)) : 0);
  return {
    n: stale + valid,
    stale,
    valid,
    moved,
    staleServedCount: staleServed,
    falseStaleCount: falseStale,
    relocationExactCount: relocExact,
    staleServed: rate(staleServed, stale),
    falseStale: rate(falseStale, valid),
    relocationExact: rate(relocExact, moved),
  };
}
