import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { anchorIndex, JOURNAL_LIMIT, readJournal, saveIndex } from '../src/anchors/index-cache.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { diffTrees } from '../src/gitstore/tree.js';
import { parseRecord } from '../src/model/record.js';
import { makeRepo, ROOT, runBin, sh, type TestRepo, tmpDir, until, writerLeftovers } from './helpers.js';

// The pieces the post-commit hook is made fast with, each checked against git itself.

async function storeOf(r: TestRepo): Promise<Store> {
  return new Store(await openRepo(r.dir, r.env));
}

function noteLines(r: TestRepo, rev: string): string[] {
  return r.git('notes', '--ref=memory', 'show', rev).trim().split('\n');
}

/** Adds note lines the way the post-commit hook does: with a store write, in one fast-import and one ref transaction. */
async function writeNote(store: Store, object: string, lines: string[]): Promise<void> {
  let n = 0;
  await store.write(
    async (tx) => {
      tx.put('config.yaml', `n: ${Date.now()}-${n++}\n`);
      return { message: 'mem: test', value: 1 };
    },
    { note: async () => ({ ref: 'refs/notes/memory', object, lines, message: 'Notes added by a test' }) },
  );
}

describe('notes written with the memory commit', () => {
  it('are what git notes reads: show, log --notes, list, fsck --strict; extended without duplicates', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['init']);
    const c1 = r.git('rev-parse', 'HEAD').trim();
    r.write('a.txt', 'a\n');
    const c2 = r.commitAll('second');
    const store = await storeOf(r);
    try {
      await writeNote(store, c1, ['{"id":"A"}', '{"id":"B"}']);
      expect(noteLines(r, c1)).toEqual(['{"id":"A"}', '{"id":"B"}']);
      // a second note on another commit, then more lines on the first (one repeated)
      await writeNote(store, c2, ['{"id":"C"}']);
      await writeNote(store, c1, ['{"id":"B"}', '{"id":"D"}']);
      expect(noteLines(r, c1)).toEqual(['{"id":"A"}', '{"id":"B"}', '{"id":"D"}']);
      expect(noteLines(r, c2)).toEqual(['{"id":"C"}']);
      // nothing new: the notes ref does not move (the memory ref does)
      const before = r.git('rev-parse', 'refs/notes/memory').trim();
      await writeNote(store, c1, ['{"id":"A"}']);
      expect(r.git('rev-parse', 'refs/notes/memory').trim()).toBe(before);
      expect(r.git('log', '--notes=memory', '--format=%H %N', '-1', c2)).toContain('{"id":"C"}');
      expect(r.git('log', '-1', '--format=%an <%ae>', 'refs/notes/memory').trim()).toBe(
        'Test User <test@example.com>',
      );
      expect(r.git('log', '--format=%H', 'refs/notes/memory').trim().split('\n')).toHaveLength(3);
      const listed = r.git('notes', '--ref=memory', 'list').trim().split('\n');
      expect(listed.map((l) => l.split(' ')[1]).sort()).toEqual([c1, c2].sort());
      // the notes ref keeps a reflog, as git notes would
      expect(r.git('reflog', 'show', '--format=%gs', 'refs/notes/memory').trim().split('\n')).toHaveLength(3);
      r.git('fsck', '--strict', '--no-dangling');
      // git's own notes command keeps working on top of ours
      r.git('notes', '--ref=memory', 'append', '-m', '{"id":"E"}', c2);
      expect(noteLines(r, c2)).toEqual(['{"id":"C"}', '', '{"id":"E"}']);
    } finally {
      store.close();
    }
  });

  it('extend a note in a tree git fanned out, where git notes reads it', async () => {
    const r2 = makeRepo({ commit: true });
    await r2.memJson(['init']);
    const many = 300;
    let stream = '';
    for (let i = 1; i <= many; i++) {
      stream += `commit refs/heads/main\ncommitter T <t@e> ${1700000000 + i} +0000\ndata 2\nc\n`;
      stream += `${i === 1 ? `from ${r2.git('rev-parse', 'HEAD').trim()}\n` : ''}M 100644 inline f.txt\ndata ${String(i).length + 1}\n${i}\n\n`;
    }
    const all = () => r2.git('rev-list', 'main').trim().split('\n');
    sh('git', ['fast-import', '--quiet'], r2.dir, r2.env, stream);
    // git writes the notes of all but the newest commit (fast-import fans out past 256 notes)
    const cs = all();
    let notes = 'commit refs/notes/memory\ncommitter T <t@e> 1700009999 +0000\ndata 2\nn\n';
    for (const c of cs.slice(1)) notes += `N inline ${c}\ndata 3\nold\n`;
    sh('git', ['fast-import', '--quiet'], r2.dir, r2.env, notes);
    expect(r2.git('ls-tree', '--name-only', 'refs/notes/memory').trim().split('\n')[0]).toMatch(
      /^[0-9a-f]{2}$/,
    );
    const s2 = await storeOf(r2);
    try {
      await writeNote(s2, cs[0], ['new']);
      await writeNote(s2, cs[5], ['new']);
    } finally {
      s2.close();
    }
    expect(noteLines(r2, cs[0])).toEqual(['new']);
    expect(noteLines(r2, cs[5])).toEqual(['old', 'new']);
    expect(noteLines(r2, cs[6])).toEqual(['old']);
    expect(r2.git('notes', '--ref=memory', 'list').trim().split('\n')).toHaveLength(cs.length);
    for (const p of r2.git('ls-tree', '-r', '--name-only', 'refs/notes/memory').trim().split('\n'))
      expect(p).toMatch(/^[0-9a-f]{2}\/[0-9a-f]{38}$/);
    r2.git('fsck', '--strict', '--no-dangling');
  });
});

describe('the tree differ', () => {
  it('names the paths git diff-tree -r --no-renames names, with their new blob ids', async () => {
    const r = makeRepo();
    r.write('keep.txt', 'k\n');
    r.write('edit.txt', 'e\n');
    r.write('gone.txt', 'g\n');
    r.write('dir/a.txt', 'a\n');
    r.write('dir/sub/b.txt', 'b\n');
    r.write('was-file', 'x\n');
    r.write('exec.sh', 'echo\n');
    r.write('héllo wörld.txt', 'u\n');
    r.write('x', 'a file that becomes a directory, with x.y sorting between the two\n');
    r.write('x.y', 'y\n');
    r.commitAll('one');
    r.write('edit.txt', 'e2\n');
    rmSync(join(r.dir, 'gone.txt'));
    r.write('dir/sub/b.txt', 'b2\n');
    r.write('dir/new.txt', 'n\n');
    rmSync(join(r.dir, 'was-file'));
    r.write('was-file/now-a-dir.txt', 'd\n');
    sh('chmod', ['+x', 'exec.sh'], r.dir, r.env);
    r.write('héllo wörld.txt', 'u2\n');
    rmSync(join(r.dir, 'x'));
    r.write('x/inner.txt', 'i\n');
    r.commitAll('two');
    const store = await storeOf(r);
    try {
      const tree = (rev: string) => r.git('rev-parse', `${rev}^{tree}`).trim();
      const got = new Map(
        (await diffTrees(store.catFile, tree('HEAD^'), tree('HEAD'))).map((c) => [c.path, c.oid] as const),
      );
      const raw = r.git('diff-tree', '-r', '-z', '--no-renames', 'HEAD^', 'HEAD').split('\0');
      const want = new Map<string, string | null>();
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const meta = raw[i].split(' ');
        want.set(raw[i + 1], meta[4] === 'D' ? null : meta[3]);
      }
      expect(new Map([...got].sort())).toEqual(new Map([...want].sort()));
      // a root commit: everything
      const root = await diffTrees(store.catFile, null, tree('HEAD'));
      const files = r.git('ls-tree', '-r', '--name-only', '-z', 'HEAD').split('\0').filter(Boolean);
      expect(root.map((c) => c.path).sort()).toEqual(files.sort());
      // the same through the store, under a folder
      const viaStore = await store.diffPaths('HEAD^', 'HEAD', 'dir');
      expect(new Map(viaStore.map((c) => [c.path, c.oid]))).toEqual(
        new Map([...want].filter(([p]) => p.startsWith('dir/'))),
      );
    } finally {
      store.close();
    }
  });
});

describe('anchor index', () => {
  it('reads the anchors of some paths as the whole index has them, keeps odd paths, and migrates the JSON index', async () => {
    const r = makeRepo();
    const odd = 'src/tab\there "q".ts';
    r.write('src/a.ts', 'one\ntwo\nthree\n');
    r.write('src/b.ts', 'uno\ndos\ntres\n');
    r.write(odd, 'x\ny\nz\n');
    r.commitAll('init');
    await r.memJson(['init']);
    await r.memJson(['add', '--title', 'a', '--content', 'x', '--anchor', 'src/a.ts:1-2']);
    await r.memJson(['add', '--title', 'b', '--content', 'x', '--anchor', 'src/b.ts:2-3']);
    await r.memJson(['add', '--title', 'odd', '--content', 'x', '--anchor', `${odd}:1-1`]);
    const store = await storeOf(r);
    try {
      const tip = await store.tip();
      const full = await anchorIndex(store, tip);
      expect(full.entries.map((e) => e.p).sort()).toEqual([odd, 'src/a.ts', 'src/b.ts'].sort());
      const some = await anchorIndex(store, tip, new Set([odd, 'src/b.ts', 'src/none.ts']));
      const byPath = (xs: typeof full.entries) =>
        [...xs].sort((x, y) => (x.p < y.p ? -1 : x.p > y.p ? 1 : x.n - y.n));
      expect(byPath(some.entries)).toEqual(byPath(full.entries.filter((e) => e.p !== 'src/a.ts')));
      // the first line of the file is found too (no newline before it)
      const first = full.entries[0];
      expect((await anchorIndex(store, tip, new Set([first.p]))).entries).toEqual([first]);
      const cache = join(r.dir, '.git', 'mem', 'cache');
      const tsv = join(cache, 'anchors-refs_memory.tsv');
      expect(readFileSync(tsv, 'utf8').split('\n')).toHaveLength(2 + 3);
      // an index of the previous version is migrated, not rebuilt from the records
      const v3 = {
        v: 3,
        tip,
        records: Object.fromEntries(
          full.entries.map((e) => [
            e.id,
            {
              oid: e.oid,
              status: e.status,
              anchors: [{ p: e.p, b: e.b, c: e.c, s: 1, sb: '', v: 'deleted', r: 'x' }],
            },
          ]),
        ),
      };
      rmSync(tsv);
      writeFileSync(join(cache, 'anchors-refs_memory.json'), JSON.stringify(v3));
      const migrated = await anchorIndex(store, tip);
      expect(migrated.entries.every((e) => e.s === 1 && e.sb === '' && e.v === 'deleted')).toBe(true);
      expect(existsSync(join(cache, 'anchors-refs_memory.json'))).toBe(false);
    } finally {
      store.close();
    }
    // a check still sees every verdict through the (now partial) index reads
    r.write('src/b.ts', 'new\nuno\ndos\ntres\n');
    r.commitAll('shift b');
    rmSync(join(r.dir, '.git', 'mem', 'cache', 'anchors-refs_memory.tsv'));
    const rep = await r.memJson(['check', '--since', 'HEAD^']);
    expect(rep.results).toEqual([
      expect.objectContaining({ status: 'moved', to: { path: 'src/b.ts', lines: [3, 4] } }),
    ]);
  });
  it('check --verbose on the fast path reports the lines and symbol the record holds', async () => {
    const r = makeRepo();
    r.write('m.py', 'def alpha():\n    return 1\n\n\ndef beta():\n    return 2\n');
    r.write('n.txt', 'one\ntwo\nthree\nfour\n');
    r.commitAll('code');
    expect((await r.mem(['init'])).code).toBe(0);
    await r.memJson(['add', '--title', 'beta', '--content', 'x', '--symbol', 'm.py#beta']);
    await r.memJson(['add', '--title', 'two', '--content', 'y', '--anchor', 'n.txt:2-3']);
    const rep = await r.memJson(['check', '--verbose']);
    const by = (t: string) => rep.results.find((x: { title: string }) => x.title === t);
    expect(by('two')).toMatchObject({ reason: 'same blob', path: 'n.txt', lines: [2, 3], symbol: null });
    expect(by('two').from).toEqual({ path: 'n.txt', lines: [2, 3] });
    expect(by('beta')).toMatchObject({ reason: 'same blob', path: 'm.py', lines: [5, 6], symbol: 'beta' });
  });

  it('after a recorded check holds what a rebuild from the records holds', async () => {
    const r = makeRepo();
    for (const f of ['a', 'b', 'c']) r.write(`src/${f}.ts`, `${f}1\n${f}2\n${f}3\n${f}4\n${f}5\n${f}6\n`);
    r.commitAll('init');
    await r.memJson(['init']);
    const ids: string[] = [];
    for (const spec of [
      ['src/a.ts:1-2', 'src/b.ts:3-4'],
      ['src/b.ts:1-2'],
      ['src/c.ts:2-3', 'src/a.ts:5-6'],
    ]) {
      const args = ['add', '--title', `t${ids.length}`, '--content', `x${ids.length}`];
      for (const a of spec) args.push('--anchor', a);
      ids.push((await r.memJson(args)).id);
    }
    r.write('src/a.ts', 'new top\na1\na2\na3\na4\na5\na6\n');
    r.write('src/b.ts', 'b1\nb2\nB3\nb4\nb5\nb6\n');
    r.commitAll('edit a and b');
    const rep = await r.memJson(['check']);
    expect(rep.recorded).toBe(true);
    const store = await storeOf(r);
    try {
      const tip = await store.tip();
      const sorted = (xs: Awaited<ReturnType<typeof anchorIndex>>['entries']) =>
        [...xs].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : x.n - y.n));
      const kept = sorted((await anchorIndex(store, tip)).entries);
      expect(kept).toHaveLength(5);
      expect(kept.find((e) => e.p === 'src/b.ts' && e.n === 1)).toMatchObject({ s: 1, v: 'changed' });
      rmSync(join(r.dir, '.git', 'mem', 'cache', 'anchors-refs_memory.tsv'));
      expect(sorted((await anchorIndex(store, tip)).entries)).toEqual(kept);
    } finally {
      store.close();
    }
  });
});

describe('the anchor index journal', () => {
  const A = 'a'.repeat(40);
  const B = 'b'.repeat(40);
  const C = 'c'.repeat(40);
  const entry = (
    from: string,
    to: string,
    drop: string[],
    add: string[],
    recs: Array<[string, string]> = [],
  ) =>
    `= ${from} ${to} ${drop.length} ${add.length} ${recs.length}\n${drop.map((l) => `-${l}\n`).join('')}${add
      .map((l) => `+${l}\n`)
      .join('')}${recs.map(([o, j]) => `R${o}\t${j}\n`).join('')}.\n`;

  it('applies the entries that follow on from the file, and no further', () => {
    const log = Buffer.from(
      entry(A, B, ['x'], ['y'], [['1'.repeat(40), '{"id":"é"}']]) +
        entry(B, C, ['y'], ['z']) +
        entry(A, C, ['q'], []),
    );
    const j = readJournal(log, A);
    expect(j.tip).toBe(C);
    // y was added, then dropped: no change left for it
    expect([...j.lines]).toEqual([
      ['x', -1],
      ['z', 1],
    ]);
    expect(j.records.get('1'.repeat(40))?.toString('utf8')).toBe('{"id":"é"}');
    expect(j.complete).toBe(false); // the third entry does not follow on from C
    expect(readJournal(log, B)).toMatchObject({ tip: B, complete: false }); // nothing follows on from B first
    // an entry cut short ends the journal before it
    const cut = Buffer.concat([
      Buffer.from(entry(A, B, ['x'], ['y'])),
      Buffer.from(entry(B, C, [], ['z']).slice(0, -3)),
    ]);
    expect(readJournal(cut, A)).toMatchObject({ tip: B, complete: false });
    expect(readJournal(Buffer.from(entry(A, B, ['x'], ['y'])), A)).toMatchObject({ tip: B, complete: true });
  });

  it("carries a check's changes until it outgrows its limit, and always reads as a rebuild would", async () => {
    const r = makeRepo();
    for (const f of ['a', 'b', 'c']) r.write(`src/${f}.ts`, `${f}1\n${f}2\n${f}3\n${f}4\n`);
    r.commitAll('init');
    for (const f of ['a', 'b', 'c']) {
      await r.memJson(['add', '--title', f, '--content', 'x', '--anchor', `src/${f}.ts:2-3`]);
    }
    const cache = join(r.dir, '.git', 'mem', 'cache');
    const tsv = join(cache, 'anchors-refs_memory.tsv');
    const log = `${tsv}.log`;
    const tipOfFile = () => readFileSync(tsv, 'latin1').split('\n')[0].split(' ').pop();
    const store = await storeOf(r);
    const sorted = (xs: Awaited<ReturnType<typeof anchorIndex>>['entries']) =>
      [...xs].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : x.n - y.n));
    const rebuilt = async () => {
      const keep = [tsv, log].map((f) => (existsSync(f) ? readFileSync(f) : undefined));
      rmSync(tsv, { force: true });
      rmSync(log, { force: true });
      const all = sorted((await anchorIndex(store, await store.tip())).entries);
      for (const [i, f] of [tsv, log].entries()) {
        const k = keep[i];
        if (k) writeFileSync(f, k);
        else rmSync(f, { force: true });
      }
      return all;
    };
    try {
      // the first check builds the file; each later one appends to the journal
      for (let i = 1; i <= 3; i++) {
        for (const f of ['a', 'b'])
          r.write(`src/${f}.ts`, `${'// top\n'.repeat(i)}${f}1\n${f}2\n${f}3\n${f}4\n`);
        r.commitAll(`shift ${i}`);
        const rep = await r.memJson(['check']);
        expect(rep.recorded).toBe(true);
        expect(rep.results.map((x: { status: string }) => x.status)).toEqual(['moved', 'moved']);
      }
      const tip = await store.tip();
      // the blobs the anchors moved to are kept reachable, one tree per checked commit
      const head = r.git('rev-parse', 'HEAD').trim();
      expect(
        r
          .git('ls-tree', '--name-only', 'refs/memory', `anchors/${head.slice(0, 2)}/${head}/`)
          .trim()
          .split('\n')
          .map((p) => p.split('/').pop())
          .sort(),
      ).toEqual(
        [r.git('rev-parse', 'HEAD:src/a.ts').trim(), r.git('rev-parse', 'HEAD:src/b.ts').trim()].sort(),
      );
      expect(tipOfFile()).not.toBe(tip);
      expect(readJournal(readFileSync(log), tipOfFile()!)).toMatchObject({ tip, complete: true });
      const viaJournal = sorted((await anchorIndex(store, tip)).entries);
      expect(viaJournal.filter((e) => e.p === 'src/a.ts')[0].b).toBe(
        r.git('rev-parse', 'HEAD:src/a.ts').trim(),
      );
      expect(viaJournal).toEqual(await rebuilt());
      // the records of the journal serve the next check (no record cache file for them)
      const recs = readJournal(readFileSync(log), tipOfFile()!).records;
      expect(recs.size).toBeGreaterThan(0);
      for (const oid of recs.keys())
        expect(existsSync(join(cache, 'records', oid.slice(0, 2), `${oid}.json`))).toBe(false);
      // a journal that does not fit its limit: the file is rewritten at the new tip, the journal removed
      const idx = await anchorIndex(store, tip);
      const before = viaJournal.find((e) => e.p === 'src/c.ts')!;
      const rec = parseRecord(r.git('cat-file', 'blob', before.oid), `memories/${before.id}.md`);
      const after = { ...rec, title: 'c, renamed' };
      const afterOid = '0'.repeat(40);
      saveIndex(
        store,
        tip!,
        { ...idx, journal: JOURNAL_LIMIT },
        new Map([[before.id, { before: rec, beforeOid: before.oid, after, afterOid }]]),
      );
      expect(existsSync(log)).toBe(false);
      expect(tipOfFile()).toBe(tip);
      expect((await anchorIndex(store, tip)).entries.find((e) => e.p === 'src/c.ts')!.oid).toBe(afterOid);
      // a journal cut short is not appended to: the next check rewrites the file
      r.git('commit', '--allow-empty', '-q', '-m', 'noop');
      rmSync(tsv);
      await r.memJson(['check', '--all']);
      writeFileSync(log, '= garbage\n', { flag: 'a' });
      r.write('src/b.ts', '// more\n// top\n// top\n// top\nb1\nb2\nb3\nb4\n');
      r.commitAll('shift b');
      expect((await r.memJson(['check'])).recorded).toBe(true);
      expect(existsSync(log)).toBe(false);
      expect(tipOfFile()).toBe(await store.tip());
      expect(sorted((await anchorIndex(store, await store.tip())).entries)).toEqual(await rebuilt());
      // a journal whose changes do not fit the file (a line to drop that is not there): built again
      const now = (await store.tip())!;
      const want = await rebuilt();
      const bPath = want.find((e) => e.p === 'src/b.ts')!.p;
      writeFileSync(log, `= ${now} ${now} 1 0 0\n-${bPath}\tnot a line\n.\n`);
      expect(sorted((await anchorIndex(store, now, new Set([bPath]))).entries)).toEqual(
        want.filter((e) => e.p === bPath),
      );
      expect(existsSync(log)).toBe(false);
    } finally {
      store.close();
    }
  });
});

/** A repository with one memory anchored to line 1 of src/a.ts; EDITED changes that line. */
async function anchoredRepo(): Promise<{ r: TestRepo; id: string }> {
  const r = makeRepo();
  r.write('src/a.ts', 'export const a = 1;\nexport const b = 2;\n');
  r.commitAll('one');
  const { id } = await r.memJson(['add', '--title', 'a is one', '--content', 'x', '--anchor', 'src/a.ts:1']);
  return { r, id };
}
const EDITED = 'export const a = 42;\nexport const b = 2;\n';

describe('the installed post-commit hook', () => {
  it('runs `git mem hook post-commit` through the git-mem on PATH, or the one GIT_MEM_CMD names', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['hooks', 'install']);
    await r.memJson(['hooks', 'install', '--pre-push']);
    const script = readFileSync(join(r.dir, '.git', 'hooks', 'post-commit'), 'utf8');
    // no path of this machine: with husky (core.hooksPath=.husky) the hook is a committed file
    for (const hook of ['post-commit', 'pre-push']) {
      const text = readFileSync(join(r.dir, '.git', 'hooks', hook), 'utf8');
      expect(text).not.toContain(ROOT);
      expect(text).not.toContain(process.execPath);
      expect(text).not.toContain(r.dir);
      expect(text.replace(/\/dev\/null/g, '')).not.toMatch(/(^|[\s"'=])\/[A-Za-z]/m);
    }
    expect(script).toContain('hook post-commit');
    // without git-mem on PATH: one line saying how to install it, and the commit goes through
    const bare = tmpDir('gm-path-');
    for (const tool of ['git', 'sh', 'cat', 'dirname']) {
      const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
      if (found) symlinkSync(found, join(bare, tool));
    }
    // installing says so too
    const note = await r.mem(['hooks', 'install'], { env: { ...r.env, PATH: bare } });
    expect(note.code, note.stderr).toBe(0);
    expect(note.stderr).toMatch(/^git-mem: note: git-mem is not on PATH, so the hooks will skip their work/);
    expect((await r.mem(['hooks', 'install'])).stderr).toBe('');
    r.write('y.txt', 'y\n');
    sh('git', ['add', '-A'], r.dir, r.env);
    const missing = spawnSync('git', ['commit', '-q', '-m', 'y'], {
      cwd: r.dir,
      env: { ...r.env, PATH: bare },
      encoding: 'utf8',
    });
    expect(missing.status, missing.stderr).toBe(0);
    expect(missing.stderr).toBe(
      'git-mem: not installed, so the memory staleness check did not run (install it: npm install -g git-mem)\n',
    );
    expect(r.git('log', '-1', '--format=%s').trim()).toBe('y');
    expect(script).not.toContain('post-commit.cjs');
    // GIT_MEM_CMD names the git-mem to run: it gets `hook post-commit`
    const log = join(r.dir, 'calls.txt');
    const fake = join(r.dir, 'fake-git-mem.sh');
    writeFileSync(fake, `#!/bin/sh\necho "$@" >> "${log}"\n`, { mode: 0o755 });
    r.write('x.txt', 'x\n');
    sh('git', ['add', '-A'], r.dir, r.env);
    sh('git', ['commit', '-q', '-m', 'x'], r.dir, { ...r.env, GIT_MEM_CMD: `"${fake}"` });
    expect(readFileSync(log, 'utf8')).toBe('hook post-commit\n');
  });

  it('finishes its work however many lines it prints, and shows the commit only the first', async () => {
    const { r, id } = await anchoredRepo();
    await r.memJson(['hooks', 'install']);
    r.write('src/a.ts', EDITED);
    sh('git', ['add', '-A'], r.dir, r.env);
    // GIT_MEM_TRACE makes the hook print a dozen lines: it used to die writing the second one
    const res = spawnSync('git', ['commit', '-q', '-m', 'two'], {
      cwd: r.dir,
      env: { ...r.env, GIT_MEM_TRACE: '1' },
      encoding: 'utf8',
    });
    expect(res.status).toBe(0);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(noteLines(r, 'HEAD').map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ id, verdict: 'changed' }),
    ]);
    expect((await r.memJson(['show', id])).status).toBe('stale');
  });

  it('serves a hook installed by an earlier version (`bin/git-mem.js hook post-commit`) with the same program', async () => {
    const { r, id } = await anchoredRepo();
    r.write('src/a.ts', EDITED);
    r.commitAll('two');
    const res = runBin(['hook', 'post-commit'], { cwd: r.dir, env: r.env });
    expect(res.code).toBe(0);
    expect(res.stderr).toContain('stale');
    expect(noteLines(r, 'HEAD').map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ id, verdict: 'changed' }),
    ]);
  });
});

describe('the memory commit and its note', () => {
  it('move in one transaction: a notes ref moved meanwhile fails both, and the retry keeps both notes', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['init']);
    const head = r.git('rev-parse', 'HEAD').trim();
    r.write('b.txt', 'b\n');
    const other = r.commitAll('other');
    const before = r.git('rev-parse', 'refs/memory').trim();
    const paused = join(r.dir, '.git', 'mem', 'test-paused');
    const store = new Store(await openRepo(r.dir, { ...r.env, GIT_MEM_TEST_PAUSE_BEFORE_CAS: '30000' }));
    try {
      const writing = store.write(
        async (tx) => {
          tx.put('config.yaml', 'x: 1\n');
          return { message: 'mem: test', value: 1 };
        },
        { note: async () => ({ ref: 'refs/notes/memory', object: head, lines: ['ours'], message: 'test' }) },
      );
      // objects written, refs not yet moved: another writer notes another commit
      await until(() => existsSync(paused) || undefined, 20_000);
      r.git('notes', '--ref=memory', 'add', '-m', 'theirs', other);
      const theirs = r.git('rev-parse', 'refs/notes/memory').trim();
      expect(r.git('rev-parse', 'refs/memory').trim()).toBe(before);
      writeFileSync(join(r.dir, '.git', 'mem', 'test-release'), '');
      const res = await writing;
      expect(res.attempts).toBe(2);
      expect(r.git('rev-parse', 'refs/memory').trim()).toBe(res.commit);
      expect(r.git('rev-list', '--count', `${before}..refs/memory`).trim()).toBe('1');
      expect(noteLines(r, head)).toEqual(['ours']);
      expect(noteLines(r, other)).toEqual(['theirs']);
      expect(r.git('rev-parse', 'refs/notes/memory^').trim()).toBe(theirs);
      expect(writerLeftovers(r)).toEqual([]);
      r.git('fsck', '--strict', '--no-dangling');
    } finally {
      store.close();
    }
  });

  it('a hook killed between writing its objects and moving the refs leaves both refs as they were and no lock', async () => {
    const { r } = await anchoredRepo();
    r.write('src/a.ts', EDITED);
    const head = r.commitAll('two');
    const mem = r.git('rev-parse', 'refs/memory').trim();
    const paused = join(r.dir, '.git', 'mem', 'test-paused');
    rmSync(paused, { force: true });
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'git-mem.js'), 'hook', 'post-commit'], {
      cwd: r.dir,
      env: { ...r.env, GIT_MEM_TEST_PAUSE_BEFORE_CAS: '30000' },
      stdio: 'ignore',
    });
    const closed = new Promise((res) => child.on('close', res));
    await until(() => existsSync(paused) || undefined, 30_000);
    child.kill('SIGKILL');
    await closed;
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(mem);
    expect(r.git('for-each-ref', 'refs/notes/')).toBe('');
    const locks = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? locks(join(d, e.name)) : e.name.endsWith('.lock') ? [join(d, e.name)] : [],
      );
    expect(locks(join(r.dir, '.git'))).toEqual([]);
    expect(writerLeftovers(r)).toEqual([]);
    r.git('fsck', '--strict', '--no-dangling', '--connectivity-only');
    // the next run records it: both refs move
    expect(runBin(['hook', 'post-commit'], { cwd: r.dir, env: r.env }).code).toBe(0);
    expect(r.git('rev-parse', 'refs/memory^').trim()).toBe(mem);
    expect(noteLines(r, head).map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ verdict: 'changed' }),
    ]);
  }, 60_000);
});
