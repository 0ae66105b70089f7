/**
 * The command line, declared once: each command's builder calls `y.option(…)`
 * and `y.positional(…)` on a recorder, which turns the declarations into data
 * (CommandInfo). parse() reads argv against that data with node's own
 * `parseArgs`; help, the manual page and the completion scripts render the
 * same data, so none of them can drift from what the parser accepts.
 *
 * Rules (git's, mostly): `--opt value`, `--opt=value`, `-o value`, `--` ends
 * the options, every boolean `--x` also takes `--no-x`, an `array` option
 * repeats (`--scope a --scope b`; it never swallows the words after it), a
 * repeated scalar option keeps its last value, and every name with a dash is
 * also handed over in camelCase (`dry-run` and `dryRun`).
 */
import { parseArgs } from 'node:util';
import { err } from '../errors.js';

export type ArgType = 'string' | 'number' | 'boolean';

/** What `y.option(name, spec)` takes. */
export interface OptionSpec {
  alias?: string | readonly string[];
  type?: ArgType;
  describe?: string;
  default?: unknown;
  choices?: readonly (string | number)[];
  /** repeatable: every occurrence is kept, in order */
  array?: boolean;
  demandOption?: boolean | string;
  /** parsed, but left out of help, the manual page and completion */
  hidden?: boolean;
}

/** What `y.positional(name, spec)` takes; whether it is required or variadic comes from the command string. */
export interface PositionalSpec {
  type?: 'string' | 'number';
  describe?: string;
  choices?: readonly (string | number)[];
  array?: boolean;
}

type Scalar<O> = O extends { choices: readonly (infer C)[] }
  ? C
  : O extends { type: 'number' }
    ? number
    : O extends { type: 'boolean' }
      ? boolean
      : O extends { type: 'string' }
        ? string
        : unknown;
type Value<O> = O extends { array: true } ? Scalar<O>[] : Scalar<O>;
type Always<O> = O extends { demandOption: true | string }
  ? true
  : O extends { default: NonNullable<unknown> }
    ? true
    : false;
/** The type an option arrives with: undefined unless required or defaulted. */
export type OptionValue<O> = Always<O> extends true ? Value<O> : Value<O> | undefined;

/**
 * The builder a command's `builder` receives: each declaration adds its name
 * and value type to T, which types the arguments `run` receives.
 */
export interface Argv<T = object> {
  option<K extends string, const O extends OptionSpec>(
    name: K,
    spec: O,
  ): Argv<Omit<T, K> & { [P in K]: OptionValue<O> }>;
  options<const M extends Record<string, OptionSpec>>(
    specs: M,
  ): Argv<Omit<T, keyof M> & { [P in keyof M]: OptionValue<M[P]> }>;
  positional<K extends string, const O extends PositionalSpec>(
    name: K,
    spec: O,
  ): Argv<Omit<T, K> & { [P in K]: Value<O> | undefined }>;
  /** strictOptions(false): unknown options are kept instead of refused (for `hook`, which must never fail) */
  strictOptions(strict?: boolean): Argv<T>;
  /** type only: what the declarations add up to */
  readonly __args?: T;
}

type CamelCase<S extends string> = S extends `${infer H}-${infer R}` ? `${H}${Capitalize<CamelCase<R>>}` : S;
/** The arguments a command runs with: each name as declared and in camelCase. */
export type Args<T> = { [K in keyof T as K | CamelCase<K & string>]: T[K] };

export interface OptionInfo {
  name: string;
  aliases: string[];
  type?: string;
  describe?: string;
  choices?: string[];
  array?: boolean;
  required?: boolean;
  default?: unknown;
  hidden?: boolean;
}

export interface CommandInfo {
  name: string;
  /** the command string, e.g. 'show <ref>' */
  usage: string;
  describe: string;
  aliases: string[];
  /** in the order of the command string */
  positionals: OptionInfo[];
  options: OptionInfo[];
  /** false: unknown options are kept, not refused */
  strict: boolean;
}

/**
 * Options every command takes (main.ts parses them; the manual page and the
 * completion scripts list them). The no- lines only document the negations,
 * which every boolean takes.
 */
export const GLOBAL_OPTIONS: OptionInfo[] = [
  { name: 'json', aliases: [], type: 'boolean', describe: 'print one stable JSON document' },
  {
    name: 'color',
    aliases: [],
    type: 'boolean',
    describe:
      'colour even when piped (default: color.mem, else color.ui, else on a terminal; --no-color or NO_COLOR=1: never)',
  },
  { name: 'no-color', aliases: [], type: 'boolean', describe: 'no colour' },
  {
    name: 'pager',
    aliases: [],
    type: 'boolean',
    describe: 'page long listings on a terminal (--no-pager: never)',
  },
  { name: 'no-pager', aliases: [], type: 'boolean', describe: 'do not page' },
  { name: 'help', aliases: ['h'], type: 'boolean', describe: 'show help' },
  { name: 'version', aliases: [], type: 'boolean', describe: 'show the version' },
];

/** What commandInfo() needs of a command (CommandDef, without the types). */
export interface Declared {
  command: string;
  describe: string;
  aliases?: string[];
  // biome-ignore lint/suspicious/noExplicitAny: a builder of any option type
  builder?: (y: Argv) => Argv<any>;
}

function info(name: string, o: OptionSpec | PositionalSpec = {}): OptionInfo {
  const s = o as OptionSpec;
  const alias = s.alias === undefined ? [] : typeof s.alias === 'string' ? [s.alias] : [...s.alias];
  return {
    name,
    aliases: alias,
    type: s.type ?? (s.choices ? 'string' : undefined),
    describe: s.describe,
    choices: s.choices?.map(String),
    array: !!s.array,
    required: !!s.demandOption,
    default: s.default,
    hidden: !!s.hidden,
  };
}

const POSITIONAL = /^([<[])([\w-]+)(\.\.)?[>\]]$/;

/** What a command declares, as data: its builder runs against a recorder, not a parser. */
export function commandInfo(c: Declared, aliases: string[] = []): CommandInfo {
  const declared: OptionInfo[] = [];
  const options: OptionInfo[] = [];
  let strict = true;
  // biome-ignore lint/suspicious/noExplicitAny: the recorder stands in for a builder of any option type
  const recorder: Argv<any> = {
    option(name: string, spec: OptionSpec) {
      options.push(info(name, spec));
      return recorder;
    },
    options(specs: Record<string, OptionSpec>) {
      for (const [k, v] of Object.entries(specs)) options.push(info(k, v));
      return recorder;
    },
    positional(name: string, spec: PositionalSpec) {
      declared.push(info(name, spec));
      return recorder;
    },
    strictOptions(s = true) {
      strict = s;
      return recorder;
    },
  };
  c.builder?.(recorder);
  const [name, ...words] = c.command.split(' ');
  const positionals: OptionInfo[] = [];
  for (const w of words) {
    const m = POSITIONAL.exec(w);
    if (!m)
      throw new Error(
        `command "${c.command}": cannot read "${w}" (want <name>, [name], <names..> or [names..])`,
      );
    const p = declared.find((d) => d.name === m[2]) ?? info(m[2]);
    positionals.push({ ...p, required: m[1] === '<', array: !!m[3] || p.array });
  }
  // declared but not in the command string: taken after those that are
  for (const d of declared) if (!positionals.some((p) => p.name === d.name)) positionals.push(d);
  return {
    name,
    usage: c.command,
    describe: c.describe,
    aliases: c.aliases ?? aliases,
    positionals,
    options,
    strict,
  };
}

/** Optimal string alignment distance (a swap of two neighbours costs one), for "Did you mean …?". */
export function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.length][b.length];
}

/** The candidate nearest to `word` within `max` edits (ties: the first), or undefined. */
export function nearest(word: string, candidates: readonly string[], max = 3): string | undefined {
  let best: string | undefined;
  let bestD = max + 1;
  for (const c of candidates) {
    const d = distance(word, c);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return best;
}

/**
 * What main() reads of a command line before the command's own parse(): where the command word
 * is (the first word; only options every command takes may come before it), its name, and the
 * words before `--`, where --help, --version, --json, --color and --no-pager count. The one
 * reading of a command line besides parse() (bin/git-mem.js compares one exact line, the agent
 * hook's, and reads nothing else).
 */
export function commandLine(argv: readonly string[]): {
  at: number;
  name: string | undefined;
  flags: readonly string[];
} {
  const at = argv.findIndex((a) => !a.startsWith('-'));
  const end = argv.indexOf('--');
  return { at, name: at < 0 ? undefined : argv[at], flags: end < 0 ? argv : argv.slice(0, end) };
}

const camel = (s: string) => s.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

/**
 * Reads `argv` (what follows the command name) against a command's options and
 * positionals, and the options every command takes. Throws a one-line
 * E_INVALID_ARG error naming the option or argument at fault.
 */
export function parse(
  argv: readonly string[],
  cmd: CommandInfo,
  globals: readonly OptionInfo[] = [],
): Record<string, unknown> {
  const hint = `see git mem ${cmd.name} --help`;
  const usage = `usage: git mem ${cmd.usage}`;
  const bad = (message: string, h = hint) => err('E_INVALID_ARG', message, h);
  const all = [...globals, ...cmd.options];
  // parseArgs' option table: long names and long aliases, one-letter aliases as `short`,
  // and a --no-x for each boolean x (by hand: parseArgs has allowNegative only from node 20.16)
  const table: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  const owner = new Map<string, { o: OptionInfo; negated?: boolean }>();
  for (const o of all) {
    const type = o.type === 'boolean' ? 'boolean' : 'string';
    for (const n of [o.name, ...o.aliases.filter((a) => a.length > 1)]) {
      table[n] = { type };
      owner.set(n, { o });
    }
    const short = o.aliases.find((a) => a.length === 1);
    if (short) table[o.name].short = short;
  }
  for (const o of all)
    if (o.type === 'boolean' && !owner.has(`no-${o.name}`)) {
      table[`no-${o.name}`] = { type: 'boolean' };
      owner.set(`no-${o.name}`, { o, negated: true });
    }

  let tokens: NonNullable<ReturnType<typeof parseArgs>['tokens']>;
  try {
    ({ tokens } = parseArgs({
      args: [...argv],
      options: table,
      strict: cmd.strict,
      allowPositionals: true,
      tokens: true,
    }));
  } catch (e) {
    throw parseError(e, Object.keys(table), bad);
  }

  const out: Record<string, unknown> = {};
  const words: string[] = [];
  for (const t of tokens) {
    if (t.kind === 'positional') words.push(t.value);
    if (t.kind !== 'option') continue;
    const known = owner.get(t.name);
    if (!known) {
      // an option the command does not declare, kept (strictOptions(false) only)
      if (!(t.name in Object.prototype)) out[t.name] = t.value ?? true;
      continue;
    }
    const { o, negated } = known;
    if (o.type === 'boolean') {
      out[o.name] = !negated;
      continue;
    }
    if (t.value === undefined) throw bad(`Option --${o.name} needs a value`);
    const v = convert(o, t.value, `--${o.name}`, bad);
    out[o.name] = o.array ? [...((out[o.name] as unknown[] | undefined) ?? []), v] : v;
  }

  let i = 0;
  const missing: string[] = [];
  for (const p of cmd.positionals) {
    if (p.array) {
      const rest = words.slice(i).map((w) => convert(p, w, p.name, bad));
      i = words.length;
      if (rest.length) out[p.name] = rest;
      else if (p.required) missing.push(p.name);
    } else if (i < words.length) out[p.name] = convert(p, words[i++], p.name, bad);
    else if (p.required) missing.push(p.name);
  }
  if (missing.length)
    throw bad(`Missing required argument${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`, usage);
  if (i < words.length)
    throw bad(`Unexpected argument${words.length - i > 1 ? 's' : ''}: ${words.slice(i).join(' ')}`, usage);

  for (const o of all) if (out[o.name] === undefined && o.default !== undefined) out[o.name] = o.default;
  const absent = cmd.options.filter((o) => o.required && out[o.name] === undefined).map((o) => o.name);
  if (absent.length)
    throw bad(`Missing required argument${absent.length > 1 ? 's' : ''}: ${absent.join(', ')}`);

  for (const k of Object.keys(out)) if (k.includes('-')) out[camel(k)] = out[k];
  return out;
}

/** A value as its option or positional declares it: a number, one of the choices. */
function convert(
  o: OptionInfo,
  raw: string,
  what: string,
  bad: (m: string, h?: string) => Error,
): string | number {
  let v: string | number = raw;
  if (o.type === 'number') {
    v = Number(raw);
    if (!raw.trim() || Number.isNaN(v)) throw bad(`Invalid number for ${what}: "${raw}"`);
  }
  if (o.choices && !o.choices.includes(String(v)))
    throw bad(`Invalid value for ${what}: "${raw}"`, `choose ${o.choices.join(', ')}`);
  return v;
}

/** parseArgs' error, as one line naming the option (its own messages span lines and quote oddly). */
function parseError(e: unknown, names: string[], bad: (m: string, h?: string) => Error): unknown {
  const code = (e as { code?: string })?.code;
  if (typeof code !== 'string' || !code.startsWith('ERR_PARSE_ARGS')) return e;
  const msg = String((e as Error).message);
  // "'-t, --type <value>'": the long name is what we report
  const quoted = /'([^']*)'/.exec(msg)?.[1] ?? '';
  const name = /--[\w-]+/.exec(quoted)?.[0] ?? quoted.split(' ')[0];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    if (/^-[^-a-zA-Z]/.test(name))
      return bad(
        `Unknown option: ${name}`,
        `an argument that starts with a dash goes after --, as in -- ${name}`,
      );
    const near = name.startsWith('--') ? nearest(name.slice(2), names, 2) : undefined;
    return bad(`Unknown option: ${name}${near ? `. Did you mean --${near}?` : ''}`);
  }
  if (/does not take an argument/.test(msg)) return bad(`Option ${name} takes no value`);
  if (/ambiguous/.test(msg))
    return bad(`Option ${name} needs a value`, `a value that starts with a dash is written ${name}=-VALUE`);
  if (/argument missing/.test(msg)) return bad(`Option ${name} needs a value`);
  return bad(msg.split('\n')[0]);
}
