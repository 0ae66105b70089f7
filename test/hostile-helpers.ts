/**
 * Building hostile memory commits with git plumbing (hash-object, raw trees
 * written with hash-object --literally so names git's mktree refuses can be
 * made too, commit-tree, fast-import), in any repository (a bare remote, a
 * clone whose store is poisoned directly).
 */
import { execFileSync } from 'node:child_process';

export type Node =
  | { blob: string | Buffer; mode?: string }
  | { tree: Spec; mode?: string }
  | { oid: string; mode: string; type: 'blob' | 'tree' | 'commit' };
export interface Spec {
  [name: string]: Node;
}

export interface Plumber {
  run: (args: string[], input?: string | Buffer) => string;
  blob: (content: string | Buffer) => string;
  /** A tree of `spec` laid over `base` (a tree id): named subtrees merge, everything else replaces. */
  tree: (spec: Spec, base?: string | null) => string;
  rootTree: (commit: string) => string;
  commit: (tree: string, parent: string | null, message?: string) => string;
  /** A commit on top of `parent` whose tree is the parent's with `spec` laid over it. */
  commitOver: (parent: string, spec: Spec, message?: string) => string;
  /** A commit adding one blob at a path `depth` folders deep (one fast-import process). */
  deepCommit: (parent: string, prefix: string, depth: number) => string;
}

interface Entry {
  mode: string;
  type: string;
  oid: string;
  name: Buffer;
}

export function plumber(dir: string, env: NodeJS.ProcessEnv): Plumber {
  const run = (args: string[], input?: string | Buffer): string =>
    execFileSync('git', args, { cwd: dir, env, input, stdio: ['pipe', 'pipe', 'pipe'], maxBuffer: 1 << 28 })
      .toString('utf8')
      .trim();
  const blob = (content: string | Buffer) => run(['hash-object', '-w', '--stdin'], content);
  const entries = (tree: string): Entry[] => {
    const out = execFileSync('git', ['ls-tree', '-z', tree], { cwd: dir, env, maxBuffer: 1 << 28 });
    const list: Entry[] = [];
    let i = 0;
    while (i < out.length) {
      const nul = out.indexOf(0, i);
      const line = out.subarray(i, nul);
      const tab = line.indexOf(9);
      const [mode, type, oid] = line.subarray(0, tab).toString('latin1').split(' ');
      list.push({ mode, type, oid, name: Buffer.from(line.subarray(tab + 1)) });
      i = nul + 1;
    }
    return list;
  };
  const writeTree = (list: Entry[]): string => {
    // git's order: names as bytes, a tree's name compared as if it ended in "/"
    const key = (e: Entry) => (e.type === 'tree' ? Buffer.concat([e.name, Buffer.from('/')]) : e.name);
    const sorted = [...list].sort((a, b) => Buffer.compare(key(a), key(b)));
    const raw = Buffer.concat(
      sorted.flatMap((e) => [
        Buffer.from(`${e.mode.replace(/^0+/, '')} `),
        e.name,
        Buffer.from([0]),
        Buffer.from(e.oid, 'hex'),
      ]),
    );
    return run(['hash-object', '-t', 'tree', '-w', '--literally', '--stdin'], raw);
  };
  const tree = (spec: Spec, base?: string | null): string => {
    const list = base ? entries(base) : [];
    for (const [name, node] of Object.entries(spec)) {
      // "hex:…" names are raw bytes (names that are not UTF-8)
      const nb = name.startsWith('hex:') ? Buffer.from(name.slice(4), 'hex') : Buffer.from(name, 'utf8');
      const at = list.findIndex((e) => e.name.equals(nb));
      const old = at >= 0 ? list[at] : undefined;
      let e: Entry;
      if ('blob' in node) e = { mode: node.mode ?? '100644', type: 'blob', oid: blob(node.blob), name: nb };
      else if ('tree' in node)
        e = {
          mode: node.mode ?? '40000',
          type: 'tree',
          oid: tree(node.tree, old?.type === 'tree' ? old.oid : null),
          name: nb,
        };
      else e = { mode: node.mode, type: node.type, oid: node.oid, name: nb };
      if (at >= 0) list.splice(at, 1, e);
      else list.push(e);
    }
    return writeTree(list);
  };
  const rootTree = (commit: string) => run(['rev-parse', `${commit}^{tree}`]);
  const commit = (t: string, parent: string | null, message = 'hostile') =>
    run(['commit-tree', t, ...(parent ? ['-p', parent] : []), '-m', message]);
  return {
    run,
    blob,
    tree,
    rootTree,
    commit,
    commitOver: (parent, spec, message) => commit(tree(spec, rootTree(parent)), parent, message),
    deepCommit: (parent, prefix, depth) => {
      const path = `${prefix}/${Array(depth).fill('a').join('/')}/x`;
      const input = [
        'commit refs/hostile/deep',
        'committer Mallory <m@example.com> 1700000000 +0000',
        'data 4',
        'deep',
        `from ${parent}`,
        `M 100644 inline ${path}`,
        'data 3',
        'hi',
        '',
        'done',
        '',
      ].join('\n');
      run(['fast-import', '--quiet', '--done'], input);
      const c = run(['rev-parse', 'refs/hostile/deep']);
      run(['update-ref', '-d', 'refs/hostile/deep']);
      return c;
    },
  };
}

/** A record file as git-mem writes it (the fields a test needs; `extra` lines go in the frontmatter). */
export function recordText(id: string, title = 'a fine record', body = 'body\n', extra = ''): string {
  return [
    '---',
    `id: ${id}`,
    'type: decision',
    `title: ${title}`,
    'status: active',
    'tags: []',
    'confidence: 0.8',
    'created: 2024-01-01T00:00:00.000Z',
    'updated: 2024-01-01T00:00:00.000Z',
    'clock: 1',
    ...(extra ? [extra] : []),
    '---',
    body,
  ].join('\n');
}
