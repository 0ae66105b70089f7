/**
 * The suite's own clean-up (test/support/per-file.ts, run by test/support/setup-file.ts):
 * unit and ops files share their workers, so what one file leaves behind must be undone
 * when it ends, or the next file in that worker finds it.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { tmpDir } from '../helpers.js';
import { atTestEnd, fileEnded } from '../support/per-file.js';
import { useMemoryTmp } from '../support/scratch-root.js';
import { fresh, template } from '../support/template.js';

const SPEC = { memories: [{ type: 'decision' as const, title: 'Kept', body: 'kept\n' }] };
const T = template('per-file', SPEC);

describe('what a test file leaves behind', () => {
  let afterTest = 0;
  let folder = '';
  let copy = '';
  let first = '';

  it('is registered as it is made', async () => {
    atTestEnd(() => afterTest++);
    folder = tmpDir('gm-per-file-');
    first = (await T).dir;
    const f = await fresh(T);
    copy = f.dir;
    expect(f.records.map((r) => r.title)).toEqual(['Kept']);
  });

  it('test-end work runs once, after the test that registered it', () => {
    expect(afterTest).toBe(1);
  });

  it('at the file end its folders go and its templates are built again by the next file', async () => {
    for (const d of [folder, copy, first]) expect(existsSync(d), d).toBe(true);
    await fileEnded(); // what the setup file's afterAll does once a file's tests are done
    for (const d of [folder, copy, first]) expect(existsSync(d), d).toBe(false);
    const again = await template('per-file', SPEC);
    expect(again.dir).not.toBe(first);
    expect(existsSync(again.dir)).toBe(true);
    expect(afterTest).toBe(1);
  });

  it('a template still building when the file ends is waited for, then removed', async () => {
    // a template made at the top of a file whose tests a filter left out: nobody awaits it
    const late = template('per-file-late', { commands: [['add', '--title', 'late', '--content', 'late\n']] });
    await fileEnded();
    const built = await late; // built whole: its folder was not removed under it
    expect(built.ids).toHaveLength(1);
    expect(existsSync(built.dir)).toBe(false);
  });
});

describe('scratch on a memory file system', () => {
  it('only where TMPDIR is unset and GIT_MEM_TEST_TMP is not disk', () => {
    const set: NodeJS.ProcessEnv = { TMPDIR: '/somewhere' };
    expect(useMemoryTmp(set)).toBeUndefined();
    expect(set).toEqual({ TMPDIR: '/somewhere' });
    const off: NodeJS.ProcessEnv = { GIT_MEM_TEST_TMP: 'disk' };
    expect(useMemoryTmp(off)).toBeUndefined();
    expect(off).toEqual({ GIT_MEM_TEST_TMP: 'disk' });
    const env: NodeJS.ProcessEnv = {};
    const root = useMemoryTmp(env);
    // a machine without /dev/shm, or with little room there, keeps the system's folder
    if (root === undefined) expect(env).toEqual({});
    else {
      expect(env.TMPDIR).toBe(root);
      expect(root.startsWith('/dev/shm/')).toBe(true);
      expect(existsSync(root)).toBe(true);
    }
  });
});
