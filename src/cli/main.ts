/**
 * `git mem` entry point. main() is a function of (argv, IO, cwd, env) and
 * returns the exit code, so tests run commands in-process.
 */
import { asGitMemError, err } from '../errors.js';
import { terminalText } from '../safety/terminal.js';
import { mark } from '../trace.js';
import { commandInfo, commandLine, GLOBAL_OPTIONS, nearest, parse } from './args.js';
import type { AnyCommand } from './command.js';
import { commandAliases, commandLoaders, loadCommand } from './commands.js';
import { type Ctx, type IO, outputFormat, processIO } from './context.js';
import { colorWanted, settleColor, startPager } from './output.js';

export { processIO };

export const VERSION = '0.1.0';

const COMMANDS = { loaders: commandLoaders, aliases: commandAliases };

export interface MainOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

/** The manual page git-mem(1), made from the command table (scripts/build.mjs writes man/man1/git-mem.1). */
export async function manual(): Promise<string> {
  const { commandTable, manPage } = await import('./help.js');
  return manPage(await commandTable(COMMANDS), VERSION);
}

/** The options every command takes, as the parser reads them (each boolean takes its --no- by itself). */
const GLOBALS = GLOBAL_OPTIONS.filter((o) => !o.name.startsWith('no-'));

/**
 * The options `command` runs with, read from the whole command line (the
 * command's name at `at`; options every command takes may come before it):
 * what main() hands command.run. No git, no process: tests parse through it.
 */
export function parseCommandLine(
  argv: readonly string[],
  at: number,
  command: AnyCommand,
): Record<string, unknown> {
  return parse([...argv.slice(0, at), ...argv.slice(at + 1)], commandInfo(command), GLOBALS);
}

export async function main(argv: string[], io: IO = processIO(), opts: MainOptions = {}): Promise<number> {
  mark('cli: main');
  const env = opts.env ?? process.env;
  // a bare `git mem help` is the full help
  if (argv.length === 1 && argv[0] === 'help') argv = ['--help'];
  const { at, name, flags } = commandLine(argv);
  const format = flags.includes('--json') ? 'json' : outputFormat(env);
  const json = format === 'json';
  const ctx: Ctx = {
    io,
    cwd: opts.cwd ?? process.cwd(),
    env,
    json,
    yaml: format === 'yaml',
    formatFixed: flags.includes('--json') || !!env.GIT_MEM_OUTPUT,
    color: colorWanted(flags, env, io),
    stores: [],
    cli: {
      table: async () => (await import('./help.js')).commandTable(COMMANDS),
      has: (n) => Object.hasOwn(commandLoaders, n) || Object.hasOwn(commandAliases, n),
      help: (n) => main([...(n === undefined ? [] : [n]), '--help'], io, opts),
    },
  };
  const showPaged = startPager(
    ctx,
    name && Object.hasOwn(commandAliases, name) ? commandAliases[name] : name,
    flags,
  );
  // --help and --version anywhere before `--`: `git mem add --title x --help` is help
  const wants = (...f: string[]) => f.some((x) => flags.includes(x));
  try {
    if (wants('--help', '-h')) {
      const help = await import('./help.js');
      if (name === undefined) {
        io.out(help.fullHelp(await help.commandTable(COMMANDS)));
        return 0;
      }
      // only the command named is loaded (its module and what it imports)
      const c = await loadCommand(name);
      if (c) {
        io.out(help.commandHelp(help.describeCommand(c, commandAliases)));
        return 0;
      }
    }
    if (wants('--version')) {
      io.out(`${VERSION}\n`);
      return 0;
    }
    if (name === undefined) throw err('E_INVALID_ARG', 'name a command', 'see git mem --help');
    const command = await loadCommand(name);
    if (!command) {
      const near = nearest(name, [...Object.keys(commandLoaders), ...Object.keys(commandAliases)]);
      throw err(
        'E_INVALID_ARG',
        `Unknown command: ${name}${near ? `. Did you mean ${near}?` : ''}`,
        'see git mem --help',
      );
    }
    mark('cli: command loaded');
    const args = parseCommandLine(argv, at, command);
    // color.mem / color.ui: read from git only by a command that colours (src/cli/output.ts)
    await settleColor(ctx, Object.hasOwn(commandAliases, name) ? commandAliases[name] : name, flags);
    mark('cli: parsed');
    const code = await command.run(args, ctx);
    return typeof code === 'number' ? code : 0;
  } catch (e) {
    await showPaged?.();
    return report(ctx, e);
  } finally {
    await showPaged?.();
    for (const s of ctx.stores) s.close();
  }
}

function report(ctx: Ctx, e: unknown): number {
  // a GitMemError, or the operating system's refusal (a read-only .git, a full disk) as E_IO
  const ge = asGitMemError(e);
  if (!ge) {
    const msg = (e as Error)?.stack ?? String(e);
    ctx.io.err(`git-mem: internal error: ${msg}\n`);
    return 70;
  }
  if (ctx.json) ctx.io.out(`${JSON.stringify(ge.toJSON())}\n`);
  ctx.io.err(`git-mem: error: ${terminalText(ge.toLine())}\n`);
  return ge.exitCode;
}
