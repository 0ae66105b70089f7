/**
 * What every operation, hook handler and command gets: injected IO streams (so
 * it runs in tests without a terminal, like GitHub CLI's IOStreams), the
 * working directory, the environment, and the stores it opened (closed by
 * whoever made the context). The CLI's Ctx (src/cli/context.ts) adds output
 * format and settings on top.
 */
import { closeSync, existsSync, mkdirSync, openSync, readSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { isatty } from 'node:tty';
import { err } from '../errors.js';
import { gitMemHome, readGlobalConfig } from '../gitstore/config.js';
import { git } from '../gitstore/git.js';
import { openRepo, type Repo } from '../gitstore/repo.js';
import { openRepositoryStore, Store } from '../gitstore/store.js';
import type { StoreOpening } from '../gitstore/store-start.js';
import type { TeamStore } from './stores.js';

export interface IO {
  out(s: string): void;
  /** Bytes to stdout as they are (large outputs skip a decode/encode round trip). */
  outBytes?(b: Buffer): void;
  err(s: string): void;
  /**
   * Reads all of stdin, or undefined when stdin is a terminal / absent. With a limit, at most
   * its bytes are read (more is E_TOO_LARGE: `< /dev/zero` never ends) and the text must be
   * UTF-8 (else E_BINARY), as readTextFile reads a file.
   */
  readStdin(limit?: TextLimit): Promise<string | undefined>;
  isTTY: boolean;
  stdinIsTTY: boolean;
  /** the terminal's height, when stdout is one (decides whether a listing is paged) */
  rows?: number;
  /** The terminal, for commands that ask questions (review); default process.stdin / process.stdout. */
  terminal?: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream };
}

export interface RunContext {
  io: IO;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Stores opened for this run; the creator of the context closes them. */
  stores: Store[];
  /**
   * The repository's store, already open and kept by whoever made the context
   * (the daemon running a CLI command for a client in this worktree, src/cli/via-daemon.ts):
   * openStore answers it instead of opening another. Never closed with the run.
   */
  store?: Store;
  /**
   * The repository at cwd as `git rev-parse` told it already in this process (bin/git-mem.js,
   * which asked to find a daemon): the repository's store is opened on it without asking again.
   */
  repo?: Repo;
}

export function processIO(): IO {
  return {
    out: (s) => process.stdout.write(s),
    outBytes: (b) => process.stdout.write(b),
    err: (s) => process.stderr.write(s),
    isTTY: !!process.stdout.isTTY,
    // asked of the file descriptor: process.stdin is made only by a command that reads it
    stdinIsTTY: isatty(0),
    rows: process.stdout.rows,
    readStdin: async (limit) => {
      if (process.stdin.isTTY) return undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      // leaving the loop early destroys the stream: nothing more is read
      for await (const c of process.stdin) {
        chunks.push(c as Buffer);
        size += (c as Buffer).length;
        if (limit && size > limit.maxBytes) throw tooLarge(limit);
      }
      const buf = Buffer.concat(chunks);
      return limit ? decodeText(buf, limit.what) : buf.toString('utf8');
    },
  };
}

/** How much text a command reads from one file or stdin, and what it calls it in an error. */
export interface TextLimit {
  maxBytes: number;
  /** e.g. `--file notes.md`, `stdin` */
  what: string;
}

const tooLarge = (l: TextLimit) =>
  err('E_TOO_LARGE', `${l.what} is over the ${l.maxBytes}-byte limit`, 'pass a smaller file');

/**
 * Text as UTF-8, or E_BINARY: a NUL byte, or bytes that are not UTF-8, are refused rather
 * than stored as replacement characters.
 */
export function decodeText(buf: Buffer, what: string): string {
  if (buf.includes(0)) throw err('E_BINARY', `${what} is binary (it holds a NUL byte)`, 'store text only');
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(buf);
  } catch {
    throw err('E_BINARY', `${what} is not UTF-8 text`, 'convert it to UTF-8 (iconv -t UTF-8) first');
  }
}

/**
 * Reads a file of text through at most limit.maxBytes + 1 bytes (a device or a pipe too:
 * `/dev/zero` never ends, so its size is never asked first): more is E_TOO_LARGE, text that
 * is not UTF-8 E_BINARY (decodeText). Errors of the file system are thrown as they are (the
 * reporter says them as E_IO).
 */
export function readTextFile(path: string, limit: TextLimit): string {
  const fd = openSync(path, 'r');
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for (;;) {
      const b = Buffer.allocUnsafe(Math.min(1 << 20, limit.maxBytes + 1 - size));
      const n = readSync(fd, b, 0, b.length, null);
      if (n === 0) break;
      chunks.push(b.subarray(0, n));
      size += n;
      if (size > limit.maxBytes) throw tooLarge(limit);
    }
    return decodeText(Buffer.concat(chunks, size), limit.what);
  } finally {
    closeSync(fd);
  }
}

/** An IO that records output: for tests and for embedding the CLI. */
export function bufferIO(stdin?: string): IO & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    isTTY: false,
    stdinIsTTY: stdin === undefined,
    out(s: string) {
      io.stdout += s;
    },
    err(s: string) {
      io.stderr += s;
    },
    readStdin: async (limit?: TextLimit) => {
      if (limit && stdin !== undefined && Buffer.byteLength(stdin) > limit.maxBytes) throw tooLarge(limit);
      return stdin;
    },
  };
  return io;
}

function globalStoreDir(env: NodeJS.ProcessEnv): string {
  return join(gitMemHome(env), 'store.git');
}

async function openGlobalStore(ctx: RunContext, create: boolean): Promise<Store> {
  const dir = globalStoreDir(ctx.env);
  if (!existsSync(join(dir, 'HEAD'))) {
    if (!create)
      throw err('E_NOT_INITIALIZED', `no global store at ${dir}`, 'add one with git mem add --global');
    mkdirSync(dir, { recursive: true });
    await git(['init', '-q', '--bare', dir], { cwd: dir, env: ctx.env });
  }
  const repo = await openRepo(dir, { ...ctx.env, GIT_DIR: dir, GIT_WORK_TREE: undefined });
  return track(ctx, new Store(repo));
}

function track(ctx: RunContext, s: Store): Store {
  ctx.stores.push(s);
  return s;
}

/**
 * The store of the repository at ctx.cwd (never the global one): the one the
 * context holds open already (ctx.store), or a new one closed with the run
 * (`opening`: what it starts beside its reader, src/gitstore/store-start.ts).
 */
export async function repositoryStore(ctx: RunContext, opening: StoreOpening = 'read'): Promise<Store> {
  if (ctx.store) return ctx.store;
  return track(ctx, ctx.repo ? new Store(ctx.repo) : await openRepositoryStore(ctx.cwd, ctx.env, opening));
}

/**
 * The store a command works on: the repository's, or the global one with
 * --global (or outside a repository, unless strict-local is set). `create`: a
 * command that writes the store it opens (add, import, init): the global store
 * is made where missing, and the repository's writers start with its reader.
 * `config`: git's configuration is read as it opens (sync: the remotes).
 */
export async function openStore(
  ctx: RunContext,
  opts: { global?: boolean; create?: boolean; config?: boolean } = {},
): Promise<Store> {
  if (opts.global) return openGlobalStore(ctx, !!opts.create);
  try {
    return await repositoryStore(ctx, opts.create ? 'write' : opts.config ? 'config' : 'read');
  } catch (e) {
    if ((e as { code?: string }).code !== 'E_NOT_A_REPO') throw e;
    const strict = ['true', 'yes', 'on', '1'].includes(
      String(readGlobalConfig(ctx.env)['strict-local'] ?? ctx.env.GIT_MEM_STRICT_LOCAL ?? '').toLowerCase(),
    );
    if (strict || !existsSync(join(globalStoreDir(ctx.env), 'HEAD'))) throw e;
    return openGlobalStore(ctx, false);
  }
}

/** Whether a store is the personal global one (what --global opens, and a command outside a repository). */
export function isGlobalStore(ctx: RunContext, store: Store): boolean {
  return resolve(store.repo.gitDir) === resolve(globalStoreDir(ctx.env));
}

/**
 * The team stores registered in the project's clone (src/commands/stores.ts),
 * opened on its repository and closed with the run; none for the global store.
 */
export async function teamStoresOf(ctx: RunContext, project: Store): Promise<TeamStore[]> {
  // the personal global store (--global, or outside a repository) has no team stores of its own
  if (project.ref !== 'refs/memory' || isGlobalStore(ctx, project)) return [];
  const { openTeamStores } = await import('./stores.js');
  const teams = await openTeamStores(project.repo, project);
  for (const t of teams) track(ctx, t.store);
  return teams;
}

/**
 * Opens the global store if it exists (for reads that merge project and personal memory). A
 * personal store whose ref is damaged is left out with a warning: it must not stop the project's
 * commands in every repository (git mem doctor --global says how to mend it).
 */
export async function maybeGlobalStore(ctx: RunContext): Promise<Store | undefined> {
  if (!existsSync(join(globalStoreDir(ctx.env), 'HEAD'))) return undefined;
  const s = await openGlobalStore(ctx, false);
  try {
    await s.tip();
  } catch (e) {
    if ((e as { code?: string }).code !== 'E_GIT') throw e;
    ctx.io.err(
      `git-mem: warning: the personal store is left out: ${(e as Error).message} (run git mem doctor --global)\n`,
    );
    return undefined;
  }
  return s;
}
