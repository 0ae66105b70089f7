/**
 * Record ids: ULIDs (48-bit millisecond time + 80 random bits, Crockford
 * base32, 26 characters). Time-ordered so listings sort by creation; random
 * so two writers never collide. Shown abbreviated like git hashes.
 */
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ID_LENGTH = 26;
const ID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
/** Minimum abbreviation: 10 time characters + 2 random ones. */
const MIN_ABBREV = 12;

let lastTime = -1;
let pool = Buffer.alloc(0);
let poolAt = 0;
/** 16 random bytes from a pooled buffer (one syscall per 256 ids, not one per id). */
function random16(): Buffer {
  if (poolAt + 16 > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  poolAt += 16;
  return pool.subarray(poolAt - 16, poolAt);
}
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = '';
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

/**
 * A new id, ordered within this process. Inside one millisecond the first
 * random character is raised and the rest re-drawn, so ids still differ near
 * the front and abbreviate short (a plain +1, as in ULID's monotonic mode,
 * would make a bulk import's ids share 25 characters); after 32 ids in one
 * millisecond the clock is borrowed forward by 1 ms, never backwards.
 */
export function newId(now: number = Date.now()): string {
  const bytes = random16();
  if (now <= lastTime) {
    if (lastRandom[0] < 31) {
      lastRandom[0]++;
      for (let i = 1; i < 16; i++) lastRandom[i] = bytes[i] % 32;
      return encodeTime(lastTime) + lastRandom.map((d) => ALPHABET[d]).join('');
    }
    now = lastTime + 1;
  }
  lastTime = now;
  // the first random digit starts low so that a burst has room to stay ordered
  lastRandom = Array.from({ length: 16 }, (_, i) => (i === 0 ? bytes[0] % 8 : bytes[i] % 32));
  return encodeTime(now) + lastRandom.map((d) => ALPHABET[d]).join('');
}

export function isId(s: string): boolean {
  return ID_RE.test(s);
}

/** Normalise user input for prefix matching (Crockford: case-insensitive, I/L→1, O→0). */
export function normalizeIdInput(s: string): string {
  return s.toUpperCase().replace(/[IL]/g, '1').replace(/O/g, '0');
}

/** Shortest prefix (at least MIN_ABBREV) that is unique among sorted ids. */
export function abbreviate(id: string, sortedIds?: readonly string[]): string {
  if (!sortedIds || sortedIds.length === 0) return id.slice(0, MIN_ABBREV);
  // neighbours in sorted order share the longest prefixes
  let lo = 0;
  let hi = sortedIds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sortedIds[mid] < id) lo = mid + 1;
    else hi = mid;
  }
  let need = MIN_ABBREV;
  for (const j of [lo - 1, lo + 1, sortedIds[lo] === id ? -1 : lo]) {
    const other = sortedIds[j];
    if (!other || other === id) continue;
    let k = 0;
    while (k < id.length && id[k] === other[k]) k++;
    need = Math.max(need, k + 1);
  }
  return id.slice(0, Math.min(need, ID_LENGTH));
}

/** Directory fan-out: the last two (random) characters, so records spread evenly. */
export function fanout(id: string): string {
  return id.slice(-2);
}
