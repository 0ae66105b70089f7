/**
 * What a word is, for every part of git-mem that compares texts: the search index
 * and ranker, the duplicate check, prompt relevance and context packs, the proposal
 * gate and consolidation. One tokenizer (lowercase, split on non-word characters and
 * camelCase, English stop words, Porter stemming), so a query, a record, a proposal
 * and a prompt are always cut the same way. Pure.
 */
import { INVISIBLE } from '../safety/invisible.js';

const STOP = new Set(
  (
    'a an and are as at be been but by can could do does did for from had has have how i if in into is it its ' +
    'me my no not of on or our so such that the their them then there these they this to too up us was we were ' +
    'what when where which while who why will with would you your here also just than via about after before ' +
    'should shall may might any all some each other only own same very s t'
  ).split(' '),
);

// ---------------------------------------------------------------- Porter stemmer
// The classic Porter (1980) algorithm, written from the published description
// (https://tartarus.org/martin/PorterStemmer/), with precompiled expressions.
const c = '[^aeiou]';
const v = '[aeiouy]';
const C = `${c}[^aeiouy]*`;
const V = `${v}[aeiou]*`;
const MGR0 = new RegExp(`^(${C})?${V}${C}`);
const MEQ1 = new RegExp(`^(${C})?${V}${C}(${V})?$`);
const MGR1 = new RegExp(`^(${C})?${V}${C}${V}${C}`);
const SV = new RegExp(`^(${C})?${v}`);
const CVC = new RegExp(`^${C}${v}[^aeiouwxy]$`);
const STEP2: Record<string, string> = {
  ational: 'ate',
  tional: 'tion',
  enci: 'ence',
  anci: 'ance',
  izer: 'ize',
  bli: 'ble',
  alli: 'al',
  entli: 'ent',
  eli: 'e',
  ousli: 'ous',
  ization: 'ize',
  ation: 'ate',
  ator: 'ate',
  alism: 'al',
  iveness: 'ive',
  fulness: 'ful',
  ousness: 'ous',
  aliti: 'al',
  iviti: 'ive',
  biliti: 'ble',
  logi: 'log',
};
const STEP3: Record<string, string> = {
  icate: 'ic',
  ative: '',
  alize: 'al',
  iciti: 'ic',
  ical: 'ic',
  ful: '',
  ness: '',
};
const RE_STEP2 =
  /^(.+?)(ational|tional|enci|anci|izer|bli|alli|entli|eli|ousli|ization|ation|ator|alism|iveness|fulness|ousness|aliti|iviti|biliti|logi)$/;
const RE_STEP3 = /^(.+?)(icate|ative|alize|iciti|ical|ful|ness)$/;
const RE_STEP4 = /^(.+?)(al|ance|ence|er|ic|able|ible|ant|ement|ment|ent|ou|ism|ate|iti|ous|ive|ize)$/;
const RE_STEP4B = /^(.+?)(s|t)(ion)$/;

const stemCache = new Map<string, string>();

export function stem(word: string): string {
  if (word.length < 3 || /\d/.test(word)) return word;
  const hit = stemCache.get(word);
  if (hit !== undefined) return hit;
  let w = word;
  const firstY = w[0] === 'y';
  if (firstY) w = `Y${w.slice(1)}`;
  // step 1a
  let m = /^(.+?)(ss|i)es$/.exec(w) ?? /^(.+?)([^s])s$/.exec(w);
  if (m) w = m[1] + m[2];
  // step 1b
  m = /^(.+?)eed$/.exec(w);
  if (m) {
    if (MGR0.test(m[1])) w = w.slice(0, -1);
  } else {
    m = /^(.+?)(ed|ing)$/.exec(w);
    if (m && SV.test(m[1])) {
      w = m[1];
      if (/(at|bl|iz)$/.test(w)) w += 'e';
      else if (/([^aeiouylsz])\1$/.test(w)) w = w.slice(0, -1);
      else if (CVC.test(w)) w += 'e';
    }
  }
  // step 1c
  m = /^(.+?)y$/.exec(w);
  if (m && SV.test(m[1])) w = `${m[1]}i`;
  // step 2
  m = RE_STEP2.exec(w);
  if (m && MGR0.test(m[1])) w = m[1] + STEP2[m[2]];
  // step 3
  m = RE_STEP3.exec(w);
  if (m && MGR0.test(m[1])) w = m[1] + STEP3[m[2]];
  // step 4
  m = RE_STEP4.exec(w);
  if (m) {
    if (MGR1.test(m[1])) w = m[1];
  } else {
    m = RE_STEP4B.exec(w);
    if (m && MGR1.test(m[1] + m[2])) w = m[1] + m[2];
  }
  // step 5
  m = /^(.+?)e$/.exec(w);
  if (m && (MGR1.test(m[1]) || (MEQ1.test(m[1]) && !CVC.test(m[1])))) w = m[1];
  if (/ll$/.test(w) && MGR1.test(w)) w = w.slice(0, -1);
  if (firstY) w = `y${w.slice(1)}`;
  if (stemCache.size > 50_000) stemCache.clear();
  stemCache.set(word, w);
  return w;
}

// ---------------------------------------------------------------- tokenizer

/**
 * Marks a writer may leave out: Arabic's short vowels and other harakat, its tatweel (a stretch of
 * the line), Hebrew's points. `حَجْمُ` and `حجم` are one word; so are `שָׁלוֹם` and `שלום`.
 */
const POINTING =
  /[\u0610-\u061A\u064B-\u065F\u0670\u06D6-\u06DC\u06DF-\u06E4\u06E7\u06E8\u06EA-\u06ED\u0640\u0591-\u05BD\u05BF\u05C1\u05C2\u05C4\u05C5\u05C7]/g;

/** Scripts written without spaces between words: Chinese, Japanese, Thai, Lao, Khmer, Burmese. */
const UNSPACED =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
let wordBreaker: Intl.Segmenter | null | undefined;

/**
 * The words of a run of letters with text of an unspaced script in it, as ICU's word breaker
 * (Intl.Segmenter, dictionary-based for these scripts) cuts it: `数据库连接池` → 数据, 库, 连接, 池.
 * None where node was built without it.
 */
function unspacedWords(run: string): string[] {
  if (wordBreaker === undefined)
    wordBreaker =
      typeof Intl.Segmenter === 'function' ? new Intl.Segmenter([], { granularity: 'word' }) : null;
  if (!wordBreaker) return [];
  const out: string[] = [];
  for (const s of wordBreaker.segment(run)) if (s.isWordLike && s.segment !== run) out.push(s.segment);
  return out;
}

/**
 * Raw words: lowercase, split on anything but letters (with their marks) and digits, camelCase split
 * too (both forms kept).
 * Text outside ASCII is first read as it looks: NFKC (`re\u0301sume\u0301` → `résumé`, full-width
 * `Ｐｏｏｌ` → `Pool`), invisible characters dropped as the frame drops them (`pass\u200Bword` → `password`).
 * A run holding Chinese, Japanese or Thai text is also cut into its words (unspacedWords; the whole
 * run kept as well), so `数据库` finds `数据库连接池`; `cut` false leaves it whole. Arabic and Hebrew
 * are read without the vowel marks a writer may leave out (POINTING).
 */
export function words(text: string, cut = true): string[] {
  const out: string[] = [];
  const ascii = !/[^\x20-\x7E\t\n\r]/.test(text);
  const plain = ascii ? text : text.normalize('NFKC').replace(INVISIBLE, '').replace(POINTING, '');
  // marks belong to their letters: Devanagari's vowel signs and virama, Thai's vowels, Arabic's harakat
  const parts = plain.split(/[^\p{L}\p{M}\p{N}]+/u);
  for (const p of parts) {
    if (!p) continue;
    const lower = p.toLowerCase();
    out.push(lower);
    if (cut && !ascii && UNSPACED.test(p)) for (const w of unspacedWords(p)) out.push(w.toLowerCase());
    // fooBar / FooBARBaz → foo bar; keeps the joined form as well
    if (/[a-z][A-Z]/.test(p)) {
      for (const s of p.split(/(?<=[a-z])(?=[A-Z])/)) if (s.length > 1) out.push(s.toLowerCase());
    }
  }
  return out;
}

/**
 * Index terms of a text: words minus stop words, stemmed. Duplicates kept (term frequency).
 * `cut` false: runs of unspaced scripts stay whole (the words as typed, not as the index holds them).
 */
export function terms(text: string, cut = true): string[] {
  const out: string[] = [];
  for (const w of words(text, cut)) {
    if (STOP.has(w) || w.length > 64) continue;
    out.push(stem(w));
  }
  return out;
}

/** Dice coefficient of two texts' (or term lists') distinct terms, 0..1. */
export function overlap(a: string | readonly string[], b: string | readonly string[]): number {
  const A = new Set(typeof a === 'string' ? terms(a) : a);
  const B = new Set(typeof b === 'string' ? terms(b) : b);
  if (!A.size || !B.size) return 0;
  let n = 0;
  for (const t of A) if (B.has(t)) n++;
  return (2 * n) / (A.size + B.size);
}

/** File paths a text names (`src/db/pool.ts`, `pool.ts`, `.github/ci.yml`), lower-cased, each once. */
export function fileMentions(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.toLowerCase().matchAll(/[a-z0-9._][a-z0-9_.\-/]*[a-z0-9]/g)) {
    const t = m[0];
    if (t.includes('/') || /[a-z0-9_]\.[a-z]{1,5}$/.test(t)) out.add(t);
  }
  return [...out];
}

export function normalizePath(p: string): string {
  return p.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\/+/g, '/').replace(/\/$/, '');
}

/** The package root of a path in a monorepo-ish layout (apps/web, packages/db, services/api, libs/x), else the top folder. */
export function packageOf(path: string): string {
  const parts = normalizePath(path).split('/');
  if (
    parts.length >= 2 &&
    /^(apps|packages|services|libs|lib|modules|crates|plugins|tools|infra|components)$/.test(parts[0])
  ) {
    return `${parts[0]}/${parts[1]}`;
  }
  return parts.length > 1 ? parts[0] : '';
}

/** Words of a path useful as soft query context: packages/db/src/pool.ts → db, pool. */
export function pathWords(path: string): string[] {
  const generic = new Set([
    'src',
    'lib',
    'apps',
    'packages',
    'services',
    'libs',
    'test',
    'tests',
    'index',
    'ts',
    'js',
    'tsx',
    'jsx',
    'mjs',
    'md',
    'yml',
    'yaml',
    'json',
    'main',
    'app',
  ]);
  const out = new Set<string>();
  for (const w of words(normalizePath(path).replace(/\.[a-z0-9]+$/i, ''))) {
    if (generic.has(w) || STOP.has(w)) continue;
    out.add(stem(w));
  }
  return [...out];
}
