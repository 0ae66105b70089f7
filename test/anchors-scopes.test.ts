import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo } from './helpers.js';

// #30 items 5-7: scopes follow renames, `show` says where the code is now,
// and a branch the record does not follow says once how to make it so.

describe('a branch the record does not follow says so once (#30 item 7)', () => {
  it('the post-commit hook on a feature branch names the command once; on main, nothing', async () => {
    const r = makeRepo({ commit: true });
    r.git('branch', '-M', 'main');
    await r.memJson(['init']);
    r.write('a.txt', 'a\n');
    r.commitAll('on main');
    const onMain = await r.mem(['hook', 'post-commit']);
    expect(onMain.stderr).not.toContain('default-branch');
    r.git('checkout', '-q', '-b', 'feature');
    r.write('b.txt', 'b\n');
    r.commitAll('on feature');
    const first = await r.mem(['hook', 'post-commit']);
    expect(first.code).toBe(0);
    expect(first.stderr).toContain('git mem config set default-branch feature --shared');
    expect(existsSync(join(r.dir, '.git', 'mem', 'default-branch-hint'))).toBe(true);
    r.write('c.txt', 'c\n');
    r.commitAll('again');
    const second = await r.mem(['hook', 'post-commit']);
    expect(second.stderr).not.toContain('default-branch');
  });

  it('init on a feature branch says it (in --json too); a default-branch setting silences it', async () => {
    const r = makeRepo({ commit: true });
    r.git('branch', '-M', 'main');
    r.git('checkout', '-q', '-b', 'feature');
    const j = await r.memJson(['init']);
    expect(j.hint).toContain('git mem config set default-branch feature --shared');
    const again = await r.mem(['init']);
    expect(again.stdout).not.toContain('default-branch');

    const s = makeRepo({ commit: true });
    s.git('branch', '-M', 'main');
    s.git('checkout', '-q', '-b', 'feature');
    s.git('config', 'mem.default-branch', 'main');
    const set = await s.mem(['init']);
    expect(set.code).toBe(0);
    expect(set.stdout).not.toContain('default-branch');
  });
});
