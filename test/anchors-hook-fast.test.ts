import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diffTreesVia } from '../src/anchors/gitio.js';
import { anchorIndex, JOURNAL_LIMIT, readJournal, saveIndex } from '../src/anchors/index-cache.js';
import { writeNote } from '../src/anchors/note-writer.js';
import { sortTreeItems } from '../src/gitstore/loose.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { parseRecord } from '../src/model/record.js';
import { dropTmpRefs, makeRepo, ROOT, runBin, sh, type TestRepo, tmpDir } from './helpers.js';

// The pieces the post-commit hook is made fast with, each checked against git itself.

const ident = { name: 'Test User', email: 'test@example.com' };

async function storeOf(r: TestRepo): Promise<Store> {
  return new Store(await openRepo(r.dir, r.env));
}

function noteLines(r: TestRepo, rev: string): string[] {
  return r.git('notes', '--ref=memory', 'show', rev).trim().split('\n');
}

describe('notes written from Node', () => {
  it('are what git notes reads: show, log --notes, list, fsck --strict; extended without duplicates', async () => {
    const r = makeRepo({ commit: true });
    const c1 = r.git('rev-parse', 'HEAD').trim();
    r.write('a.txt', 'a\n');
    const c2 = r.commitAll('second');
    const store = await storeOf(r);
    try {
      expect(await writeNote(store, 'refs/notes/memory', c1, ['{"id":"A"}', '{"id":"B"}'], ident)).toBe(true);
      expect(noteLines(r, c1)).toEqual(['{"id":"A"}', '{"id":"B"}']);
      // a second note on another commit, then more lines on the first (one repeated)
      expect(await writeNote(store, 'refs/notes/memory', c2, ['{"id":"C"}'], ident)).toBe(true);
      expect(await writeNote(store, 'refs/notes/memory', c1, ['{"id":"B"}', '{"id":"D"}'], ident)).toBe(true);
      expect(noteLines(r, c1)).toEqual(['{"id":"A"}', '{"id":"B"}', '{"id":"D"}']);
      expect(noteLines(r, c2)).toEqual(['{"id":"C"}']);
      // nothing new: the notes ref does not move
      const before = r.git('rev-parse', 'refs/notes/memory').trim();
      expect(await writeNote(store, 'refs/notes/memory', c1, ['{"id":"A"}'], ident)).toBe(true);
      expect(r.git('rev-parse', 'refs/notes/memory').trim()).toBe(before);
      expect(r.git('log', '--notes=memory', '--format=%H %N', '-1', c2)).toContain('{"id":"C"}');
      expect(r.git('log', '-1', '--format=%an <%ae>', 'refs/notes/memory').trim()).toBe(
        'Test User <test@example.com>',
      );
      expect(r.git('log', '--format=%H', 'refs/notes/memory').trim().split('\n')).toHaveLength(3);
      const listed = r.git('notes', '--ref=memory', 'list').trim().split('\n');
      expect(listed.map((l) => l.split(' ')[1]).sort()).toEqual([c1, c2].sort());
      r.git('fsck', '--strict', '--no-dangling');
      // git's own notes command keeps working on top of ours
      r.git('notes', '--ref=memory', 'append', '-m', '{"id":"E"}', c2);
      expect(noteLines(r, c2)).toEqual(['{"id":"C"}', '', '{"id":"E"}']);
    } finally {
      store.close();
    }
  });

  it('follow a fanned-out notes tree and fan a flat one out when it grows', async () => {
    const r = makeRepo({ commit: true });
    // commits to annotate, made with fast-import (quick), then notes on all of them
    const n = 40;
    let stream = '';
    for (let i = 1; i <= n; i++) {
      stream += `commit refs/heads/main\ncommitter T <t@e> ${1700000000 + i} +0000\ndata 4\nc${String(i).padStart(2, '0')}\n`;
      stream += `${i === 1 ? `from ${r.git('rev-parse', 'HEAD').trim()}\n` : ''}M 100644 inline f.txt\ndata ${String(i).length + 1}\n${i}\n\n`;
    }
    sh('git', ['fast-import', '--quiet'], r.dir, r.env, stream);
    const commits = r.git('rev-list', '--max-count', String(n), 'main').trim().split('\n');
    const store = await storeOf(r);
    try {
      // flat until 8 notes (a low threshold to test the switch), then one level of fan-out
      for (const [i, c] of commits.entries()) {
        expect(await writeNote(store, 'refs/notes/memory', c, [`{"n":${i}}`], ident, { fanoutAt: 8 })).toBe(
          true,
        );
      }
      const paths = r.git('ls-tree', '-r', '--name-only', 'refs/notes/memory').trim().split('\n');
      expect(paths).toHaveLength(n);
      for (const p of paths) expect(p).toMatch(/^[0-9a-f]{2}\/[0-9a-f]{38}$/);
      for (const [i, c] of commits.entries()) expect(noteLines(r, c)).toEqual([`{"n":${i}}`]);
      // extending a note that lives one level down keeps it there
      expect(await writeNote(store, 'refs/notes/memory', commits[3], ['{"more":1}'], ident)).toBe(true);
      expect(noteLines(r, commits[3])).toEqual(['{"n":3}', '{"more":1}']);
      expect(r.git('ls-tree', '-r', '--name-only', 'refs/notes/memory').trim().split('\n')).toHaveLength(n);
      r.git('fsck', '--strict', '--no-dangling');
    } finally {
      store.close();
    }
    // a tree git fanned out itself (more notes than its threshold): ours go where git reads them
    const r2 = makeRepo({ commit: true });
    const many = 300;
    stream = '';
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
      expect(await writeNote(s2, 'refs/notes/memory', cs[0], ['new'], ident)).toBe(true);
      expect(await writeNote(s2, 'refs/notes/memory', cs[5], ['new'], ident)).toBe(true);
    } finally {
      s2.close();
    }
    expect(noteLines(r2, cs[0])).toEqual(['new']);
    expect(noteLines(r2, cs[5])).toEqual(['old', 'new']);
    expect(noteLines(r2, cs[6])).toEqual(['old']);
    expect(r2.git('notes', '--ref=memory', 'list').trim().split('\n')).toHaveLength(cs.length);
    r2.git('fsck', '--strict', '--no-dangling');
  });
});

describe('tree diff through cat-file', () => {
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
      const got = await diffTreesVia(store, tree('HEAD^'), tree('HEAD'));
      const raw = r.git('diff-tree', '-r', '-z', '--no-renames', 'HEAD^', 'HEAD').split('\0');
      const want = new Map<string, string | null>();
      for (let i = 0; i + 1 < raw.length; i += 2) {
        const meta = raw[i].split(' ');
        want.set(raw[i + 1], meta[4] === 'D' ? null : meta[3]);
      }
      expect(new Map([...got].sort())).toEqual(new Map([...want].sort()));
      // a root commit: everything
      const root = await diffTreesVia(store, null, tree('HEAD'));
      const files = r.git('ls-tree', '-r', '--name-only', '-z', 'HEAD').split('\0').filter(Boolean);
      expect([...root.keys()].sort()).toEqual(files.sort());
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

describe('loose trees', () => {
  it("sort entries in git's byte order, non-ASCII names included", () => {
    // U+FF21 sorts after U+1F600 by UTF-16 code units but before it by UTF-8 bytes, as git sorts
    const items = ['b', 'a-b', 'a', 'é', '\uff21', 'z', '\u{1f600}', 'a.b', 'Z', 'ab'].map((name, i) => ({
      mode: i % 2 ? '40000' : '100644',
      name,
      oid: '0'.repeat(40),
    }));
    const key = (t: { mode: string; name: string }) =>
      Buffer.from(t.mode === '40000' ? `${t.name}/` : t.name);
    const want = [...items].sort((x, y) => Buffer.compare(key(x), key(y))).map((t) => t.name);
    expect(sortTreeItems(items).map((t) => t.name)).toEqual(want);
    expect(want.indexOf('\uff21')).toBeLessThan(want.indexOf('\u{1f600}'));
    const ascii = items.filter((t) => /^[a-zA-Z.-]+$/.test(t.name));
    expect(sortTreeItems(ascii).map((t) => t.name)).toEqual(want.filter((n) => /^[a-zA-Z.-]+$/.test(n)));
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
  it('runs dist/post-commit.cjs, or `git mem hook post-commit` through GIT_MEM_CMD', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['hooks', 'install']);
    const script = readFileSync(join(r.dir, '.git', 'hooks', 'post-commit'), 'utf8');
    expect(script).toContain(join(ROOT, 'dist', 'post-commit.cjs'));
    expect(script).toContain('hook post-commit');
    expect(existsSync(join(ROOT, 'dist', 'post-commit.cjs'))).toBe(true);
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

describe('loose writes that edit trees in place', () => {
  it('build the same trees as git fast-import when entries that are there change', async () => {
    const r = makeRepo();
    r.write('code.ts', 'a\nb\nc\n');
    r.commitAll('code');
    await r.memJson(['init']);
    for (let i = 0; i < 12; i++) {
      await r.memJson(['add', '--title', `m${i}`, '--content', `x${i}`, '--anchor', 'code.ts:1-2']);
    }
    const base = r.git('rev-parse', 'refs/memory').trim();
    const files = r.git('ls-tree', '-r', '--name-only', base, 'memories').trim().split('\n');
    const anchorsDir = r.git('ls-tree', '--name-only', base, 'anchors/').trim().split('\n')[0];
    const blob = r.git('rev-parse', `${base}:FORMAT`).trim();
    const ident = { name: 'T', email: 't@example.com' };
    const trees: string[] = [];
    for (const writer of ['loose', 'fast-import']) {
      const store = new Store(await openRepo(r.dir, { ...r.env, GIT_MEM_WRITER: writer }));
      const tx = new (await import('../src/gitstore/store.js')).Tx(store, base);
      tx.put(files[0], 'changed\n'); // a record in a folder that is there
      tx.put(files[1], 'changed too\n');
      tx.remove(files[2]); // a folder that may become empty
      tx.putOid(files[3], blob); // an existing object instead of content
      tx.putOid(`${anchorsDir}/${blob}`, blob); // a new entry in a folder that is there
      tx.put('FORMAT', 'format: 1\n# edited\n');
      const commit = await store.commitChanges(base, tx, 'test', ident);
      trees.push(r.git('rev-parse', `${commit}^{tree}`).trim());
      store.close();
      dropTmpRefs(r);
    }
    expect(trees[0]).toBe(trees[1]);
    expect(r.git('ls-tree', '-r', '--name-only', trees[0]).split('\n')).toContain(files[0]);
    r.git('fsck', '--strict', '--no-dangling');
  });
});

describe('a store write with another ref alongside', () => {
  it('moves both refs in one transaction, asking again for the other ref when its compare-and-swap fails', async () => {
    const r = makeRepo({ commit: true });
    await r.memJson(['init']);
    const head = r.git('rev-parse', 'HEAD').trim();
    r.git('update-ref', 'refs/notes/other', head);
    const store = await storeOf(r);
    try {
      let asked = 0;
      const before = r.git('rev-parse', 'refs/memory').trim();
      const res = await store.write(
        async (tx) => {
          tx.put('config.yaml', 'x: 1\n');
          return { message: 'mem: test', value: 1 };
        },
        {
          alongside: async () => {
            asked++;
            // the first answer expects a stale value: the whole transaction fails and is retried
            return { ref: 'refs/notes/other', next: before, expected: asked === 1 ? before : head };
          },
        },
      );
      expect(asked).toBe(2);
      expect(res.attempts).toBe(2);
      expect(r.git('rev-parse', 'refs/memory').trim()).toBe(res.commit);
      expect(r.git('rev-parse', 'refs/notes/other').trim()).toBe(before);
      expect(r.git('rev-list', '--count', `${before}..refs/memory`).trim()).toBe('1');
    } finally {
      store.close();
    }
  });
});

describe('the hook program loader', () => {
  it('keeps a V8 code cache beside the program, and a bad cache only costs the compile', async () => {
    const { cpSync, mkdirSync, readdirSync: ls } = await import('node:fs');
    const dist = join(tmpDir('gm-dist-'), 'dist');
    mkdirSync(dist);
    for (const f of ['post-commit.cjs', 'post-commit-main.cjs', 'yaml.cjs'])
      cpSync(join(ROOT, 'dist', f), join(dist, f));
    const r = makeRepo();
    r.write('m.txt', 'one\ntwo\nthree\nfour\n');
    r.commitAll('init');
    await r.memJson(['init']);
    await r.memJson(['add', '--title', 't', '--content', 'x', '--anchor', 'm.txt:2-3']);
    const runHook = (msg: string, top: string) => {
      r.write('m.txt', `${top}\n${readFileSync(join(r.dir, 'm.txt'), 'utf8')}`);
      r.commitAll(msg);
      const out = sh(process.execPath, [join(dist, 'post-commit.cjs')], r.dir, r.env);
      expect(out).toBe('');
      expect(JSON.parse(noteLines(r, 'HEAD')[0])).toMatchObject({ verdict: 'moved' });
    };
    const caches = () => ls(dist).filter((f) => f.endsWith('.v8cache'));
    // a run that records nothing leaves a cache of what it compiled
    r.write('other.txt', 'x\n');
    r.commitAll('unrelated');
    expect(sh(process.execPath, [join(dist, 'post-commit.cjs')], r.dir, r.env)).toBe('');
    expect(caches()).toEqual([expect.stringMatching(/^post-commit-[0-9a-f]{20}\.v8cache$/)]);
    // the first run that records verdicts keeps a full one, used from then on
    runHook('first', 'a');
    expect(caches().filter((f) => f.endsWith('.full.v8cache'))).toHaveLength(1);
    const cache = join(dist, caches().find((f) => f.endsWith('.full.v8cache'))!);
    const made = readFileSync(cache);
    runHook('second', 'b'); // with the cache
    expect(readFileSync(cache).equals(made)).toBe(true);
    writeFileSync(cache, Buffer.alloc(made.length, 7)); // rejected by V8: compiled as usual, then rewritten
    runHook('third', 'c');
    expect(readFileSync(cache).equals(Buffer.alloc(made.length, 7))).toBe(false);
  });
});
