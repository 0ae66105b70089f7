/**
 * The git port: every git process git-mem starts goes through here.
 * We drive the git binary (plumbing) rather than a JS reimplementation: on
 * these machines git's own reads are ~10x faster than isomorphic-git's and
 * it never loads whole packfiles into memory (see DESIGN.md, "Facts").
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { err } from '../errors.js';
import { mark } from '../trace.js';
import { findTreeEntry } from './loose.js';
import { ObjectReader, odbUsable } from './odb.js';

export interface GitOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  /** Do not throw on a non-zero exit; return it. */
  allowFail?: boolean;
}

export interface GitResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Environment for internal git processes: no pager, no prompts, stable output. */
export function gitEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...base,
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_TERMINAL_PROMPT: base.GIT_TERMINAL_PROMPT ?? '0',
    LC_ALL: 'C',
    GIT_OPTIONAL_LOCKS: '0',
  };
}

export function git(args: string[], opts: GitOptions): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: opts.cwd,
      env: gitEnv(opts.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const errs: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => errs.push(d));
    child.on('error', (e) =>
      reject(err('E_GIT', `cannot run git: ${e.message}`, 'install git and put it on PATH')),
    );
    child.on('close', (code) => {
      const res = {
        code: code ?? 128,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(errs).toString('utf8'),
      };
      if (res.code !== 0 && !opts.allowFail) {
        const first = res.stderr.trim().split('\n').pop() || `exit ${res.code}`;
        reject(err('E_GIT', `git ${args[0]} failed: ${first}`, undefined, { args, stderr: res.stderr }));
      } else resolve(res);
    });
    child.stdin.on('error', () => {});
    if (opts.input != null) child.stdin.end(opts.input);
    else child.stdin.end();
  });
}

/** Runs git and returns trimmed stdout as text. */
export async function gitText(args: string[], opts: GitOptions): Promise<string> {
  const r = await git(args, opts);
  return r.stdout.toString('utf8').replace(/\n$/, '');
}

export interface CatFileObject {
  oid: string;
  type: string;
  size: number;
  content: Buffer;
}

/**
 * One long-lived `git cat-file --batch`: many object reads for the cost of one
 * process. Requests are pipelined; answers come back in order.
 */
/**
 * Packed objects a CatFile reads itself before it starts git cat-file. Reading a
 * pack entry in a one-shot process costs 0.1 ms for a whole object to ~1 ms for a
 * deep delta chain (an inflate per link), against 3-7 ms to start cat-file; for
 * many packed objects a running cat-file is cheaper (odb.ts, measured).
 */
const PACK_READS_BEFORE_GIT = 8;

export class CatFile {
  private child?: ChildProcessWithoutNullStreams;
  private buf: Buffer = Buffer.alloc(0);
  private waiting: Array<{ resolve: (o: CatFileObject | null) => void; reject: (e: Error) => void }> = [];
  private failed?: Error;
  /** closed by its owner: a later read (from a stale reference) still works, but the process ends when idle */
  private closed = false;

  /** loose objects read without git (odb.ts); null: not here (unknown store, or one git must read) */
  private loose?: ObjectReader | null;
  /** packed objects read without git so far (see PACK_READS_BEFORE_GIT) */
  private packReads = 0;

  constructor(
    private readonly cwd: string,
    private readonly env?: NodeJS.ProcessEnv,
    /** the repository's common git dir: loose objects are then read from it directly */
    private readonly commonDir?: string,
  ) {}

  /**
   * A loose object read straight from its file (~30 µs, where git cat-file costs
   * a process start and a round trip through it), by id or as `<commit id>:<path>`
   * through loose trees; null when such a path is certainly not there; undefined
   * for anything else (git answers).
   */
  private readLoose(spec: string): CatFileObject | null | undefined {
    if (this.loose === null || spec.length < 40 || !/^[0-9a-f]{40}(?::|$)/.test(spec)) return undefined;
    if (this.loose === undefined) {
      const env = this.env ?? process.env;
      this.loose =
        this.commonDir && env.GIT_MEM_ODB !== 'git' && odbUsable(this.commonDir, env)
          ? new ObjectReader(`${this.commonDir}/objects`)
          : null;
      if (!this.loose) return undefined;
    }
    const reader = this.loose;
    const get = (oid: string): CatFileObject | undefined => {
      let o = reader.read(oid, { packs: false });
      // a few packed objects before git runs (an add's one fan-out tree from an import): a pack
      // entry costs ~0.1-1 ms here, starting cat-file 3-7 ms; past that, git reads them
      if (!o && !this.child && this.packReads < PACK_READS_BEFORE_GIT) {
        this.packReads++;
        o = reader.read(oid, { packs: true });
        if (o) o = { type: o.type, content: Buffer.from(o.content) }; // (the reader's cache keeps its copy)
      }
      return o && { oid, type: o.type, size: o.content.length, content: o.content };
    };
    if (spec.length === 40) return get(spec);
    // "<commit>:<path>": the commit's tree, then one tree entry per path component
    const path = spec.slice(41);
    if (!path || path.startsWith('/') || path.endsWith('/') || path.includes('//')) return undefined;
    const commit = get(spec.slice(0, 40));
    const m =
      commit?.type === 'commit'
        ? /^tree ([0-9a-f]{40})\n/.exec(commit.content.toString('latin1', 0, 46))
        : null;
    if (!m) return undefined;
    let cur = get(m[1]);
    try {
      for (const name of path.split('/')) {
        if (!cur) return undefined; // not loose: git reads it
        if (cur.type !== 'tree') return null; // a path through a file: git says "missing" too
        const e = findTreeEntry(cur.content, name);
        if (!e) return null; // git: "<spec> missing"
        if (e.mode === '160000') return undefined; // a submodule's commit: git says what it says
        cur = get(e.oid);
      }
    } catch {
      return undefined; // a malformed tree: git says what is wrong
    }
    return cur;
  }

  private start(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child;
    mark('git cat-file --batch started');
    const child = spawn('git', ['cat-file', '--batch'], {
      cwd: this.cwd,
      env: gitEnv(this.env),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stdout.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
      this.drain();
    });
    child.stderr.on('data', () => {});
    child.stdin.on('error', () => {});
    const fail = (e: Error) => {
      this.failed = e;
      for (const w of this.waiting.splice(0)) w.reject(e);
    };
    child.on('error', (e) => fail(err('E_GIT', `cannot run git cat-file: ${e.message}`)));
    child.on('close', () => {
      if (this.waiting.length) fail(err('E_GIT', 'git cat-file exited unexpectedly'));
      this.child = undefined;
    });
    this.child = child;
    return child;
  }

  private drain(): void {
    this.drainQueue();
    if (this.closed && !this.waiting.length && this.child) {
      this.child.stdin.end();
      this.child = undefined;
    }
  }

  private drainQueue(): void {
    while (this.waiting.length) {
      const nl = this.buf.indexOf(10);
      if (nl < 0) return;
      const header = this.buf.subarray(0, nl).toString('utf8');
      if (header.endsWith(' missing') || header.endsWith(' ambiguous')) {
        this.buf = this.buf.subarray(nl + 1);
        this.waiting.shift()!.resolve(null);
        continue;
      }
      const [oid, type, sizeStr] = header.split(' ');
      const size = Number(sizeStr);
      if (this.buf.length < nl + 1 + size + 1) return;
      const content = Buffer.from(this.buf.subarray(nl + 1, nl + 1 + size));
      this.buf = this.buf.subarray(nl + 1 + size + 1);
      this.waiting.shift()!.resolve({ oid, type, size, content });
    }
  }

  /** Reads an object by oid or `rev:path`; null when it does not exist. */
  read(spec: string): Promise<CatFileObject | null> {
    const loose = this.readLoose(spec);
    if (loose !== undefined) return Promise.resolve(loose);
    if (this.failed) return Promise.reject(this.failed);
    const child = this.start();
    return new Promise((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      // the requests of one tick go out in one write (a tree walk asks for many at once)
      if (!child.stdin.writableCorked) {
        child.stdin.cork();
        process.nextTick(() => child.stdin.uncork());
      }
      child.stdin.write(`${spec}\n`);
    });
  }

  readMany(specs: readonly string[]): Promise<Array<CatFileObject | null>> {
    return Promise.all(specs.map((s) => this.read(s)));
  }

  close(): void {
    this.loose?.close();
    this.closed = true;
    if (this.child && !this.waiting.length) {
      this.child.stdin.end();
      this.child = undefined;
    }
  }
}

export const ZERO_OID = '0000000000000000000000000000000000000000';
