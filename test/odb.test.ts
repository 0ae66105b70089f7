/**
 * The object reader (gitstore/odb.ts) against git itself: every object of real
 * repositories, loose and packed every way git packs (deep OFS_DELTA chains,
 * REF_DELTA, several packs, large offsets), must read exactly as
 * `git cat-file --batch` shows it; damaged files and unsupported stores must
 * give "ask git" (undefined / false), never a throw or wrong content.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { adler32, writeLooseObject } from '../src/gitstore/loose.js';
import { ObjectReader, type OdbObject, odbUsable } from '../src/gitstore/odb.js';
import { makeRepo, rng, type TestRepo, tmpDir } from './helpers.js';

function randomBytes(rand: () => number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

const WORDS = 'alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi'.split(
  ' ',
);

function line(rand: () => number): string {
  let s = '';
  const n = 4 + Math.floor(rand() * 8);
  for (let i = 0; i < n; i++) s += `${WORDS[Math.floor(rand() * WORDS.length)]} `;
  return `${s}${Math.floor(rand() * 1e6)}`;
}

function git(dir: string, env: NodeJS.ProcessEnv, args: string[], input?: Buffer): Buffer {
  return execFileSync('git', args, {
    cwd: dir,
    env,
    input,
    maxBuffer: 1 << 28,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

/** A fast-import stream, binary-safe. */
class Stream {
  parts: Buffer[] = [];
  text(s: string) {
    this.parts.push(Buffer.from(s, 'utf8'));
  }
  data(b: Buffer) {
    this.text(`data ${b.length}\n`);
    this.parts.push(b);
    this.text('\n');
  }
  buffer() {
    return Buffer.concat(this.parts);
  }
}

const WHO = 'Test User <test@example.com>';

/**
 * A history of `commits` commits on `branch` (after `from`): three text files of
 * a few KiB with small edits, a binary file, an empty blob, nested trees, a
 * 200 KB text file edited now and then (deltas with 64 KiB copies), a 300 KB
 * random blob, and an annotated tag.
 */
function history(seed: number, commits: number, branch: string, from?: string): Buffer {
  const rand = rng(seed);
  const texts: string[][] = [[], [], []];
  for (const t of texts) for (let i = 0; i < 60; i++) t.push(line(rand));
  const paths = ['src/a.txt', 'src/lib/b.txt', 'docs/deep/nested/c.md'];
  let bin = randomBytes(rand, 2048);
  const bigLines: string[] = [];
  for (let i = 0; i < 3000; i++) bigLines.push(line(rand));
  const s = new Stream();
  for (let c = 0; c < commits; c++) {
    s.text(`commit refs/heads/${branch}\ncommitter ${WHO} ${1_700_000_000 + c * 60} +0000\n`);
    s.data(Buffer.from(`commit ${seed}/${c}\n\n${line(rand)}\n`));
    if (c === 0 && from) s.text(`from ${from}\n`);
    for (let f = 0; f < texts.length; f++) {
      if (c > 0 && rand() < 0.3) continue;
      const t = texts[f];
      for (let k = 0; k < 2; k++) t[Math.floor(rand() * t.length)] = line(rand);
      if (rand() < 0.3) t.splice(Math.floor(rand() * t.length), 0, line(rand));
      s.text(`M 100644 inline ${paths[f]}\n`);
      s.data(Buffer.from(`${t.join('\n')}\n`));
    }
    if (c % 5 === 0) {
      bin = Buffer.from(bin);
      for (let k = 0; k < 8; k++) bin[Math.floor(rand() * bin.length)] = Math.floor(rand() * 256);
      s.text('M 100644 inline assets/data.bin\n');
      s.data(bin);
    }
    if (c === 0) {
      s.text('M 100644 inline empty\n');
      s.data(Buffer.alloc(0));
      s.text('M 100755 inline tools/run.sh\n');
      s.data(Buffer.from('#!/bin/sh\necho run\n'));
    }
    if (c % 10 === 0) {
      bigLines[Math.floor(rand() * bigLines.length)] = line(rand);
      bigLines.splice(Math.floor(rand() * bigLines.length), 1);
      s.text('M 100644 inline big/text.txt\n');
      s.data(Buffer.from(`${bigLines.join('\n')}\n`));
    }
    if (c === commits - 5) {
      s.text('M 100644 inline big/random.bin\n');
      s.data(randomBytes(rand, 300_000));
    }
  }
  s.text(`tag ${branch}-v1\nfrom refs/heads/${branch}\ntagger ${WHO} 1700000000 +0000\n`);
  s.data(Buffer.from(`release of ${branch}\n`));
  return s.buffer();
}

/** Every object in the repository as git shows it (`cat-file --batch-all-objects --batch`). */
function allObjects(repo: TestRepo): Map<string, OdbObject> {
  const out = git(repo.dir, repo.env, ['cat-file', '--batch-all-objects', '--batch']);
  const map = new Map<string, OdbObject>();
  let p = 0;
  while (p < out.length) {
    const nl = out.indexOf(10, p);
    const [oid, type, size] = out.toString('latin1', p, nl).split(' ');
    const n = Number(size);
    map.set(oid, { type: type as OdbObject['type'], content: out.subarray(nl + 1, nl + 1 + n) });
    p = nl + 1 + n + 1;
  }
  return map;
}

const objectsDir = (repo: TestRepo) => join(repo.dir, '.git', 'objects');
const packDir = (repo: TestRepo) => join(objectsDir(repo), 'pack');
const idxFiles = (repo: TestRepo) =>
  readdirSync(packDir(repo))
    .filter((n) => n.endsWith('.idx'))
    .map((n) => join(packDir(repo), n));

/** What the reader returns for each object, against git: lists of the misses and the wrong ones. */
function compare(reader: ObjectReader, want: Map<string, OdbObject>, order: string[]) {
  const missing: string[] = [];
  const wrong: string[] = [];
  for (const oid of order) {
    const got = reader.read(oid);
    const o = want.get(oid)!;
    if (!got) missing.push(oid);
    else if (got.type !== o.type || !got.content.equals(o.content)) wrong.push(oid);
  }
  return { missing, wrong };
}

/** Every object reads exactly as git shows it, in two orders (cold and warm caches differ). */
function expectAllRead(repo: TestRepo): Map<string, OdbObject> {
  const want = allObjects(repo);
  expect(want.size).toBeGreaterThan(50);
  const oids = [...want.keys()];
  const r1 = new ObjectReader(objectsDir(repo));
  expect(compare(r1, want, oids)).toEqual({ missing: [], wrong: [] });
  r1.close();
  r1.close();
  const r2 = new ObjectReader(objectsDir(repo));
  expect(compare(r2, want, oids.reverse())).toEqual({ missing: [], wrong: [] });
  r2.close();
  return want;
}

interface PackEntry {
  oid: string;
  offset: number;
  depth: number;
  /** the entry's type in the pack: 1–4, 6 OFS_DELTA, 7 REF_DELTA */
  packType: number;
}

/** The entries of every pack, from `git verify-pack -v` and the type bits at each offset. */
function packEntries(repo: TestRepo): PackEntry[] {
  const out: PackEntry[] = [];
  for (const idx of idxFiles(repo)) {
    const pack = readFileSync(idx.replace(/\.idx$/, '.pack'));
    const text = git(repo.dir, repo.env, ['verify-pack', '-v', idx]).toString('utf8');
    for (const l of text.split('\n')) {
      const f = l.trim().split(/\s+/);
      if (!/^[0-9a-f]{40}$/.test(f[0]) || f.length < 5) continue;
      const offset = Number(f[4]);
      out.push({
        oid: f[0],
        offset,
        depth: f.length > 5 ? Number(f[5]) : 0,
        packType: (pack[offset] >> 4) & 7,
      });
    }
  }
  return out;
}

function looseCount(repo: TestRepo): number {
  const m = /^count: (\d+)$/m.exec(git(repo.dir, repo.env, ['count-objects', '-v']).toString());
  return Number(m![1]);
}

/** A repository holding history(seed): one pack (fast-import's), or loose objects for a small one (fastimport.unpackLimit). */
function importedRepo(seed: number, commits = 40): TestRepo {
  const repo = makeRepo();
  git(repo.dir, repo.env, ['fast-import', '--quiet'], history(seed, commits, 'main'));
  return repo;
}

describe('ObjectReader reads what git reads', () => {
  let repo: TestRepo;
  beforeAll(() => {
    repo = importedRepo(1, 80);
    // all loose: the pack fast-import wrote, moved out and unpacked
    const saved = join(tmpDir('gm-odb-'), 'saved.pack');
    const [idx] = idxFiles(repo);
    renameSync(idx.replace(/\.idx$/, '.pack'), saved);
    rmSync(idx);
    git(repo.dir, repo.env, ['unpack-objects', '-q'], readFileSync(saved));
  });

  it('(a) all loose objects', () => {
    expect(idxFiles(repo)).toEqual([]);
    expect(looseCount(repo)).toBeGreaterThan(100);
    expectAllRead(repo);
  });

  it('(b) after git gc --aggressive: deep OFS_DELTA chains, all packed', () => {
    git(repo.dir, repo.env, ['gc', '--aggressive', '--quiet']);
    expect(looseCount(repo)).toBe(0);
    const want = expectAllRead(repo);
    const entries = packEntries(repo);
    expect(entries.filter((e) => e.packType === 6).length).toBeGreaterThan(50);
    expect(Math.max(...entries.map((e) => e.depth))).toBeGreaterThan(10);
    // the 300 KB random blob (stored, incompressible) and the entry nearest the pack's end
    const r = new ObjectReader(objectsDir(repo));
    const big = [...want].find(([, o]) => o.content.length === 300_000)!;
    expect(r.read(big[0])?.content.equals(big[1].content)).toBe(true);
    const last = entries.reduce((a, e) => (e.offset > a.offset ? e : a));
    expect(r.read(last.oid)?.content.equals(want.get(last.oid)!.content)).toBe(true);
    r.close();
  });

  it('(c) after git repack -a -d -f --depth=250 --window=250', () => {
    git(repo.dir, repo.env, ['repack', '-a', '-d', '-f', '-q', '--depth=250', '--window=250']);
    expect(idxFiles(repo)).toHaveLength(1);
    expectAllRead(repo);
    const entries = packEntries(repo);
    expect(Math.max(...entries.map((e) => e.depth))).toBeGreaterThan(20);
  });

  it('(d) a pack of REF_DELTA entries (repack.useDeltaBaseOffset=false)', () => {
    git(repo.dir, repo.env, ['-c', 'repack.useDeltaBaseOffset=false', 'repack', '-a', '-d', '-f', '-q']);
    const entries = packEntries(repo);
    expect(entries.filter((e) => e.packType === 7).length).toBeGreaterThan(50);
    expect(entries.filter((e) => e.packType === 6)).toHaveLength(0);
    expectAllRead(repo);
  });

  it('(e) several packs and loose objects at once, ours included (zlib stored blocks)', () => {
    const head = git(repo.dir, repo.env, ['rev-parse', 'main']).toString().trim();
    // a second pack (fast-import), two loose blobs packed into a third, more loose objects
    git(
      repo.dir,
      repo.env,
      ['-c', 'fastimport.unpackLimit=0', 'fast-import', '--quiet'],
      history(2, 10, 'more', head),
    );
    repo.write('loose1.txt', 'one loose blob\n');
    repo.write('loose2.txt', 'another loose blob\n'.repeat(50));
    const blobs = git(repo.dir, repo.env, ['hash-object', '-w', 'loose1.txt', 'loose2.txt']);
    git(repo.dir, repo.env, ['pack-objects', '-q', join(packDir(repo), 'pack')], blobs);
    git(repo.dir, repo.env, ['prune-packed']);
    repo.write('loose3.txt', 'a blob left loose\n');
    git(repo.dir, repo.env, ['hash-object', '-w', 'loose3.txt']);
    const ours = writeLooseObject(objectsDir(repo), 'blob', Buffer.from('written by git-mem\n'.repeat(20)));
    const tree = writeLooseObject(
      objectsDir(repo),
      'tree',
      Buffer.concat([Buffer.from('100644 x\0'), Buffer.from(ours, 'hex')]),
    );
    expect(idxFiles(repo).length).toBeGreaterThanOrEqual(3);
    expect(looseCount(repo)).toBeGreaterThanOrEqual(3);
    const want = expectAllRead(repo);
    expect(want.has(ours) && want.has(tree)).toBe(true);
  });
});

describe('ObjectReader: large offsets, misses, damage', () => {
  it('follows a chain of 250 deltas (one file in 300 versions, fast-import --depth=250)', () => {
    const repo = makeRepo();
    const rand = rng(8);
    const lines: string[] = [];
    for (let i = 0; i < 80; i++) lines.push(line(rand));
    const s = new Stream();
    for (let c = 0; c < 300; c++) {
      lines[Math.floor(rand() * lines.length)] = line(rand);
      s.text(`commit refs/heads/main\ncommitter ${WHO} ${1_700_000_000 + c} +0000\n`);
      s.data(Buffer.from(`v${c}\n`));
      s.text('M 100644 inline f.txt\n');
      s.data(Buffer.from(`${lines.join('\n')}\n`));
    }
    // fast-import deltas each version against the one before, up to --depth: one long chain
    git(repo.dir, repo.env, ['fast-import', '--quiet', '--depth=250'], s.buffer());
    expect(Math.max(...packEntries(repo).map((e) => e.depth))).toBeGreaterThan(200);
    expectAllRead(repo);
  });

  it('reads a pack index with 64-bit offsets (index-pack --index-version=2,<offset>)', () => {
    const repo = importedRepo(3, 15);
    git(repo.dir, repo.env, ['repack', '-a', '-d', '-q']);
    const [idx] = idxFiles(repo);
    rmSync(idx);
    git(repo.dir, repo.env, ['index-pack', '--index-version=2,0x400', idx.replace(/\.idx$/, '.pack')]);
    const min = 8 + 1024 + 28 * packEntries(repo).length + 40;
    expect(readFileSync(idx).length).toBeGreaterThan(min); // the large-offset table is there
    expectAllRead(repo);
  });

  it('reads zlib streams longer than the first window (a hand-made pack of 1-byte stored blocks)', () => {
    const repo = makeRepo();
    const rand = rng(7);
    // a zlib stream of 1-byte stored blocks: 6 bytes per byte, far past the first window's guess
    const sparse = (data: Buffer) => {
      const parts: Buffer[] = [Buffer.from([0x78, 0x01])];
      for (let i = 0; i < data.length; i++) {
        parts.push(Buffer.from([i === data.length - 1 ? 1 : 0, 1, 0, 0xfe, 0xff, data[i]]));
      }
      const sum = Buffer.alloc(4);
      sum.writeUInt32BE(adler32(data));
      parts.push(sum);
      return Buffer.concat(parts);
    };
    const header = (type: number, size: number) => {
      const out = [(type << 4) | (size & 15)];
      let rest = Math.floor(size / 16);
      while (rest > 0) {
        out[out.length - 1] |= 0x80;
        out.push(rest & 0x7f);
        rest = Math.floor(rest / 128);
      }
      return Buffer.from(out);
    };
    const blobs = [randomBytes(rand, 2000), Buffer.from('a small one\n'), randomBytes(rand, 3000)];
    const streams = [sparse(blobs[0]), deflateSync(blobs[1]), sparse(blobs[2])]; // the last at the pack's end
    const parts: Buffer[] = [Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, blobs.length])];
    for (let i = 0; i < blobs.length; i++) parts.push(header(3, blobs[i].length), streams[i]);
    const body = Buffer.concat(parts);
    const pack = Buffer.concat([body, createHash('sha1').update(body).digest()]);
    const path = join(packDir(repo), `pack-${createHash('sha1').update(body).digest('hex')}.pack`);
    mkdirSync(packDir(repo), { recursive: true });
    writeFileSync(path, pack);
    git(repo.dir, repo.env, ['index-pack', path]);
    const want = allObjects(repo);
    expect(want.size).toBe(3);
    const r = new ObjectReader(objectsDir(repo));
    expect(compare(r, want, [...want.keys()])).toEqual({ missing: [], wrong: [] });
    r.close();
  });

  it('gives undefined for unknown and malformed ids', () => {
    const repo = importedRepo(4, 3);
    const r = new ObjectReader(objectsDir(repo));
    const oid = git(repo.dir, repo.env, ['rev-parse', 'main']).toString().trim();
    expect(r.read(oid)?.type).toBe('commit');
    expect(r.read('0123456789abcdef0123456789abcdef01234567')).toBeUndefined();
    expect(r.read('ffffffffffffffffffffffffffffffffffffffff')).toBeUndefined();
    expect(r.read('0000000000000000000000000000000000000000')).toBeUndefined();
    expect(r.read(oid.toUpperCase())).toBeUndefined();
    expect(r.read(oid.slice(0, 39))).toBeUndefined();
    expect(r.read(`${oid}${oid.slice(0, 24)}`)).toBeUndefined(); // 64 hex (SHA-256 length)
    expect(r.read('../../../../etc/passwd')).toBeUndefined();
    r.close();
    // a reader of a directory that does not exist
    const none = new ObjectReader(join(tmpDir('gm-odb-'), 'objects'));
    expect(none.read(oid)).toBeUndefined();
    none.close();
  });

  it('gives undefined for a damaged loose object, never a throw', () => {
    const repo = makeRepo();
    const dir = objectsDir(repo);
    const put = (content: string) => {
      repo.write('f.txt', content);
      return git(repo.dir, repo.env, ['hash-object', '-w', 'f.txt']).toString().trim();
    };
    const path = (oid: string) => join(dir, oid.slice(0, 2), oid.slice(2));
    const overwrite = (oid: string, bytes: Buffer) => {
      chmodSync(path(oid), 0o644);
      writeFileSync(path(oid), bytes);
    };
    const garbage = put('garbage\n');
    const truncated = put('truncated\n'.repeat(100));
    const other = put('another object\n');
    const badSize = put('bad size\n');
    const badType = put('bad type\n');
    const r0 = new ObjectReader(dir);
    expect(r0.read(garbage)?.content.toString()).toBe('garbage\n');
    r0.close();
    overwrite(garbage, Buffer.from('this is not zlib at all'));
    overwrite(truncated, readFileSync(path(truncated)).subarray(0, 20));
    overwrite(other, deflateSync(Buffer.from('blob 8\0another!'))); // a sound stream, not this object
    overwrite(badSize, deflateSync(Buffer.from('blob 99\0bad size\n')));
    overwrite(badType, deflateSync(Buffer.from('blub 9\0bad type\n')));
    const r = new ObjectReader(dir);
    for (const oid of [garbage, truncated, other, badSize, badType]) expect(r.read(oid)).toBeUndefined();
    // an empty file, and a directory where the file should be
    const empty = put('empty file\n');
    overwrite(empty, Buffer.alloc(0));
    expect(r.read(empty)).toBeUndefined();
    const dirObj = put('a directory\n');
    rmSync(path(dirObj));
    mkdirSync(path(dirObj));
    expect(r.read(dirObj)).toBeUndefined();
    r.close();
  });

  it('never returns wrong content from a damaged pack, and never throws', () => {
    const repo = importedRepo(5, 20);
    git(repo.dir, repo.env, ['gc', '--aggressive', '--quiet']);
    const want = allObjects(repo);
    const [idx] = idxFiles(repo);
    const packPath = idx.replace(/\.idx$/, '.pack');
    const pristine = readFileSync(packPath);
    chmodSync(packPath, 0o644);
    const rand = rng(99);
    let misses = 0;
    for (let round = 0; round < 30; round++) {
      const bytes = Buffer.from(pristine);
      // damage a few bytes among the entries (not the header or the trailer the index is matched with)
      for (let k = 0; k < 1 + (round % 4); k++) {
        bytes[12 + Math.floor(rand() * (bytes.length - 32))] ^= 1 + Math.floor(rand() * 255);
      }
      writeFileSync(packPath, bytes);
      const r = new ObjectReader(objectsDir(repo));
      const { missing, wrong } = compare(r, want, [...want.keys()]);
      r.close();
      expect(wrong).toEqual([]);
      misses += missing.length;
    }
    expect(misses).toBeGreaterThan(0); // the damage was seen
    // a truncated pack: its index no longer matches it (trailer), so it is skipped
    writeFileSync(packPath, pristine.subarray(0, pristine.length - 100));
    const r = new ObjectReader(objectsDir(repo));
    expect(compare(r, want, [...want.keys()]).wrong).toEqual([]);
    expect(r.read(git(repo.dir, repo.env, ['rev-parse', 'main']).toString().trim())).toBeUndefined();
    r.close();
  });

  it('skips a version-1 index, truncated indexes and an index without its pack', () => {
    const repo = importedRepo(6, 10);
    git(repo.dir, repo.env, ['repack', '-a', '-d', '-q']);
    const want = allObjects(repo);
    const [idx] = idxFiles(repo);
    const packPath = idx.replace(/\.idx$/, '.pack');
    const v2 = readFileSync(idx);
    const oids = [...want.keys()];
    const expectAllMissing = () => {
      const r = new ObjectReader(objectsDir(repo));
      expect(compare(r, want, oids)).toEqual({ missing: oids, wrong: [] });
      r.close();
    };
    // a real version-1 index of the same pack (no magic: the fan-out table comes first)
    rmSync(idx);
    git(repo.dir, repo.env, ['index-pack', '--index-version=1', packPath]);
    expect(readFileSync(idx).readUInt32BE(0)).not.toBe(0xff744f63);
    expectAllMissing();
    // a version-2 header with another version number
    const v3 = Buffer.from(v2);
    v3.writeUInt32BE(3, 4);
    rmSync(idx);
    writeFileSync(idx, v3);
    expectAllMissing();
    // truncated indexes
    for (const len of [0, 4, 8, 500, 1032, 1100, v2.length - 41, v2.length - 1]) {
      rmSync(idx);
      writeFileSync(idx, v2.subarray(0, len));
      expectAllMissing();
    }
    // the pack gone, its index left
    rmSync(idx);
    writeFileSync(idx, v2);
    const kept = join(tmpDir('gm-odb-'), 'kept.pack');
    copyFileSync(packPath, kept);
    rmSync(packPath);
    expectAllMissing();
    // a stray index among good packs: the good ones still read
    copyFileSync(kept, packPath);
    writeFileSync(
      join(packDir(repo), 'pack-0000000000000000000000000000000000000000.idx'),
      v2.subarray(0, 600),
    );
    expectAllRead(repo);
  });
});

describe('odbUsable', () => {
  const commonDir = (repo: TestRepo) => join(repo.dir, '.git');

  it('accepts a plain repository, refuses other object directories', () => {
    const repo = makeRepo({ commit: true });
    expect(odbUsable(commonDir(repo), repo.env)).toBe(true);
    expect(odbUsable(commonDir(repo), { ...repo.env, GIT_OBJECT_DIRECTORY: '/tmp/x' })).toBe(false);
    expect(odbUsable(commonDir(repo), { ...repo.env, GIT_ALTERNATE_OBJECT_DIRECTORIES: '/tmp/x' })).toBe(
      false,
    );
    const other = makeRepo({ commit: true });
    mkdirSync(join(objectsDir(repo), 'info'), { recursive: true });
    writeFileSync(join(objectsDir(repo), 'info', 'alternates'), `${objectsDir(other)}\n`);
    expect(odbUsable(commonDir(repo), repo.env)).toBe(false);
    // not a repository at all
    expect(odbUsable(join(tmpDir('gm-odb-'), 'nothing'), repo.env)).toBe(false);
  });

  it('refuses replace refs, loose or packed, unless GIT_NO_REPLACE_OBJECTS is set', () => {
    const repo = makeRepo({ commit: true });
    repo.write('b.txt', 'b\n');
    const second = repo.commitAll('second');
    const first = repo.git('rev-parse', 'HEAD~1').trim();
    repo.git('replace', first, second);
    expect(odbUsable(commonDir(repo), repo.env)).toBe(false);
    expect(odbUsable(commonDir(repo), { ...repo.env, GIT_NO_REPLACE_OBJECTS: '1' })).toBe(true);
    expect(odbUsable(commonDir(repo), { ...repo.env, GIT_REPLACE_REF_BASE: 'refs/other/' })).toBe(false);
    repo.git('pack-refs', '--all');
    expect(readFileSync(join(commonDir(repo), 'packed-refs'), 'utf8')).toContain(' refs/replace/');
    expect(odbUsable(commonDir(repo), repo.env)).toBe(false);
    repo.git('replace', '-d', first);
    expect(odbUsable(commonDir(repo), repo.env)).toBe(true);
  });

  it('refuses a SHA-256 repository', () => {
    const dir = tmpDir('gm-odb-sha256-');
    const repo = makeRepo();
    try {
      git(dir, repo.env, ['init', '-q', '--object-format=sha256', dir]);
    } catch {
      return; // this git cannot make one
    }
    expect(odbUsable(join(dir, '.git'), repo.env)).toBe(false);
  });

  it('refuses a partial clone (a .promisor pack, or extensions.partialclone)', () => {
    const repo = makeRepo({ commit: true });
    repo.git('config', 'extensions.partialClone', 'origin');
    expect(odbUsable(commonDir(repo), repo.env)).toBe(false);
    repo.git('config', '--unset', 'extensions.partialClone');
    expect(odbUsable(commonDir(repo), repo.env)).toBe(true);
    repo.git('gc', '--quiet');
    const [idx] = idxFiles(repo);
    writeFileSync(idx.replace(/\.idx$/, '.promisor'), '');
    expect(odbUsable(commonDir(repo), repo.env)).toBe(false);
  });
});

describe('the store reads loose objects without git', () => {
  it('answers from the object files, and asks git cat-file for packed objects and revisions', async () => {
    const { CatFile } = await import('../src/gitstore/git.js');
    const r = makeRepo({ commit: true });
    r.write('sub/deep.txt', 'deep\n');
    r.commitAll('deep');
    const dotgit = join(r.dir, '.git');
    const head = r.git('rev-parse', 'HEAD').trim();
    const tree = r.git('rev-parse', 'HEAD^{tree}').trim();
    // no git on PATH: only the object files can answer
    const noGit = new CatFile(r.dir, { ...r.env, PATH: '/nonexistent' }, dotgit);
    try {
      const c = await noGit.read(head);
      expect(c?.type).toBe('commit');
      expect(c?.content.toString()).toBe(r.git('cat-file', 'commit', head));
      expect(
        (await noGit.read(tree))?.content.equals(
          execFileSync('git', ['cat-file', 'tree', tree], { cwd: r.dir }),
        ),
      ).toBe(true);
      // a loose object of stored blocks as zlib itself writes them (level 0, several blocks), and
      // one whose bytes were damaged after the blocks: the content is checked against the id
      const big = Buffer.alloc(150_000, 'x');
      const bigId = createHash('sha1').update(`blob ${big.length}\0`).update(big).digest('hex');
      const bigFile = join(dotgit, 'objects', bigId.slice(0, 2), bigId.slice(2));
      mkdirSync(join(dotgit, 'objects', bigId.slice(0, 2)), { recursive: true });
      const z = deflateSync(Buffer.concat([Buffer.from(`blob ${big.length}\0`), big]), { level: 0 });
      writeFileSync(bigFile, z);
      expect((await noGit.read(bigId))?.content.equals(big)).toBe(true);
      z[z.length - 100] ^= 1;
      writeFileSync(bigFile, z);
      await expect(noGit.read(bigId)).rejects.toThrow(/cannot run git cat-file/); // not trusted: asks git
      rmSync(bigFile);
      // "<commit>:<path>" through loose trees, and a path that is not there
      expect((await noGit.read(`${head}:README.md`))?.content.toString()).toBe('# test\n');
      expect((await noGit.read(`${head}:sub/deep.txt`))?.content.toString()).toBe('deep\n');
      expect(await noGit.read(`${head}:sub/none.txt`)).toBeNull();
      expect(await noGit.read(`${head}:README.md/x`)).toBeNull();
      await expect(noGit.read('HEAD')).rejects.toThrow(/cannot run git cat-file/);
    } finally {
      noGit.close();
    }
    // packed: the first few packed objects are read from the pack, the rest by git
    r.git('checkout', '-q', '-b', 'more');
    for (let i = 0; i < 4; i++) {
      r.write(`more/${i}.txt`, `more ${i}\n`);
      r.commitAll(`more ${i}`);
    }
    r.git('checkout', '-q', 'main');
    r.git('gc', '-q');
    const objects = r
      .git('cat-file', '--batch-all-objects', '--batch-check=%(objectname)')
      .trim()
      .split('\n');
    expect(objects.length).toBeGreaterThan(8);
    const packedNoGit = new CatFile(r.dir, { ...r.env, PATH: '/nonexistent' }, dotgit);
    try {
      for (const oid of objects.slice(0, 8)) {
        const o = await packedNoGit.read(oid);
        expect(o?.content.equals(execFileSync('git', ['cat-file', o!.type, oid], { cwd: r.dir }))).toBe(true);
      }
      await expect(packedNoGit.read(objects[8])).rejects.toThrow(/cannot run git cat-file/);
    } finally {
      packedNoGit.close();
    }
    const withGit = new CatFile(r.dir, r.env, dotgit);
    try {
      expect((await withGit.read(head))?.content.toString()).toBe(r.git('cat-file', 'commit', head));
      expect((await withGit.read('HEAD'))?.oid).toBe(head);
      expect((await withGit.read(`${head}:sub/deep.txt`))?.content.toString()).toBe('deep\n');
      expect(await withGit.read(`${head}:sub/none.txt`)).toBeNull();
      expect(await withGit.read('0'.repeat(40))).toBeNull();
    } finally {
      withGit.close();
    }
  });
});
