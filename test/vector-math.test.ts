import { describe, expect, it } from 'vitest';
import { cosine, dot, l2normalize, unit } from '../src/search/embed/vector-math.js';

describe('vector maths (the one module every vector goes through)', () => {
  it('unit and l2normalize give the same unit vector, 32-bit and plain', () => {
    const v = [3, 4, 12];
    const u = unit(v);
    expect(u).toBeInstanceOf(Float32Array);
    expect(Array.from(u)).toEqual(Array.from(Float32Array.from(l2normalize(v))));
    expect(l2normalize(v)).toEqual([3 / 13, 4 / 13, 12 / 13]);
    expect(dot(u, u)).toBeCloseTo(1, 6);
  });

  it('a zero vector stays zero and is similar to nothing', () => {
    expect(Array.from(unit([0, 0]))).toEqual([0, 0]);
    expect(l2normalize([0, 0])).toEqual([0, 0]);
    expect(cosine([0, 0], [1, 0])).toBe(0);
  });

  it('vectors of different sizes (another model) say nothing of each other', () => {
    expect(dot(unit([1, 0, 0]), unit([1, 0]))).toBe(0);
    expect(cosine([1, 0, 0], [1, 0])).toBe(0);
  });

  it('cosine of any two vectors equals the dot of their unit vectors', () => {
    const a = [1, 2, 3];
    const b = [-2, 0.5, 4];
    expect(cosine(a, b)).toBeCloseTo(dot(l2normalize(a), l2normalize(b)), 12);
  });
});
