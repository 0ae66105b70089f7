/**
 * `show REF` and `list --json` answered by dist/read-fast.js (bin/git-mem.js,
 * before the CLI loads): byte for byte what the CLI prints, and the CLI's own
 * answer (and message) whenever the fast path cannot be sure.
 */
import { describe, expect, it } from 'vitest';
import { makeRepo, runBin, runCli } from './helpers.js';

describe('read fast paths', () => {
  it('print what the CLI prints, and leave everything unusual to the CLI', async () => {
    const r = makeRepo({ commit: true });
    r.write('src/a.ts', 'export const a = 1;\n');
    r.commitAll('code');
    const ids: string[] = [];
    const add = async (...args: string[]) => ids.push((await r.memJson(['add', ...args])).id);
    await add('--title', 'Plain', '--content', 'a body\nwith two lines');
    await add(
      '--type',
      'convention',
      '--title',
      'Aliased, tagged',
      '--content',
      'x',
      '--alias',
      'standards/ts/x',
      '--tags',
      'a,b',
    );
    await add('--title', 'Anchored', '--content', 'y', '--anchor', 'src/a.ts:1');
    await add('--title', 'Expires later', '--content', 'z', '--expires', '2999-01-01');
    await add('--title', 'Expired', '--content', 'old', '--expires', '2001-01-01');
    await add('--title', 'Empty body', '--content', '');
    await r.memJson(['supersede', ids[0], '--by', ids[1]]);
    await r.memJson(['list']); // the catalog cache reflects the tip
    const env = { ...r.env, GIT_MEM_TRACE: '1' };
    const fast = (args: string[]) => runBin(args, { cwd: r.dir, env });
    const cli = (args: string[]) => runCli(args, { cwd: r.dir, env: r.env });

    for (const ref of [...ids, ids[2].slice(0, 12), ids[3].slice(0, 10).toLowerCase(), 'standards/ts/x']) {
      const f = fast(['show', ref]);
      expect(f.stderr, ref).toContain('show answered by dist/read-fast.js');
      const c = await cli(['show', ref]);
      expect(f.code).toBe(0);
      expect(f.stdout, ref).toBe(c.stdout);
    }
    const fl = fast(['list', '--json']);
    expect(fl.stderr).toContain('list --json answered by dist/read-fast.js');
    expect(fl.stdout).toBe((await cli(['list', '--json'])).stdout);
    expect(JSON.parse(fl.stdout).map((m: { title: string }) => m.title)).not.toContain('Expired');

    // left to the CLI: no single match, options, another output format, a stale cache
    const ambiguous = fast(['show', '01']);
    expect(ambiguous.stderr).not.toContain('read-fast');
    expect(ambiguous.code).toBe((await cli(['show', '01'])).code);
    const missing = fast(['show', 'no/such/alias']);
    expect(missing.code).toBe(3);
    expect(missing.stderr).toContain('no/such/alias');
    const asJson = runBin(['show', ids[1]], { cwd: r.dir, env: { ...env, GIT_MEM_OUTPUT: 'json' } });
    expect(asJson.stderr).not.toContain('read-fast');
    expect(JSON.parse(asJson.stdout).id).toBe(ids[1]);
    await r.memJson(['add', '--title', 'Newer than the cache', '--content', 'n']);
    const stale = fast(['list', '--json']);
    expect(stale.stderr).not.toContain('read-fast');
    expect(JSON.parse(stale.stdout).map((m: { title: string }) => m.title)).toContain('Newer than the cache');
  });
});
