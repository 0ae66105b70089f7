/**
 * The boundary validator's walk through git: a commit's tree (or a remote's
 * incoming commits) checked entry by entry against the pure checks of
 * ./validate.ts, skipping every subtree and blob that is the same as in the
 * commits it is compared against, so a sync reads only what the remote changed.
 * Split from src/merge/validate.ts.
 */
import { err } from '../errors.js';
import { parseCommitHeader } from '../gitstore/commit-object.js';
import { git } from '../gitstore/git.js';
import type { Store } from '../gitstore/store.js';
import type { Found, ProblemKind } from './problems.js';
import {
  blobProblem,
  collisionProblems,
  layoutProblem,
  modeProblem,
  NOTE_LIMITS,
  nameProblem,
  noteProblem,
  notesLayoutProblem,
  type Problem,
  showPath,
  sizeLimit,
  TREE_MODES,
} from './validate.js';

/** Where a kind of tree puts things, how large its files may be, and what their content must be. */
interface Layout {
  entry: (
    parents: readonly string[],
    name: string,
    isTree: boolean,
    oid: string | undefined,
    hexLen: number,
  ) => Found | null;
  limit: (path: string) => number | null;
  /** Whether the content of a file at `path` is read and checked (anchored code is not). */
  read: (path: string) => boolean;
  content: (path: string, content: Buffer) => Problem | null;
}

const LAYOUTS: Record<'store' | 'notes', Layout> = {
  store: {
    entry: layoutProblem,
    limit: sizeLimit,
    read: (path) => !path.startsWith('anchors/'),
    content: blobProblem,
  },
  notes: {
    entry: notesLayoutProblem,
    limit: () => NOTE_LIMITS.note,
    read: () => true,
    content: (path, content) => {
      const m = noteProblem(content);
      return m ? { path, ...m, kind: 'entry' } : null;
    },
  },
};

// ------------------------------------------------------------------ trees through git

interface RawEntry {
  mode: string;
  name: string;
  oid: string;
}

/** Parses a raw tree object (`<mode> <name>\0<id bytes>`…); names decoded as UTF-8 (bad bytes → U+FFFD). */
export function parseTree(buf: Buffer, hashBytes: number): RawEntry[] {
  const out: RawEntry[] = [];
  let i = 0;
  while (i < buf.length) {
    const sp = buf.indexOf(0x20, i);
    const nul = buf.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 1 + hashBytes > buf.length) throw new Error('malformed tree object');
    out.push({
      mode: buf.toString('latin1', i, sp),
      name: buf.toString('utf8', sp + 1, nul),
      oid: buf.toString('hex', nul + 1, nul + 1 + hashBytes),
    });
    i = nul + 1 + hashBytes;
  }
  return out;
}

export interface ValidateOptions {
  /** Commits whose identical subtrees and blobs are trusted (the local tip, the merge base). */
  against?: ReadonlyArray<string | null>;
  /** Also check file contents: true (default) sizes, UTF-8 and schemas; 'sizes' sizes only. */
  content?: boolean | 'sizes';
  /** Collect up to this many problems instead of stopping at the first (doctor). */
  limit?: number;
  /** The kind of tree: the memory store (default) or a notes tree (refs/notes/memory). */
  layout?: 'store' | 'notes';
}

async function rootTrees(store: Store, commits: string[]): Promise<Map<string, string>> {
  const objs = await store.catFile.readMany(commits);
  const out = new Map<string, string>();
  commits.forEach((c, i) => {
    const o = objs[i];
    const tree = o?.type === 'commit' ? parseCommitHeader(o.content).tree : '';
    if (tree) out.set(c, tree);
  });
  return out;
}

/** Sizes of objects by one `git cat-file --batch-check` (no content read). */
async function objectSizes(
  store: Store,
  oids: string[],
): Promise<Map<string, { type: string; size: number }>> {
  const out = new Map<string, { type: string; size: number }>();
  if (!oids.length) return out;
  const r = await git(['cat-file', '--batch-check'], {
    cwd: store.repo.cwd,
    env: store.repo.env,
    input: `${[...new Set(oids)].join('\n')}\n`,
  });
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [oid, type, size] = line.split(' ');
    if (oid && size !== undefined) out.set(oid, { type, size: Number(size) });
  }
  return out;
}

/**
 * Walks the trees of `commits` (one commit, or several: every commit a sync
 * brings), checking every entry that differs from the same path in the
 * `against` commits, then the contents of the files that differ. An entry
 * (path, mode and object) is checked once however many of the commits hold
 * it. Returns the problems found (at most `limit`, default 1), each naming
 * the commit it was found in; [] when all is fine.
 */
export async function validateTree(
  store: Store,
  commits: string | readonly string[],
  opts: ValidateOptions = {},
): Promise<Problem[]> {
  const list = [...new Set(typeof commits === 'string' ? [commits] : commits)];
  const limit = opts.limit ?? 1;
  const layout = LAYOUTS[opts.layout ?? 'store'];
  const problems: Problem[] = [];
  const add = (p: Problem) => {
    if (problems.length < limit) problems.push(p);
  };
  if (!list.length) return problems;
  const hexLen = list[0].length;
  const inList = new Set(list);
  const against = [...new Set((opts.against ?? []).filter((c): c is string => !!c && !inList.has(c)))];
  const roots = await rootTrees(store, [...list, ...against]);
  const trusted = against.map((c) => roots.get(c) ?? null);
  type Node = { segs: string[]; oid: string; against: Array<string | null>; commit: string };
  const seen = new Set<string>();
  let level: Node[] = [];
  for (const c of list) {
    const root = roots.get(c);
    if (!root) {
      add({ path: '', message: `${c} is not a commit`, kind: 'entry', problem: 'unreadable', commit: c });
      continue;
    }
    if (seen.has(`\0${root}`) || trusted.includes(root)) continue;
    seen.add(`\0${root}`);
    level.push({ segs: [], oid: root, against: trusted, commit: c });
  }
  const blobs: Array<{ path: string; oid: string; commit: string }> = [];
  while (level.length && problems.length < limit) {
    const want = [...new Set(level.flatMap((n) => [n.oid, ...n.against.filter((x): x is string => !!x)]))];
    const objs = await store.catFile.readMany(want);
    const byOid = new Map<string, RawEntry[] | null>();
    want.forEach((oid, i) => {
      const o = objs[i];
      let entries: RawEntry[] | null = null;
      try {
        if (o && o.type === 'tree') entries = parseTree(o.content, hexLen / 2);
      } catch {}
      byOid.set(oid, entries);
    });
    const next: Node[] = [];
    for (const node of level) {
      const here = node.segs.join('/');
      const commit = node.commit;
      const entries = byOid.get(node.oid);
      if (!entries) {
        add({
          path: here,
          message: 'is a tree object git cannot read',
          kind: 'entry',
          problem: 'unreadable',
          commit,
        });
        continue;
      }
      const others = node.against.map((oid) => {
        const es = oid ? byOid.get(oid) : null;
        return es ? new Map(es.map((e) => [e.name, e])) : null;
      });
      for (const c of collisionProblems(entries.map((e) => e.name)))
        add({
          path: [...node.segs, c.name].join('/'),
          message: c.message,
          kind: 'entry',
          problem: c.problem,
          commit,
        });
      for (const e of entries) {
        const path = [...node.segs, e.name].join('/');
        if (others.some((m) => m?.get(e.name)?.oid === e.oid && m.get(e.name)!.mode === e.mode)) continue;
        const key = `${path}\0${e.mode}\0${e.oid}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const isTree = TREE_MODES.has(e.mode);
        const problem =
          nameProblem(e.name) ??
          modeProblem(e.mode, isTree) ??
          layout.entry(node.segs, e.name, isTree, isTree ? undefined : e.oid, hexLen);
        if (problem) {
          add({ path, ...problem, kind: 'entry', commit });
          continue;
        }
        if (isTree) {
          next.push({
            segs: [...node.segs, e.name],
            oid: e.oid,
            against: others.map((m) => {
              const o = m?.get(e.name);
              return o && TREE_MODES.has(o.mode) ? o.oid : null;
            }),
            commit,
          });
        } else blobs.push({ path, oid: e.oid, commit });
      }
    }
    level = next;
  }
  if (problems.length >= limit || opts.content === false) return problems;
  // contents: sizes first (a 50 MB blob is never read), then one pipelined read
  const sizes = await objectSizes(
    store,
    blobs.map((b) => b.oid),
  );
  const toRead: typeof blobs = [];
  for (const b of blobs) {
    const s = sizes.get(b.oid);
    if (s?.type !== 'blob') {
      add({
        path: b.path,
        message: `is not a readable blob (${s?.type ?? 'missing'})`,
        kind: 'entry',
        problem: 'unreadable',
        commit: b.commit,
      });
      continue;
    }
    const max = layout.limit(b.path);
    if (max !== null && s.size > max)
      add({
        path: b.path,
        message: `is ${s.size} bytes, over the ${max}-byte limit for this file`,
        kind: 'entry',
        problem: 'too-large',
        commit: b.commit,
      });
    else if (layout.read(b.path)) toRead.push(b);
  }
  if (problems.length >= limit || opts.content === 'sizes') return problems;
  const got = await store.catFile.readMany(toRead.map((b) => b.oid));
  toRead.forEach((b, i) => {
    const o = got[i];
    const p = o
      ? layout.content(b.path, o.content)
      : { path: b.path, message: 'is missing', kind: 'entry' as const, problem: 'unreadable' as const };
    if (p) add({ ...p, commit: b.commit });
  });
  return problems;
}

/** The commit that last changed `path` on the way to `tip` (the tip when git cannot say). */
export async function commitOfPath(store: Store, tip: string, path: string): Promise<string> {
  if (!path || /[\u0000-\u001f]/.test(path)) return tip;
  const r = await git(['log', '-1', '--format=%H', tip, '--', `:(literal)${path}`], {
    cwd: store.repo.cwd,
    env: store.repo.env,
    allowFail: true,
  });
  return (r.code === 0 && r.stdout.toString().trim()) || tip;
}

/** The most commits one sync may bring: each is read (their trees feed history and --at). */
export const MAX_INCOMING_COMMITS = 50_000;

/**
 * The commits `theirs` brings that none of `against` has (theirs first), or a
 * refusal when there are more than MAX_INCOMING_COMMITS.
 */
async function incomingCommits(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
  source: string,
): Promise<string[]> {
  const known = against.filter((c): c is string => !!c);
  const r = await git(
    [
      'rev-list',
      `--max-count=${MAX_INCOMING_COMMITS + 1}`,
      theirs,
      ...(known.length ? ['--not', ...known] : []),
    ],
    { cwd: store.repo.cwd, env: store.repo.env },
  );
  const list = r.stdout.toString().split('\n').filter(Boolean);
  if (list.length > MAX_INCOMING_COMMITS) {
    throw err(
      'E_MERGE',
      `${source} brings more than ${MAX_INCOMING_COMMITS} new commits (tip ${theirs.slice(0, 12)}): too many to check in one sync`,
      'nothing was merged and the local memory is unchanged; squash the remote history where it was written (git mem export, then import into a fresh store), then sync again',
      { commit: theirs, problem: 'too-many-commits' satisfies ProblemKind },
    );
  }
  return list.includes(theirs) ? [theirs, ...list.filter((c) => c !== theirs)] : list;
}

/**
 * The first problem of what `theirs` brings beyond `against`: the tip's tree
 * gets every check; the commits under it (history and --at read them) get
 * the structural ones (names, modes, layout, depth, collisions) and sizes,
 * not the schemas, so a record a later commit fixed does not refuse the
 * remote for good (fixing it in history would take a force-push).
 */
async function firstIncomingProblem(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
  source: string,
  layout: 'store' | 'notes',
): Promise<Problem | undefined> {
  const commits = await incomingCommits(store, theirs, against, source);
  if (!commits.length) return undefined; // nothing new: the local refs hold all of it
  const [p] = await validateTree(store, theirs, { against, layout });
  if (p) return p;
  const under = commits.filter((c) => c !== theirs);
  if (!under.length) return undefined;
  const [q] = await validateTree(store, under, { against: [...against, theirs], layout, content: 'sizes' });
  return q;
}

/**
 * Refuses a remote commit whose tree fails any check, or a commit under it
 * that fails the structural checks or sizes, in one line naming the commit,
 * the path and what is wrong. Compared against `against` (the local tip and
 * the merge bases), only what the remote changed is read.
 */
export async function assertIncoming(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
  source = 'the remote memory',
): Promise<void> {
  const p = await firstIncomingProblem(store, theirs, against, source, 'store');
  if (!p) return;
  const commit = await commitOfPath(store, p.commit ?? theirs, p.path);
  const what = p.kind === 'record' ? 'a malformed record' : 'an invalid entry';
  throw err(
    'E_MERGE',
    `${source} holds ${what} ${showPath(p.path) || '(root)'} (commit ${commit.slice(0, 12)}): ${p.message}`,
    'nothing was merged and the local memory is unchanged; fix or remove it where it was written, then sync again',
    { path: p.path, commit, problem: p.problem, ...(p.field ? { field: p.field, reason: p.code } : {}) },
  );
}

/**
 * With `sync.require-signed` (`git config mem.sync.requireSigned true`):
 * refuses the remote when a commit it brings is not signed by a trusted key
 * (git's %G? is G: gpg.ssh.allowedSignersFile for ssh keys, the gpg trust
 * database for gpg ones), in one line naming the commit and what is wrong
 * with it. Commits the local store already has are not looked at.
 */
export async function assertIncomingSigned(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
  source = 'the remote memory',
): Promise<void> {
  const commits = await incomingCommits(store, theirs, against, source);
  if (!commits.length) return;
  const { commitInfo } = await import('../gitstore/commit-info.js');
  const infos = await commitInfo(store, commits);
  // the oldest offender first: the one whose author set-up to fix
  for (const c of [...commits].reverse()) {
    const sig = infos.get(c)?.signature;
    if (sig?.status === 'good') continue;
    const key = sig?.key ? ` ${sig.key}` : '';
    const what =
      !sig || sig.status === 'none'
        ? 'is not signed'
        : sig.status === 'untrusted'
          ? `is signed by a key this clone does not trust${key}`
          : sig.status === 'unverifiable'
            ? `has a signature this clone cannot check${key} (for ssh keys, set gpg.ssh.allowedSignersFile)`
            : `has a ${sig.status} signature${key}`;
    throw err(
      'E_MERGE',
      `${source}: commit ${c.slice(0, 12)} ${what}, and sync.require-signed is set`,
      "nothing was merged and the local memory is unchanged; its author signs memory commits with git config commit.gpgsign true, and their key goes in your allowed signers (gpg.ssh.allowedSignersFile) or gpg's trust; then sync again",
      { commit: c, signature: sig?.status ?? 'none', problem: 'unsigned' satisfies ProblemKind },
    );
  }
}

/**
 * Refuses fetched notes (refs/notes/memory of a remote) when their tip holds
 * an entry a notes tree does not (names, modes, fan-out, depth) or a note
 * that is not UTF-8 JSON lines of {id, verdict, reason} within the size
 * limits, or when a commit under it fails the structural checks or sizes.
 */
export async function assertIncomingNotes(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
): Promise<void> {
  const source = 'the remote notes (refs/notes/memory)';
  const p = await firstIncomingProblem(store, theirs, against, source, 'notes');
  if (!p) return;
  const commit = await commitOfPath(store, p.commit ?? theirs, p.path);
  throw err(
    'E_MERGE',
    `${source} hold an invalid note ${showPath(p.path) || '(root)'} (commit ${commit.slice(0, 12)}): ${p.message}`,
    'nothing was merged and the local memory and notes are unchanged; remove that note where it was written, then sync again',
    { path: p.path, commit, problem: p.problem },
  );
}
