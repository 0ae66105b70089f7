/**
 * The in-process ref transaction (src/gitstore/refs.ts) against git's own:
 * the same refs, the same reflog lines, the same refusals.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CasContext, casLooseRefs, type ReflogEntry, reflogLine } from '../src/gitstore/refs.js';
import { makeRepo, sh, type TestRepo } from './helpers.js';

function twoCommits(r: TestRepo): [string, string] {
  r.write('a.txt', 'a\n');
  const a = r.commitAll('one');
  r.write('b.txt', 'b\n');
  return [a, r.commitAll('two')];
}

const ctxOf = (r: TestRepo, extra: Partial<CasContext> = {}): CasContext => ({
  commonDir: join(r.dir, '.git'),
  workTree: r.dir,
  bare: false,
  ...extra,
});

const who: ReflogEntry = {
  name: 'A U Thor',
  email: 'author@example.com',
  message: 'mem: post-commit  abc:\n10 records',
};

/** The same updates by `git update-ref --stdin` in `r`, at the time and zone of our line. */
function byGit(r: TestRepo, updates: Array<[string, string, string | null]>, line: string): void {
  const [, when, tz] = /> (\d+) ([+-]\d{4})\t/.exec(line)!;
  const input = updates
    .map(([ref, next, old]) => `update ${ref} ${next} ${old ?? '0'.repeat(40)}`)
    .join('\n');
  sh(
    'git',
    ['update-ref', '-m', who.message, '--stdin'],
    r.dir,
    {
      ...r.env,
      GIT_COMMITTER_NAME: who.name,
      GIT_COMMITTER_EMAIL: who.email,
      GIT_COMMITTER_DATE: `${when} ${tz}`,
    },
    `${input}\n`,
  );
}

describe('casLooseRefs', () => {
  it('moves two refs together and writes the reflog lines git writes for them', () => {
    const ours = makeRepo();
    const theirs = makeRepo();
    const [a1, a2] = twoCommits(ours);
    const [b1, b2] = twoCommits(theirs);
    // the same updates in both: ours in process, theirs by git at the time and zone of our line;
    // the commits differ (their times), so the reflogs are compared with the ids by position
    const moveBoth = (extra: Partial<CasContext>, updates: Array<[string, 0 | 1, 0 | 1 | null]>) => {
      const A = [a1, a2];
      const B = [b1, b2];
      const [, n0, e0] = updates[0];
      const line = reflogLine(e0 === null ? null : A[e0], A[n0], who);
      const ups = updates.map(([ref, n, e]) => ({ ref, next: A[n], expected: e === null ? null : A[e] }));
      expect(casLooseRefs(ctxOf(ours, extra), ups, who)).toBe('moved');
      byGit(
        theirs,
        updates.map(([ref, n, e]) => [ref, B[n], e === null ? null : B[e]]),
        line,
      );
    };
    const norm = (s: string, x: string, y: string) => s.replaceAll(x, 'C1').replaceAll(y, 'C2');
    const log = (r: TestRepo, ref: string) => {
      const f = join(r.dir, '.git', 'logs', ref);
      return existsSync(f) ? readFileSync(f, 'utf8') : null;
    };
    // refs/notes/* keeps a reflog by default in a repository with a work tree; refs/memory does not
    moveBoth({}, [
      ['refs/memory', 0, null],
      ['refs/notes/memory', 0, null],
    ]);
    expect(ours.git('rev-parse', 'refs/memory', 'refs/notes/memory').trim().split('\n')).toEqual([a1, a1]);
    expect(log(ours, 'refs/memory')).toBeNull();
    expect(log(theirs, 'refs/memory')).toBeNull();
    expect(norm(log(ours, 'refs/notes/memory')!, a1, a2)).toBe(
      norm(log(theirs, 'refs/notes/memory')!, b1, b2),
    );
    // the next move appends; with core.logAllRefUpdates=always refs/memory gets a reflog too
    ours.git('config', 'core.logAllRefUpdates', 'always');
    theirs.git('config', 'core.logAllRefUpdates', 'always');
    moveBoth({ logAllRefUpdates: 'always' }, [
      ['refs/notes/memory', 1, 0],
      ['refs/memory', 1, 0],
    ]);
    for (const ref of ['refs/memory', 'refs/notes/memory']) {
      expect(norm(log(ours, ref)!, a1, a2), ref).toBe(norm(log(theirs, ref)!, b1, b2));
    }
    // git reads what we wrote: the reflog's message, collapsed to one line as git does it
    expect(ours.git('reflog', 'show', '-1', '--format=%gs', 'refs/notes/memory').trim()).toBe(
      'mem: post-commit abc: 10 records',
    );
    ours.git('fsck', '--no-dangling');
  });

  it('moves nothing when one ref has moved on or is locked, and leaves no lock behind', () => {
    const r = makeRepo();
    const [c1, c2] = twoCommits(r);
    const ctx = ctxOf(r);
    expect(casLooseRefs(ctx, [{ ref: 'refs/memory', next: c1, expected: null }], who)).toBe('moved');
    r.git('update-ref', 'refs/notes/memory', c1);
    const state = () => r.git('rev-parse', 'refs/memory', 'refs/notes/memory').trim();
    const before = state();
    // both refs to c2, the notes ref expected at `notesAt`
    const moveBoth = (notesAt: string | null) =>
      casLooseRefs(
        ctx,
        [
          { ref: 'refs/memory', next: c2, expected: c1 },
          { ref: 'refs/notes/memory', next: c2, expected: notesAt },
        ],
        who,
      );
    // the notes ref is not where the caller thought
    expect(moveBoth(null)).toBe('lost');
    expect(state()).toBe(before);
    // another writer holds the notes ref's lock
    const lock = join(r.dir, '.git', 'refs', 'notes', 'memory.lock');
    writeFileSync(lock, '');
    expect(moveBoth(c1)).toBe('locked');
    expect(state()).toBe(before);
    expect(existsSync(join(r.dir, '.git', 'refs', 'memory.lock'))).toBe(false);
    expect(existsSync(lock)).toBe(true); // theirs, not ours to remove
    // a reflog to write and no identity for it: left to git
    expect(casLooseRefs(ctx, [{ ref: 'refs/notes/memory', next: c2, expected: c1 }])).toBe('unsupported');
    // a reference-transaction hook wants to see every update: left to git
    writeFileSync(join(r.dir, '.git', 'hooks', 'reference-transaction'), '#!/bin/sh\nexit 0\n', {
      mode: 0o755,
    });
    expect(casLooseRefs(ctx, [{ ref: 'refs/memory', next: c2, expected: c1 }], who)).toBe('unsupported');
    expect(state()).toBe(before);
  });
});
