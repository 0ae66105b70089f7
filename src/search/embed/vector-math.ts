/**
 * The one module of vector maths (pure): the unit vectors every embedding is stored and compared
 * as, and their dot product. Embeddings from a provider, the index's table and the query's vector
 * all go through `unit`; similarity of two unit vectors is `dot`.
 */

/** The Euclidean length of a vector. */
function norm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  return Math.sqrt(s);
}

function scaled<T extends { [i: number]: number }>(v: ArrayLike<number>, out: T): T {
  const n = norm(v);
  for (let i = 0; i < v.length; i++) out[i] = n > 0 ? v[i] / n : 0;
  return out;
}

/** A unit-length copy as 32-bit floats, as the index stores vectors (a zero vector stays zero). */
export function unit(v: ArrayLike<number>): Float32Array {
  return scaled(v, new Float32Array(v.length));
}

/** A unit-length copy as plain numbers, as providers return them (a zero vector stays zero). */
export function l2normalize(v: ArrayLike<number>): number[] {
  return scaled(v, new Array<number>(v.length));
}

/**
 * The dot product: the cosine similarity of unit vectors. Vectors of different sizes come from
 * different models and say nothing of each other: 0.
 */
export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return 0;
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** Cosine similarity of any two vectors (equals dot() for unit vectors; 0 with a zero vector). */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = norm(a) * norm(b);
  return n > 0 ? dot(a, b) / n : 0;
}
