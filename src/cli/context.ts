/**
 * What every command gets: injected IO streams (so a command runs in tests
 * without a terminal, like GitHub CLI's IOStreams), the working directory,
 * the environment and output helpers that keep --json stable.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { gitMemHome, readGlobalConfig, resolveConfig, type Settings } from '../gitstore/config.js';
import { git } from '../gitstore/git.js';
import { openRepo } from '../gitstore/repo.js';
import { Store } from '../gitstore/store.js';
import { stringify as yamlStringify } from '../model/yaml.js';

export interface IO {
  out(s: string): void;
  /** Bytes to stdout as they are (large outputs skip a decode/encode round trip). */
  outBytes?(b: Buffer): void;
  err(s: string): void;
  /** Reads all of stdin, or undefined when stdin is a terminal / absent. */
  readStdin(): Promise<string | undefined>;
  isTTY: boolean;
  stdinIsTTY: boolean;
  /** the terminal's height, when stdout is one (decides whether a listing is paged) */
  rows?: number;
  /** The terminal, for commands that ask questions (review); default process.stdin / process.stdout. */
  terminal?: { input: NodeJS.ReadableStream; output: NodeJS.WritableStream };
}

export interface Ctx {
  io: IO;
  cwd: string;
  env: NodeJS.ProcessEnv;
  json: boolean;
  /** yaml output (the `output: yaml` setting); json wins when --json is given */
  yaml?: boolean;
  /** colour human output (src/cli/output.ts decides: a terminal, no NO_COLOR, no --no-color) */
  color?: boolean;
  stores: Store[];
  settings?: Promise<Settings>;
}

/** The layered settings for this command (memoised; needs the store for the shared and local layers). */
export function settingsFor(ctx: Ctx, store?: Store): Promise<Settings> {
  ctx.settings ??= resolveConfig(ctx.env, store).then((r) => {
    for (const w of r.warnings) ctx.io.err(`${w}\n`);
    return r.values;
  });
  return ctx.settings;
}

/**
 * The secret-scan policy: `block` refuses (unless --allow-secret), `warn`
 * stores and says so on stderr, `off` skips the scan. Returns allowSecret.
 */
export async function secretPolicy(
  ctx: Ctx,
  store: Store,
  flag: unknown,
  fields: Record<string, string | undefined>,
): Promise<boolean> {
  if (flag) return true;
  const policy = String((await settingsFor(ctx, store))['secret-scan'] ?? 'block');
  if (policy === 'off') return true;
  if (policy === 'warn') {
    const { scanSecrets } = await import('../safety/secrets.js');
    for (const [field, text] of Object.entries(fields)) {
      const f = text ? scanSecrets(text)[0] : undefined;
      if (f)
        ctx.io.err(
          `git-mem: warning: likely secret (${f.kind}) in ${field} at line ${f.line}, column ${f.column}; stored because secret-scan is warn\n`,
        );
    }
    return true;
  }
  return false;
}

/**
 * Output format from the cheap layers (GIT_MEM_OUTPUT, then the global file):
 * read before any command runs, so it costs no git process. `--json` wins.
 */
export function outputFormat(env: NodeJS.ProcessEnv): string {
  if (env.GIT_MEM_OUTPUT) return env.GIT_MEM_OUTPUT;
  try {
    return String(readGlobalConfig(env).output ?? 'human');
  } catch {
    return 'human';
  }
}

export function processIO(): IO {
  return {
    out: (s) => process.stdout.write(s),
    outBytes: (b) => process.stdout.write(b),
    err: (s) => process.stderr.write(s),
    isTTY: !!process.stdout.isTTY,
    stdinIsTTY: !!process.stdin.isTTY,
    rows: process.stdout.rows,
    readStdin: async () => {
      if (process.stdin.isTTY) return undefined;
      const chunks: Buffer[] = [];
      for await (const c of process.stdin) chunks.push(c as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  };
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
    readStdin: async () => stdin,
  };
  return io;
}

export function globalStoreDir(env: NodeJS.ProcessEnv): string {
  return join(gitMemHome(env), 'store.git');
}

async function openGlobalStore(ctx: Ctx, create: boolean): Promise<Store> {
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

function track(ctx: Ctx, s: Store): Store {
  ctx.stores.push(s);
  return s;
}

/**
 * The store a command works on: the repository's, or the global one with
 * --global (or outside a repository, unless strict-local is set).
 */
export async function openStore(ctx: Ctx, opts: { global?: boolean; create?: boolean } = {}): Promise<Store> {
  if (opts.global) return openGlobalStore(ctx, !!opts.create);
  try {
    return track(ctx, new Store(await openRepo(ctx.cwd, ctx.env)));
  } catch (e) {
    if ((e as { code?: string }).code !== 'E_NOT_A_REPO') throw e;
    const strict = ['true', 'yes', 'on', '1'].includes(
      String(readGlobalConfig(ctx.env)['strict-local'] ?? ctx.env.GIT_MEM_STRICT_LOCAL ?? '').toLowerCase(),
    );
    if (strict || !existsSync(join(globalStoreDir(ctx.env), 'HEAD'))) throw e;
    return openGlobalStore(ctx, false);
  }
}

/** Opens the global store if it exists (for reads that merge project and personal memory). */
export async function maybeGlobalStore(ctx: Ctx): Promise<Store | undefined> {
  if (!existsSync(join(globalStoreDir(ctx.env), 'HEAD'))) return undefined;
  return openGlobalStore(ctx, false);
}

export function printJSON(ctx: Ctx, value: unknown): void {
  ctx.io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints JSON in --json mode, else the human text. */
export function emit(ctx: Ctx, value: unknown, human: () => string): void {
  if (ctx.json) printJSON(ctx, value);
  else if (ctx.yaml) ctx.io.out(yamlStringify(JSON.parse(JSON.stringify(value ?? null))));
  else {
    const text = human();
    if (text) ctx.io.out(text.endsWith('\n') ? text : `${text}\n`);
  }
}

/** Content from --content, --file or stdin (in that order). */
export async function readContent(
  ctx: Ctx,
  a: { content?: string; file?: string },
  required: boolean,
): Promise<string | undefined> {
  if (a.content !== undefined && a.file !== undefined) {
    throw err('E_INVALID_ARG', 'pass either --content or --file, not both');
  }
  const empty = () =>
    err('E_INVALID_ARG', 'the content is empty', 'pass --content "…", --file PATH, or pipe text on stdin');
  if (a.content !== undefined) {
    const s = String(a.content);
    if (required && !s.trim()) throw empty();
    return s;
  }
  // `--file -` (which the parser hands over as an empty string) reads stdin
  if (a.file !== undefined && a.file !== '' && a.file !== '-') {
    const { readFileSync } = await import('node:fs');
    const { resolve } = await import('node:path');
    const path = resolve(ctx.cwd, String(a.file));
    if (!existsSync(path)) throw err('E_INVALID_ARG', `cannot read --file ${a.file}: no such file`);
    let buf: Buffer;
    try {
      buf = readFileSync(path);
    } catch (e) {
      throw err(
        'E_INVALID_ARG',
        `cannot read --file ${a.file}: ${(e as NodeJS.ErrnoException).code ?? e}`,
        'name a readable file',
      );
    }
    if (buf.includes(0)) throw err('E_BINARY', `--file ${a.file} is binary`, 'store text only');
    const s = buf.toString('utf8');
    if (required && !s.trim()) throw empty();
    return s;
  }
  if (!ctx.io.stdinIsTTY || a.file !== undefined) {
    const s = await ctx.io.readStdin();
    if (s !== undefined && (s.trim().length > 0 || !required)) return s;
    if (required && s !== undefined) throw empty();
  }
  if (required)
    throw err('E_INVALID_ARG', 'no content given', 'pass --content "…", --file PATH, or pipe text on stdin');
  return undefined;
}

export function list(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const arr = Array.isArray(v) ? v : [v];
  return arr
    .flatMap((x) => String(x).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}
