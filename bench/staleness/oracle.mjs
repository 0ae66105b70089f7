// The ground truth: where an anchor's exact text is at a later commit B, from git alone
// (`git diff -U0` of the two blobs, `git diff -M -C` for renames, `git grep -F` and exact line
// comparison for text that left its file). No git-mem code. Rules: bench/staleness/README.md; the
// same oracle labels eval/anchors/real.mjs (eval/anchors/REAL.md), whose shared-stratum anchors
// (`stratum: 'shared'`, boilerplate) add rule U4.
import { grepFiles, hunks, mapRange, occurrences } from './git.mjs';

/** Labels: valid ones (the text is intact at B) and stale ones (it is not). */
export const VALID_LABELS = new Set(['fresh', 'moved', 'renamed', 'ambiguous']);
export const STALE_LABELS = new Set(['changed', 'deleted']);

/** 'valid' | 'stale' | null (the oracle cannot tell: excluded from the rates). */
export function truthOf(label) {
  if (VALID_LABELS.has(label)) return 'valid';
  if (STALE_LABELS.has(label)) return 'stale';
  return null;
}

/** Where the exact text is in files other than `exclude` at B, not counting files that had it at A (none when A is null). */
export function elsewhere(rd, A, B, text, exclude) {
  const probe = [...text].sort((x, y) => y.trim().length - x.trim().length)[0].trim();
  const hits = [];
  const preexisting = [];
  if (!probe) return { hits, preexisting };
  for (const q of grepFiles(rd.gitDir, B, probe)) {
    if (exclude.includes(q)) continue;
    const linesB = rd.file(B, q);
    if (!linesB) continue;
    const occ = occurrences(linesB, text);
    if (!occ.length) continue;
    const atA = A ? rd.file(A, q) : null;
    if (atA && occurrences(atA, text).length) preexisting.push(q);
    else for (const o of occ) hits.push({ path: q, lines: [o, o + text.length - 1] });
  }
  return { hits, preexisting };
}

// where indentation is meaning (the extensions of docs/anchors.md), a re-indent is an edit
const INDENT = /\.(py|pyi|pyw|pyx|pxd|bzl|star|ya?ml|mk|mak|hs|lhs|elm|purs|idr|fs|fsi|fsx|nim|nims|nimble|coffee|litcoffee|gd|mojo|pug|jade|sass|styl|slim|haml|rst)$|(^|\/)(GNUm|M|m)akefile$/;
const noWs = (s) => s.replace(/\s+/g, '');
const keepIndent = (l) => {
  const m = /^\s*/.exec(l)[0];
  return m + l.slice(m.length).replace(/\s+/g, ' ').trim();
};

/** `want` (whitespace removed) in `lines` (whitespace removed), from a line start to a line end. */
function wsAligned(lines, want) {
  const parts = lines.map(noWs);
  const joined = parts.join('');
  const starts = new Set();
  const ends = new Set();
  let o = 0;
  for (const p of parts) {
    starts.add(o);
    o += p.length;
    ends.add(o);
  }
  for (let i = joined.indexOf(want); i >= 0; i = joined.indexOf(want, i + 1))
    if (starts.has(i) && ends.has(i + want.length)) return true;
  return false;
}

/**
 * U1: the text is still there when whitespace is ignored (re-indented, re-wrapped, blank lines
 * added or removed) — in P, or in a file new to it. Whether that is an edit is a policy question
 * (a newline in a string literal is one), so the oracle says unsure; except where indentation is
 * meaning, where a changed indent is an edit (R8i).
 */
function wsOnly(rd, A, B, an, P, linesB) {
  const want = noWs(an.text.join('\n'));
  if (!want) return null;
  const files = [];
  if (P) files.push({ path: P, lines: linesB });
  const probe = [...an.text].sort((x, y) => y.trim().length - x.trim().length)[0].trim();
  for (const q of grepFiles(rd.gitDir, B, probe)) {
    if (q === an.path || q === P) continue;
    const atA = rd.file(A, q);
    if (atA && wsAligned(atA, want)) continue;
    files.push({ path: q, lines: rd.file(B, q) ?? [] });
  }
  for (const f of files) {
    if (!wsAligned(f.lines, want)) continue;
    if (INDENT.test(an.path) && !occurrences(f.lines, an.text, keepIndent).length)
      return { label: 'changed', to: null, rule: 'R8i', why: 'indentation changed where it is meaning' };
    return { label: 'unsure', to: null, rule: 'U1', why: `whitespace-only change (re-indent, re-wrap or blank lines) in ${f.path}` };
  }
  return null;
}

/**
 * The oracle's label for an anchor {path, lines:[s,e], text} made at commit A, judged at B.
 * `renames` is renamesBetween(A, B). Returns {label, to, rule, why?, candidates?}.
 */
export function label(rd, A, B, renames, an) {
  const [s, e] = an.lines;
  const n = e - s + 1;
  const tb = rd.tree(B);
  const blobA = rd.tree(A).get(an.path);
  let P = tb.has(an.path) ? an.path : renames.get(an.path);
  if (P && !tb.has(P)) P = undefined;
  const renamed = P !== undefined && P !== an.path;
  const range = (p, start) => ({ path: p, lines: [start, start + n - 1] });
  if (P) {
    const blobB = tb.get(P);
    const linesB = rd.lines(blobB);
    const m = mapRange(hunks(rd.gitDir, blobA, blobB), s, e);
    if (!m.touched) {
      const to = range(P, m.start);
      if (renamed) return { label: 'renamed', to, rule: 'R3' };
      return { label: m.start === s ? 'fresh' : 'moved', to, rule: m.start === s ? 'R1' : 'R2' };
    }
    const occ = occurrences(linesB, an.text);
    if (occ.length === 1) return { label: renamed ? 'renamed' : 'moved', to: range(P, occ[0]), rule: 'R4' };
    if (occ.length > 1) return { label: 'ambiguous', to: null, candidates: occ.map((o) => range(P, o)), rule: 'R5' };
    const other = elsewhere(rd, A, B, an.text, [P, an.path]);
    // boilerplate (shared stratum) that left a file still there, with one new copy elsewhere: as
    // likely edited in place next to a coincidental copy as moved
    if (other.hits.length === 1 && an.stratum === 'shared')
      return { label: 'unsure', to: null, rule: 'U4', why: `text left the file; one new copy in ${other.hits[0].path}, but the text is boilerplate` };
    if (other.hits.length === 1) return { label: 'moved', to: other.hits[0], rule: 'R6' };
    if (other.hits.length > 1)
      return { label: 'unsure', to: null, rule: 'U3', why: `edited in place, or moved to one of ${other.hits.length} new copies` };
    const ws = wsOnly(rd, A, B, an, P, linesB);
    if (ws) return ws;
    return { label: 'changed', to: null, rule: 'R8' };
  }
  const other = elsewhere(rd, A, B, an.text, [an.path]);
  // the file is gone and its text is in a file that did not exist at A: a rename by content
  // (git's -M stops at 50 % similarity); into a file that existed, a move
  if (other.hits.length === 1)
    return rd.tree(A).has(other.hits[0].path)
      ? { label: 'moved', to: other.hits[0], rule: 'R9' }
      : { label: 'renamed', to: other.hits[0], rule: 'R9r' };
  if (other.hits.length > 1) return { label: 'ambiguous', to: null, candidates: other.hits, rule: 'R7' };
  if (other.preexisting.length) return { label: 'unsure', to: null, rule: 'U2', why: 'only a copy that existed at A' };
  const ws = wsOnly(rd, A, B, an, null, null);
  if (ws) return ws;
  return { label: 'deleted', to: null, rule: 'R10' };
}
