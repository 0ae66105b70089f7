/**
 * The command table as data: every command's name, aliases, positionals and
 * options, read by running each command's own yargs builder against a recorder.
 * The manual page (built into man/git-mem.1 by `npm run build`) and the shell
 * completion scripts are rendered from it, so neither can drift from the CLI.
 */
import type { Argv } from 'yargs';
import type { CommandDef } from './command.js';
import { commandAliases, commandLoaders } from './commands.js';

export interface OptionInfo {
  name: string;
  aliases: string[];
  type?: string;
  describe?: string;
  choices?: string[];
  array?: boolean;
  required?: boolean;
}

export interface CommandInfo {
  name: string;
  /** the yargs command string, e.g. 'show <ref>' */
  usage: string;
  describe: string;
  aliases: string[];
  positionals: OptionInfo[];
  options: OptionInfo[];
}

/** Options every command takes (main.ts declares them on the parser). */
export const GLOBAL_OPTIONS: OptionInfo[] = [
  { name: 'json', aliases: [], type: 'boolean', describe: 'print one stable JSON document' },
  {
    name: 'color',
    aliases: [],
    type: 'boolean',
    describe: 'colour on a terminal (--no-color, or NO_COLOR=1: never)',
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

interface Declared {
  alias?: string | string[];
  type?: string;
  describe?: string;
  description?: string;
  desc?: string;
  choices?: readonly unknown[];
  array?: boolean;
  demandOption?: unknown;
  demand?: unknown;
  required?: unknown;
}

function info(name: string, o: Declared = {}): OptionInfo {
  const alias = o.alias === undefined ? [] : Array.isArray(o.alias) ? o.alias : [o.alias];
  return {
    name,
    aliases: alias.map(String),
    type: o.type ?? (o.choices ? 'string' : undefined),
    describe: o.describe ?? o.description ?? o.desc,
    choices: o.choices ? o.choices.map(String) : undefined,
    array: !!o.array,
    required: !!(o.demandOption ?? o.demand ?? o.required),
  };
}

/** What a command's builder declares: it runs against a recorder, not a parser. */
export function describeCommand(c: CommandDef): CommandInfo {
  const positionals: OptionInfo[] = [];
  const options: OptionInfo[] = [];
  const recorder: Argv = new Proxy({} as Argv, {
    get(_t, prop) {
      if (prop === 'then') return undefined;
      if (prop === 'option' || prop === 'options')
        return (name: string | Record<string, Declared>, o?: Declared) => {
          if (typeof name === 'string') options.push(info(name, o));
          else for (const [k, v] of Object.entries(name)) options.push(info(k, v));
          return recorder;
        };
      if (prop === 'positional')
        return (name: string, o?: Declared) => {
          positionals.push(info(name, o));
          return recorder;
        };
      return () => recorder;
    },
  });
  c.builder?.(recorder);
  // positionals named in the command string but not declared in the builder
  for (const m of c.command.matchAll(/[<[]([\w-]+)(?:\.\.)?[>\]]/g))
    if (!positionals.some((p) => p.name === m[1])) positionals.push(info(m[1]));
  return {
    name: c.command.split(' ')[0],
    usage: c.command,
    describe: c.describe,
    aliases:
      c.aliases ?? Object.keys(commandAliases).filter((k) => commandAliases[k] === c.command.split(' ')[0]),
    positionals,
    options,
  };
}

/** Every command, in the order `git mem --help` lists them. */
export async function commandTable(): Promise<CommandInfo[]> {
  const defs = await Promise.all(Object.values(commandLoaders).map(async (l) => (await l()).default));
  return defs.map(describeCommand);
}

// ---- the manual page (roff, man(7) macros) ----

function roff(s: string): string {
  return s
    .replace(/\\/g, '\\e')
    .replace(/-/g, '\\-')
    .replace(/^([.'])/gm, '\\&$1');
}

function optionTerm(o: OptionInfo): string {
  const names = [o.name, ...o.aliases].map((n) => (n.length === 1 ? `\\-${n}` : `\\-\\-${roff(n)}`));
  const arg = o.choices ? o.choices.join('|') : o.type && o.type !== 'boolean' ? o.type.toUpperCase() : '';
  return `\\fB${names.join('\\fR, \\fB')}\\fR${arg ? ` \\fI${roff(arg)}\\fR` : ''}${o.array ? ' ...' : ''}`;
}

function usageLine(c: CommandInfo): string {
  const rest = c.usage.split(' ').slice(1).join(' ');
  return `\\fBgit mem ${roff(c.name)}\\fR${rest ? ` \\fI${roff(rest)}\\fR` : ''}${c.options.length ? ' [\\fIoptions\\fR]' : ''}`;
}

/** The manual page git-mem(1): what `git mem --help` and `git help mem` show. */
export function manPage(table: CommandInfo[], version: string): string {
  const out = [
    `.TH GIT\\-MEM 1 "" "git\\-mem ${roff(version)}" "Git Manual"`,
    '.SH NAME',
    'git\\-mem \\- git\\-native memory for AI coding agents and the people who work with them',
    '.SH SYNOPSIS',
    '\\fBgit mem\\fR \\fIcommand\\fR [\\fIoptions\\fR]',
    '.br',
    '\\fBgit mem help\\fR \\fIcommand\\fR',
    '.SH DESCRIPTION',
    'Memories, rules and session summaries are committed to \\fBrefs/memory\\fR of the repository,',
    'anchored to code, and shared through the remotes the team already has.',
    '\\fBgit mem\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR (or \\fBgit mem help\\fR \\fIcommand\\fR) shows one command.',
    '.SH COMMANDS',
  ];
  for (const c of table) {
    out.push(
      '.TP',
      usageLine(c),
      roff(c.describe) + (c.aliases.length ? ` (alias: ${roff(c.aliases.join(', '))})` : ''),
    );
    const args = [
      ...c.positionals.filter((p) => p.choices || p.describe),
      ...c.options.filter((o) => !o.name.startsWith('no-') || o.describe),
    ];
    if (!args.length) continue;
    out.push('.RS');
    for (const o of c.positionals.filter((p) => p.choices || p.describe))
      out.push(
        '.TP',
        `\\fI${roff(o.name)}\\fR${o.choices ? `: ${roff(o.choices.join(' | '))}` : ''}`,
        roff(o.describe ?? ''),
      );
    for (const o of c.options)
      out.push('.TP', optionTerm(o), roff(o.describe ?? '') + (o.required ? ' (required)' : ''));
    out.push('.RE');
  }
  out.push('.SH OPTIONS', 'Every command takes:');
  for (const o of GLOBAL_OPTIONS) out.push('.TP', optionTerm(o), roff(o.describe ?? ''));
  out.push(
    '.SH ENVIRONMENT',
    '.TP',
    '\\fBNO_COLOR\\fR',
    'when set, no colour (as \\fB\\-\\-no\\-color\\fR). Colour is on only when stdout is a terminal.',
    '.TP',
    '\\fBGIT_PAGER\\fR, \\fBPAGER\\fR',
    'the pager for \\fBlist\\fR, \\fBhistory\\fR and \\fBsearch\\fR on a terminal, chosen as git chooses its own:',
    '\\fBGIT_PAGER\\fR, then \\fBcore.pager\\fR, then \\fBPAGER\\fR, then \\fBless\\fR; empty or \\fBcat\\fR means none.',
    '.TP',
    '\\fBGIT_MEM_OUTPUT\\fR',
    'human, json or yaml.',
    '.SH EXIT STATUS',
    '0 ok, 1 failed, 2 bad input, 3 not found, 4 conflict.',
    '.SH SHELL COMPLETION',
    '\\fBgit mem completion bash\\fR (or \\fBzsh\\fR, \\fBfish\\fR) prints a completion script, e.g.',
    '\\fBsource <(git mem completion bash)\\fR in ~/.bashrc; it completes \\fBgit mem\\fR as well as \\fBgit\\-mem\\fR.',
    '.SH SEE ALSO',
    '\\fBgit\\fR(1), \\fBgitglossary\\fR(7)',
    '',
  );
  return out.join('\n');
}
