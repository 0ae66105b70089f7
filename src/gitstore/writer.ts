/**
 * git writes every object and ref of the store, through git processes that
 * live as long as the Store: `git hash-object -w --stdin-paths`, one each for
 * blobs, trees (`-t tree`) and commits (`-t commit`), and `git update-ref
 * --stdin` (one transaction per change, moving every ref with its expected old
 * value). A one-shot command starts each once; the MCP server and the daemon
 * start them once for their whole life, so an add there spawns no process (a
 * spawn from a process holding a large index costs tens of milliseconds).
 * Tree contents are encoded here (tree.ts treeObject, tested against `git
 * mktree`, which would also look up every entry: a second per add once a
 * thousand folder trees are loose objects); git checks the format of every
 * object it writes, computes its id (checked against ours) and honours
 * core.fsync. update-ref checks that the new commit exists.
 */
import { spawn } from 'node:child_process';
import { readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { mark } from '../trace.js';
import {
  type CatFile,
  type CatFileObject,
  type GitProcess,
  git,
  gitEnv,
  holdProcess as hold,
  startGits,
  ZERO_OID,
} from './git.js';
import { memDir, memDirForWrite, type Repo, writeTestMarker } from './repo.js';
import { WRITER_ARGS } from './store-start.js';
import { objectId, parseTree, treeObject } from './tree.js';

/** One long-lived git process that answers each request with a known number of lines. */
class GitSession {
  private child?: GitProcess;
  private buf = '';
  private stderr = '';
  private waiting: Array<{
    lines: number;
    got: string[];
    resolve: (l: string[]) => void;
    reject: (e: Error) => void;
  }> = [];

  constructor(
    private readonly repo: Repo,
    readonly args: string[],
  ) {}

  get running(): boolean {
    return !!this.child;
  }

  /**
   * Starts the process now (if it is not running), so a first request does not wait for it;
   * `given`: this session's process, started with others (startGits).
   */
  start(given?: GitProcess): GitProcess {
    if (this.child) return this.child;
    mark(`git ${this.args.join(' ')} started`);
    const child =
      given ??
      spawn('git', this.args, {
        cwd: this.repo.cwd,
        env: gitEnv(this.repo.env),
        stdio: ['pipe', 'pipe', 'pipe'],
      });
    this.stderr = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d: string) => {
      this.buf += d;
      this.drain();
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      this.stderr += d;
    });
    child.stdin.on('error', () => {});
    hold(child, false); // held only while an answer is owed
    const fail = (e: Error) => {
      for (const w of this.waiting.splice(0)) w.reject(e);
    };
    child.on('error', (e) => fail(err('E_GIT', `cannot run git ${this.args[0]}: ${e.message}`)));
    child.on('close', (code) => {
      if (this.child === child) this.child = undefined;
      this.buf = '';
      const why = this.stderr.trim().split('\n').pop() || `exit ${code}`;
      fail(new SessionExit(`git ${this.args[0]} failed: ${why}`, this.stderr));
    });
    this.child = child;
    return child;
  }

  private drain(): void {
    while (this.waiting.length) {
      const nl = this.buf.indexOf('\n');
      if (nl < 0) break;
      const w = this.waiting[0];
      w.got.push(this.buf.slice(0, nl));
      this.buf = this.buf.slice(nl + 1);
      if (w.got.length === w.lines) {
        mark(`git ${this.args[0]} answered`);
        this.waiting.shift();
        w.resolve(w.got);
      }
    }
    if (!this.waiting.length && this.child) hold(this.child, false);
  }

  /** Sends `input` and resolves with the next `lines` lines git prints. */
  ask(input: string | Buffer, lines: number): Promise<string[]> {
    mark(`git ${this.args[0]} asked`);
    const child = this.start();
    if (!this.waiting.length) hold(child, true);
    return new Promise((resolve, reject) => {
      this.waiting.push({ lines, got: [], resolve, reject });
      child.stdin.write(input);
    });
  }

  close(): void {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    child.stdin.end();
    hold(child, false);
  }
}

class SessionExit extends Error {
  constructor(
    message: string,
    readonly stderr: string,
  ) {
    super(message);
  }
}

/**
 * A git process that has run for a while does not see packs added since it
 * started (a fetch, a gc): it says an object is unavailable. The request goes
 * once more to a fresh process (the session starts one after a failure).
 */
async function fresh<T>(ask: () => Promise<T>): Promise<T> {
  try {
    return await ask();
  } catch (e) {
    if (
      e instanceof SessionExit &&
      /unavailable|nonexistent object|missing object|not a valid object/i.test(e.stderr)
    )
      return ask();
    throw e;
  }
}

export interface RefUpdate {
  ref: string;
  next: string;
  /** null: the ref must not exist yet */
  expected: string | null;
}

/** A change to a path of a tree: new content, an existing blob, or removal. */
export type PathChange = { content: Buffer } | { oid: string } | { remove: true };

export interface CommitSpec {
  tree: string;
  parents: string[];
  /** `Name <email>` */
  who: string;
  when: Date;
  message: string;
  /** sign it, as `git commit` does where commit.gpgsign is set (gpg.format, user.signingkey) */
  sign?: boolean;
}

let seq = 0;

/** A temp file older than this was left by a writer that died (a live one removes its own in ms). */
export const STALE_TEMP_MS = 60 * 60 * 1000;
const swept = new Set<string>();

/**
 * Removes the temp files (`w-<pid>-<n>` in .git/mem/tmp) that writers killed
 * between writing one and git reading it left behind, once they are older
 * than STALE_TEMP_MS; once per repository per process.
 */
export function removeStaleTemps(repo: Repo, now = Date.now()): void {
  const dir = memDir(repo, 'tmp');
  if (swept.has(dir)) return;
  swept.add(dir);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    // w-: an object on its way to hash-object; marks-: a fast-import marks file (fast-import.ts)
    if (!/^(?:w|marks)-\d+-\d+$/.test(name)) continue;
    const file = join(dir, name);
    try {
      if (now - statSync(file).mtimeMs > STALE_TEMP_MS) rmSync(file, { force: true });
    } catch {}
  }
}

export class GitWriter {
  private tmp?: string;
  private readonly blobs: GitSession;
  private readonly commits: GitSession;
  private readonly trees: GitSession;
  private refs?: GitSession;
  /** closed by its store: a warm-up asked for later (a write that failed meanwhile) starts nothing */
  private closed = false;

  constructor(
    private readonly repo: Repo,
    /** the reflog message of every ref update, when set (long-lived processes); else each change's own */
    private readonly reflogMessage?: string,
    /** told of each commit git wrote, by the names a read would use (CatFile.remember) */
    private readonly onWritten?: (name: string, o: CatFileObject) => void,
  ) {
    removeStaleTemps(repo);
    const [blobs, trees, commits] = WRITER_ARGS;
    this.blobs = new GitSession(repo, blobs);
    this.trees = new GitSession(repo, trees);
    this.commits = new GitSession(repo, commits);
  }

  /** Takes the object writers' processes (WRITER_ARGS, in that order), started with others. */
  adopt(procs: readonly GitProcess[]): void {
    [this.blobs, this.trees, this.commits].forEach((s, i) => {
      if (!this.closed && !s.running) s.start(procs[i]);
      else procs[i].stdin.destroy();
    });
  }

  /** Writes through a file under .git/mem/tmp (hash-object reads paths); removed once git has it. */
  private async hashFile(session: GitSession, content: Buffer | string): Promise<string> {
    // the folder is made once per writer (not once per object); made again if something removed it
    this.tmp ??= memDirForWrite(this.repo, 'tmp');
    const file = join(this.tmp, `w-${process.pid}-${++seq}`);
    // a write that failed half-way (a full disk) leaves no temp file behind
    const write = () => {
      try {
        writeFileSync(file, content);
      } catch (e) {
        try {
          rmSync(file, { force: true });
        } catch {}
        throw e;
      }
    };
    try {
      write();
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      this.tmp = memDirForWrite(this.repo, 'tmp');
      write();
    }
    try {
      const [oid] = await session.ask(`${file}\n`, 1);
      if (!/^[0-9a-f]{40}$/.test(oid)) throw err('E_GIT', `git hash-object returned "${oid.slice(0, 60)}"`);
      return oid;
    } finally {
      rmSync(file, { force: true });
    }
  }

  blob(content: Buffer | string): Promise<string> {
    return this.hashFile(this.blobs, content);
  }

  /** A tree object from its raw content (treeObject: git's order and encoding). */
  tree(body: Buffer): Promise<string> {
    return this.hashFile(this.trees, body);
  }

  commit(c: CommitSpec): Promise<string> {
    const when = `${Math.floor(c.when.getTime() / 1000)} +0000`;
    const msg = c.message.endsWith('\n') ? c.message : `${c.message}\n`;
    const text = [
      `tree ${c.tree}`,
      ...c.parents.map((p) => `parent ${p}`),
      `author ${c.who} ${when}`,
      `committer ${c.who} ${when}`,
      '',
      msg,
    ].join('\n');
    if (c.sign) return this.signedCommit(c, msg);
    return this.hashFile(this.commits, text).then((oid) => {
      const o = { oid, type: 'commit', size: Buffer.byteLength(text), content: Buffer.from(text, 'utf8') };
      this.onWritten?.(oid, o);
      this.onWritten?.(`${oid}^{commit}`, o);
      return oid;
    });
  }

  /** The same commit, signed by git (`commit-tree -S`: gpg, ssh or x509, as configured): one process. */
  private async signedCommit(c: CommitSpec, msg: string): Promise<string> {
    const m = /^(.*) <(.*)>$/.exec(c.who);
    const [name, email] = m ? [m[1], m[2]] : [c.who, ''];
    const date = `@${Math.floor(c.when.getTime() / 1000)} +0000`;
    const r = await git(['commit-tree', c.tree, ...c.parents.flatMap((p) => ['-p', p]), '-S'], {
      cwd: this.repo.cwd,
      env: {
        ...this.repo.env,
        GIT_AUTHOR_NAME: name,
        GIT_AUTHOR_EMAIL: email,
        GIT_AUTHOR_DATE: date,
        GIT_COMMITTER_NAME: name,
        GIT_COMMITTER_EMAIL: email,
        GIT_COMMITTER_DATE: date,
      },
      input: msg,
      allowFail: true,
    });
    const oid = r.stdout.toString().trim();
    if (r.code !== 0 || !/^[0-9a-f]{40}$/.test(oid))
      throw err(
        'E_GIT',
        `cannot sign the memory commit (commit.gpgsign is set): ${r.stderr.trim().split('\n').pop() || `git commit-tree exited ${r.code}`}`,
        'fix the signing set-up (user.signingkey, gpg.format), or stop signing here: git config commit.gpgsign false',
      );
    return oid;
  }

  /**
   * Starts the git processes a write needs that are not running yet, before it needs them
   * (`message`: the reflog message of the ref update to come, when known). The object writers
   * and `also`'s (the store's config read) start by one process start (startGits), since each
   * start blocks this thread until the child runs; the ref update by its own, as its stderr is
   * its answer when a ref moved or is locked (a group's is shared, and may come late).
   */
  warm(message?: string, also: ReadonlyArray<{ args: string[]; use: (p: GitProcess) => void }> = []): void {
    if (this.closed) return;
    const starts = [
      ...[this.blobs, this.trees, this.commits]
        .filter((s) => !s.running)
        .map((s) => ({ args: s.args, use: (p: GitProcess) => s.start(p) })),
      ...also,
    ];
    const procs = startGits(starts, this.repo.cwd, this.repo.env);
    starts.forEach((s, i) => {
      s.use(procs[i]);
    });
    if (message !== undefined) this.refSession(message).start();
  }

  private refSession(message?: string): GitSession {
    const reason = this.reflogMessage ?? message;
    const args = ['update-ref', ...(reason ? ['-m', reason] : []), '--stdin'];
    if (this.refs && this.refs.args.join('\0') !== args.join('\0')) {
      this.refs.close();
      this.refs = undefined;
    }
    this.refs ??= new GitSession(this.repo, args);
    return this.refs;
  }

  /**
   * Moves every ref to `next` if it is still at `expected`, in one transaction.
   * Resolves true when they moved; otherwise with git's reason (a ref moved or
   * a lock is in the way), the refs as they were.
   */
  async updateRefs(updates: readonly RefUpdate[], message?: string): Promise<true | { stderr: string }> {
    const refs = this.refSession(message);
    const lines = ['start', ...updates.map((u) => `update ${u.ref} ${u.next} ${u.expected ?? ZERO_OID}`)];
    try {
      // test hook (crash tests): stop while git holds the refs' locks, between prepare and commit
      const pause = Number(this.repo.env.GIT_MEM_TEST_PAUSE_IN_CAS ?? 0);
      if (pause > 0) {
        await refs.ask(`${[...lines, 'prepare'].join('\n')}\n`, 2);
        writeTestMarker(this.repo, 'test-locked', updates.map((u) => u.ref).join('\n'));
        await new Promise((r) => setTimeout(r, pause));
        await refs.ask('commit\n', 1);
        return true;
      }
      lines.push('prepare', 'commit');
      await fresh(() => refs.ask(`${lines.join('\n')}\n`, 3));
      return true;
    } catch (e) {
      if (e instanceof SessionExit) return { stderr: e.stderr };
      throw e;
    }
  }

  close(): void {
    this.closed = true;
    for (const s of [this.blobs, this.commits, this.trees, this.refs]) s?.close();
  }
}

/** What applyToTree wrote: the new root tree's id, and when git has it. */
export interface TreeWrite {
  /** the root tree's id, computed before git has written it */
  tree: string;
  /** settles once git has written every new object and named each as computed (E_GIT if not) */
  written: Promise<void>;
}

/**
 * The tree of commit `base` (null: none) with `changes` applied (paths from
 * the root). Reads only the trees on changed paths, all in one pipelined
 * batch; then names every new blob and tree as git will (objectId), so all of
 * them go to git at once instead of one round trip per folder level, and
 * checks each id git answers. git keeps no empty trees: a folder left empty
 * goes; the root is written even when empty.
 */
export async function applyToTree(
  cat: CatFile,
  writer: GitWriter,
  base: string | null,
  changes: ReadonlyMap<string, PathChange>,
): Promise<TreeWrite> {
  const sent: Promise<void>[] = [];
  // what git wrote, by the names later reads will use (a long-lived store's cat-file keeps them)
  const known: Array<[string, CatFileObject]> = [];
  const send = (kind: 'blob' | 'tree', content: Buffer, answer: Promise<string>) => {
    const computed = objectId(kind, content);
    const p = answer.then((oid) => {
      if (oid !== computed)
        throw err('E_GIT', `git named a new ${kind} ${oid}, where git-mem computed ${computed}`);
    });
    p.catch(() => {}); // awaited through `written`; this only marks it handled until then
    sent.push(p);
    known.push([computed, { oid: computed, type: kind, size: content.length, content }]);
    return computed;
  };
  const dirs = new Set<string>(['']);
  for (const path of changes.keys())
    for (let i = path.indexOf('/'); i >= 0; i = path.indexOf('/', i + 1)) dirs.add(path.slice(0, i));
  const order = [...dirs];
  // the trees on changed paths are asked for first: git reads them while the blobs go out
  const reading = base
    ? cat.readMany(order.map((d) => (d ? `${base}:${d}` : `${base}^{tree}`)))
    : Promise.resolve(order.map(() => null));
  const blobs = new Map<string, string>();
  for (const [path, c] of changes)
    if ('content' in c) blobs.set(path, send('blob', c.content, writer.blob(c.content)));
  const read = await reading;
  const trees = new Map<string, Map<string, { mode: string; oid: string }>>();
  order.forEach((d, i) => {
    const entries = new Map<string, { mode: string; oid: string }>();
    const o = read[i];
    if (o?.type === 'tree')
      for (const e of parseTree(o.content))
        entries.set(e.name, { mode: e.tree ? '040000' : e.mode, oid: e.oid });
    else if (o && d) throw err('E_GIT', `cannot write ${d}/: it is a ${o.type} in ${base}`);
    trees.set(d, entries);
  });
  const parentOf = (p: string) => (p.includes('/') ? p.slice(0, p.lastIndexOf('/')) : '');
  const nameOf = (p: string) => p.slice(p.lastIndexOf('/') + 1);
  for (const [path, c] of changes) {
    const t = trees.get(parentOf(path))!;
    if ('remove' in c) t.delete(nameOf(path));
    else t.set(nameOf(path), { mode: '100644', oid: 'oid' in c ? c.oid : blobs.get(path)! });
  }
  const written = new Map<string, string>(); // folder → its new tree's id
  const tree = (entries: Map<string, { mode: string; oid: string }>, dir: string) => {
    const body = treeObject(toList(entries));
    const oid = send('tree', body, writer.tree(body));
    written.set(dir, oid);
    return oid;
  };
  // deepest folders first: a parent names its children's new trees
  const byDepth = order.filter(Boolean).sort((a, b) => b.split('/').length - a.split('/').length);
  for (const d of byDepth) {
    const entries = trees.get(d)!;
    const parent = trees.get(parentOf(d))!;
    if (!entries.size) parent.delete(nameOf(d));
    else parent.set(nameOf(d), { mode: '040000', oid: tree(entries, d) });
  }
  const root = tree(trees.get('')!, '');
  const byId = new Map(known);
  for (const [d, oid] of written) if (d) known.push([`${root}:${d}`, byId.get(oid)!]);
  return {
    tree: root,
    written: Promise.all(sent).then(() => {
      for (const [name, o] of known) cat.remember(name, o);
    }),
  };
}

const toList = (m: Map<string, { mode: string; oid: string }>) => [...m].map(([name, e]) => ({ name, ...e }));
