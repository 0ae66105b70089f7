/**
 * Many blobs at once through `git fast-import`: git writes them as one pack
 * (as loose objects when there are fewer than `fastimport.unpackLimit`, 100
 * by default), where `git hash-object -w` leaves one loose object per blob.
 * A bulk import of 100k records used to leave 100k loose objects, which every
 * full read of the store (the first search index build: ~30 s more at 100k,
 * bench/RESULTS-search.md) paid for until git's gc packed them. git writes
 * and names every object; only blobs are sent (no ref, tree or commit).
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { git } from './git.js';
import { memDirForWrite, type Repo } from './repo.js';

let seq = 0;

/** Writes the blobs; their ids, in order. */
export async function writeBlobs(repo: Repo, contents: readonly Buffer[]): Promise<string[]> {
  if (!contents.length) return [];
  const marks = join(memDirForWrite(repo, 'tmp'), `marks-${process.pid}-${++seq}`);
  const parts: Buffer[] = [];
  const nl = Buffer.from('\n');
  contents.forEach((c, i) => {
    parts.push(Buffer.from(`blob\nmark :${i + 1}\ndata ${c.length}\n`), c, nl);
  });
  parts.push(Buffer.from('done\n'));
  try {
    const r = await git(['fast-import', '--quiet', '--done', `--export-marks=${marks}`], {
      cwd: repo.cwd,
      env: repo.env,
      input: Buffer.concat(parts),
      allowFail: true,
    });
    if (r.code !== 0)
      throw err('E_GIT', `git fast-import failed: ${r.stderr.trim().split('\n').pop() || `exit ${r.code}`}`);
    const oids: string[] = new Array(contents.length);
    for (const line of readFileSync(marks, 'utf8').split('\n')) {
      const m = /^:(\d+) ([0-9a-f]{40}(?:[0-9a-f]{24})?)$/.exec(line);
      if (m) oids[Number(m[1]) - 1] = m[2];
    }
    for (let i = 0; i < oids.length; i++)
      if (!oids[i]) throw err('E_GIT', `git fast-import did not name blob ${i + 1} of ${oids.length}`);
    return oids;
  } finally {
    rmSync(marks, { force: true });
  }
}
