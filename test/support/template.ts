/**
 * The ops tier's stores: a template repository built once per worker (git
 * init, a commit, N memories written through the operations in-process),
 * and for each test a fresh copy of it with a Store opened in-process. A test
 * then calls operations on that store — no git-mem process, no store opened
 * per command — and asserts the data they return and the codes they throw.
 *
 * The copy is `cp -a` of the whole directory (objects, refs, .git/mem
 * caches): bench/template-copy.bench.mjs measured it cheapest, beside
 * fs.cpSync (about as cheap) and `git clone --local` plus a fetch of
 * refs/memory (about 4x dearer: two git processes, and no caches).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { loadCommand } from '../../src/cli/commands.js';
import type { Ctx } from '../../src/cli/context.js';
import { parseCommandLine } from '../../src/cli/main.js';
import { bufferIO } from '../../src/commands/context.js';
import { type AddInput, addMemory, initStore } from '../../src/commands/memory.js';
import { asGitMemError } from '../../src/errors.js';
import { openRepo } from '../../src/gitstore/repo.js';
import { Store } from '../../src/gitstore/store.js';
import type { MemoryRecord } from '../../src/model/record.js';
import { isolatedEnv, makeRepo, sh, tmpDir } from '../helpers.js';
import { atFileEnd, atTestEnd, settleBeforeFileEnd } from './per-file.js';

export interface Template {
  /** the template repository: never written once built */
  dir: string;
  env: NodeJS.ProcessEnv;
  /** the memories written into it, in order */
  records: MemoryRecord[];
  /** the ids the template's commands printed (their --json `id`), in order */
  ids: string[];
}

export interface Fresh {
  dir: string;
  env: NodeJS.ProcessEnv;
  git: (...args: string[]) => string;
  /** the copy's store, open for the whole test (closed after it) */
  store: Store;
  records: MemoryRecord[];
  /** the ids the template's commands printed */
  ids: string[];
  /** the commit refs/memory points at ('' when the store has none) */
  tip: () => string;
  write: (path: string, content: string) => void;
  /**
   * a command on this copy's store (runOn) shaped as helpers.ts's CliResult: `code` the exit
   * code, `error` the error code; human output unless argv says --json
   */
  mem: (args: string[], opts?: { stdin?: string }) => Promise<MemResult>;
  /** a command that must succeed, with --json output: its document */
  // biome-ignore lint/suspicious/noExplicitAny: see RunResult.json
  memJson: (args: string[], opts?: { stdin?: string }) => Promise<any>;
}

export interface TemplateSpec {
  /** memories to write (default: none); the store is initialised either way unless `init: false` */
  memories?: AddInput[];
  /** files to commit in the work tree besides README.md */
  files?: Record<string, string>;
  init?: boolean;
  /** commands run on it after the memories, through their run functions (as runOn runs them) */
  commands?: string[][];
}

const built = new Map<string, Promise<Template>>();

/** The template called `name`, built on first use in this test file. */
export function template(name: string, spec: TemplateSpec = {}): Promise<Template> {
  let t = built.get(name);
  if (!t) {
    t = build(spec);
    settleBeforeFileEnd(t);
    built.set(name, t);
    // its folder goes when the file ends: a later file of a shared worker builds its own
    atFileEnd(() => built.delete(name));
  }
  return t;
}

async function build(spec: TemplateSpec): Promise<Template> {
  const r = makeRepo({ env: isolatedEnv() });
  r.write('README.md', '# test\n');
  for (const [p, c] of Object.entries(spec.files ?? {})) r.write(p, c);
  r.commitAll('initial');
  const store = new Store(await openRepo(r.dir, r.env));
  const records: MemoryRecord[] = [];
  const ids: string[] = [];
  try {
    if (spec.init !== false) await initStore(store);
    for (const m of spec.memories ?? []) records.push((await addMemory(store, m)).record);
    const on = { dir: r.dir, env: r.env, store } as Fresh;
    for (const c of spec.commands ?? []) {
      const id = (await jsonOn(on, c))?.id;
      if (typeof id === 'string') ids.push(id);
    }
  } finally {
    store.close();
  }
  return { dir: r.dir, env: r.env, records, ids };
}

/** A fresh copy of a template, its store open in-process. */
export async function fresh(t: Template | Promise<Template>): Promise<Fresh> {
  const tpl = await t;
  const dir = join(tmpDir('gm-copy-'), 'repo');
  execFileSync('cp', ['-a', tpl.dir, dir]);
  // a home of its own (global config, global store): what one test writes there no other sees
  const env = isolatedEnv();
  return openOn(dir, env, tpl.records, tpl.ids);
}

/**
 * A store opened in-process on the repository at `dir` (a template's copy, a clone, a
 * repository a test made), in the Fresh shape; closed after the test. Opened again on a
 * repository that already has one open, it is a second store that shares no memory with the
 * first, as a second process's.
 */
export async function openOn(
  dir: string,
  env: NodeJS.ProcessEnv,
  records: MemoryRecord[] = [],
  ids: string[] = [],
): Promise<Fresh> {
  const store = new Store(await openRepo(dir, env));
  atTestEnd(() => store.close());
  const git = (...args: string[]) => sh('git', args, dir, env);
  const f: Fresh = {
    dir,
    env,
    git,
    store,
    records,
    ids,
    mem: async (args, o = {}) => {
      const { exit, code, ...rest } = await runOn(f, args, { ...o, json: args.includes('--json') });
      return { ...rest, code: exit, error: code };
    },
    memJson: (args, o = {}) => jsonOn(f, args, o),
    tip: () => git('for-each-ref', '--format=%(objectname)', 'refs/memory').trim(),
    write: (path, content) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), content);
    },
  };
  return f;
}

export type MemResult = Omit<RunResult, 'exit' | 'code'> & { code: number; error?: string };

export interface RunResult {
  /** the exit code main() would return */
  exit: number;
  /** the error's code (src/errors.ts), when the command was refused */
  code?: string;
  /** the error's message: for the data it names (an id, a path), never for its wording */
  message?: string;
  /** the error's hint (the fix it names): for the flag, path or data it names, never for its wording */
  hint?: string;
  /** the error's data (src/errors.ts `err(..., data)`: the path or record it names) */
  data?: Record<string, unknown>;
  stdout: string;
  stderr: string;
  // biome-ignore lint/suspicious/noExplicitAny: the command's --json document, checked by the assertions that read it
  json?: any;
}

/**
 * Runs one command's run function on the copy's open store (the seam main()
 * uses for the daemon: ctx.store), its options parsed as main() parses them,
 * with --json output. No git-mem process, no store opened per command.
 */
export async function runOn(
  f: Fresh,
  argv: string[],
  opts: { stdin?: string; env?: NodeJS.ProcessEnv; json?: boolean; cwd?: string } = {},
): Promise<RunResult> {
  const io = bufferIO(opts.stdin);
  // each command reads git's configuration afresh (a setting the last one wrote), as a new process would
  f.store.forgetSettings();
  const ctx: Ctx = {
    io,
    cwd: opts.cwd ?? f.dir,
    env: opts.env ?? f.env,
    json: opts.json ?? true,
    formatFixed: true,
    stores: [],
    store: f.store,
  };
  const at = argv.findIndex((a) => !a.startsWith('-'));
  try {
    const command = await loadCommand(argv[at]);
    if (!command) throw new Error(`no command ${argv[at]}`);
    const exit = (await command.run(parseCommandLine(argv, at, command), ctx)) ?? 0;
    const text = io.stdout.trim();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {}
    return { exit, stdout: io.stdout, stderr: io.stderr, json };
  } catch (e) {
    const ge = asGitMemError(e);
    if (!ge) throw e;
    return {
      exit: ge.exitCode,
      code: ge.code,
      message: ge.message,
      hint: ge.hint,
      data: ge.data,
      stdout: io.stdout,
      stderr: io.stderr,
    };
  } finally {
    for (const s of ctx.stores) s.close();
  }
}

/** runOn, for a command that must succeed: its --json document. */
// biome-ignore lint/suspicious/noExplicitAny: see RunResult.json
export async function jsonOn(f: Fresh, argv: string[], opts: { stdin?: string } = {}): Promise<any> {
  const r = await runOn(f, argv, opts);
  if (r.exit !== 0)
    throw new Error(
      `git mem ${argv.join(' ')} exited ${r.exit} (${r.code}): ${r.message ?? ''} ${JSON.stringify(r.data ?? {})} ${r.stderr}`,
    );
  return r.json;
}
