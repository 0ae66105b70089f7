import type { MemoryRecord, MemoryType } from '../model/record.js';
import type { Duplicate } from '../search/dedup.js';
import { overlap, terms } from '../search/text.js';

export type ConsolidationKind = 'merge' | 'supersede' | 'archive';

export interface ConsolidationEvidence {
  /** How the add-time duplicate check saw the pair (exact text, token overlap or cosine) and its score. */
  duplicate?: { reason: Duplicate['reason']; similarity: number };
  /** Dice overlap of the titles' words, 0..1. */
  subject: number;
  /** Share of the older memory's words the newer one holds, 0..1. */
  coverage: number;
  sharedTags: string[];
  sharedAnchors: string[];
  /** The newer memory's words that name, reverse or replace the older one. */
  phrases: string[];
  /** Values (numbers, versions) only in the older memory and only in the newer one. */
  values?: { old: string[]; new: string[] };
}

/** Types compared with each other; sessions and strategies (counted outcomes) are never consolidated. */
export const FAMILY: Partial<Record<MemoryType, string>> = {
  decision: 'norm',
  convention: 'norm',
  constraint: 'norm',
  preference: 'norm',
  rule: 'rule',
  known_fix: 'fix',
  failed_attempt: 'fix',
  environment: 'fact',
  dependency: 'fact',
  architecture: 'fact',
  security: 'fact',
};

// ------------------------------------------------------------------ the pure part: one pair

interface Mem {
  r: MemoryRecord;
  time: number;
  title: string[];
  words: Set<string>;
  text: string;
  anchors: Set<string>;
  cues: boolean;
}

function mem(r: MemoryRecord): Mem {
  const text = `${r.title}\n${r.body}`;
  return {
    r,
    time: Date.parse(r.created) || 0,
    title: terms(r.title),
    words: new Set(terms(text)),
    text,
    anchors: new Set(r.anchors.map((a) => a.path)),
    cues: reversals(text).length > 0,
  };
}

/**
 * Words that reverse or retire something, with the side of the cue where the
 * thing retired stands: "no longer use X", "instead of X", "switched from X",
 * "X is deprecated", "X was replaced by".
 */
const AFTER = [
  /\bno longer\b/g,
  /\binstead of\b/g,
  /\brather than\b/g,
  /\b(?:don'?t|do not|never|stop|stopped) (?:use|using|run|running|call|calling|rely on|add|adding)\b/g,
  /\b(?:switched|moved|migrated|changed|went) (?:away )?from\b/g,
  /\b(?:replaced|replacing|replaces|supersedes|superseded)\b(?! by| with)/g,
  /\b(?:removed|dropped|got rid of|retired)\b/g,
];
const BEFORE = [
  /\b(?:is|are|was|were|has been|have been|now) (?:deprecated|replaced|removed|obsolete|outdated|gone|dropped|retired)\b/g,
  /\b(?:replaced|superseded) (?:by|with)\b/g,
  /\bis no longer (?:true|valid|needed|used|the case)\b/g,
  /\bnot any ?more\b/g,
];

/** Reversal phrases in `text`, each with the words on the side naming what is retired. */
function reversals(text: string): Array<{ phrase: string; object: string[] }> {
  const out: Array<{ phrase: string; object: string[] }> = [];
  for (const sentence of text
    .toLowerCase()
    .replace(/’/g, "'")
    .split(/(?<=[.!?;])\s+|\n+/)) {
    for (const [res, after] of [
      [AFTER, true],
      [BEFORE, false],
    ] as const) {
      for (const re of res) {
        for (const m of sentence.matchAll(re)) {
          const side = after ? sentence.slice(m.index + m[0].length) : sentence.slice(0, m.index ?? 0);
          const words = terms(side);
          out.push({
            phrase: sentence.trim().slice(0, 160),
            object: after ? words.slice(0, 4) : words.slice(-4),
          });
        }
      }
    }
  }
  return out;
}

/** Numbers and versions in a text, single digits included (the word terms split `1.2.3` into its numbers). */
function values(text: string): Set<string> {
  return new Set(text.toLowerCase().match(/\d+(?:[.,]\d+)*/g) ?? []);
}

export function coverage(of: Set<string>, by: Set<string>): number {
  if (!of.size) return 0;
  let n = 0;
  for (const w of of) if (by.has(w)) n++;
  return n / of.size;
}

function sameScope(a: MemoryRecord, b: MemoryRecord): boolean {
  return [...a.scope].sort().join('\n') === [...b.scope].sort().join('\n');
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** Matches of the older memory's id, alias or title in the newer memory's text. */
function namesOlder(n: Mem, o: Mem): string | undefined {
  const lower = n.text.toLowerCase();
  const id = o.r.id.toLowerCase();
  for (let len = 26; len >= 8; len--) if (lower.includes(id.slice(0, len))) return o.r.id.slice(0, len);
  if (o.r.alias && lower.includes(o.r.alias.toLowerCase())) return o.r.alias;
  const t = o.r.title.trim().toLowerCase();
  if (t.length >= 12 && lower.includes(`"${t}"`)) return `"${o.r.title}"`;
  return undefined;
}

export interface PairVerdict {
  kind: ConsolidationKind;
  ids: string[];
  reason: string;
  evidence: ConsolidationEvidence;
  /** For ordering: the plainer the evidence, the higher. */
  strength: number;
}

/**
 * What to do with a pair of active memories (pure): undefined when nothing
 * is plain enough to propose. `dup` is the add-time duplicate check's
 * verdict on the pair, when it flagged it.
 */
export function judgePair(a: MemoryRecord, b: MemoryRecord, dup?: Duplicate): PairVerdict | undefined {
  const fa = FAMILY[a.type];
  if (!fa || fa !== FAMILY[b.type] || !sameScope(a, b)) return undefined;
  const [o, n] = [mem(a), mem(b)].sort((x, y) => x.time - y.time || (x.r.id < y.r.id ? -1 : 1));
  const sharedTags = o.r.tags.filter((t) => n.r.tags.includes(t));
  const sharedAnchors = [...o.anchors].filter((p) => n.anchors.has(p));
  const subject = round(overlap(o.title, n.title));
  const ev: ConsolidationEvidence = {
    ...(dup ? { duplicate: { reason: dup.reason, similarity: dup.similarity } } : {}),
    subject,
    coverage: round(coverage(o.words, n.words)),
    sharedTags,
    sharedAnchors,
    phrases: [],
  };
  const linked = sharedTags.length > 0 || sharedAnchors.length > 0;
  const sameSubject = subject >= 0.6 || (subject >= 0.4 && linked) || (!!dup && subject >= 0.3);
  const ids = [o.r.id, n.r.id];
  const short = (m: Mem) => m.r.id.slice(0, 12);

  // 1. the newer one names the older and says it replaces it
  const named = namesOlder(n, o);
  if (named) {
    const cue = reversals(n.text).find((c) => c.phrase.includes(named.toLowerCase().replace(/"/g, '')));
    const says = cue ?? reversals(n.text).find((c) => /supersede|replace|instead|no longer/.test(c.phrase));
    if (says) {
      ev.phrases = [says.phrase];
      return {
        kind: 'supersede',
        ids,
        reason: `${short(n)} names ${short(o)} and says it replaces it`,
        evidence: ev,
        strength: 5,
      };
    }
  }
  if (!sameSubject) return undefined;

  // 2. a contradiction: the newer one reverses what the older one affirms, on the same subject
  if (!o.cues) {
    const rev = reversals(n.text).filter((c) => c.object.some((w) => o.words.has(w) && !/\d/.test(w)));
    if (rev.length) {
      ev.phrases = [...new Set(rev.map((c) => c.phrase))].slice(0, 3);
      return {
        kind: 'supersede',
        ids,
        reason: `${short(n)} reverses ${short(o)} on the same subject ("${rev[0].phrase.slice(0, 80)}")`,
        evidence: ev,
        strength: 4,
      };
    }
  }

  // 3. the same fact with a newer value ("Node 18" → "Node 20")
  const vo = values(o.text);
  const vn = values(n.text);
  const onlyO = [...vo].filter((v) => !vn.has(v));
  const onlyN = [...vn].filter((v) => !vo.has(v));
  if (onlyO.length && onlyN.length && onlyO.length <= 3 && onlyN.length <= 3) {
    const digit = (w: string) => /\d/.test(w);
    const restO = new Set([...o.words].filter((w) => !digit(w)));
    const restN = new Set([...n.words].filter((w) => !digit(w)));
    const titleRest = overlap(
      o.title.filter((w) => !digit(w)),
      n.title.filter((w) => !digit(w)),
    );
    if (titleRest >= 0.75 && coverage(restO, restN) >= 0.85 && coverage(restN, restO) >= 0.85) {
      ev.values = { old: onlyO, new: onlyN };
      return {
        kind: 'supersede',
        ids,
        reason: `${short(n)} states the same as ${short(o)} with a newer value (${onlyO.join(', ')} → ${onlyN.join(', ')})`,
        evidence: ev,
        strength: 3,
      };
    }
  }
  // a pair that disagrees in numbers or in reversal words is not one to fold into the other
  const disagree = (onlyO.length > 0 && onlyN.length > 0) || o.cues !== n.cues;
  const covO = coverage(o.words, n.words);
  // 5. on the same subject, the newer one says all the older one says, and more (whether or not
  // add's duplicate check flagged the pair: a longer text is often not similar enough for it)
  if (!disagree && covO >= 0.95 && n.words.size > o.words.size && o.r.type === n.r.type) {
    return {
      kind: 'supersede',
      ids,
      reason: `${short(n)} says all ${short(o)} says, and more`,
      evidence: ev,
      strength: 2,
    };
  }
  if (!dup || disagree) return undefined;

  // 4. the same text: the newer copy goes, unless it carries tags or anchors the older lacks
  const newerAdds =
    n.r.tags.some((t) => !o.r.tags.includes(t)) || [...n.anchors].some((p) => !o.anchors.has(p));
  if (dup.reason === 'exact' && !newerAdds) {
    return {
      kind: 'archive',
      ids: [n.r.id, o.r.id],
      reason: `${short(n)} repeats ${short(o)} word for word`,
      evidence: ev,
      strength: 4,
    };
  }
  const covN = coverage(n.words, o.words);
  if (covN >= 0.95 && o.words.size >= n.words.size && !newerAdds) {
    return {
      kind: 'archive',
      ids: [n.r.id, o.r.id],
      reason: `${short(n)} adds nothing to ${short(o)}`,
      evidence: ev,
      strength: 2,
    };
  }
  // 6. near-duplicates that each add something: one merged record
  if (o.r.type !== n.r.type) return undefined;
  if (!(linked || subject >= 0.5 || dup.similarity >= 0.8)) return undefined;
  return {
    kind: 'merge',
    ids,
    reason: `${short(o)} and ${short(n)} say nearly the same (${dup.reason}${dup.reason === 'exact' ? '' : ` ${dup.similarity}`})`,
    evidence: ev,
    strength: 1,
  };
}

/** Pairs whose titles share a distinctive word, or that share an anchored file (blocking, then judged). */
export function subjectPairs(records: MemoryRecord[]): Array<[string, string]> {
  const postings = new Map<string, string[]>();
  const add = (k: string, id: string) => {
    const l = postings.get(k);
    if (l) {
      if (l[l.length - 1] !== id) l.push(id);
    } else postings.set(k, [id]);
  };
  for (const r of records) {
    for (const w of new Set(terms(r.title))) add(`w:${w}`, r.id);
    for (const a of new Set(r.anchors.map((x) => x.path))) add(`a:${a}`, r.id);
  }
  const seen = new Set<string>();
  const out: Array<[string, string]> = [];
  for (const ids of postings.values()) {
    if (ids.length < 2 || ids.length > 40) continue; // a word in many titles names no subject
    for (let i = 0; i < ids.length; i++)
      for (let j = i + 1; j < ids.length; j++) {
        const k = `${ids[i]} ${ids[j]}`;
        if (seen.has(k)) continue;
        seen.add(k);
        out.push([ids[i], ids[j]]);
      }
  }
  return out;
}

export const METHOD_PREFIX = 'consolidate:';

/** The consolidation a pending record holds, or undefined for any other record. */
export function consolidationOf(r: MemoryRecord):
  | {
      kind: ConsolidationKind;
      ids: string[];
      key: string;
    }
  | undefined {
  const p = r.extra.proposal as Record<string, unknown> | undefined;
  const method = typeof p?.method === 'string' ? p.method : '';
  if (!method.startsWith(METHOD_PREFIX)) return undefined;
  const kind = method.slice(METHOD_PREFIX.length) as ConsolidationKind;
  const ids = Array.isArray(p?.ids) ? (p.ids as unknown[]).map(String) : [];
  if (!['merge', 'supersede', 'archive'].includes(kind) || ids.length < (kind === 'merge' ? 2 : 2))
    return undefined;
  return { kind, ids, key: typeof p?.key === 'string' ? p.key : keyOf(ids) };
}

export function keyOf(ids: string[]): string {
  return `consolidate:${[...ids].sort().join(',')}`;
}
