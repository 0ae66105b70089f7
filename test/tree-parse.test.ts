import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { treeBlobs } from '../src/anchors/gitio.js';
import { openRepo } from '../src/gitstore/repo.js';
import { parseLsTree, parseTree, type TreeEntry } from '../src/gitstore/tree.js';
import { makeRepo } from './helpers.js';

/** A repository whose tree holds every kind of entry and the names that trip a parser. */
function awkwardRepo() {
  const r = makeRepo();
  r.write('plain.txt', 'a\n');
  r.write('a b.txt', 'space\n');
  r.write('tab\there.txt', 'tab\n');
  r.write('new\nline.txt', 'newline\n');
  r.write('é/ü 数据.md', 'unicode\n');
  r.write('dir/sub/deep.js', 'x\n');
  r.write('run.sh', '#!/bin/sh\n');
  execFileSync('chmod', ['+x', join(r.dir, 'run.sh')]);
  symlinkSync('plain.txt', join(r.dir, 'link'));
  r.git('add', '-A');
  // a submodule's gitlink (mode 160000, type commit)
  r.git('update-index', '--add', '--cacheinfo', `160000,${'ab'.repeat(20)},vendor/mod`);
  r.git('commit', '-q', '-m', 'awkward');
  return r;
}

/** The same listing from the raw tree objects, walked the way `ls-tree -r` walks them. */
function walkRaw(dir: string, env: NodeJS.ProcessEnv, tree: string, prefix = ''): TreeEntry[] {
  const raw = execFileSync('git', ['cat-file', 'tree', tree], { cwd: dir, env });
  return parseTree(raw).flatMap((e) =>
    e.tree
      ? walkRaw(dir, env, e.oid, `${prefix}${e.name}/`)
      : [
          {
            mode: e.mode.padStart(6, '0'),
            type: e.mode === '160000' ? 'commit' : 'blob',
            oid: e.oid,
            path: prefix + e.name,
          },
        ],
  );
}

describe('the one tree parser, against real git output', () => {
  it('reads `git ls-tree -r -z` as the raw tree objects say: odd names, links, modes, gitlinks', () => {
    const r = awkwardRepo();
    const listed = parseLsTree(
      execFileSync('git', ['ls-tree', '-r', '-z', 'HEAD'], { cwd: r.dir, env: r.env }),
    );
    expect(listed).toEqual(walkRaw(r.dir, r.env, 'HEAD^{tree}'));
    const byPath = new Map(listed.map((e) => [e.path, e]));
    expect(byPath.get('tab\there.txt')?.type).toBe('blob');
    expect(byPath.get('new\nline.txt')?.type).toBe('blob');
    expect(byPath.get('é/ü 数据.md')?.type).toBe('blob');
    expect(byPath.get('run.sh')?.mode).toBe('100755');
    expect(byPath.get('link')?.mode).toBe('120000');
    expect(byPath.get('vendor/mod')).toEqual({
      mode: '160000',
      type: 'commit',
      oid: 'ab'.repeat(20),
      path: 'vendor/mod',
    });
    expect(byPath.get('plain.txt')?.oid).toBe(r.git('rev-parse', 'HEAD:plain.txt').trim());
  });

  it('lists folders as trees without -r, and takes a string as well as bytes', () => {
    const r = awkwardRepo();
    const out = r.git('ls-tree', '-z', 'HEAD');
    const top = parseLsTree(out);
    expect(top.find((e) => e.path === 'dir')).toMatchObject({ mode: '040000', type: 'tree' });
    expect(top.find((e) => e.path === 'é')?.type).toBe('tree');
    expect(parseLsTree(Buffer.from(out))).toEqual(top);
    expect(parseLsTree('')).toEqual([]);
  });

  it('gives the anchors their blobs (treeBlobs): every file but the gitlink, names as git holds them', async () => {
    const r = awkwardRepo();
    const repo = await openRepo(r.dir, r.env);
    const head = r.git('rev-parse', 'HEAD').trim();
    const all = await treeBlobs(repo, head);
    const want = walkRaw(r.dir, r.env, 'HEAD^{tree}').filter((e) => e.type === 'blob');
    expect(Object.fromEntries(all)).toEqual(Object.fromEntries(want.map((e) => [e.path, e.oid])));
    const some = await treeBlobs(repo, head, ['tab\there.txt', 'new\nline.txt', 'vendor/mod', 'missing']);
    expect([...some.keys()].sort()).toEqual(['new\nline.txt', 'tab\there.txt']);
  });
});
