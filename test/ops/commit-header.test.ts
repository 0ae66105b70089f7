/**
 * The one reader of raw commit objects (src/gitstore/commit-object.ts) against git's own
 * reading of the same commits (`git log --format`): a root commit, a merge, a commit whose
 * header carries a multi-line signature, and one whose message quotes header lines.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseCommitHeader } from '../../src/gitstore/commit-object.js';
import { makeRepo, type TestRepo } from '../helpers.js';

const raw = (r: TestRepo, oid: string) =>
  execFileSync('git', ['cat-file', 'commit', oid], { cwd: r.dir, env: r.env });

/** What git says of a commit: tree, parents, committer name, email and time (ms). */
function asGitSays(r: TestRepo, oid: string) {
  const [tree, parents, name, email, ct] = r
    .git('log', '-1', '--format=%T%x00%P%x00%cn%x00%ce%x00%ct', oid)
    .trim()
    .split('\0');
  return {
    tree,
    parents: parents ? parents.split(' ') : [],
    committer: { name, email },
    committedAt: Number(ct) * 1000,
  };
}

describe('parseCommitHeader', () => {
  it('reads what git reads: root, merge, signed header, a message that quotes header lines', () => {
    const r = makeRepo({ commit: false });
    r.write('a.txt', 'a\n');
    const root = r.commitAll('root');
    r.git('checkout', '-q', '-b', 'side');
    r.write('b.txt', 'b\n');
    r.commitAll('side');
    r.git('checkout', '-q', '-');
    r.write('c.txt', 'c\n');
    r.commitAll('main');
    r.git('merge', '-q', '--no-edit', 'side');
    const merge = r.git('rev-parse', 'HEAD').trim();
    // a header with a signature (continuation lines, one of them a lone space) and a message
    // whose lines look like header lines
    const tree = r.git('rev-parse', `${merge}^{tree}`).trim();
    const body = [
      `tree ${tree}`,
      `parent ${merge}`,
      'author A U Thor <author@example.com> 1700000000 +0100',
      'committer C O Mitter <committer@example.com> 1700000123 -0230',
      'gpgsig -----BEGIN PGP SIGNATURE-----',
      ' ',
      ' iQEzBAABCAAdFiEE',
      ' -----END PGP SIGNATURE-----',
      '',
      'signed',
      '',
      'committer Not Me <no@example.com> 1 +0000',
      `parent ${root}`,
      '',
    ].join('\n');
    const signed = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], {
      cwd: r.dir,
      env: r.env,
      input: body,
    })
      .toString()
      .trim();
    for (const oid of [root, merge, signed])
      expect(parseCommitHeader(raw(r, oid)), oid).toEqual(asGitSays(r, oid));
    expect(parseCommitHeader(raw(r, merge)).parents).toHaveLength(2);
    expect(parseCommitHeader(raw(r, signed)).committedAt).toBe(1700000123000);
  });

  it('gives no tree, no committer and NaN for bytes that are not a commit header', () => {
    expect(parseCommitHeader(Buffer.from('not a commit\n'))).toEqual({
      tree: '',
      parents: [],
      committer: undefined,
      committedAt: Number.NaN,
    });
  });
});
