/**
 * The merge surfaces a person meets: `git mem conflicts` / `resolve` after a
 * merge flagged a record, `export --dir` / `import --dir` (memory as files),
 * and the git merge driver for those files. Ops tier: each test copies a
 * template store (test/support/template.ts; the merged ones from
 * test/support/merged.ts, built once per worker from two clones of a real bare
 * remote) and runs the commands' run functions on its open store. Refusals
 * are asserted by error code and the data they name, not by wording; the
 * rendered `git mem conflicts` view is the product, so its text is asserted.
 * The one real `git merge` through the built binary stays end to end.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeFiles } from '../../src/merge/driver.js';
import { newId } from '../../src/model/id.js';
import { type MemoryRecord, parseRecord, recordPath, serializeRecord } from '../../src/model/record.js';
import { BIN, isolatedEnv, runCli, sh, tmpDir } from '../helpers.js';
import { bodyConflict, deleteConflict } from '../support/merged.js';
import { type Fresh, fresh, template } from '../support/template.js';

/** a first commit and no store yet: init's own work */
const NO_STORE = template('no-store', { init: false });
/** three records written through `add` (one, two, three: ids[0..2]) */
const THREE = template('export-three', {
  commands: [
    ['add', '--type', 'decision', '--title', 'one', '--content', 'first\n'],
    ['add', '--type', 'decision', '--title', 'two', '--content', 'second\n'],
    ['add', '--type', 'convention', '--title', 'three', '--content', 'third\n'],
  ],
});

const commitAll = (f: Fresh, msg: string) => {
  f.git('add', '-A');
  f.git('commit', '-q', '-m', msg);
};

describe('git mem conflicts / resolve', () => {
  it('lists a body conflict with its other version and settles it with --take theirs', async () => {
    const tpl = await bodyConflict();
    const a = await fresh(tpl);
    const id = tpl.id;
    expect(tpl.conflicts).toEqual([id]);
    const list = await a.memJson(['conflicts']);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ id, title: 'Deploys', reasons: ['body'] });
    expect(list[0].attic).toHaveLength(1);
    // the rendered view is the product: what a person reads to settle it
    const human = await a.mem(['conflicts']);
    expect(human.stdout).toContain(id.slice(0, 12));
    expect(human.stdout).toContain(list[0].attic[0].hash);
    const kept = (await a.store.readRecord(a.tip(), id)).body;
    const other = kept === 'deploy on monday\nrollback by script\n' ? 'tuesday' : 'monday';
    const keptDay = other === 'monday' ? 'tuesday' : 'monday';
    // what differs, not the other version's title (the same title)
    expect(list[0].attic[0].bodyDiff).toEqual([
      { line: 1, kept: [`deploy on ${keptDay}`], other: [`deploy on ${other}`] },
    ]);
    expect(human.stdout).toContain(
      `differs in body (- kept, + other):\n      @@ line 1\n      - deploy on ${keptDay}\n      + deploy on ${other}\n`,
    );
    expect(human.stdout).not.toContain('"Deploys"');
    expect(human.stdout).not.toContain('rollback by script');
    const r = await a.memJson(['resolve', id.slice(0, 12), '--take', 'theirs']);
    expect(r).toMatchObject({ id, action: 'took-attic', removedAttic: [list[0].attic[0].path] });
    const rec = await a.store.readRecord(a.tip(), id);
    expect(rec.body).toBe(`deploy on ${other}\nrollback by script\n`);
    expect(rec.body).not.toBe(kept);
    expect(rec.extra.conflict).toBeUndefined();
    expect(rec.extra.attic).toBeUndefined();
    expect(a.git('ls-tree', '-r', '--name-only', 'refs/memory')).not.toContain('attic/');
    expect(await a.memJson(['conflicts'])).toEqual([]);
    // resolving again is refused, and writes nothing
    const tip = a.tip();
    const again = await a.mem(['resolve', id]);
    expect(again).toMatchObject({ code: 2, error: 'E_INVALID_ARG' });
    expect(again.message).toContain(id.slice(0, 12));
    expect(a.tip()).toBe(tip);
  });

  it('--content settles with new text; --take ours keeps the record as it is', async () => {
    const a = await fresh(bodyConflict());
    const id = a.ids[0];
    const r = await a.memJson(['resolve', id, '--content', 'deploy on wednesday\n']);
    expect(r.action).toBe('content');
    const rec = await a.store.readRecord(a.tip(), id);
    expect(rec.body).toBe('deploy on wednesday\n');
    expect(rec.extra.conflict).toBeUndefined();

    const s2 = await fresh(bodyConflict());
    const before = await s2.store.readRecord(s2.tip(), id);
    expect(before.extra.conflict).toBeDefined();
    expect((await s2.memJson(['resolve', id, '--take', 'ours'])).action).toBe('kept');
    const after = await s2.store.readRecord(s2.tip(), id);
    expect(after.body).toBe(before.body);
    expect(after.clock).toBe(before.clock + 1);
    expect(after.extra.conflict).toBeUndefined();
  });

  it('a kept modification lists the attempted deletion; --take theirs applies it', async () => {
    const a = await fresh(deleteConflict());
    const id = a.ids[0];
    const list = await a.memJson(['conflicts']);
    expect(list[0]).toMatchObject({ id, reasons: ['delete'], deletion: { reason: 'obsolete' } });
    expect((await a.mem(['conflicts'])).stdout).toContain('deletion attempted');
    expect((await a.memJson(['resolve', id, '--take', 'theirs'])).action).toBe('deleted');
    expect(await a.store.readPath(a.tip(), recordPath(id))).toBeNull();
    expect(a.git('ls-tree', '-r', '--name-only', 'refs/memory')).toContain(
      `tombstones/${id.slice(-2)}/${id}.yaml`,
    );
  });

  it('rejects an unknown --take with the choices', async () => {
    const a = await fresh(bodyConflict());
    const id = a.ids[0];
    const [listed] = await a.memJson(['conflicts']);
    const tip = a.tip();
    const r = await a.mem(['resolve', id, '--take', 'nope']);
    expect(r).toMatchObject({ code: 2, error: 'E_INVALID_ARG' });
    expect(r.message).toContain('"nope"');
    // the choices: ours, theirs and the attic version's hash
    expect(r.hint).toContain('ours');
    expect(r.hint).toContain('theirs');
    expect(r.hint).toContain(listed.attic[0].hash);
    expect(a.tip()).toBe(tip);
  });
});

describe('git mem export --dir / import --dir', () => {
  it('round-trips the store through files; edits, deletions and additions come back in one commit', async () => {
    const r = await fresh(THREE);
    const [one, two, three] = r.ids.map((id) => ({ id }));
    await r.memJson(['rm', three.id]);
    const out = join(r.dir, 'mem');
    const ex = await r.memJson(['export', '--dir', 'mem']);
    expect(ex.written).toBe(4); // FORMAT, two records, one tombstone
    expect(existsSync(join(out, recordPath(one.id)))).toBe(true);
    expect(existsSync(join(out, `tombstones/${three.id.slice(-2)}/${three.id}.yaml`))).toBe(true);
    // an unchanged export rewrites nothing; an import of it changes nothing
    expect((await r.memJson(['export', '--dir', 'mem'])).written).toBe(0);
    const tip0 = r.tip();
    const im0 = await r.memJson(['import', '--dir', 'mem']);
    expect(im0).toMatchObject({ added: 0, updated: 0, removed: 0, commit: tip0 });
    // edit one (clock unchanged by hand), delete two, add a new file copied from one
    const p1 = join(out, recordPath(one.id));
    writeFileSync(p1, readFileSync(p1, 'utf8').replace('first', 'first, edited'));
    rmSync(join(out, recordPath(two.id)));
    const added = newId();
    mkdirSync(dirname(join(out, recordPath(added))), { recursive: true });
    writeFileSync(
      join(out, recordPath(added)),
      readFileSync(p1, 'utf8').replace(one.id, added).replace('title: one', 'title: four'),
    );
    const im = await r.memJson(['import', '--dir', 'mem']);
    expect(im).toMatchObject({ added: 1, updated: 1, removed: 1 });
    const shown = await r.memJson(['show', one.id]);
    expect(shown.body).toBe('first, edited\n');
    expect(shown.clock).toBe(2);
    expect((await r.memJson(['list'])).map((x: { title: string }) => x.title)).toEqual(['one', 'four']);
    expect(r.git('ls-tree', '-r', '--name-only', 'refs/memory')).toContain(
      `tombstones/${two.id.slice(-2)}/${two.id}.yaml`,
    );
    // the commit's subject is data a person reads in git log: what the import did
    expect(r.git('log', '-1', '--format=%s', 'refs/memory')).toMatch(
      /import --dir \(1 added, 1 updated, 1 removed\)/,
    );
    // a re-export removes the stale file and writes the tombstone
    const ex2 = await r.memJson(['export', '--dir', 'mem']);
    expect(ex2.written).toBeGreaterThan(0);
    expect(existsSync(join(out, `tombstones/${two.id.slice(-2)}/${two.id}.yaml`))).toBe(true);
    // files that are not laid out as the store's are someone's: an export leaves them and names them
    writeFileSync(join(out, 'memories', 'README.md'), 'notes of mine\n');
    mkdirSync(join(out, 'attic'), { recursive: true });
    writeFileSync(join(out, 'attic', 'todo.txt'), 'keep\n');
    rmSync(join(out, recordPath(added)), { force: true });
    const gone = join(out, recordPath(newId()));
    mkdirSync(dirname(gone), { recursive: true });
    writeFileSync(gone, readFileSync(p1, 'utf8')); // laid out as the store's, not in it: removed
    const ex3 = await r.memJson(['export', '--dir', 'mem']);
    expect(ex3).toMatchObject({ removed: 1, left: ['attic/todo.txt', 'memories/README.md'] });
    expect(existsSync(gone)).toBe(false);
    expect(readFileSync(join(out, 'memories', 'README.md'), 'utf8')).toBe('notes of mine\n');
    expect(readFileSync(join(out, 'attic', 'todo.txt'), 'utf8')).toBe('keep\n');
    // the human output names the files it left and the command they would upset
    const human = await r.mem(['export', '--dir', 'mem']);
    expect(human.code).toBe(0);
    for (const left of ['attic/todo.txt', 'memories/README.md', 'git mem import --dir'])
      expect(human.stdout).toContain(left);
  });

  it('refuses a folder with a malformed record, naming the file, and writes nothing', async () => {
    const r = await fresh(THREE);
    const one = r.ids[0];
    await r.memJson(['export', '--dir', 'mem']);
    writeFileSync(join(r.dir, 'mem', recordPath(one)), '---\ntitle: [\n---\n');
    const tip = r.tip();
    const res = await r.mem(['import', '--dir', 'mem']);
    expect(res).toMatchObject({
      code: 2,
      error: 'E_INVALID_RECORD',
      data: { path: recordPath(one), problem: 'record' },
    });
    expect(r.tip()).toBe(tip);
    const none = await r.mem(['import', '--dir', 'nowhere']);
    expect(none).toMatchObject({ code: 2, error: 'E_INVALID_ARG' });
    expect(none.message).toContain('nowhere');
    expect(r.tip()).toBe(tip);
  });
});

describe('git mem merge-driver', () => {
  it('init --merge-driver registers the driver and the attributes once', async () => {
    const r = await fresh(NO_STORE);
    const j = await r.memJson(['init', '--merge-driver']);
    expect(j.mergeDriver.config).toBe('merge.git-mem.driver=git mem merge-driver %O %A %B %P');
    expect(r.git('config', 'merge.git-mem.driver').trim()).toBe('git mem merge-driver %O %A %B %P');
    const attrs = readFileSync(join(r.dir, '.gitattributes'), 'utf8');
    expect(attrs).toContain('**/memories/*/*.md merge=git-mem');
    expect(attrs).toContain('**/tombstones/*/*.yaml merge=git-mem');
    await r.memJson(['init', '--merge-driver']);
    expect(readFileSync(join(r.dir, '.gitattributes'), 'utf8')).toBe(attrs);
  });

  // end to end: git runs the built binary as the driver, in a real merge
  it('merges exported memory files record by record inside a real git merge', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['init', '--merge-driver']);
    // the test runs the built binary directly instead of `git mem` on PATH
    r.git('config', 'merge.git-mem.driver', `"${process.execPath}" "${BIN}" merge-driver %O %A %B %P`);
    const a = await r.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'shared',
      '--content',
      'l1\nl2\nl3\nl4\n',
      '--tags',
      'x',
    ]);
    const b = await r.memJson(['add', '--type', 'decision', '--title', 'clash', '--content', 'same line\n']);
    await r.memJson(['export', '--dir', '.mem']);
    commitAll(r, 'memory as files');
    const pa = join(r.dir, '.mem', recordPath(a.id));
    const pb = join(r.dir, '.mem', recordPath(b.id));
    const edit = (p: string, f: (r: MemoryRecord) => void) => {
      const rec = parseRecord(readFileSync(p, 'utf8'));
      f(rec);
      rec.clock += 1;
      writeFileSync(p, serializeRecord(rec));
    };
    r.git('checkout', '-q', '-b', 'other');
    edit(pa, (x) => {
      x.body = x.body.replace('l4', 'l4 other');
      x.tags.push('other');
    });
    commitAll(r, 'other edits');
    r.git('checkout', '-q', 'main');
    edit(pa, (x) => {
      x.title = 'shared, renamed';
      x.body = x.body.replace('l1', 'l1 main');
    });
    commitAll(r, 'main edits');
    sh('git', ['merge', '-q', '--no-edit', 'other'], r.dir, r.env);
    const merged = parseRecord(readFileSync(pa, 'utf8'));
    expect(merged).toMatchObject({
      title: 'shared, renamed',
      body: 'l1 main\nl2\nl3\nl4 other\n',
      tags: ['x', 'other'],
      clock: 3,
    });
    // both sides edit the same line: git stops, the other version is in the attic, the record is flagged
    r.git('checkout', '-q', '-b', 'other2');
    edit(pb, (x) => {
      x.body = 'other text\n';
    });
    commitAll(r, 'other2');
    r.git('checkout', '-q', 'main');
    edit(pb, (x) => {
      x.body = 'main text\n';
    });
    commitAll(r, 'main2');
    let failed = false;
    try {
      sh('git', ['merge', '-q', '--no-edit', 'other2'], r.dir, r.env);
    } catch {
      failed = true;
    }
    expect(failed).toBe(true);
    const rec = parseRecord(readFileSync(pb, 'utf8'));
    expect(rec.extra.conflict).toMatchObject({ reasons: ['body'] });
    const atticPath = (rec.extra.conflict as { attic: string[] }).attic[0];
    const other = parseRecord(readFileSync(join(r.dir, '.mem', atticPath), 'utf8'));
    expect([rec.body, other.body].sort()).toEqual(['main text\n', 'other text\n']);
    expect(readFileSync(pb, 'utf8')).not.toContain('<<<<<<<');
  });

  it('says whose version it kept in the attic: the current one when the other edit wins', async () => {
    const env = isolatedEnv();
    const id = '01J00000000000000000000000';
    const base = `---\nid: ${id}\ntype: decision\ntitle: t\nstatus: active\ntags: []\nconfidence: 0.8\ncreated: 2024-01-01T00:00:00.000Z\nupdated: 2024-01-01T00:00:00.000Z\nclock: 1\n---\nbody\n`;
    const older = base.replace('body\n', 'older edit\n').replace('clock: 1', 'clock: 2');
    const later = base.replace('body\n', 'later edit\n').replace('clock: 1', 'clock: 3');
    const path = `mem/memories/00/${id}.md`;
    for (const [current, otherText, kept] of [
      [older, later, 'current'],
      [later, older, 'other'],
    ]) {
      const dir = tmpDir('gm-driver-');
      writeFileSync(join(dir, 'base'), base);
      writeFileSync(join(dir, 'current'), current);
      writeFileSync(join(dir, 'other'), otherText);
      const res = await runCli(['merge-driver', 'base', 'current', 'other', path], { cwd: dir, env });
      expect(res.code).toBe(1);
      const attic = /in (mem\/attic\/\S+\.md)/.exec(res.stderr)?.[1];
      expect(attic, res.stderr).toBeDefined();
      // the attic holds the version that lost (the older edit), and the line names it rightly
      expect(parseRecord(readFileSync(join(dir, attic!), 'utf8')).body).toBe('older edit\n');
      expect(parseRecord(readFileSync(join(dir, 'current'), 'utf8')).body).toBe('later edit\n');
      expect(res.stderr).toContain(
        `kept the ${kept} version of ${path} (${kept === 'current' ? 'ours' : 'theirs'}) in`,
      );
    }
  });

  it('merges files in-process the same way whichever side is current', () => {
    const base =
      '---\nid: 01J00000000000000000000000\ntype: decision\ntitle: t\nstatus: active\ntags: []\nconfidence: 0.8\ncreated: x\nupdated: x\nclock: 1\n---\nbody\n';
    const o = base.replace('title: t', 'title: ours').replace('clock: 1', 'clock: 2');
    const t = base.replace('tags: []', 'tags: [b]').replace('clock: 1', 'clock: 2');
    const path = 'mem/memories/00/01J00000000000000000000000.md';
    const x = mergeFiles(base, o, t, path);
    const y = mergeFiles(base, t, o, path);
    expect(x.text).toBe(y.text);
    expect(x.conflict).toBe(false);
    expect(parseRecord(x.text!)).toMatchObject({ title: 'ours', tags: ['b'], clock: 3 });
    const bad = mergeFiles(base, '---\nnot: [closed\n---\n', t, path);
    expect(bad.conflict).toBe(true);
    // names the file and the side that does not parse
    expect(bad.text).toBeUndefined();
    expect(bad.unparsable).toEqual({ path, side: 'ours' });
  });
});
