import type { Argv } from 'yargs';
import type { Ctx } from './context.js';

/** One CLI command: a yargs builder and a run function testable without a terminal. */
export interface CommandDef {
  /** yargs command string, e.g. 'show <ref>' */
  command: string;
  describe: string;
  aliases?: string[];
  builder?: (y: Argv) => Argv;
  run: (args: Record<string, any>, ctx: Ctx) => Promise<number | undefined | void>;
}

export const defineCommand = (c: CommandDef): CommandDef => c;
