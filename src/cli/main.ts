/**
 * `git mem` entry point. main() is a function of (argv, IO, cwd, env) and
 * returns the exit code, so tests run commands in-process.
 */
import { GitMemError, isGitMemError } from '../errors.js';
import { commands } from './commands.js';
import { type Ctx, type IO, outputFormat, processIO } from './context.js';
import { fastParse } from './fastargs.js';

export const VERSION = '0.1.0';

export interface MainOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

class UsageError extends Error {}

/** The command called `name` or aliased so. */
function findCommand(name: string | undefined) {
  return commands.find((c) => c.command.split(' ')[0] === name || c.aliases?.includes(name ?? ''));
}

/** Whether `name` is a command or an alias of one (bin/git-mem.js keeps a code cache per command). */
export function isCommand(name: string): boolean {
  return findCommand(name) !== undefined;
}

export async function main(argv: string[], io: IO = processIO(), opts: MainOptions = {}): Promise<number> {
  const env = opts.env ?? process.env;
  const format = argv.includes('--json') ? 'json' : outputFormat(env);
  const json = format === 'json';
  const ctx: Ctx = {
    io,
    cwd: opts.cwd ?? process.cwd(),
    env,
    json,
    yaml: format === 'yaml',
    stores: [],
  };
  let exitCode = 0;
  // fast path: a well-formed command skips loading yargs (see fastargs.ts)
  const name = argv[0];
  const cmd = findCommand(name);
  if (cmd && !argv.some((x) => x === '--help' || x === '-h' || x === '--version' || x === 'help')) {
    const parsed = fastParse(cmd, argv.slice(1));
    if (parsed) {
      try {
        const code = await cmd.run(parsed, ctx);
        return typeof code === 'number' ? code : 0;
      } catch (e) {
        return report(ctx, e);
      } finally {
        for (const s of ctx.stores) s.close();
      }
    }
  }
  const { default: yargs } = await import('yargs');
  const y = yargs()
    .scriptName('git mem')
    .usage(
      'git mem <command> [options]\n\nGit-native memory for AI coding agents and the people who work with them.',
    )
    .version(VERSION)
    .option('json', { type: 'boolean', describe: 'print one stable JSON document', global: true })
    .strictCommands()
    .strictOptions()
    .demandCommand(1, 'name a command (see git mem --help)')
    .recommendCommands()
    .wrap(Math.min(110, process.stdout.columns || 100))
    .epilogue('Docs: README.md. Exit codes: 0 ok, 1 failed, 2 bad input, 3 not found, 4 conflict.')
    .exitProcess(false)
    .fail((msg, e) => {
      throw e ?? new UsageError(msg);
    });
  for (const c of commands) {
    y.command(
      c.command,
      c.describe,
      (yy) => (c.builder ? c.builder(yy) : yy),
      async (args) => {
        const code = await c.run(args as Record<string, any>, ctx);
        exitCode = typeof code === 'number' ? code : 0;
      },
      [],
    );
    if (c.aliases) for (const a of c.aliases) y.alias(a, c.command.split(' ')[0]);
  }
  try {
    let helpOut: string | undefined;
    await y.parseAsync(argv, {}, (_e: unknown, _a: unknown, output: string) => {
      if (output) helpOut = output;
    });
    if (helpOut !== undefined) io.out(`${helpOut}\n`);
    return exitCode;
  } catch (e) {
    return report(ctx, e);
  } finally {
    for (const s of ctx.stores) s.close();
  }
}

function report(ctx: Ctx, e: unknown): number {
  let ge: GitMemError;
  if (isGitMemError(e)) ge = e;
  else if (e instanceof UsageError || (e as Error)?.name === 'YError') {
    ge = new GitMemError('E_INVALID_ARG', String((e as Error).message), 'see git mem --help');
  } else {
    const msg = (e as Error)?.stack ?? String(e);
    ctx.io.err(`git-mem: internal error: ${msg}\n`);
    return 70;
  }
  if (ctx.json) ctx.io.out(`${JSON.stringify(ge.toJSON())}\n`);
  ctx.io.err(`git-mem: error: ${ge.toLine()}\n`);
  return ge.exitCode;
}
