/**
 * A fast path around yargs for well-formed invocations. yargs costs ~40 ms to
 * load in a one-shot process (more than everything else `git mem show` does),
 * so the common case is parsed with yargs-parser (the engine yargs itself uses)
 * from the *same* command definitions: each command's builder is replayed
 * against a recorder that collects its options. Anything unusual — help,
 * version, an unknown option, a missing or invalid argument — returns
 * undefined and goes through full yargs, which owns every error message.
 */
import parser from 'yargs-parser';
import type { CommandDef } from './command.js';

interface OptSpec {
  type?: string;
  array?: boolean;
  alias?: string | string[];
  default?: unknown;
  demandOption?: boolean | string;
  choices?: readonly unknown[];
}

interface Recorded {
  options: Map<string, OptSpec>;
  positionals: Map<string, OptSpec>;
}

function record(c: CommandDef): Recorded {
  const rec: Recorded = { options: new Map(), positionals: new Map() };
  const proxy: unknown = new Proxy(
    {},
    {
      get(_t, prop) {
        if (prop === 'option' || prop === 'options') {
          return (name: string | Record<string, OptSpec>, o?: OptSpec) => {
            if (typeof name === 'string') rec.options.set(name, o ?? {});
            else for (const [k, v] of Object.entries(name)) rec.options.set(k, v);
            return proxy;
          };
        }
        if (prop === 'positional') {
          return (name: string, o?: OptSpec) => {
            rec.positionals.set(name, o ?? {});
            return proxy;
          };
        }
        return () => proxy;
      },
    },
  );
  c.builder?.(proxy as never);
  return rec;
}

const cache = new Map<CommandDef, Recorded>();

export function fastParse(c: CommandDef, argv: string[]): Record<string, unknown> | undefined {
  let rec = cache.get(c);
  if (!rec) {
    rec = record(c);
    cache.set(c, rec);
  }
  const opts = new Map(rec.options);
  opts.set('json', { type: 'boolean' });
  const cfg: {
    boolean: string[];
    string: string[];
    number: string[];
    array: string[];
    alias: Record<string, string[]>;
    default: Record<string, unknown>;
  } = {
    boolean: [],
    string: [],
    number: [],
    array: [],
    alias: {},
    default: {},
  };
  const known = new Set<string>(['_', '$0', '--']);
  const camel = (s: string) => s.replace(/-([a-z])/g, (_m, ch: string) => ch.toUpperCase());
  for (const [name, o] of opts) {
    known.add(name);
    known.add(camel(name));
    if (o.type === 'boolean') cfg.boolean.push(name);
    else if (o.type === 'number') cfg.number.push(name);
    else if (o.type === 'string') cfg.string.push(name);
    if (o.array) cfg.array.push(name);
    if (o.alias) {
      const al = Array.isArray(o.alias) ? o.alias : [o.alias];
      cfg.alias[name] = al;
      for (const a of al) {
        known.add(a);
        known.add(camel(a));
      }
    }
    if (o.default !== undefined) cfg.default[name] = o.default;
  }
  const parsed = parser.detailed(argv, {
    ...cfg,
    configuration: { 'unknown-options-as-args': false },
  } as parser.Options);
  if (parsed.error) return undefined;
  const a = parsed.argv as Record<string, unknown>;
  for (const k of Object.keys(a)) if (!known.has(k)) return undefined;
  for (const [name, o] of opts) {
    const v = a[name];
    if (o.demandOption && (v === undefined || v === '')) return undefined;
    if (v !== undefined && o.choices && !o.choices.includes(v)) return undefined;
    if (v !== undefined && o.type === 'string' && !o.array && typeof v !== 'string') return undefined;
    if (o.type === 'number' && v !== undefined && (typeof v !== 'number' || Number.isNaN(v)))
      return undefined;
  }
  // positionals from the command string: `show <ref>`, `list [category]`, `hook <name> [args..]`
  const words = (a._ as Array<string | number>).map(String);
  const spec = c.command.split(/\s+/).slice(1);
  const out: Record<string, unknown> = { ...a, _: [] };
  let i = 0;
  for (const p of spec) {
    const m = /^([<[])([^.\]>]+)(\.\.)?[>\]]$/.exec(p);
    if (!m) return undefined;
    const [, open, name, variadic] = m;
    if (variadic) {
      out[name] = words.slice(i);
      i = words.length;
      continue;
    }
    const v = words[i++];
    if (v === undefined) {
      if (open === '<') return undefined;
      continue;
    }
    const ps = rec.positionals.get(name);
    if (ps?.choices && !ps.choices.includes(v)) return undefined;
    out[name] = ps?.type === 'number' ? Number(v) : v;
  }
  if (i < words.length) return undefined;
  return out;
}
