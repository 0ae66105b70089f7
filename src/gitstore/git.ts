/**
 * The git port: every git process git-mem starts goes through here.
 * We drive the git binary (plumbing) rather than a JS reimplementation: on
 * these machines git's own reads are ~10x faster than isomorphic-git's and
 * it never loads whole packfiles into memory (docs/architecture.md).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { err } from '../errors.js';
import { mark } from '../trace.js';

export interface GitOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  /** Do not throw on a non-zero exit; return it. */
  allowFail?: boolean;
  /** Ends git (SIGTERM: it removes its lock files) after this many milliseconds; the result has code 124. */
  timeoutMs?: number;
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

/** A git process as git-mem drives it: its own, or one of a group started together (startGits). */
export type GitProcess = ChildProcessWithoutNullStreams;

/** The file descriptors a group's members get: a POSIX shell names 3 to 9 only. */
const GROUP_FDS = 7;

/** An argument as sh reads it back: in single quotes, each quote in it closed, escaped, reopened. */
const shQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** One process of a group: its arguments, and whether its stderr is its own (else shared). */
export interface GitStart {
  args: readonly string[];
  /** its own stderr, complete when it closes (a refusal read from it); else the group's, shared */
  stderr?: boolean;
}

/**
 * Starts several long-lived git processes for the cost of one process start: `sh` starts each in
 * the background, so starting N of them blocks this thread (until the child runs: tens of
 * milliseconds each on a busy machine) once instead of N times. Each member's stdin and stdout
 * are one socket of its own (fds 3 to 9, closed in the others); its stderr is one of its own when
 * asked for, else the shell's, one pipe for all copied to each such member (a failing member's
 * message may be preceded by another's, or come after its close). A member is used as a
 * ChildProcess: 'close' once its sockets closed (with no exit code: the callers read answers,
 * not codes), 'error' when sh cannot be started. One process, or more than the fds allow, is
 * started by itself.
 */
export function startGits(starts: readonly GitStart[], cwd: string, env?: NodeJS.ProcessEnv): GitProcess[] {
  const fdsNeeded = starts.reduce((n, s) => n + (s.stderr ? 2 : 1), 0);
  if (starts.length === 1 || fdsNeeded > GROUP_FDS)
    return starts.map((s) =>
      spawn('git', [...s.args], { cwd, env: gitEnv(env), stdio: ['pipe', 'pipe', 'pipe'] }),
    );
  if (!starts.length) return [];
  let next = 3;
  const fds = starts.map((s) => {
    const io = next++;
    return { io, err: s.stderr ? next++ : undefined };
  });
  const closeAll = Array.from({ length: next - 3 }, (_, i) => `${i + 3}>&-`).join(' ');
  const script = starts
    .map((s, i) => {
      const { io, err } = fds[i];
      const errTo = err === undefined ? '' : ` 2>&${err}`;
      return `git ${s.args.map(shQuote).join(' ')} <&${io} >&${io}${errTo} ${closeAll} &`;
    })
    .join('\n');
  // the shell lets go of the members' sockets and waits for them: node empties the pipes of a
  // child that exited (what a member printed before its reader came would be lost), so it exits
  // last; a member's socket closes when the member exits
  const sh = spawn('sh', ['-c', `${script}\nexec ${closeAll}\nwait`], {
    cwd,
    env: gitEnv(env),
    stdio: ['ignore', 'ignore', 'pipe', ...Array.from({ length: next - 3 }, () => 'pipe' as const)],
  });
  sh.unref();
  const shared = sh.stdio[2] as Socket;
  shared.unref();
  const members = fds.map(
    ({ io, err }) =>
      new GroupMember(sh.stdio[io] as Socket, err === undefined ? undefined : (sh.stdio[err] as Socket)),
  );
  const sharing = members.filter((m) => !m.ownStderr);
  shared.on('data', (d: Buffer) => {
    for (const m of sharing) (m.stderr as PassThrough).write(d);
  });
  shared.on('close', () => {
    for (const m of sharing) (m.stderr as PassThrough).end();
  });
  sh.on('error', (e) => {
    for (const m of members) m.emit('error', e);
  });
  return members as unknown as GitProcess[];
}

/** One process of a group (startGits): its socket is its stdin and its stdout. */
class GroupMember extends EventEmitter {
  readonly stdout: Socket;
  readonly stderr: Socket | PassThrough;
  readonly ownStderr: boolean;
  constructor(
    readonly stdin: Socket,
    stderr?: Socket,
  ) {
    super();
    this.stdout = stdin;
    this.ownStderr = !!stderr;
    this.stderr = stderr ?? new PassThrough();
    let open = stderr ? 2 : 1;
    const closed = () => {
      if (--open) return;
      this.closed = true;
      this.emit('close', null);
    };
    stdin.on('close', closed);
    stderr?.on('close', closed);
  }
  /** closed already: a process that printed nothing may end before its reader comes (store-start.ts) */
  private closed = false;
  override on(event: string | symbol, listener: (...args: unknown[]) => void): this {
    super.on(event, listener);
    if (event === 'close' && this.closed) process.nextTick(listener, null);
    return this;
  }
  ref(): void {
    this.stdin.ref();
    if (this.stderr instanceof PassThrough) return;
    this.stderr.ref();
  }
  unref(): void {
    this.stdin.unref();
    if (this.stderr instanceof PassThrough) return;
    this.stderr.unref();
  }
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
    let timedOut = false;
    const timer =
      opts.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            timedOut = true;
            child.kill('SIGTERM');
          }, opts.timeoutMs);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => errs.push(d));
    child.on('error', (e) =>
      reject(err('E_GIT', `cannot run git: ${e.message}`, 'install git and put it on PATH')),
    );
    child.on('close', (code) => {
      if (timer) clearTimeout(timer);
      const res = {
        code: timedOut ? 124 : (code ?? 128),
        stdout: Buffer.concat(out),
        stderr: `${Buffer.concat(errs).toString('utf8')}${timedOut ? `fatal: timed out after ${opts.timeoutMs} ms\n` : ''}`,
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

/**
 * What a started git process prints, once it has ended (its exit code unread, as
 * git(…, { allowFail }) leaves it to the caller; a group's member has none).
 */
export function output(child: GitProcess, what: string): Promise<{ stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    const errs: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => errs.push(d));
    child.stdin.on('error', () => {});
    child.stdin.end();
    child.on('error', (e) =>
      reject(err('E_GIT', `cannot run git ${what}: ${e.message}`, 'install git and put it on PATH')),
    );
    child.on('close', () =>
      resolve({ stdout: Buffer.concat(out), stderr: Buffer.concat(errs).toString('utf8') }),
    );
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
 * One long-lived `git cat-file --batch`: many object reads (by id, `rev:path`
 * or a ref name) for the cost of one process. Requests are pipelined; answers
 * come back in order. The child holds the event loop only while a read is
 * waiting for its answer: idle, it is unreferenced, so a command that fails
 * (or forgets to close its store) still exits, and git sees end of input when
 * this process ends.
 */
/** Holds the event loop while git owes an answer (on), or lets it go when idle (off). */
export function holdProcess(child: GitProcess, on: boolean): void {
  for (const h of [child, child.stdin, child.stdout, child.stderr] as Array<{
    ref?: () => void;
    unref?: () => void;
  }>) {
    if (on) h.ref?.();
    else h.unref?.();
  }
}

/**
 * A name that means the same object forever: a full object id, alone or with
 * `^{type}` or `:path` after it. Refs and abbreviated ids are not.
 */
const IMMUTABLE_NAME = /^(?:[0-9a-f]{40}|[0-9a-f]{64})(?:\^\{(?:commit|tree|blob)\}|:[^\n]*)?$/;

/** The reader's command line. */
export const CAT_FILE_ARGS = ['cat-file', '--batch'];

export class CatFile {
  private child?: GitProcess;
  /**
   * Objects by immutable name, most recently used last (`keep`): a long-lived
   * store reads the same trees on every diff, and the objects it wrote itself
   * are put here so the next read of them needs no round trip to git.
   */
  private known = new Map<string, CatFileObject>();
  private knownBytes = 0;
  private keepBytes = 0;
  private buf: Buffer = Buffer.alloc(0);
  private waiting: Array<{ resolve: (o: CatFileObject | null) => void; reject: (e: Error) => void }> = [];
  private failed?: Error;
  /** closed by its owner: a later read (from a stale reference) still works, but the process ends when idle */
  private closed = false;

  constructor(
    private readonly cwd: string,
    private readonly env?: NodeJS.ProcessEnv,
  ) {}

  private start(given?: GitProcess): GitProcess {
    if (this.child) return this.child;
    mark('git cat-file --batch started');
    const child =
      given ??
      spawn('git', CAT_FILE_ARGS, {
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
      if (this.child === child) this.child = undefined;
    });
    this.child = child;
    return child;
  }

  /**
   * Starts git now, before the first read (`given`: its process, started with others, of
   * CAT_FILE_ARGS); idle, it does not keep this process alive.
   */
  warm(given?: GitProcess): void {
    if (this.child || this.failed) {
      given?.stdin.destroy();
      return;
    }
    const child = this.start(given);
    if (!this.waiting.length) this.hold(child, false);
  }

  private hold(child: GitProcess, on: boolean): void {
    holdProcess(child, on);
  }

  private drain(): void {
    this.drainQueue();
    if (this.waiting.length || !this.child) return;
    if (this.closed) this.end();
    else this.hold(this.child, false);
  }

  private end(): void {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    child.stdin.end();
    this.hold(child, false);
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

  /** Keeps up to `bytes` of objects read or remembered by immutable names (0: none, the default). */
  keep(bytes: number): void {
    if (bytes === this.keepBytes) return;
    this.keepBytes = bytes;
    this.evict();
  }

  /**
   * Puts an object git has under an immutable name (an id, `id^{tree}`,
   * `id:path`), so reading that name does not ask git. A name that could
   * change (a ref) is ignored, as is everything when nothing is kept.
   */
  remember(spec: string, o: CatFileObject): void {
    if (!this.keepBytes || !IMMUTABLE_NAME.test(spec)) return;
    const had = this.known.get(spec);
    if (had) this.knownBytes -= had.content.length + spec.length;
    this.known.delete(spec);
    this.known.set(spec, o);
    this.knownBytes += o.content.length + spec.length;
    this.evict();
  }

  /** The names of the objects kept (for tests and doctor-like checks). */
  keptNames(): string[] {
    return [...this.known.keys()];
  }

  /** The object kept under this name, if any (no git read). */
  cached(spec: string): CatFileObject | undefined {
    return this.known.get(spec);
  }

  private evict(): void {
    for (const [k, o] of this.known) {
      if (this.knownBytes <= this.keepBytes) return;
      this.known.delete(k);
      this.knownBytes -= o.content.length + k.length;
    }
  }

  /** Reads an object by oid, `rev:path` or ref name; null when it does not exist. */
  read(spec: string): Promise<CatFileObject | null> {
    if (this.failed) return Promise.reject(this.failed);
    if (/[\n\r]/.test(spec)) return Promise.resolve(null); // one request per line: no such name
    const had = this.known.get(spec);
    if (had) {
      this.known.delete(spec); // most recently used goes last
      this.known.set(spec, had);
      return Promise.resolve(had);
    }
    const child = this.start();
    if (!this.waiting.length) this.hold(child, true);
    return new Promise((resolve, reject) => {
      this.waiting.push({
        resolve: (o) => {
          if (o) this.remember(spec, o);
          resolve(o);
        },
        reject,
      });
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
    this.closed = true;
    if (!this.waiting.length) this.end();
  }
}

export const ZERO_OID = '0000000000000000000000000000000000000000';
