/**
 * The store's refusals that only the launched binary shows end to end: a
 * repository git-mem cannot serve, refused by every command line with one line,
 * a stable code and exit 1, nothing written. The store's invariants themselves
 * are ops tests (test/store.test.ts).
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeRepo, ROOT, runBin, sh } from '../helpers.js';

beforeAll(() => {
  if (!existsSync(join(ROOT, 'dist', 'cli.js'))) sh('npm', ['run', '-s', 'build'], ROOT, process.env);
});

describe('a repository git-mem cannot serve', () => {
  it('(SHA-256 object ids) is refused in one line by every command; nothing is written and git fsck passes', async () => {
    const r = makeRepo();
    rmSync(join(r.dir, '.git'), { recursive: true });
    r.git('init', '-q', '--object-format=sha256');
    r.write('a.txt', 'a\n');
    r.commitAll('one');
    const refsBefore = r.git('for-each-ref');
    // the built binary, as a user runs it: the refusal is settled before any store opens
    for (const args of [
      ['init'],
      ['add', '--title', 'x', '--content', 'y'],
      ['list'],
      ['hooks', 'install'],
    ]) {
      const bin = runBin([...args, '--json'], { cwd: r.dir, env: r.env });
      expect(bin.code, `${args.join(' ')}: ${bin.stderr}`).toBe(1);
      expect(bin.stderr.trim().split('\n')).toHaveLength(1);
      expect(bin.stderr).not.toContain('internal error');
      expect(JSON.parse(bin.stdout).error.code).toBe('E_UNSUPPORTED_REPO');
      expect(bin.stderr).toContain('sha256'); // the object format it names
    }
    expect(r.git('for-each-ref')).toBe(refsBefore);
    expect(existsSync(join(r.dir, '.git', 'hooks', 'post-commit'))).toBe(false);
    r.git('fsck', '--strict');
    r.git('log', '--all');
  });
});
