/**
 * The command table as data: every command's name, aliases, positionals and
 * options, recorded from each command's own builder (src/cli/args.ts). The
 * help text, the manual page (built into man/git-mem.1 by `npm run build`) and
 * the shell completion scripts are rendered from it, so none can drift from
 * what the parser accepts.
 */
import { type CommandInfo, commandInfo, GLOBAL_OPTIONS, type OptionInfo } from './args.js';
import type { CommandDef } from './command.js';

export { type CommandInfo, GLOBAL_OPTIONS, type OptionInfo };

/** The commands by name, loaded on demand, and their aliases (src/cli/commands.ts). */
export interface CommandSet {
  loaders: Record<string, () => Promise<{ default: CommandDef }>>;
  aliases: Record<string, string>;
}

/** What a command declares (its builder run against a recorder). */
export function describeCommand(c: CommandDef, commandAliases: Record<string, string>): CommandInfo {
  const name = c.command.split(' ')[0];
  return commandInfo(
    c,
    Object.keys(commandAliases).filter((k) => commandAliases[k] === name),
  );
}

/** Every command of the table of loaders (src/cli/commands.ts), in the order `git mem --help` lists them. */
export async function commandTable(set: CommandSet): Promise<CommandInfo[]> {
  const defs = await Promise.all(Object.values(set.loaders).map(async (l) => (await l()).default));
  return defs.map((d) => describeCommand(d, set.aliases));
}

// ---- help on the command line (-h, --help, git mem help <command>) ----

const width = () => Math.min(110, process.stdout.columns || 100);

/** `text` in lines of at most `w` characters, each after `indent` spaces but the first. */
function wrap(text: string, w: number, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > w - indent) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  lines.push(line);
  return lines.join(`\n${' '.repeat(indent)}`);
}

/** Two columns: each term, then its text wrapped beside it (under it when the term is too wide). */
function columns(rows: Array<[string, string]>, max = 38): string[] {
  const w = width();
  const col = Math.min(max, Math.max(0, ...rows.map(([t]) => t.length))) + 4;
  return rows.map(([term, text]) => {
    const head = `  ${term}`;
    if (!text) return head;
    if (head.length + 2 > col) return `${head}\n${' '.repeat(col)}${wrap(text, w, col)}`;
    return head.padEnd(col) + wrap(text, w, col);
  });
}

/** The text of an option or argument, then what it takes: `title [string, required]`. */
function notes(o: OptionInfo): string {
  const n: string[] = [];
  if (o.choices) n.push(`one of ${o.choices.join('|')}`);
  else if (o.type && o.type !== 'boolean') n.push(o.type);
  if (o.array) n.push('repeatable');
  if (o.default !== undefined) n.push(`default: ${o.default}`);
  if (o.required) n.push('required');
  return [o.describe ?? '', n.length ? `[${n.join(', ')}]` : ''].filter(Boolean).join(' ');
}

function optionRows(opts: OptionInfo[]): Array<[string, string]> {
  return opts
    .filter((o) => !o.hidden && !o.name.startsWith('no-'))
    .map((o) => {
      const short = o.aliases.find((a) => a.length === 1);
      const long = [o.name, ...o.aliases.filter((a) => a.length > 1)].map((n) => `--${n}`).join(', ');
      return [`${short ? `-${short}, ` : '    '}${long}`, notes(o)];
    });
}

const TAGLINE = 'Git-native memory for AI coding agents and the people who work with them.';
const EPILOGUE =
  'Docs: README.md. Exit codes: 0 ok, 1 failed, 2 bad input, 3 not found, 4 conflict, 5 forbidden.';

/** `git mem --help`: every command, then the options every command takes. */
export function fullHelp(table: CommandInfo[]): string {
  return [
    'git mem <command> [options]',
    '',
    TAGLINE,
    '',
    'Commands:',
    ...columns(
      table.map((c) => [
        `git mem ${c.usage}`,
        c.describe + (c.aliases.length ? ` (alias: ${c.aliases.join(', ')})` : ''),
      ]),
    ),
    '',
    'Options:',
    ...columns(optionRows(GLOBAL_OPTIONS)),
    '',
    'git mem <command> --help (or git mem help <command>) shows one command.',
    EPILOGUE,
    '',
  ].join('\n');
}

/** `git mem <command> --help`: its usage, what it does, its arguments and options. */
export function commandHelp(c: CommandInfo): string {
  const positionals = c.positionals.filter((p) => !p.hidden);
  const options = c.options.filter((o) => !o.hidden);
  const out = [`git mem ${c.usage}${options.length ? ' [options]' : ''}`, '', wrap(c.describe, width(), 0)];
  if (c.aliases.length) out.push('', `Aliases: ${c.aliases.map((a) => `git mem ${a}`).join(', ')}`);
  if (positionals.length)
    out.push(
      '',
      'Arguments:',
      ...columns(positionals.map((p) => [p.array ? `${p.name}..` : p.name, notes({ ...p, array: false })])),
    );
  if (options.length) out.push('', 'Options:', ...columns(optionRows(options)));
  out.push('', 'Every command also takes:', ...columns(optionRows(GLOBAL_OPTIONS)), '');
  return out.join('\n');
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
      ...c.options.filter((o) => !o.hidden && (!o.name.startsWith('no-') || o.describe)),
    ];
    if (!args.length) continue;
    out.push('.RS');
    for (const o of c.positionals.filter((p) => p.choices || p.describe))
      out.push(
        '.TP',
        `\\fI${roff(o.name)}\\fR${o.choices ? `: ${roff(o.choices.join(' | '))}` : ''}`,
        roff(o.describe ?? ''),
      );
    for (const o of c.options.filter((o) => !o.hidden))
      out.push('.TP', optionTerm(o), roff(o.describe ?? '') + (o.required ? ' (required)' : ''));
    out.push('.RE');
  }
  out.push('.SH OPTIONS', 'Every command takes:');
  for (const o of GLOBAL_OPTIONS) out.push('.TP', optionTerm(o), roff(o.describe ?? ''));
  out.push(
    '.SH ENVIRONMENT',
    '.TP',
    '\\fBNO_COLOR\\fR',
    'when set, no colour (as \\fB\\-\\-no\\-color\\fR), unless \\fBcolor.mem\\fR or \\fBcolor.ui\\fR says \\fBalways\\fR.',
    'Colour follows git: \\fB\\-\\-color\\fR/\\fB\\-\\-no\\-color\\fR, then \\fBcolor.mem\\fR, then \\fBcolor.ui\\fR',
    '(\\fBalways\\fR, \\fBnever\\fR, \\fBauto\\fR; \\fBgit \\-c color.ui=never mem list\\fR); auto is on only when stdout is a terminal.',
    '.TP',
    '\\fBGIT_PAGER\\fR, \\fBPAGER\\fR',
    'the pager for \\fBlist\\fR, \\fBhistory\\fR and \\fBsearch\\fR on a terminal, chosen as git chooses its own:',
    '\\fBGIT_PAGER\\fR, then \\fBcore.pager\\fR, then \\fBPAGER\\fR, then \\fBless\\fR; empty or \\fBcat\\fR means none.',
    '.TP',
    '\\fBGIT_MEM_OUTPUT\\fR',
    'human, json or yaml.',
    '.SH EXIT STATUS',
    '0 ok, 1 failed, 2 bad input, 3 not found, 4 conflict, 5 forbidden (a token may not write, e.g. on a pull request from a fork).',
    '.SH SHELL COMPLETION',
    '\\fBgit mem completion bash\\fR (or \\fBzsh\\fR, \\fBfish\\fR) prints a completion script, e.g.',
    '\\fBsource <(git mem completion bash)\\fR in ~/.bashrc; it completes \\fBgit mem\\fR as well as \\fBgit\\-mem\\fR.',
    '.SH SEE ALSO',
    '\\fBgit\\fR(1), \\fBgitglossary\\fR(7)',
    '',
  );
  return out.join('\n');
}
