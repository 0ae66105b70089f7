/** Word tokens for dedup, proposals and prompt relevance (pure, no imports: on the prompt hook's path). */

const STOP = new Set(
  'a all an and any are as at be each every been but by can could did do does doing for from had has have how i if in into is it its just let me my no nor not of on or our so some than that the their them then there these they this to too us was we were what when where which while who why will with would you your yes please ok okay now also should'.split(
    ' ',
  ),
);

/** A light stemmer for plain words (installs → install, failing → fail), so near-duplicates meet. */
export function stem(t: string): string {
  if (t.length <= 4 || !/^[a-z]+$/.test(t)) return t;
  if (t.endsWith('ies')) return `${t.slice(0, -3)}y`;
  if (t.endsWith('ing') && t.length > 6) return t.slice(0, -3);
  if (t.endsWith('ed') && t.length > 5) return t.slice(0, -2);
  if (t.endsWith('s') && !t.endsWith('ss') && !t.endsWith('us') && !t.endsWith('is')) return t.slice(0, -1);
  return t;
}

/** Lower-cased word tokens without stop words (kept: code-ish tokens like file.ts, --flag). */
export function tokens(text: string): string[] {
  const out: string[] = [];
  for (const m of text.toLowerCase().matchAll(/[a-z0-9][a-z0-9_.\-/]*[a-z0-9]|[a-z0-9]/g)) {
    const t = m[0];
    if (t.length < 2 || STOP.has(t)) continue;
    out.push(stem(t));
  }
  return out;
}

/** Dice coefficient of two token sets (0..1). */
export function overlap(a: string | string[], b: string | string[]): number {
  const A = new Set(typeof a === 'string' ? tokens(a) : a);
  const B = new Set(typeof b === 'string' ? tokens(b) : b);
  if (!A.size || !B.size) return 0;
  let n = 0;
  for (const t of A) if (B.has(t)) n++;
  return (2 * n) / (A.size + B.size);
}
