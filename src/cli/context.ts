/**
 * What every command gets: the run context of the operations (IO, cwd, env,
 * the stores it opened; src/commands/context.ts) plus the output format,
 * the memoised settings and output helpers that keep --json stable.
 */
import { existsSync } from 'node:fs';
import {
  openStore as openStoreOf,
  type RunContext,
  readTextFile,
  type TextLimit,
} from '../commands/context.js';
import type { SecretScan } from '../commands/secret-policy.js';
import { err, isGitMemError } from '../errors.js';
import { type ResolvedConfig, readGlobalConfig, resolveConfig, type Settings } from '../gitstore/config.js';
import type { Store } from '../gitstore/store.js';
import { LIMITS } from '../model/record.js';
import { stringify as yamlStringify } from '../model/yaml.js';
import { terminalText } from '../safety/terminal.js';
import type { CommandInfo } from './help.js';

export type { IO } from '../commands/context.js';
export { bufferIO, isGlobalStore, maybeGlobalStore, processIO, teamStoresOf } from '../commands/context.js';

/**
 * The CLI as data, for the commands that describe it (help, completion): main.ts
 * provides it, so those commands import neither main.ts nor the command table.
 */
export interface CliTable {
  /** every command, described */
  table(): Promise<CommandInfo[]>;
  /** whether a command (or alias) of that name exists */
  has(name: string): boolean;
  /** prints the help of one command, or the full help (what `<command> --help` prints) */
  help(name?: string): Promise<number>;
}

export interface Ctx extends RunContext {
  cli?: CliTable;
  json: boolean;
  /** yaml output (the `output: yaml` setting); json wins when --json is given */
  yaml?: boolean;
  /** colour human output (src/cli/output.ts decides: a terminal, no NO_COLOR, no --no-color) */
  color?: boolean;
  settings?: Promise<Settings>;
  /** every layer of the configuration, resolved once per command */
  config?: Promise<ResolvedConfig>;
  /** the store `config` was resolved with (a team store written with --store has its own shared layer) */
  configStore?: Store;
  /** the output format came from --json or GIT_MEM_OUTPUT: the config layers do not change it */
  formatFixed?: boolean;
}

function configFor(ctx: Ctx, store?: Store): Promise<ResolvedConfig> {
  if (!ctx.config) {
    ctx.config = resolveConfig(ctx.env, store);
    ctx.configStore = store;
  }
  return ctx.config;
}

/** The layered settings for this command (memoised; needs the store for the shared and local layers). */
function settingsFor(ctx: Ctx, store?: Store): Promise<Settings> {
  ctx.settings ??= configFor(ctx, store).then((r) => {
    // a warning may quote the shared config.yaml, which a teammate wrote
    for (const w of r.warnings) ctx.io.err(`${terminalText(w)}\n`);
    return r.values;
  });
  return ctx.settings;
}

/**
 * The store a command works on (see src/commands/context.ts). Opening it
 * settles the output format from every layer `config list` reports: the
 * shared file in refs/memory and `git config mem.output` as well as the
 * global file main() read before the command ran. It costs the one
 * `git config --list` the store reads anyway for an identity, and one blob.
 * `read`: a read command, which takes in a remote's memory where this clone
 * has none yet (adoptForRead).
 */
export async function openStore(
  ctx: Ctx,
  opts: { global?: boolean; create?: boolean; config?: boolean; read?: boolean } = {},
): Promise<Store> {
  const store = await openStoreOf(ctx, opts);
  if (opts.read) await adoptForRead(ctx, store, opts.global);
  if (!ctx.formatFixed && !ctx.config) {
    try {
      const output = String((await configFor(ctx, store)).values.output ?? 'human');
      ctx.json = output === 'json';
      ctx.yaml = output === 'yaml';
    } catch {
      // a broken setting is reported by the command that needs it, not by every read
      ctx.config = undefined;
    }
  }
  return store;
}

/** The layered settings of this command's store (memoised). */
export function settingsOf(ctx: Ctx, store: Store): Promise<Settings> {
  return settingsFor(ctx, store);
}

/**
 * The secret-scan policy of this command's write to `store` (src/commands/secret-policy.ts
 * decides what it means, for every surface): the store's settings, memoised; writing to a team
 * store (add --store), the stricter of the project's and that store's own shared config.
 */
export async function secretScanFor(ctx: Ctx, store: Store): Promise<SecretScan> {
  const { asSecretScan, stricterScan } = await import('../commands/secret-policy.js');
  let scan = asSecretScan((await settingsFor(ctx, store))['secret-scan']);
  if (ctx.configStore && ctx.configStore !== store)
    scan = stricterScan(scan, asSecretScan((await resolveConfig(ctx.env, store)).values['secret-scan']));
  return scan;
}

/**
 * For writes whose texts the command scans itself (check, reanchor, config): whether a likely
 * secret may be stored (a person's `flag`, or the policy), its warnings printed on stderr.
 */
export async function secretPolicy(
  ctx: Ctx,
  store: Store,
  flag: unknown,
  fields: Record<string, string | undefined>,
): Promise<boolean> {
  const { decideSecrets } = await import('../commands/secret-policy.js');
  const d = decideSecrets(flag ? 'off' : await secretScanFor(ctx, store), fields, !!flag);
  for (const w of d.warnings) ctx.io.err(`git-mem: warning: ${w}\n`);
  return d.allow;
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

/** The `auto-fetch` setting (`git config mem.autoFetch` too): on unless set to false. */
async function autoFetchOn(ctx: Ctx, store: Store): Promise<boolean> {
  const values = await configFor(ctx, store).then(
    (r) => r.values as Record<string, unknown>,
    () => ({}) as Record<string, unknown>,
  );
  const v = values['auto-fetch'] ?? true;
  return !/^(false|no|off|0)$/i.test(String(v));
}

/**
 * For read commands in a clone with no store of its own (a teammate's fresh
 * clone): takes in the remote's memory when `auto-fetch` is on (the default;
 * the fetch gives up after a few seconds offline and is not retried for ten
 * minutes), else says the one command that does. One line on stderr.
 */
export async function adoptForRead(
  ctx: Ctx,
  store: Store,
  global?: boolean,
  quiet = false,
): Promise<import('../merge/adopt.js').Adoption> {
  if (global || (await store.tip())) return { action: 'present' };
  const { adoptRemoteMemory } = await import('../merge/adopt.js');
  const r = await adoptRemoteMemory(store, { autoFetch: await autoFetchOn(ctx, store) });
  const line = adoptionLine(r);
  if (line && !quiet) ctx.io.err(`git-mem: ${line}\n`);
  return r;
}

export function adoptionLine(r: import('../merge/adopt.js').Adoption): string | undefined {
  if (r.action === 'pulled')
    return `this clone had no memory yet: fetched ${r.remote}'s (${r.tip?.slice(0, 12)}); git mem config set auto-fetch false turns this off`;
  if (r.action === 'fetched')
    return `${r.remote} has memory (${r.ref}) and this clone has none yet: run git mem pull`;
  if (r.action === 'failed')
    return `this clone has no memory yet and fetching ${r.remote}'s failed (${r.reason}); run git mem pull to try again`;
  return undefined;
}

export function printJSON(ctx: Ctx, value: unknown): void {
  ctx.io.out(`${JSON.stringify(value, null, 2)}\n`);
}

/** Prints JSON in --json mode, else the human text. */
export function emit(ctx: Ctx, value: unknown, human: () => string): void {
  if (ctx.json) printJSON(ctx, value);
  else if (ctx.yaml) ctx.io.out(yamlStringify(JSON.parse(JSON.stringify(value ?? null))));
  else {
    // every human view prints record text (titles, tags, bodies a teammate wrote): a control
    // character in it is shown, never obeyed by the terminal (src/safety/terminal.ts)
    const text = terminalText(human(), !!ctx.color);
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
  // `--file -` reads stdin; either is read through the body's limit, and must be UTF-8
  const limit = (what: string): TextLimit => ({ maxBytes: LIMITS.bodyBytes, what });
  if (a.file !== undefined && a.file !== '-') {
    const { resolve } = await import('node:path');
    const path = resolve(ctx.cwd, String(a.file));
    if (!existsSync(path)) throw err('E_INVALID_ARG', `cannot read --file ${a.file}: no such file`);
    let s: string;
    try {
      s = readTextFile(path, limit(`--file ${a.file}`));
    } catch (e) {
      if (isGitMemError(e)) throw e;
      throw err(
        'E_INVALID_ARG',
        `cannot read --file ${a.file}: ${(e as NodeJS.ErrnoException).code ?? e}`,
        'name a readable file',
      );
    }
    if (required && !s.trim()) throw empty();
    return s;
  }
  if (!ctx.io.stdinIsTTY || a.file !== undefined) {
    const s = await ctx.io.readStdin(limit('stdin'));
    if (s !== undefined && (s.trim().length > 0 || !required)) return s;
    if (required && s !== undefined) throw empty();
  }
  if (required)
    throw err('E_INVALID_ARG', 'no content given', 'pass --content "…", --file PATH, or pipe text on stdin');
  return undefined;
}

/**
 * The values of a filter option (--type, --tag, --status): as list, but a value given empty
 * (`--type ""`) is bad input, not "no filter".
 */
export function filterList(v: unknown, name: string): string[] {
  const out = list(v);
  if (v !== undefined && v !== null && !out.length)
    throw err(
      'E_INVALID_ARG',
      `--${name} was given no value`,
      `pass one (--${name} X), or leave the option out`,
    );
  return out;
}

export function list(v: unknown): string[] {
  if (v === undefined || v === null) return [];
  const arr = Array.isArray(v) ? v : [v];
  return arr
    .flatMap((x) => String(x).split(','))
    .map((s) => s.trim())
    .filter(Boolean);
}
