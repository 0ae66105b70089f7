/** Tree splicing (loose.ts editTree) against the reference: parse, edit the list, re-sort, serialize. */
import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  adler32,
  editTree,
  findTreeEntries,
  findTreeEntry,
  parseTree,
  serializeTree,
  type TreeItem,
  zlibStored,
} from '../src/gitstore/loose.js';
import { rng } from './helpers.js';

// names chosen to exercise git's order: a tree sorts as if named "name/", so "a" (tree) comes after "a-b" and "a.b"
const NAMES = [
  'a',
  'a-b',
  'a.b',
  'a0',
  'ab',
  'b',
  'é',
  'e',
  'Z',
  'memories',
  'memories-foo',
  'FORMAT',
  '01J.md',
  'x y',
];

describe('editTree', () => {
  it('gives byte for byte what serializing the edited entry list gives', () => {
    const rand = rng(42);
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
    const oid = () => Array.from({ length: 40 }, () => '0123456789abcdef'[Math.floor(rand() * 16)]).join('');
    const mode = () => pick(['100644', '40000', '100755', '120000']);
    for (let round = 0; round < 500; round++) {
      const items = new Map<string, TreeItem>();
      for (const name of NAMES) if (rand() < 0.5) items.set(name, { mode: mode(), name, oid: oid() });
      const buf = serializeTree([...items.values()]);
      const edits = new Map<string, TreeItem | null>();
      const n = 1 + Math.floor(rand() * 4);
      for (let i = 0; i < n; i++) {
        const name = pick(NAMES);
        edits.set(name, rand() < 0.3 ? null : { mode: mode(), name, oid: oid() });
      }
      const expected = new Map(items);
      for (const [name, e] of edits) {
        if (e) expected.set(name, e);
        else expected.delete(name);
      }
      const got = editTree(buf, edits);
      expect(got.equals(serializeTree([...expected.values()])), `round ${round}`).toBe(true);
      // the same with the entries found beforehand (spliced in place when every edit replaces
      // or removes an entry of the same kind; otherwise the merge above)
      const found = findTreeEntries(buf, edits.keys());
      for (const [name, f] of found) {
        expect(buf.subarray(f.start, f.end).equals(serializeTree([items.get(name)!])), `entry ${name}`).toBe(
          true,
        );
      }
      expect(editTree(buf, edits, found).equals(got), `round ${round} with found entries`).toBe(true);
      for (const name of NAMES) {
        const want = expected.get(name);
        expect(findTreeEntry(got, name)).toEqual(
          want ? { ...want, mode: want.mode === '040000' ? '40000' : want.mode } : undefined,
        );
      }
      expect(parseTree(got).map((t) => t.name)).toEqual(
        parseTree(serializeTree([...expected.values()])).map((t) => t.name),
      );
    }
  });

  it('edits an empty tree and can empty a tree', () => {
    const one = editTree(
      Buffer.alloc(0),
      new Map([['x', { mode: '100644', name: 'x', oid: 'ab'.repeat(20) }]]),
    );
    expect(parseTree(one)).toEqual([{ mode: '100644', name: 'x', oid: 'ab'.repeat(20) }]);
    expect(editTree(one, new Map([['x', null]])).length).toBe(0);
  });

  it('refuses a malformed tree', () => {
    expect(() => editTree(Buffer.from('100644 x'), new Map())).toThrow(/malformed tree/);
    expect(() => findTreeEntries(Buffer.from('100644 x\0abc'), ['x'])).toThrow(/malformed tree/);
    expect(() => findTreeEntries(Buffer.from('1006440000x'), ['x'])).toThrow(/malformed tree/);
  });
});

describe('zlibStored (the stream a loose object is written in)', () => {
  it("inflates to the bytes it holds, at every block boundary, with zlib's checksum", () => {
    const rand = rng(7);
    for (const n of [0, 1, 7, 8, 9, 5551, 5552, 5553, 65534, 65535, 65536, 131070, 131071, 200001]) {
      const data = Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));
      const z = zlibStored([data.subarray(0, n >> 1), data.subarray(n >> 1)]);
      expect(inflateSync(z).equals(data), `size ${n}`).toBe(true);
      // the trailer is Adler-32, which inflate has just verified; and a stream of 0xff bytes
      // (the largest sums) checks the modulo steps
      expect(z.readUInt32BE(z.length - 4)).toBe(adler32(data));
    }
    const ff = Buffer.alloc(300_000, 0xff);
    expect(inflateSync(zlibStored([ff])).equals(ff)).toBe(true);
  });
});
