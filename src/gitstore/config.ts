/**
 * Layered configuration (seed 003): defaults < global file < the shared file
 * inside refs/memory < local `git config mem.*` < flags.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { err, isGitMemError } from '../errors.js';
import { RULE_TARGETS } from '../model/rule-targets.js';
import { parse, stringify } from '../model/yaml.js';
import { git } from './git.js';
import type { Repo } from './repo.js';
import { SHARED_CONFIG_PATH, type Store } from './store.js';

export interface Settings {
  /** human | json | yaml */
  output: string;
  /** never fall back to the global store */
  'strict-local': boolean;
  /** block | warn | off */
  'secret-scan': string;
  /** default token budget of a context pack */
  'context-budget': number;
  /** the most time (ms) the post-commit hook adds to a commit; past it, it skips (0: no limit) */
  'post-commit-budget-ms': number;
  /** a read that finds no local store fetches the remote's memory (src/merge/adopt.ts) */
  'auto-fetch': boolean;
  /** sync refuses remote memory commits without a good signature by a trusted key (src/merge/sync.ts) */
  'sync.require-signed': boolean;
  /** context packs (CLI and MCP) let the configured model keep what bears on the task (src/agents/llm-filter.ts) */
  'context-llm-filter': boolean;
  [k: string]: unknown;
}

const DEFAULTS: Settings = {
  output: 'human',
  'strict-local': false,
  'secret-scan': 'block',
  'context-budget': 2000,
  'post-commit-budget-ms': 1000,
  'auto-fetch': true,
  'sync.require-signed': false,
  'context-llm-filter': false,
};

const KNOWN: Record<string, 'string' | 'boolean' | 'number'> = {
  output: 'string',
  'strict-local': 'boolean',
  'secret-scan': 'string',
  'context-budget': 'number',
  /** the branch the shared record follows (src/anchors/branch.ts); unset: origin's HEAD, init.defaultBranch, main, master */
  'default-branch': 'string',
  'post-commit-budget-ms': 'number',
  'auto-fetch': 'boolean',
  'sync.require-signed': 'boolean',
  'context-llm-filter': 'boolean',
  /** what `rules export` and its --check write without --to (src/cli/rules.ts); unset: the files in use */
  'rules.targets': 'string',
};

/**
 * Every key git-mem reads, with the module that reads it: `config set`
 * refuses any other key (a typo would be stored and silently ignored).
 * The embedding keys are EMBEDDING_KEYS (read by src/search/embed/settings.ts).
 */
export const EMBEDDING_KEYS = [
  'embedding-provider',
  'embedding-model',
  'embedding-model-path',
  'embedding-url',
  'embedding-timeout-ms',
  'embedding-dimension',
  'embedding-version',
  'embedding-batch-size',
  'embedding-dtype',
  'embedding-pooling',
  'embedding-model-host',
] as const;

export const SETTING_NAMES: readonly string[] = [
  ...Object.keys(KNOWN),
  'tombstone-ttl-days', // src/merge/merge-commits.ts
  'sessions-keep-full', // src/agents/checkpoint.ts
  'consolidate-daily', // src/agents/consolidate.ts
  'mcp.add-status', // src/agents/mcp.ts
  'llm.provider',
  'llm.url',
  'llm.model',
  'llm.api-key-env',
  'llm.timeout',
  'llm.max-tokens',
  ...EMBEDDING_KEYS,
];

/**
 * Settings that send this clone's data to a network address or choose what it downloads, loads
 * or runs, with what each does. They are read only from this person's layers (the global file,
 * this clone's git config, the environment, flags), never from config.yaml in refs/memory: anyone
 * who can push memory writes that file, and after one sync every clone would post its memories,
 * queries and agent prompts wherever it said. `config set --shared` refuses them; a value the
 * shared file holds anyway is ignored, and `config get`/`list` and `doctor` say so.
 * (The API keys themselves are read from the environment only, never from any config file.)
 */
export const PERSONAL: Readonly<Record<string, string>> = {
  'embedding-provider': 'turns on sending memory text, queries and prompts to an embedding endpoint',
  'embedding-url': 'is where memory text, queries and prompts are sent',
  'embedding-model': 'names the model sent to, or the local model loaded and run',
  'embedding-model-path': 'names a model folder this clone loads and runs',
  'embedding-model-host': 'is where git mem models pull downloads a model from',
  'llm.provider': 'turns on sending session events and memories to a model',
  'llm.url': 'is where session events and memories are sent',
  'llm.model': 'names the model sent to',
  'llm.api-key-env': 'names the environment variable whose key is sent',
  'llm.timeout': 'tunes the requests to a model this person chose',
  'llm.max-tokens': 'tunes the requests to a model this person chose',
  'context-llm-filter': 'sends the candidates of every context pack to the configured model',
};

/** Whether a key is read only from this person's layers (PERSONAL), and why. */
export function personalReason(key: string): string | undefined {
  return Object.hasOwn(PERSONAL, key) ? PERSONAL[key] : undefined;
}

/** `config set --shared` of a personal key: the one-line refusal naming where it can be set. */
export function refuseSharedPersonal(key: string): void {
  const why = personalReason(key);
  if (!why) return;
  throw err(
    'E_INVALID_ARG',
    `${key} cannot be shared: it ${why}, so each person sets it for themselves`,
    `git mem config set ${key} VALUE --global (every repository) or without --shared (this clone)`,
    { key },
  );
}

/** Refuses a key git-mem does not read (set only: unset and get still reach an old or mistyped key). */
export function knownKey(key: string): void {
  if (SETTING_NAMES.includes(key)) return;
  throw err('E_INVALID_ARG', `unknown config key "${key}"`, `use one of: ${SETTING_NAMES.join(', ')}`);
}

/** Other spellings of a key, as git config leaves them. */
const ALIASES: Record<string, string> = {
  autofetch: 'auto-fetch',
  'sync.requiresigned': 'sync.require-signed',
};

export type ConfigLayer = 'default' | 'global' | 'shared' | 'local' | 'flag';

/** ~/.config/git-mem (XDG_CONFIG_HOME honoured; GIT_MEM_HOME overrides for tests and sandboxes). */
export function gitMemHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GIT_MEM_HOME) return env.GIT_MEM_HOME;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'git-mem');
}

function globalConfigFile(env: NodeJS.ProcessEnv): string {
  return join(gitMemHome(env), 'config.yaml');
}

export function coerce(key: string, value: unknown): unknown {
  const kind = KNOWN[key];
  if (value === undefined || value === null) return value;
  if (kind === 'boolean') {
    if (typeof value === 'boolean') return value;
    const s = String(value).toLowerCase();
    if (['true', 'yes', 'on', '1'].includes(s)) return true;
    if (['false', 'no', 'off', '0'].includes(s)) return false;
    throw err('E_INVALID_ARG', `${key} must be true or false, not "${value}"`);
  }
  if (kind === 'number') {
    return wholeNumber(key, value, WHOLE[key] ?? 0);
  }
  // a closed set of values: checked here, where a value is set and where each layer is read, and
  // read in lower case (what every module compares with)
  const choices = CHOICES[key];
  if (choices) {
    const v = String(value).toLowerCase();
    if (!choices.includes(v))
      throw err('E_INVALID_ARG', `${key} must be ${choices.join(', ')}, not "${value}"`);
    return v;
  }
  const items = LISTS[key];
  if (items) return listOf(key, value, items);
  if (WHOLE[key] !== undefined) wholeNumber(key, value, WHOLE[key]);
  return value;
}

/** A comma-separated list from a closed set: read in lower case, without spaces or repeats; else the one-line refusal. */
function listOf(key: string, value: unknown, items: readonly string[]): string {
  const got = [
    ...new Set(
      String(value)
        .split(',')
        .map((x) => x.trim().toLowerCase()),
    ),
  ].filter(Boolean);
  const bad = got.find((x) => !items.includes(x));
  if (!got.length || bad !== undefined)
    throw err(
      'E_INVALID_ARG',
      `${key} must be a comma-separated list of ${items.join(', ')}, not "${value}"`,
    );
  return got.join(',');
}

/** A whole number of at least `least`, from a number or its text; else the one-line refusal. */
function wholeNumber(key: string, value: unknown, least: number): number {
  const n =
    typeof value === 'number' || (typeof value === 'string' && value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isInteger(n) || n < least)
    throw err('E_INVALID_ARG', `${key} must be a whole number of at least ${least}, not "${value}"`);
  return n;
}

/** Settings with a closed set of values (docs/embeddings.md, docs/llm.md, docs/mcp.md; read in lower case). */
const CHOICES: Record<string, readonly string[]> = {
  output: ['human', 'json', 'yaml'],
  'secret-scan': ['block', 'warn', 'off'],
  'embedding-provider': ['none', 'local', 'ollama', 'openai'],
  'embedding-pooling': ['mean', 'cls'],
  'embedding-dtype': ['fp32', 'fp16', 'q8', 'int8', 'uint8', 'q4', 'q4f16', 'bnb4'],
  'llm.provider': ['openai', 'anthropic', 'off'],
  'mcp.add-status': ['active', 'pending'],
};

/** Settings that are comma-separated lists from a closed set (docs/rules.md). */
const LISTS: Record<string, readonly string[]> = {
  'rules.targets': [...RULE_TARGETS, 'all'],
};

/** Settings that are whole numbers, with their least value (a budget of tokens, a time limit: 0 is none). */
const WHOLE: Record<string, number> = {
  'context-budget': 1,
  'post-commit-budget-ms': 0,
  'embedding-timeout-ms': 1,
  'embedding-dimension': 1,
  'embedding-batch-size': 1,
  'llm.timeout': 1,
  'llm.max-tokens': 1,
  'tombstone-ttl-days': 0,
  'sessions-keep-full': 0,
};

export function validateKey(key: string): void {
  if (!/^[a-z][a-z0-9-]*(\.[a-z0-9-]+)*$/.test(key)) {
    throw err(
      'E_INVALID_ARG',
      `invalid config key "${key}"`,
      'keys are lowercase words joined by - (e.g. context-budget)',
    );
  }
}

function readYamlFile(file: string): Record<string, unknown> {
  if (!existsSync(file)) return {};
  try {
    const v = parse(readFileSync(file, 'utf8'), { maxAliasCount: 16 });
    return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
  } catch (e) {
    throw err(
      'E_INVALID_ARG',
      `cannot parse ${file}: ${(e as Error).message.split('\n')[0]}`,
      'fix or delete the file',
    );
  }
}

export function readGlobalConfig(env: NodeJS.ProcessEnv): Record<string, unknown> {
  return readYamlFile(globalConfigFile(env));
}

export function writeGlobalConfig(env: NodeJS.ProcessEnv, values: Record<string, unknown>): void {
  const file = globalConfigFile(env);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, stringify(values));
}

/**
 * The team's settings (config.yaml in the store), and what is wrong with the file when it does not
 * read as a mapping: it came from a remote, so it is not applied then, and every command says so.
 */
export async function readSharedConfigFile(
  store: Store,
  commit?: string | null,
): Promise<{ values: Record<string, unknown>; problem?: string }> {
  const tip = commit === undefined ? await store.tip() : commit;
  const buf = await store.readPath(tip, SHARED_CONFIG_PATH);
  if (!buf) return { values: {} };
  try {
    const v = parse(buf.toString('utf8'), { maxAliasCount: 16 });
    if (v === null || v === undefined) return { values: {} };
    if (typeof v !== 'object' || Array.isArray(v))
      return { values: {}, problem: 'it is not a mapping of settings' };
    return { values: v as Record<string, unknown> };
  } catch (e) {
    return { values: {}, problem: (e as Error).message.split('\n')[0].replace(/:$/, '') };
  }
}

export async function readSharedConfig(
  store: Store,
  commit?: string | null,
): Promise<Record<string, unknown>> {
  return (await readSharedConfigFile(store, commit)).values;
}

/**
 * Whether this clone's config files can hold a mem.* entry: a [mem …]
 * section or an include. Reading the files costs far less than a git
 * process, and most clones have no mem.* entry at all.
 */
export function mayHaveLocalMem(repo: Repo): boolean {
  for (const file of [join(repo.commonDir, 'config'), join(repo.gitDir, 'config.worktree')]) {
    try {
      if (/^[ \t]*\[[ \t]*(mem|include)/im.test(readFileSync(file, 'utf8'))) return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return true;
    }
  }
  return false;
}

/**
 * A git config key that is a git-mem setting: `mem.*`, except the team-store
 * registry (`mem.store.<name>.*`, src/commands/stores.ts), which is not a setting.
 */
function isSettingKey(key: string): boolean {
  return key.startsWith('mem.') && !key.startsWith('mem.store.');
}

export async function readLocalConfig(repo: Repo, store?: Store): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  if (!mayHaveLocalMem(repo)) return out;
  if (store) {
    // the store reads all git config once (it needs user.* too): keep this clone's mem.* entries
    for (const e of await store.gitConfig()) {
      if ((e.scope === 'local' || e.scope === 'worktree') && isSettingKey(e.key))
        out[e.key.slice(4)] = e.value;
    }
    return out;
  }
  const r = await git(['config', '--local', '-z', '--get-regexp', '^mem\\.'], {
    cwd: repo.cwd,
    env: repo.env,
    allowFail: true,
  });
  for (const kv of r.stdout.toString('utf8').split('\0')) {
    const nl = kv.indexOf('\n');
    if (nl < 0 || !isSettingKey(kv.slice(0, nl))) continue;
    out[kv.slice(4, nl)] = kv.slice(nl + 1);
  }
  return out;
}

export interface ResolvedConfig {
  values: Settings;
  origin: Record<string, ConfigLayer>;
  /** One line per shared setting that was ignored because it would weaken security. */
  warnings: string[];
  /**
   * Values the shared config holds that were not applied: a personal setting (PERSONAL), or one
   * that would weaken security. `config get`/`list` and `doctor` show them.
   */
  ignored: Array<{ key: string; value: unknown; reason: string; personal: boolean }>;
}

/**
 * Security settings, from the weakest value to the strongest. The shared
 * layer travels with refs/memory (anyone who can push sets it): it may
 * tighten these, never loosen them.
 */
const SECURITY: Record<string, string[]> = {
  'secret-scan': ['off', 'warn', 'block'],
  'sync.require-signed': ['false', 'true'],
  // pending: what agents add waits for a person's review
  'mcp.add-status': ['active', 'pending'],
};

function strength(key: string, v: unknown): number {
  return SECURITY[key].indexOf(String(v));
}

/** Where each layer's values are written, and how to change one there. */
const LAYER_PLACE: Record<ConfigLayer, string> = {
  default: 'the defaults',
  global: '~/.config/git-mem/config.yaml',
  shared: 'config.yaml in refs/memory',
  local: "this clone's git config",
  flag: 'a command-line flag',
};
const LAYER_FIX: Record<ConfigLayer, (k: string) => string> = {
  default: () => 'report it: a default must be valid',
  global: (k) => `git mem config set ${k} VALUE --global, or unset it there`,
  shared: (k) => `git mem config set ${k} VALUE --shared`,
  local: (k) => `git mem config set ${k} VALUE, or git mem config unset ${k}`,
  flag: () => 'pass a valid value',
};

export function layer(layers: Array<[ConfigLayer, Record<string, unknown>]>): ResolvedConfig {
  const values: Record<string, unknown> = {};
  const origin: Record<string, ConfigLayer> = {};
  const ignored = new Map<string, unknown>();
  const warnings: string[] = [];
  const notApplied: ResolvedConfig['ignored'] = [];
  for (const [name, raw] of layers) {
    const vals = name === 'shared' ? withoutPersonal(raw, notApplied) : raw;
    for (const [key, v] of Object.entries(vals)) {
      if (v === undefined) continue;
      // git lowercases variable names: `git config mem.autoFetch` reads back as autofetch
      const k = ALIASES[key] ?? key;
      if (name === 'shared' && personalReason(k)) {
        notApplied.push({
          key: k,
          value: v,
          reason: `it ${personalReason(k)}: read only from your own settings`,
          personal: true,
        });
        continue;
      }
      let value: unknown;
      try {
        value = coerce(k, v);
      } catch (e) {
        if (!isGitMemError(e)) throw e;
        // a teammate's value (it came with the store) does not stop this clone: it is not applied
        if (name === 'shared') {
          warnings.push(
            `git-mem: warning: ignoring ${k} from the shared config in refs/memory: ${e.message} (fix it for the team: git mem config set ${k} VALUE --shared)`,
          );
          continue;
        }
        throw err('E_INVALID_ARG', `${e.message}, in ${LAYER_PLACE[name]}`, LAYER_FIX[name](k));
      }
      if (name === 'shared' && SECURITY[k] && strength(k, value) < strength(k, values[k] ?? DEFAULTS[k])) {
        ignored.set(k, value);
        continue;
      }
      values[k] = value;
      origin[k] = name;
    }
  }
  for (const [k, value] of ignored) {
    // a later layer (this clone's git config, a flag) set it anyway: nothing was ignored in effect
    if (origin[k] === 'local' || origin[k] === 'flag') continue;
    const kept = values[k] ?? DEFAULTS[k];
    notApplied.push({
      key: k,
      value,
      reason: 'a shared setting may tighten security, never loosen it',
      personal: false,
    });
    warnings.push(
      `git-mem: warning: ignoring ${k}: ${value} from the shared config in refs/memory (a shared setting may tighten security, never loosen it); ${k} stays ${kept} (for this clone only: git mem config set ${k} ${value} --local)`,
    );
  }
  return { values: values as Settings, origin, warnings, ignored: notApplied };
}

/**
 * The shared layer without the personal keys of a nested `llm:` map (the llm module reads
 * `llm: {url: …}` as well as `llm.url`): those go to `out` as the flat keys they stand for.
 */
function withoutPersonal(
  vals: Record<string, unknown>,
  out: ResolvedConfig['ignored'],
): Record<string, unknown> {
  const nested = vals.llm;
  if (!nested || typeof nested !== 'object' || Array.isArray(nested)) return vals;
  const kept: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(nested as Record<string, unknown>)) {
    const why = personalReason(`llm.${k}`);
    if (why)
      out.push({
        key: `llm.${k}`,
        value: v,
        reason: `it ${why}: read only from your own settings`,
        personal: true,
      });
    else kept[k] = v;
  }
  return { ...vals, llm: kept };
}

/**
 * The settings one layer holds, as written there (`config get --shared`: what the team file says,
 * also a value the resolution ignores), keys and values read as every layer's are.
 */
export async function readLayer(
  name: 'global' | 'shared' | 'local',
  env: NodeJS.ProcessEnv,
  store?: Store,
): Promise<Record<string, unknown>> {
  const vals =
    name === 'global'
      ? readGlobalConfig(env)
      : !store
        ? {}
        : name === 'shared'
          ? await readSharedConfig(store)
          : await readLocalConfig(store.repo, store);
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(vals)) {
    if (v === undefined) continue;
    const k = ALIASES[key] ?? key;
    out[k] = coerce(k, v);
  }
  return out;
}

export async function resolveConfig(
  env: NodeJS.ProcessEnv,
  store?: Store,
  flags: Record<string, unknown> = {},
): Promise<ResolvedConfig> {
  const layers: Array<[ConfigLayer, Record<string, unknown>]> = [['default', { ...DEFAULTS }]];
  layers.push(['global', readGlobalConfig(env)]);
  let unread: string | undefined;
  if (store) {
    const shared = await readSharedConfigFile(store);
    unread = shared.problem;
    layers.push(['shared', shared.values]);
    layers.push(['local', await readLocalConfig(store.repo, store)]);
  }
  layers.push(['flag', flags]);
  const res = layer(layers);
  if (unread)
    res.warnings.unshift(
      `git-mem: warning: config.yaml in refs/memory does not read as settings (${unread}): none of the team's settings apply (rewrite it: git mem config set KEY VALUE --shared)`,
    );
  return res;
}
