/**
 * `git mem` entry point. main() is a function of (argv, IO, cwd, env) and
 * returns the exit code, so tests run commands in-process.
 */
import { GitMemError, isGitMemError } from '../errors.js';
import type { AnyCommand } from './command.js';
import { commandAliases, loadAllCommands, loadCommand } from './commands.js';
import { type Ctx, type IO, outputFormat, processIO } from './context.js';
import { colorWanted, startPager } from './output.js';

export { processIO };

export const VERSION = '0.1.0';

export interface MainOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

class UsageError extends Error {}

/** The manual page git-mem(1), made from the command table (scripts/build.mjs writes man/man1/git-mem.1). */
export async function manual(): Promise<string> {
  const { commandTable, manPage } = await import('./help.js');
  return manPage(await commandTable(), VERSION);
}

export async function main(argv: string[], io: IO = processIO(), opts: MainOptions = {}): Promise<number> {
  const env = opts.env ?? process.env;
  // a bare `git mem help` is the full help (yargs would answer it with the help command's own)
  if (argv.length === 1 && argv[0] === 'help') argv = ['--help'];
  const format = argv.includes('--json') ? 'json' : outputFormat(env);
  const json = format === 'json';
  const ctx: Ctx = {
    io,
    cwd: opts.cwd ?? process.cwd(),
    env,
    json,
    yaml: format === 'yaml',
    color: colorWanted(argv, env, io),
    stores: [],
  };
  let exitCode = 0;
  const name = argv.find((a) => !a.startsWith('-'));
  const showPaged = startPager(
    ctx,
    name && Object.hasOwn(commandAliases, name) ? commandAliases[name] : name,
    argv,
  );
  try {
    // only the command named is loaded (its module and what it imports); no command, or
    // one that does not exist, loads them all for the full help and the suggestions
    const named = await loadCommand(name);
    const commands: AnyCommand[] = named ? [named] : await loadAllCommands();
    const { default: yargs } = await import('yargs');
    const y = yargs()
      .scriptName('git mem')
      .usage(
        'git mem <command> [options]\n\nGit-native memory for AI coding agents and the people who work with them.',
      )
      .version(VERSION)
      .help()
      .alias('h', 'help')
      .option('json', { type: 'boolean', describe: 'print one stable JSON document', global: true })
      .option('color', {
        type: 'boolean',
        describe: 'colour on a terminal (--no-color, or NO_COLOR=1: never)',
        global: true,
      })
      .option('pager', {
        type: 'boolean',
        describe: 'page long listings on a terminal (--no-pager: never)',
        global: true,
      })
      .strictCommands()
      .strictOptions()
      .demandCommand(1, 'name a command')
      .recommendCommands()
      .wrap(Math.min(110, process.stdout.columns || 100))
      .epilogue('Docs: README.md. Exit codes: 0 ok, 1 failed, 2 bad input, 3 not found, 4 conflict.')
      .exitProcess(false)
      .fail((msg, e) => {
        throw e ?? new UsageError(msg);
      });
    for (const c of commands) {
      y.command(
        [c.command, ...(c.aliases ?? [])],
        c.describe,
        (yy) => (c.builder ? c.builder(yy) : yy),
        async (args) => {
          const code = await c.run(args, ctx);
          exitCode = typeof code === 'number' ? code : 0;
        },
        [],
      );
    }
    let helpOut: string | undefined;
    await y.parseAsync(argv, {}, (_e: unknown, _a: unknown, output: string) => {
      if (output) helpOut = output;
    });
    if (helpOut !== undefined) io.out(`${helpOut}\n`);
    return exitCode;
  } catch (e) {
    await showPaged?.();
    return report(ctx, e);
  } finally {
    await showPaged?.();
    for (const s of ctx.stores) s.close();
  }
}

function report(ctx: Ctx, e: unknown): number {
  let ge: GitMemError;
  if (isGitMemError(e)) ge = e;
  else if (e instanceof UsageError || (e as Error)?.name === 'YError') {
    // one line: yargs breaks some messages ("Invalid values:\n  Argument: …")
    const msg = String((e as Error).message).replace(/:?\s*\n\s*/g, ': ');
    ge = new GitMemError('E_INVALID_ARG', msg, 'see git mem --help');
  } else {
    const msg = (e as Error)?.stack ?? String(e);
    ctx.io.err(`git-mem: internal error: ${msg}\n`);
    return 70;
  }
  if (ctx.json) ctx.io.out(`${JSON.stringify(ge.toJSON())}\n`);
  ctx.io.err(`git-mem: error: ${ge.toLine()}\n`);
  return ge.exitCode;
}
