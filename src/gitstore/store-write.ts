/**
 * The store's writes: a change is built in a transaction (`Tx`) on the tip, scanned for secrets
 * while git writes its objects (hash-object through writer.ts, processes that live as long as the
 * store), and published by moving the ref with one `git update-ref --stdin` transaction against
 * the tip it was built on (compare-and-swap: if another writer moved it, the change is rebuilt on
 * the new tip). A git note (store-notes.ts) is written beside it in the same transaction, or alone.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { memTrailers, withTrailers } from '../model/provenance.js';
import {
  idOfStorePath,
  type MemoryRecord,
  recordPath,
  serializeRecord,
  tombstonePath,
} from '../model/record.js';
import { stringify } from '../model/yaml.js';
import { type SecretFinding, scanSecrets } from '../safety/secrets.js';
import { mark } from '../trace.js';
import type { Catalog } from './catalog.js';
import type { GitProcess } from './git.js';
import { memDir, writeTestMarker } from './repo.js';
import { type Ident, StoreConfig } from './store-config.js';
import { assertNoteClean, type NoteAdd, type PendingNote, pendingNote } from './store-notes.js';
import { CONFIG_LIST } from './store-start.js';
import {
  applyToTree,
  type CommitSpec,
  GitWriter,
  type PathChange,
  type RefUpdate,
  type TreeWrite,
} from './writer.js';

/** A change to one path of the store's tree. */
export type Change =
  | { path: string; content: Buffer }
  | { path: string; oid: string }
  | { path: string; remove: true };

/** A change being built against one base tip. Re-run from scratch if the ref moved meanwhile. */
export class Tx {
  readonly changes = new Map<string, Change>();
  /** What a path written by putOid holds, for the secret scan's message (an anchored file's name). */
  readonly labels = new Map<string, string>();
  /** The content of blobs put by id, when the caller has it (the secret scan then reads nothing back). */
  readonly contents = new Map<string, Buffer>();
  /**
   * Write what looks like a secret anyway (a person's --allow-secret, or secret-scan off or warn,
   * decided while the change is built). Store.write's `allowSecret` does the same from outside.
   */
  allowSecret = false;
  /**
   * Paths of the base tree whose text counts as already in the ref for the secret scan, beside
   * the paths the change touches (a check: the blob an anchor moves from). Read from the base
   * tree itself, so naming a path that is not there adds nothing.
   */
  readonly seen = new Set<string>();
  private catalogP?: Promise<Catalog>;
  constructor(
    readonly store: StoreWriter,
    readonly base: string | null,
  ) {}
  catalog(): Promise<Catalog> {
    this.catalogP ??= this.store.catalogAt(this.base);
    return this.catalogP;
  }
  async get(id: string): Promise<MemoryRecord> {
    return this.store.readRecord(this.base, id);
  }
  putRecord(r: MemoryRecord): void {
    this.put(recordPath(r.id), serializeRecord(r));
  }
  put(path: string, content: string | Buffer): void {
    this.changes.set(path, {
      path,
      content: typeof content === 'string' ? Buffer.from(content, 'utf8') : content,
    });
  }
  /**
   * Adds an existing object (for example an anchored code blob) to the tree. `label` names what it
   * is in a refusal (the anchored file); `content`, when the caller holds it, spares the secret
   * scan reading the blob back.
   */
  putOid(path: string, oid: string, opts: { label?: string; content?: Buffer } = {}): void {
    this.changes.set(path, { path, oid });
    if (opts.label) this.labels.set(path, opts.label);
    if (opts.content) this.contents.set(oid, opts.content);
  }
  remove(path: string): void {
    this.changes.set(path, { path, remove: true });
  }
  removeRecord(id: string, tombstone: Record<string, unknown>): void {
    this.remove(recordPath(id));
    this.put(tombstonePath(id), stringify(tombstone));
  }
}

/** A lock git found on a ref: one that old was left by a process that died. */
const STALE_LOCK_MS = 2000;

export interface WriteResult<T> {
  commit: string | null;
  value: T;
  attempts: number;
}

const MAX_ATTEMPTS = 60;

export class StoreWriter extends StoreConfig {
  private gitWriter?: GitWriter;
  /**
   * The reflog message of every ref update, when set: a long-lived process (the
   * MCP server, the daemon) keeps one `git update-ref` running, and git takes
   * the message when it starts. Unset, each change's subject is its message.
   */
  reflogMessage?: string;
  /**
   * Set on a read-only copy of another repository's memory (a team store
   * registered without --writable, src/commands/stores.ts): write() throws
   * the error it returns. Sync still moves the ref (by casRef) to what it fetched.
   */
  readOnly?: () => Error;

  get writer(): GitWriter {
    this.gitWriter ??= new GitWriter(this.repo, this.reflogMessage, (name, o) =>
      this.catFile.remember(name, o),
    );
    return this.gitWriter;
  }

  close(): void {
    this.flushCatalog();
    this.cat?.close();
    this.gitWriter?.close();
  }

  /**
   * Starts what a write will need, side by side, before it needs it: the
   * writer's git processes (and the ref update's, when its reflog message is
   * known) and the `git config` read for the identity and signing (their
   * memos answer when the write asks).
   */
  prepareWrite(message?: string): void {
    // the config read (identity, signing) starts with the writers: one process start for all
    const also = this.configUnread()
      ? [{ args: CONFIG_LIST, use: (p: GitProcess) => this.gitConfig(p).catch(() => {}) }]
      : [];
    this.writer.warm(message, also);
    this.ident().catch(() => {});
    this.signsCommits().catch(() => {});
  }

  /**
   * Applies one change as one commit. `build` is called with a transaction on
   * the current tip and returns the commit message (or null for "nothing to
   * do"). If another writer moved the ref first, the change is rebuilt on the
   * new tip: no write is ever lost, and the history stays linear.
   *
   * `gate`, when given, is awaited after the objects are written and before
   * the ref moves: a check that runs meanwhile (add's duplicate check) can
   * still stop the change by rejecting, and the store stays as it was (the
   * unreferenced objects are git's usual garbage, pruned by gc).
   *
   * `note`, when given, is asked for on every attempt: lines for a git note
   * written beside the memory commit and published in the same ref
   * transaction as the memory commit (both refs move, or neither).
   */
  async write<T>(
    build: (tx: Tx) => Promise<{ message: string; value: T } | null>,
    opts: {
      gate?: Promise<unknown>;
      note?: () => Promise<NoteAdd | null>;
      /** write what looks like a secret anyway (a person's --allow-secret; see assertNoNewSecrets) */
      allowSecret?: boolean;
    } = {},
  ): Promise<WriteResult<T | undefined>> {
    if (this.readOnly) throw this.readOnly();
    this.prepareWrite();
    // the identity is only needed for the commit object: the tip is read and the change built meanwhile
    const identP = this.ident();
    identP.catch(() => {});
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      this.writer.warm();
      const base = await this.tip();
      mark('write: tip read');
      const tx = new Tx(this, base);
      const res = await build(tx);
      mark('write: change built');
      if (!res || tx.changes.size === 0) return { commit: base, value: res?.value, attempts: attempt };
      const ident = await identP;
      const allow = opts.allowSecret || tx.allowSecret;
      // the scan runs while git writes the objects; only the ref waits for it (like the gate): a
      // refused change leaves at most unreferenced objects, git's usual garbage
      const scan = allow ? undefined : this.assertNoNewSecrets(tx).then(() => mark('write: scan done'));
      scan?.catch(() => {});
      const note = opts.note ? await this.noteCommit(await opts.note()) : null;
      if (note && !allow) assertNoteClean(note);
      const objects = this.commitChanges(base, tx.changes.values(), res.message, ident, [], note);
      objects.catch(() => {});
      // the ref update's process (its reflog message is this change's subject) starts once the
      // objects are on their way (after the microtasks that send them): git writes them while
      // this thread waits for that start
      const subject = res.message.split('\n')[0];
      setImmediate(() => this.writer.warm(subject));
      const [commit, noteCommit] = await objects;
      mark('write: objects written');
      await scan;
      mark('write: scanned');
      if (opts.gate) await opts.gate;
      const also: RefUpdate[] =
        note && noteCommit ? [{ ref: note.ref, next: noteCommit, expected: note.expected }] : [];
      if (await this.casRef(commit, base, also, res.message.split('\n')[0])) {
        mark('write: ref moved');
        return { commit, value: res.value, attempts: attempt };
      }
      mark('write: the ref moved meanwhile, again');
      await backoff(attempt);
    }
    throw err(
      'E_CONFLICT_RETRY',
      `${this.ref} kept moving; gave up after ${MAX_ATTEMPTS} attempts`,
      'try again',
    );
  }

  /** Blob ids the secret scan found clean (a blob never changes): a retry or a long-lived process does not scan them again. */
  private cleanBlobs = new Set<string>();

  /**
   * The one check every change git-mem itself makes to the ref passes (records, tombstones,
   * anchored file content under anchors/, config.yaml): each blob it puts is scanned whole, and a
   * likely secret that is not already in the ref at a path this change touches (the record an
   * update rewrites, the record a removal leaves a tombstone for) refuses the change with
   * E_SECRET before any object is written. What a merge carries in from a remote is not written
   * through here (commitChanges), so a sync never re-judges a teammate's text.
   */
  async assertNoNewSecrets(tx: Tx): Promise<void> {
    const puts: Array<{ path: string; oid?: string; content?: Buffer }> = [];
    for (const c of tx.changes.values()) {
      if ('content' in c) puts.push({ path: c.path, content: c.content });
      else if ('oid' in c && !this.cleanBlobs.has(c.oid))
        puts.push({ path: c.path, oid: c.oid, content: tx.contents.get(c.oid) });
    }
    const unread = puts.filter((p) => !p.content);
    if (unread.length) {
      const got = await this.catFile.readMany(unread.map((p) => p.oid!));
      unread.forEach((p, i) => {
        const o = got[i];
        if (o?.type !== 'blob')
          throw err('E_GIT', `cannot read ${p.oid} to write it at ${p.path}`, 'run git fsck');
        p.content = o.content;
      });
    }
    const found: Array<{ path: string; text: string; findings: SecretFinding[] }> = [];
    for (const p of puts) {
      const text = p.content!.toString('utf8');
      const findings = scanSecrets(text);
      if (findings.length) found.push({ path: p.path, text, findings });
      else if (p.oid) {
        if (this.cleanBlobs.size >= 65536) this.cleanBlobs.clear();
        this.cleanBlobs.add(p.oid);
      }
    }
    if (!found.length) return;
    // what the ref holds already at the paths this change replaces or removes is no new exposure
    const touched = tx.base ? [...new Set([...tx.changes.keys(), ...tx.seen])] : [];
    const old = touched.length
      ? (await this.catFile.readMany(touched.map((p) => `${tx.base}:${p}`)))
          .filter((o) => o?.type === 'blob')
          .map((o) => o!.content.toString('utf8'))
      : [];
    for (const { path, text, findings } of found) {
      const f = findings.find((x) => !old.some((o) => o.includes(text.slice(x.start, x.end))));
      if (!f) continue;
      const label = tx.labels.get(path);
      const where = label ? `${label} (written whole to ${path})` : path;
      throw err(
        'E_SECRET',
        `refusing to write a likely secret into ${this.ref}: ${f.kind} in ${where} at line ${f.line}, column ${f.column} (${f.preview})`,
        'remove it, or pass --allow-secret if it is not a secret',
        { kind: f.kind, path, ...(label ? { file: label } : {}), line: f.line, column: f.column },
      );
    }
  }

  /** What a NoteAdd writes on the notes ref's tip as it is now (store-notes.ts pendingNote). */
  private async noteCommit(add: NoteAdd | null): Promise<PendingNote | null> {
    if (!add?.lines.length) return null;
    return pendingNote(this.catFile, await this.refTip(add.ref), add);
  }

  /**
   * Writes the objects and the commit on `base` (and a notes commit, when
   * given); returns the new commit ids. No ref is written: the commits are
   * published by casRef. `parents` are further parents after `base` (a merge).
   */
  async commitChanges(
    base: string | null,
    changes: Iterable<Change>,
    message: string,
    ident: Ident,
    parents: string[] = [],
    note: PendingNote | null = null,
    when: Date = new Date(),
  ): Promise<[string, string | undefined]> {
    const who = `${ident.name.replace(/[<>\n]/g, '')} <${ident.email.replace(/[<>\n]/g, '')}>`;
    const byPath = new Map<string, PathChange>();
    for (const c of changes) byPath.set(c.path, c);
    // provenance: the operation, the ids it touched and the agent, as trailers (src/model/provenance.ts)
    const ids = [...byPath.keys()].map(idOfStorePath).filter((id): id is string => !!id);
    const full = withTrailers(message, memTrailers(message.split('\n')[0], ids, this.writerActor()));
    const sign = await this.signsCommits();
    const memoryCommit = applyToTree(this.catFile, this.writer, base, byPath).then((t) =>
      this.commitTree(t, { parents: base ? [base, ...parents] : parents, who, when, message: full, sign }),
    );
    const noteCommit = note ? this.noteCommitObject(note, who, when, sign) : undefined;
    return Promise.all([memoryCommit, noteCommit]);
  }

  private noteCommitObject(note: PendingNote, who: string, when: Date, sign = false): Promise<string> {
    return applyToTree(
      this.catFile,
      this.writer,
      note.expected,
      new Map([[note.path, { content: Buffer.from(note.text, 'utf8') }]]),
    ).then((t) =>
      this.commitTree(t, {
        parents: note.expected ? [note.expected] : [],
        who,
        when,
        message: note.message,
        sign,
      }),
    );
  }

  /** The commit of a tree being written: sent beside the tree's objects, its id once git has all of them. */
  private async commitTree(t: TreeWrite, spec: Omit<CommitSpec, 'tree'>): Promise<string> {
    // a signed commit is made by git commit-tree, which needs its tree written first
    if (spec.sign) return t.written.then(() => this.writer.commit({ tree: t.tree, ...spec }));
    const [commit] = await Promise.all([this.writer.commit({ tree: t.tree, ...spec }), t.written]);
    const tree = this.catFile.cached(t.tree);
    if (tree) this.catFile.remember(`${commit}^{tree}`, tree);
    return commit;
  }

  /**
   * Adds note lines on their own, without a memory commit (the post-commit
   * hook on a branch other than the default one: the commit's verdicts are
   * noted, the shared record is left alone). Retried like a write when
   * another writer moved the notes ref first; null when the note said it all.
   */
  async addNote(add: NoteAdd): Promise<string | null> {
    if (!add.lines.length) return null;
    assertNoteClean(add);
    // the note's blob, tree and commit, then the ref: the git processes start side by side now
    // instead of one after another as each object is asked for
    this.prepareWrite(add.message);
    const ident = await this.ident();
    const who = `${ident.name.replace(/[<>\n]/g, '')} <${ident.email.replace(/[<>\n]/g, '')}>`;
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const note = await this.noteCommit(add);
      if (!note) return null;
      const commit = await this.noteCommitObject(note, who, new Date(), await this.signsCommits());
      const r = await this.writer.updateRefs(
        [{ ref: note.ref, next: commit, expected: note.expected }],
        note.message,
      );
      if (r === true) return commit;
      const lock = /Unable to create '([^']+\.lock)': File exists/.exec(r.stderr);
      if (lock) await this.lockWait(lock[1]);
      else if (!/but expected|reference already exists|unable to resolve|cannot lock ref/i.test(r.stderr))
        throw err('E_GIT', `cannot update ${note.ref}: ${r.stderr.trim().split('\n').pop()}`);
      else await backoff(attempt);
    }
    throw err(
      'E_CONFLICT_RETRY',
      `${add.ref} kept moving; gave up after ${MAX_ATTEMPTS} attempts`,
      'try again',
    );
  }

  /**
   * Compare-and-swap of the ref (and of `also`) in one `git update-ref --stdin`
   * transaction: every ref moves, or none does. False when another writer
   * moved one of them first; E_LOCKED, naming the lock file, its age and how to
   * clear it, when a lock stays in the way.
   */
  async casRef(
    newOid: string,
    expected: string | null,
    also: readonly RefUpdate[] = [],
    /** the reflog message, for refs git keeps a reflog of (refs/notes/*, or all with core.logAllRefUpdates=always) */
    reason?: string,
  ): Promise<boolean> {
    // test hook: widen the window between writing objects and moving the ref (crash tests: add, the
    // post-commit hook, sync's merge)
    const pause = Number(this.repo.env.GIT_MEM_TEST_PAUSE_BEFORE_CAS ?? 0);
    if (pause > 0) {
      writeTestMarker(this.repo, 'test-paused', newOid);
      // until the time is up, or a test that did its part meanwhile says so (a fixed window alone
      // is outrun by a loaded machine)
      const release = join(memDir(this.repo), 'test-release');
      const end = Date.now() + pause;
      while (Date.now() < end && !existsSync(release)) await new Promise((r) => setTimeout(r, 20));
    }
    const updates = [{ ref: this.ref, next: newOid, expected }, ...also];
    const r = await this.writer.updateRefs(updates, reason);
    if (r === true) {
      this.catalogMemo.clear();
      this.lockWaits = 0;
      return true;
    }
    const lock = /Unable to create '([^']+\.lock)': File exists/.exec(r.stderr);
    if (lock) return this.lockWait(lock[1]);
    if (!/but expected|reference already exists|unable to resolve|cannot lock ref/i.test(r.stderr)) {
      const refs = updates.map((u) => u.ref).join(' and ');
      throw err('E_GIT', `cannot update ${refs}: ${r.stderr.trim().split('\n').pop()}`);
    }
    return false;
  }

  private lockWaits = 0;

  /**
   * git found a lock on a ref. One held by a live process is gone within
   * milliseconds: back off and try again. One older than STALE_LOCK_MS, or one
   * that outlives the retries, was left by a process that died: say which file,
   * how old, and how to clear it.
   */
  private async lockWait(file: string): Promise<false> {
    this.lockWaits++;
    let age: number | undefined;
    try {
      age = Date.now() - statSync(file).mtimeMs;
    } catch {
      return false; // gone already: the next attempt goes through
    }
    if (age >= STALE_LOCK_MS || this.lockWaits > 8) {
      const base = [this.repo.commonDir, this.repo.gitDir].find((d) => file.startsWith(`${d}/`));
      const ref = (base ? file.slice(base.length + 1) : file).replace(/\.lock$/, '');
      throw err(
        'E_LOCKED',
        `${ref} is locked by ${file}, left ${describeAge(age)} ago by a git process that did not finish`,
        `if no git or git-mem process is running, remove it: rm '${file}'`,
        { lock: file, ageMs: Math.round(age) },
      );
    }
    await backoff(this.lockWaits);
    return false;
  }
}

/** Waits a little longer after each failed attempt (with jitter, so racing writers spread out). */
function backoff(attempt: number): Promise<void> {
  const ms = Math.min(250, 5 * 2 ** Math.min(attempt, 6));
  return new Promise((r) => setTimeout(r, ms / 2 + Math.random() * ms));
}

function describeAge(ms: number): string {
  const s = ms / 1000;
  if (s < 120) return `${s.toFixed(1)} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} days`;
}
