/**
 * The one reader of raw commit objects (as `git cat-file --batch` gives them): the tree, the
 * parents and the committer with its time. Read through the store's running cat-file, a
 * commit's header costs no process of its own.
 */

export interface CommitHeader {
  tree: string;
  parents: string[];
  /** who committed, as the header names them */
  committer?: { name: string; email: string };
  /** the committer's time, in milliseconds since the epoch (NaN where the header has none) */
  committedAt: number;
}

/** The header of a raw commit object: everything before its first blank line. */
export function parseCommitHeader(content: Buffer): CommitHeader {
  const end = content.indexOf('\n\n');
  const head = content.toString('utf8', 0, end < 0 ? content.length : end);
  const tree = /^tree ([0-9a-f]{40,64})$/m.exec(head)?.[1] ?? '';
  const parents = [...head.matchAll(/^parent ([0-9a-f]{40,64})$/gm)].map((m) => m[1]);
  const c = /^committer (.*?) <([^>]*)>(?: (\d+))?/m.exec(head);
  return {
    tree,
    parents,
    committer: c ? { name: c[1], email: c[2] } : undefined,
    committedAt: c?.[3] ? Number(c[3]) * 1000 : Number.NaN,
  };
}
