/**
 * `git mem completion bash|zsh|fish`: a completion script for the shell, made
 * from the command table (src/cli/help.ts), so it names exactly the commands and
 * options this build has. The bash script also defines `_git_mem`, which git's
 * own bash completion calls for `git mem <TAB>`; the zsh one defines `_git-mem`,
 * which zsh's git completion calls likewise.
 */
import { defineCommand } from './command.js';
import { type CommandInfo, GLOBAL_OPTIONS } from './help.js';

/** What may follow a command: the choices of its first positional (a subcommand), and its options. */
function choices(c: CommandInfo): string[] {
  return c.positionals[0]?.choices ?? [];
}
function options(c: CommandInfo): string[] {
  return [...c.options.filter((o) => !o.hidden), ...GLOBAL_OPTIONS].flatMap((o) =>
    [o.name, ...o.aliases].map((n) => (n.length === 1 ? `-${n}` : `--${n}`)),
  );
}
const words = (c: CommandInfo) => [...choices(c), ...options(c)];

const names = (t: CommandInfo[]) => t.flatMap((c) => [c.name, ...c.aliases]);
const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function bashScript(t: CommandInfo[]): string {
  const cases = t
    .map(
      (c) =>
        `    ${[c.name, ...c.aliases].join('|')}) s=${sq(choices(c).join(' '))} o=${sq(options(c).join(' '))} ;;`,
    )
    .join('\n');
  return `# bash completion for git-mem: add to ~/.bashrc
#   source <(git mem completion bash)
# Completes both \`git-mem <TAB>\` and \`git mem <TAB>\` (git's completion calls _git_mem).
__git_mem_complete() {
  # $1: the index in COMP_WORDS of the word after "mem" / "git-mem"
  # options after a "-", a subcommand (config set, hooks install, …) right after the command
  local first=$1 cur="\${COMP_WORDS[COMP_CWORD]}" w s o
  if [ "$COMP_CWORD" -le "$first" ]; then
    w=${sq(names(t).join(' '))}
  else
    case "\${COMP_WORDS[first]}" in
${cases}
    *) s='' o='' ;;
    esac
    if [[ $cur == -* ]]; then
      w=$o
    elif [ "$COMP_CWORD" -eq $((first + 1)) ]; then
      w=$s
    else
      COMPREPLY=()
      return 0
    fi
  fi
  COMPREPLY=($(compgen -W "$w" -- "$cur"))
}
_git_mem() {
  local i
  for ((i = 1; i < COMP_CWORD; i++)); do
    if [ "\${COMP_WORDS[i]}" = mem ]; then
      __git_mem_complete $((i + 1))
      return 0
    fi
  done
  __git_mem_complete "$COMP_CWORD"
}
_git_mem_cmd() { __git_mem_complete 1; }
complete -o default -F _git_mem_cmd git-mem
`;
}

export function zshScript(t: CommandInfo[]): string {
  const esc = (s: string) => s.replace(/'/g, `'\\''`).replace(/:/g, '\\:');
  const cmds = t
    .flatMap((c) => [c.name, ...c.aliases].map((n) => `    '${esc(n)}:${esc(c.describe)}'`))
    .join('\n');
  const cases = t
    .map((c) => `    ${[c.name, ...c.aliases].join('|')}) compadd -- ${words(c).map(sq).join(' ')} ;;`)
    .join('\n');
  return `#compdef git-mem
# zsh completion for git-mem: put it on $fpath as _git-mem, or add to ~/.zshrc
#   source <(git mem completion zsh)
# zsh's git completion calls _git-mem for \`git mem <TAB>\`.
_git-mem() {
  local -a cmds
  cmds=(
${cmds}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands 'git mem command' cmds
    return
  fi
  case $words[2] in
${cases}
  esac
}
if (( $+functions[compdef] )); then compdef _git-mem git-mem; fi
`;
}

export function fishScript(t: CommandInfo[]): string {
  const all = names(t).join(' ');
  const lines = [
    '# fish completion for git-mem: git mem completion fish > ~/.config/fish/completions/git-mem.fish',
    "# (and the same lines for `git mem`, through fish's git completion)",
  ];
  for (const [cmd, seen] of [
    ['git-mem', (n: string) => `__fish_seen_subcommand_from ${n}`],
    ['git', (n: string) => `__fish_git_using_command mem; and __fish_seen_subcommand_from ${n}`],
  ] as const) {
    const top =
      cmd === 'git-mem'
        ? `not __fish_seen_subcommand_from ${all}`
        : `__fish_git_using_command mem; and not __fish_seen_subcommand_from ${all}`;
    for (const c of t)
      for (const n of [c.name, ...c.aliases])
        lines.push(`complete -c ${cmd} -f -n ${sq(top)} -a ${sq(n)} -d ${sq(c.describe)}`);
    for (const c of t) {
      const cond = sq(seen([c.name, ...c.aliases].join(' ')));
      for (const ch of c.positionals[0]?.choices ?? [])
        lines.push(`complete -c ${cmd} -f -n ${cond} -a ${sq(ch)}`);
      for (const o of [...c.options, ...GLOBAL_OPTIONS]) {
        const flags = [o.name, ...o.aliases].map((n) => (n.length === 1 ? `-s ${n}` : `-l ${n}`)).join(' ');
        lines.push(`complete -c ${cmd} -n ${cond} ${flags}${o.describe ? ` -d ${sq(o.describe)}` : ''}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

export default defineCommand({
  command: 'completion <shell>',
  describe: 'print a shell completion script (bash, zsh or fish)',
  builder: (y) => y.positional('shell', { choices: ['bash', 'zsh', 'fish'] as const, describe: 'the shell' }),
  async run(a, ctx) {
    if (!ctx.cli)
      throw new Error('completion runs only from the command line (main.ts provides the command table)');
    const t = await ctx.cli.table();
    const script = a.shell === 'zsh' ? zshScript(t) : a.shell === 'fish' ? fishScript(t) : bashScript(t);
    ctx.io.out(script);
  },
});
