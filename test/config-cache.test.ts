/**
 * The git config listing cached under .git/mem/cache/gitconfig.json is used
 * only while nothing it came from has changed: every later change of a config
 * file, of the environment git reads config from, or an include that depends
 * on HEAD, is seen by the next command.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeRepo, runCli } from './helpers.js';

describe('git config cache', () => {
  it('follows every change of the config files, the environment and HEAD-dependent includes', async () => {
    const r = makeRepo({ commit: true });
    const author = async (env: NodeJS.ProcessEnv = r.env) => {
      const res = await runCli(
        ['add', '--json', '--force', '--title', `t ${Math.random()}`, '--content', `c ${Math.random()}`],
        {
          cwd: r.dir,
          env,
        },
      );
      expect(res.code, res.stderr).toBe(0);
      return r.git('log', '-1', '--format=%an <%ae>', 'refs/memory').trim();
    };
    const cache = join(r.dir, '.git', 'mem', 'cache', 'gitconfig.json');
    expect(await author()).toBe('Test User <test@example.com>');
    expect(existsSync(cache)).toBe(true);
    expect(await author()).toBe('Test User <test@example.com>');
    // nothing changed: the listing comes from the cache (edited here to tell)
    writeFileSync(cache, readFileSync(cache, 'utf8').replace('Test User', 'From Cache'));
    expect(await author()).toBe('From Cache <test@example.com>');

    // the repository's own config
    r.git('config', 'user.name', 'Local Name');
    expect(await author()).toBe('Local Name <test@example.com>');
    // the global file (same size: only the modification time and content differ)
    r.git('config', '--unset', 'user.name');
    const global = String(r.env.GIT_CONFIG_GLOBAL);
    writeFileSync(global, readFileSync(global, 'utf8').replace('test@example.com', 'abcd@example.com'));
    expect(await author()).toBe('Test User <abcd@example.com>');
    // config given in the environment
    expect(
      await author({
        ...r.env,
        GIT_CONFIG_COUNT: '1',
        GIT_CONFIG_KEY_0: 'user.name',
        GIT_CONFIG_VALUE_0: 'Env Name',
      }),
    ).toBe('Env Name <abcd@example.com>');
    expect(await author()).toBe('Test User <abcd@example.com>');

    // an include that depends on the branch: never cached, so a checkout is followed
    const inc = join(r.dir, '..', `inc-${Math.random()}.cfg`);
    writeFileSync(inc, '[user]\n\tname = On Side Branch\n');
    r.git('config', 'includeIf.onbranch:side.path', inc);
    expect(await author()).toBe('Test User <abcd@example.com>');
    r.git('checkout', '-qb', 'side');
    expect(await author()).toBe('On Side Branch <abcd@example.com>');
    r.git('checkout', '-q', 'main');
    expect(await author()).toBe('Test User <abcd@example.com>');
  });
});
