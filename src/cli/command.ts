import type { Args, Argv } from './args.js';
import type { Ctx } from './context.js';

/**
 * One CLI command: a builder declaring its options and positionals
 * (src/cli/args.ts), and a run function testable without a terminal. `run`
 * receives the options its builder declares, typed (inferred from the
 * option and positional definitions).
 */
export interface CommandDef<T = object> {
  /** the command string, e.g. 'show <ref>', 'rm <refs..>', 'list [category]' */
  command: string;
  describe: string;
  aliases?: string[];
  builder?: (y: Argv) => Argv<T>;
  // a command that returns nothing exits 0 (an async function without a return is Promise<void>)
  // biome-ignore lint/suspicious/noConfusingVoidType: see above
  run: (args: Args<T>, ctx: Ctx) => Promise<number | undefined | void>;
}

/** A command of any option type: what the command table and the parser hold. */
// biome-ignore lint/suspicious/noExplicitAny: the table holds commands of every option type
export type AnyCommand = CommandDef<any>;

export const defineCommand = <T = object>(c: CommandDef<T>): AnyCommand => c as AnyCommand;

/** The typed options a builder declares, for helpers that receive a command's arguments. */
// biome-ignore lint/suspicious/noExplicitAny: matches a builder of any option type
export type ArgsOf<B extends (y: Argv) => Argv<any>> = B extends (y: Argv) => Argv<infer T> ? Args<T> : never;
