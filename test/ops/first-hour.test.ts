/**
 * First-hour cases from test/cli-firsthour.test.ts that test what a command
 * does to a store, not the words a person reads: on long-lived stores copied
 * from a template (test/support/template.ts), through each command's run
 * function, asserting codes and data. The wording cases stay there.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Fresh, fresh, jsonOn, runOn, template } from '../support/template.js';

const EMPTY = template('empty');
const added = async (f: Fresh, title: string, body: string, ...more: string[]) =>
  (await jsonOn(f, ['add', '--title', title, '--content', body, ...more])).id as string;

describe('first-hour lines', () => {
  it('supersede takes NEW as a second word, as the CI report prints it; --by still works', async () => {
    const f = await fresh(EMPTY);
    const a = await added(f, 'use pnpm', 'pnpm for installs');
    const b = await added(f, 'use npm after all', 'npm workspaces are enough now');
    const c = await added(f, 'use yarn again', 'yarn berry for zero installs');
    expect((await runOn(f, ['supersede', a, b])).exit).toBe(0);
    expect((await jsonOn(f, ['show', a])).status).toBe('superseded');
    expect((await runOn(f, ['supersede', b, '--by', c])).exit).toBe(0);
    const tip = f.tip();
    expect(await runOn(f, ['supersede', c, a, '--by', b])).toMatchObject({ exit: 2, code: 'E_INVALID_ARG' });
    expect(await runOn(f, ['supersede', c])).toMatchObject({ exit: 2, code: 'E_INVALID_ARG' });
    expect(f.tip()).toBe(tip);
  });
});

describe('scopes that are refused', () => {
  it('unclosed brackets, empty, absolute and .. scopes: exit 2, E_INVALID_ARG, store unchanged', async () => {
    const f = await fresh(EMPTY);
    const id = await added(f, 'scoped', 'a scoped rule', '--scope', 'lib/**');
    const tip = f.tip();
    for (const scope of ['lib/[unclosed', '', '/etc/**', '../other/**', 'src/{a']) {
      for (const args of [
        ['add', '--title', `rule for ${scope}`, '--content', 'x', '--scope', scope],
        ...(scope ? [['update', id, '--scope', scope]] : []),
      ])
        expect(await runOn(f, args), args.join(' ')).toMatchObject({ exit: 2, code: 'E_INVALID_ARG' });
    }
    expect(f.tip()).toBe(tip);
    const ok = await runOn(f, [
      'add',
      '--title',
      'ok',
      '--content',
      'fine',
      '--scope',
      'src/[ab]/**',
      '--scope',
      '!src/gen/**',
    ]);
    expect(ok.exit).toBe(0);
  });
});

describe('scope lists', () => {
  it('a comma inside braces or brackets belongs to the glob; commas between globs still separate them', async () => {
    const f = await fresh(EMPTY);
    const id = await added(
      f,
      'two folders',
      'shared rule',
      '--type',
      'rule',
      '--scope',
      'src/{a,b}/**,lib/**',
      '--scope',
      'src/[x,y].ts',
    );
    expect((await jsonOn(f, ['show', id])).scope).toEqual(['src/{a,b}/**', 'lib/**', 'src/[x,y].ts']);
    expect((await runOn(f, ['update', id, '--scope', 'pkg/{api,web}/src/**, docs/**'])).exit).toBe(0);
    expect((await jsonOn(f, ['show', id])).scope).toEqual(['pkg/{api,web}/src/**', 'docs/**']);
    const inForce = (await jsonOn(f, ['rules', '--file', 'pkg/web/src/x.ts'])) as Array<{ id: string }>;
    expect(inForce.map((x) => x.id)).toContain(id);
    expect(await jsonOn(f, ['rules', '--file', 'pkg/cli/src/x.ts'])).toEqual([]);
    // no --scope stays unscoped
    const plain = await added(f, 'no scope', 'anywhere');
    expect((await jsonOn(f, ['show', plain])).scope).toEqual([]);
  });
});

describe('config', () => {
  it('set refuses a key git-mem does not read, in every layer, writing nothing; unset still reaches it', async () => {
    const f = await fresh(EMPTY);
    const tip = f.tip();
    for (const layer of [[], ['--local'], ['--global'], ['--shared']])
      expect(await runOn(f, ['config', 'set', 'no-such-key', '1', ...layer]), layer.join()).toMatchObject({
        exit: 2,
        code: 'E_INVALID_ARG',
      });
    expect(f.tip()).toBe(tip);
    const memKeys = () =>
      f
        .git('config', '--local', '--list')
        .split('\n')
        .filter((l) => l.startsWith('mem.'));
    expect(memKeys()).toEqual([]);
    expect(existsSync(join(String(f.env.GIT_MEM_HOME), 'config.yaml'))).toBe(false);
    const list = (await jsonOn(f, ['config', 'list'])) as Array<{ key: string }>;
    expect(list.map((e) => e.key)).not.toContain('no-such-key');
    // keys read by the embeddings, the LLM and MCP are known
    for (const [k, v] of [
      ['embedding-provider', 'none'],
      ['llm.provider', 'off'],
      ['mcp.add-status', 'pending'],
      ['tombstone-ttl-days', '30'],
    ])
      expect((await runOn(f, ['config', 'set', k, v])).exit, k).toBe(0);
    // a key set by hand (or by an older version) can still be removed
    f.git('config', 'mem.old-key', 'x');
    expect((await runOn(f, ['config', 'unset', 'old-key'])).exit).toBe(0);
    expect(memKeys().filter((l) => l.startsWith('mem.old'))).toEqual([]);
  });
});
