/**
 * Where did an anchored range go? Pure: given the old and new lines of one
 * file, maps the range through a line diff; when the diff touched the range,
 * searches the new file for the anchored text and scores the candidates by
 * their context and their distance from where the diff says the range went.
 *
 * The hash gate: a range is reported found only when its whitespace-normalised
 * hash (or its whitespace-insensitive hash) equals the anchor's. An edited
 * anchor therefore can never come back fresh or moved. Where the language makes indentation
 * meaning (`indent`), the gate also wants every line indented as it was: a Python block dedented
 * out of a `with` is an edit, not reformatting. Several equally good places are `ambiguous`.
 */
import { diffLines, type LineDiff, mapRange } from './diff.js';
import {
  distinctiveLine,
  hashLines,
  normLine,
  type RawSyntax,
  sameIndentation,
  sameRawLiterals,
  wsHash,
} from './text.js';

export interface RelocInput {
  oldLines: readonly string[];
  newLines: readonly string[];
  start: number;
  end: number;
  hash: string;
  wshash?: string;
  before?: readonly string[];
  after?: readonly string[];
  /** A precomputed diff of oldLines → newLines (shared by anchors of one file). */
  diff?: LineDiff;
  /** Indentation is significant in this file's language: a changed indent is an edit. */
  indent?: boolean;
  /** The language's verbatim literals: a whitespace change inside one is an edit. */
  raw?: RawSyntax;
}

export interface RelocResult {
  /**
   * intact: the lines survived where the diff puts them; found: located by search; lost: not
   * found; ambiguous: found at several places that nothing tells apart (see `candidates`).
   */
  kind: 'intact' | 'found' | 'lost' | 'ambiguous';
  start: number;
  end: number;
  confidence: number;
  reason: string;
  /** Whitespace differs from the anchored text (reformatted). */
  whitespace?: boolean;
  /** For `ambiguous`: the places equally likely to hold the text. */
  candidates?: Array<{ start: number; end: number }>;
}

export interface Candidate {
  start: number;
  end: number;
  whitespace: boolean;
}

/**
 * Gate: does this range hold the anchored text (modulo whitespace)? With `indentAs` (the anchored
 * lines, for a language whose indentation is meaning) every line must also be indented as there.
 */
export function gate(
  lines: readonly string[],
  hash: string,
  wshash?: string,
  indentAs?: readonly string[],
  raw?: { syntax: RawSyntax; anchored: readonly string[] },
): false | 'exact' | 'whitespace' {
  // hashLines ignores spacing within a line: inside a verbatim literal that spacing is text
  if (raw && !sameRawLiterals(lines, raw.anchored, raw.syntax)) return false;
  if (indentAs) return hashLines(lines) === hash && sameIndentation(lines, indentAs) ? 'exact' : false;
  if (hashLines(lines) === hash) return 'exact';
  if (wshash && wsHash(lines) === wshash) return 'whitespace';
  return false;
}

/** A file's lines as the search compares them, computed once per lines array. */
interface Prepared {
  norm: string[];
  set: Set<string>;
  stripped?: string[];
}

/**
 * Keyed by the array itself: a check reads each blob once and judges many anchors against it (and
 * searches the same changed files for every lost anchor), so each file is normalised once per run.
 * Callers never mutate a lines array after reading it.
 */
const preparedCache = new WeakMap<readonly string[], Prepared>();

function prepared(lines: readonly string[]): Prepared {
  let p = preparedCache.get(lines);
  if (!p) {
    const norm = lines.map(normLine);
    p = { norm, set: new Set(norm) };
    preparedCache.set(lines, p);
  }
  return p;
}

/** Whether a line, normalised as normLine does, is one of `lines` (after the first call, O(1)). */
export function hasNormalizedLine(lines: readonly string[], line: string): boolean {
  return prepared(lines).set.has(line);
}

/**
 * Every place in `lines` holding the needle (normalised line match, then whitespace-insensitive
 * windows). `indent`: indentation is meaning, so each line must be indented as in the needle and
 * no re-wrapping is accepted.
 */
export function findCandidates(
  lines: readonly string[],
  needle: readonly string[],
  hash: string,
  wshash?: string,
  indent?: boolean,
  raw?: RawSyntax,
): Candidate[] {
  const out: Candidate[] = [];
  const k = needle.length;
  if (!k) return out;
  const prep = prepared(lines);
  const n = prep.norm;
  const nn = needle.map(normLine);
  // anchor on the most distinctive (longest) needle line to skip quickly
  let pivot = 0;
  for (let i = 1; i < k; i++) if (nn[i].length > nn[pivot].length) pivot = i;
  for (let p = pivot; p + (k - pivot) <= n.length; p++) {
    if (n[p] !== nn[pivot]) continue;
    const s = p - pivot;
    if (s < 0) continue;
    let ok = true;
    for (let i = 0; i < k; i++) {
      if (n[s + i] !== nn[i]) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    const slice = lines.slice(s, s + k);
    if (
      hashLines(slice) === hash &&
      (!indent || sameIndentation(slice, needle)) &&
      (!raw || sameRawLiterals(slice, needle, raw))
    )
      out.push({ start: s + 1, end: s + k, whitespace: false });
  }
  if (out.length || !wshash || indent) return out;
  // whitespace-insensitive: the text may have been re-wrapped onto a different number of lines
  const target = needle.join('').replace(/\s+/g, '');
  if (!target) return out;
  prep.stripped ??= lines.map((l) => l.replace(/\s+/g, ''));
  const stripped = prep.stripped;
  for (let s = 0; s < stripped.length; s++) {
    if (!stripped[s] || !target.startsWith(stripped[s])) continue;
    let acc = '';
    for (let e = s; e < stripped.length && acc.length < target.length; e++) {
      acc += stripped[e];
      if (!target.startsWith(acc)) break;
      const found = lines.slice(s, e + 1);
      if (acc === target && wsHash(found) === wshash && (!raw || sameRawLiterals(found, needle, raw))) {
        out.push({ start: s + 1, end: e + 1, whitespace: true });
        break;
      }
    }
  }
  return out;
}

/** Context score: how many of the stored lines above and below still surround a candidate. */
export function contextScore(
  lines: readonly string[],
  c: Candidate,
  before: readonly string[] = [],
  after: readonly string[] = [],
): number {
  let score = 0;
  for (let i = 0; i < before.length; i++) {
    const l = lines[c.start - 1 - before.length + i];
    if (l !== undefined && normLine(l) === normLine(before[i])) score++;
  }
  for (let i = 0; i < after.length; i++) {
    const l = lines[c.end + i];
    if (l !== undefined && normLine(l) === normLine(after[i])) score++;
  }
  return score;
}

/** Context agreement counting only distinctive lines (blank lines, braces and the like prove nothing). */
export function distinctiveContext(
  lines: readonly string[],
  c: { start: number; end: number },
  before: readonly string[] = [],
  after: readonly string[] = [],
): { hit: number; total: number } {
  let hit = 0;
  let total = 0;
  const check = (want: string, got: string | undefined) => {
    if (!distinctiveLine(want)) return;
    total++;
    if (got !== undefined && normLine(got) === normLine(want)) hit++;
  };
  for (let i = 0; i < before.length; i++) check(before[i], lines[c.start - 1 - before.length + i]);
  for (let i = 0; i < after.length; i++) check(after[i], lines[c.end + i]);
  return { hit, total };
}

export function relocate(inp: RelocInput): RelocResult {
  const { oldLines, newLines, start, end } = inp;
  if (start < 1 || end > oldLines.length || end < start) {
    return {
      kind: 'lost',
      start,
      end,
      confidence: 0.5,
      reason: 'the anchored range is outside the base file',
    };
  }
  const d = inp.diff ?? diffLines(oldLines, newLines);
  const mapped = mapRange(d, start, end);
  const needle = oldLines.slice(start - 1, end);
  const indentAs = inp.indent ? needle : undefined;
  if (mapped.intact) {
    const g = gate(
      newLines.slice(mapped.start - 1, mapped.end),
      inp.hash,
      inp.wshash,
      indentAs,
      inp.raw && { syntax: inp.raw, anchored: needle },
    );
    if (g) {
      // the diff may align a common text (a `return x;`) with another copy of it: when another
      // copy is clearly better surrounded by the anchor's distinctive context, take that one
      const here = distinctiveContext(newLines, mapped, inp.before, inp.after);
      if (here.hit < here.total) {
        const others = findCandidates(newLines, needle, inp.hash, inp.wshash, inp.indent, inp.raw)
          .filter((c) => c.start !== mapped.start)
          .map((c) => ({ c, s: distinctiveContext(newLines, c, inp.before, inp.after).hit }))
          .sort((x, y) => y.s - x.s);
        if (others.length && others[0].s > here.hit && others[0].s >= 2) {
          const tied = others.filter((o) => o.s === others[0].s).map((o) => o.c);
          if (tied.length > 1) return ambiguous(tied, mapped);
          const c = others[0].c;
          return {
            kind: 'found',
            start: c.start,
            end: c.end,
            confidence: 0.85,
            reason: `text found at lines ${c.start}-${c.end} (the copy whose context matches)`,
          };
        }
      }
      const shift = mapped.start - start;
      return {
        kind: 'intact',
        start: mapped.start,
        end: mapped.end,
        confidence: 1,
        reason:
          shift === 0
            ? 'anchored lines unchanged'
            : `lines shifted by ${shift > 0 ? '+' : ''}${shift} by edits elsewhere in the file`,
      };
    }
  }
  let cands = findCandidates(newLines, needle, inp.hash, inp.wshash, inp.indent, inp.raw);
  // reject copies that already existed elsewhere before the change (the anchored copy is another
  // one, maybe edited) unless the anchor's distinctive context surrounds them clearly
  cands = cands.filter((c) => {
    for (let j = c.start; j <= c.end; j++) {
      const o = d.newToOld[j];
      if (!o || (o >= start && o <= end)) return true;
    }
    const ctx = distinctiveContext(newLines, c, inp.before, inp.after);
    return ctx.hit >= 2 && ctx.hit * 3 >= ctx.total * 2;
  });
  if (!cands.length) {
    return {
      kind: 'lost',
      start: mapped.start,
      end: mapped.end,
      confidence: 0.95,
      reason: 'anchored text edited',
    };
  }
  const scored = cands.map((c) => {
    const ctx = contextScore(newLines, c, inp.before, inp.after);
    const dist = Math.abs(c.start - mapped.start);
    const hit = distinctiveContext(newLines, c, inp.before, inp.after).hit;
    return { c, ctx, hit, score: ctx * 10 - Math.min(dist, 1000) / 100 - (c.whitespace ? 1 : 0) };
  });
  scored.sort((a, b) => b.score - a.score);
  const best = scored[0];
  // copies that the context does not tell apart (only their distance from the old place
  // differs) are equally likely: say so rather than guess
  const tied = scored.filter((x) => x.ctx === best.ctx && x.hit === best.hit);
  if (tied.length > 1)
    return ambiguous(
      tied.map((x) => x.c),
      mapped,
    );
  const margin = scored.length > 1 ? best.score - scored[1].score : Number.POSITIVE_INFINITY;
  const confidence = scored.length === 1 ? (best.c.whitespace ? 0.9 : 0.98) : margin >= 10 ? 0.85 : 0.7;
  const where =
    best.c.start === start && best.c.end === end ? 'in place' : `at lines ${best.c.start}-${best.c.end}`;
  const reason = best.c.whitespace
    ? `whitespace-only change, text found ${where}`
    : scored.length > 1
      ? `text found ${where} (best of ${scored.length} copies by context)`
      : `text found ${where}`;
  return {
    kind: 'found',
    start: best.c.start,
    end: best.c.end,
    confidence,
    reason,
    whitespace: best.c.whitespace,
  };
}

/** Below 0.5: a guess among equals is no relocation. */
export function ambiguityConfidence(n: number): number {
  return Math.min(0.45, Math.round((1 / Math.max(2, n)) * 100) / 100);
}

function ambiguous(
  cands: ReadonlyArray<{ start: number; end: number }>,
  mapped: { start: number; end: number },
): RelocResult {
  const list = cands.map((c) => ({ start: c.start, end: c.end })).sort((a, b) => a.start - b.start);
  return {
    kind: 'ambiguous',
    start: mapped.start,
    end: mapped.end,
    confidence: ambiguityConfidence(list.length),
    reason: `the anchored text is at ${list.length} places that its context does not tell apart (lines ${list
      .map((c) => `${c.start}-${c.end}`)
      .join(', ')})`,
    candidates: list,
  };
}
