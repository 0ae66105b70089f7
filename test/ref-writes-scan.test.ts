/**
 * Issue #28, item 4: every blob git-mem itself writes into refs/memory passes the secret scanner
 * whole (Store.assertNoNewSecrets): an anchored file's full content, config.yaml, what check and
 * reanchor record. A refusal is E_SECRET with the ref where it was. Ops tier: each test copies
 * a template (test/support/template.ts: src/app.ts committed, the store initialised) and runs
 * the commands on its open store.
 */
import { describe, expect, it } from 'vitest';
import { add } from '../src/commands/add.js';
import { isolatedEnv, type Json, makeRepo, sh, tmpDir } from './helpers.js';
import { type Fresh, fresh, type MemResult, template } from './support/template.js';
import { withEnv } from './support/with-env.js';

// a GitHub token the scanner knows (assembled, so this file holds no token-shaped literal)
const TOKEN = `ghp_${'a1B2c3D4e5'.repeat(3)}a1B2c3`;

/** A source file of `n` lines with the token on line `at` (1-based), or none. */
function source(n: number, at?: number): string {
  const lines: string[] = [];
  for (let i = 1; i <= n; i++)
    lines.push(i === at ? `const auth = "${TOKEN}";` : `export const v${i} = ${i};`);
  return `${lines.join('\n')}\n`;
}

/** src/app.ts (300 lines, no key) committed, the store initialised */
const APP = template('ref-writes-app', { files: { 'src/app.ts': source(300) } });

function setup(): Promise<Fresh> {
  return fresh(APP);
}

function tip(r: Fresh): string {
  return r.git('rev-parse', 'refs/memory').trim();
}

function commitAll(r: Fresh, msg: string): void {
  r.git('add', '-A');
  r.git('commit', '-q', '-m', msg);
}

/** the refusal's code and the data it names (as --json prints them under `error`) */
function refused(res: MemResult): Json {
  expect(res.code).toBe(2);
  return { code: res.error, ...res.data };
}

describe('what git-mem writes into refs/memory is scanned whole', () => {
  it('add --anchor on an uncommitted file with a key far below the anchored lines is refused', async () => {
    const r = await setup();
    const before = tip(r);
    // anchored lines 10-12; the key is on line 212, far outside their context
    r.write('src/app.ts', source(300, 212));
    const res = await r.mem([
      'add',
      '--title',
      't',
      '--content',
      'c',
      '--anchor',
      'src/app.ts:10-12',
      '--json',
    ]);
    const e = refused(res);
    expect(e.code).toBe('E_SECRET');
    expect(e).toMatchObject({ file: 'src/app.ts', line: 212, kind: 'GitHub token' });
    expect(tip(r)).toBe(before);
    expect(r.git('ls-tree', '-r', '--name-only', 'refs/memory')).not.toMatch(/^anchors\//m);
    // the person's escape hatch still works, for the whole write
    const ok = await r.mem([
      'add',
      '--title',
      't',
      '--content',
      'c',
      '--anchor',
      'src/app.ts:10-12',
      '--allow-secret',
    ]);
    expect(ok.code).toBe(0);
    expect(r.git('ls-tree', '-r', '--name-only', 'refs/memory')).toMatch(/^anchors\//m);
  });

  it('a committed file with a key is written whole too, so it is refused the same way', async () => {
    const r = await setup();
    r.write('src/app.ts', source(300, 250));
    commitAll(r, 'key');
    const before = tip(r);
    const res = await r.mem([
      'add',
      '--title',
      't',
      '--content',
      'c',
      '--anchor',
      'src/app.ts:1-3',
      '--json',
    ]);
    expect(refused(res).code).toBe('E_SECRET');
    expect(tip(r)).toBe(before);
  });

  it('an anchored file without a secret is written as before', async () => {
    const r = await setup();
    const res = await r.memJson(['add', '--title', 't', '--content', 'c', '--anchor', 'src/app.ts:10-12']);
    expect(res.id).toBeTruthy();
    expect(r.git('ls-tree', '-r', '--name-only', 'refs/memory')).toMatch(/^anchors\//m);
  });

  it('config set --shared with a secret value is refused', async () => {
    const r = await setup();
    const before = tip(r);
    const e = refused(await r.mem(['config', 'set', 'default-branch', TOKEN, '--shared', '--json']));
    expect(e.code).toBe('E_SECRET');
    expect(e).toMatchObject({ path: 'config.yaml' });
    expect(tip(r)).toBe(before);
    expect(r.git('ls-tree', '--name-only', 'refs/memory')).not.toMatch(/^config\.yaml$/m);
    // a plain value is still written
    expect((await r.mem(['config', 'set', 'default-branch', 'main', '--shared'])).code).toBe(0);
  });

  it('reanchor onto a committed file that now holds a key is refused; --allow-secret writes it', async () => {
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 't', '--content', 'c', '--anchor', 'src/app.ts:10-12']);
    const before = tip(r);
    // reanchor without specs reads HEAD's committed tree only (docs/security.md, "Reading")
    r.write('src/app.ts', `// moved\n${source(300, 200)}`);
    commitAll(r, 'moved, with a key');
    const e = refused(await r.mem(['reanchor', id, '--json']));
    expect(e.code).toBe('E_SECRET');
    expect(tip(r)).toBe(before);
    expect((await r.mem(['reanchor', id, '--allow-secret'])).code).toBe(0);
    expect(tip(r)).not.toBe(before);
  });

  it('check records nothing when the code it would keep in the ref holds a new key', async () => {
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 't', '--content', 'c', '--anchor', 'src/app.ts:10-12']);
    r.write('src/app.ts', `// one\n// two\n${source(300, 200)}`);
    commitAll(r, 'moved, with a key');
    const before = tip(r);
    const e = refused(await r.mem(['check', '--json']));
    expect(e.code).toBe('E_SECRET');
    expect(tip(r)).toBe(before);
    const blobs = r.git('ls-tree', '-r', 'refs/memory', 'anchors').trim().split('\n');
    expect(blobs).toHaveLength(1); // only the blob of the add
    expect((await r.memJson(['show', id])).anchors[0].current).toBeUndefined();
  });

  it('check moves an anchor in a file that held the same key when it was added (--allow-secret): no new exposure', async () => {
    const r = await setup();
    r.write('src/app.ts', source(300, 200));
    commitAll(r, 'key');
    const add = ['add', '--title', 't', '--content', 'c', '--anchor', 'src/app.ts:10-12', '--allow-secret'];
    const { id } = await r.memJson(add);
    r.write('src/app.ts', `// one\n// two\n${source(300, 200)}`);
    commitAll(r, 'moved');
    const rep = await r.memJson(['check']);
    expect(rep.recorded).toBe(true);
    expect((await r.memJson(['show', id])).anchors[0].current).toMatchObject({ lines: [12, 14] });
  });

  it("this person's secret-scan warn or off lets every write through, as it does for add", async () => {
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 't', '--content', 'c', '--anchor', 'src/app.ts:10-12']);
    expect((await r.mem(['config', 'set', 'secret-scan', 'warn'])).code).toBe(0);
    const shared = await r.mem(['config', 'set', 'default-branch', TOKEN, '--shared']);
    expect(shared.code).toBe(0);
    // a warning naming the kind it found
    expect(shared.stderr).toContain('GitHub token');
    r.write('src/app.ts', `// one\n// two\n${source(300, 200)}`);
    commitAll(r, 'moved, with a key');
    expect((await r.memJson(['check'])).recorded).toBe(true);
    r.write('src/app.ts', `// three\n${source(300, 201)}`);
    expect((await r.mem(['reanchor', id])).code).toBe(0);
  });

  it('a likely secret in who writes (the git identity) follows the policy like one in the text', async () => {
    const r = await setup();
    // the author git names to an add holds a token: the record's `author` field would too (a
    // store of its own per setting: a store reads the configuration once)
    const addOne = async (title: string, warn?: (line: string) => void) => {
      const w = await withEnv(r, {
        ...r.env,
        GIT_AUTHOR_NAME: `ci ${TOKEN}`,
        GIT_AUTHOR_EMAIL: 'ci@example.com',
      });
      return add(
        w.store,
        { type: 'decision', title, body: `${title}: plain text` },
        { cwd: w.dir, env: w.env, warn },
      );
    };
    // block (the default): refused, nothing written
    const before = tip(r);
    await expect(addOne('under block')).rejects.toMatchObject({
      code: 'E_SECRET',
      // the write's own scan of the record it would store: the author line of its file
      data: { kind: 'GitHub token', path: expect.stringMatching(/^memories\//) },
    });
    expect(tip(r)).toBe(before);
    // warn: stored, and said
    expect((await r.mem(['config', 'set', 'secret-scan', 'warn'])).code).toBe(0);
    const said: string[] = [];
    const warned = await addOne('violet harbour', (l) => said.push(l));
    expect(warned.record.author).toContain(TOKEN);
    expect(warned.warnings).toHaveLength(1);
    expect(said).toHaveLength(1);
    // off: stored, nothing said
    expect((await r.mem(['config', 'set', 'secret-scan', 'off'])).code).toBe(0);
    expect((await addOne('quartz lantern')).warnings).toEqual([]);
  });

  it('a record holding a secret stored with --allow-secret can still be updated and removed', async () => {
    const r = await setup();
    const { id } = await r.memJson(['add', '--title', 't', '--content', `key ${TOKEN}`, '--allow-secret']);
    expect((await r.mem(['update', id, '--title', 'renamed'])).code).toBe(0);
    expect((await r.mem(['rm', id])).code).toBe(0);
  });

  it("sync takes in a teammate's record with a secret: what a merge carries is not re-judged", async () => {
    const remote = tmpDir('gm-remote-');
    const env = isolatedEnv();
    sh('git', ['init', '-q', '--bare', remote], remote, env);
    const a = await setup();
    a.git('remote', 'add', 'origin', remote);
    a.git('push', '-q', 'origin', 'HEAD:main');
    await a.memJson(['add', '--title', 'theirs', '--content', `key ${TOKEN}`, '--allow-secret']);
    expect((await a.mem(['sync'])).code).toBe(0);
    const b = makeRepo();
    b.git('remote', 'add', 'origin', remote);
    b.git('fetch', '-q', 'origin');
    b.git('checkout', '-q', 'main');
    await b.memJson(['add', '--title', 'ours', '--content', 'x']);
    const s = await b.mem(['sync']);
    expect(s.code, s.stderr).toBe(0);
    expect((await b.memJson(['list'])).map((m: Json) => m.title).sort()).toEqual(['ours', 'theirs']);
  });
});
