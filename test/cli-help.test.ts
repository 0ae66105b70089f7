/**
 * Help as users reach it: the manual page the build makes from the command table
 * (`git mem --help` and `git help mem` hand over to `man git-mem`), `git mem help
 * <command>`, `-h`, and the shell completion scripts, run in a real bash.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commandAliases, commandLoaders } from '../src/cli/commands.js';
import { commandTable, manPage } from '../src/cli/help.js';
import { VERSION } from '../src/cli/main.js';
import { BIN, errorOf, isolatedEnv, ROOT, runBin, tmpDir } from './helpers.js';

const MAN = join(ROOT, 'man', 'man1', 'git-mem.1');
const has = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;

/** A PATH whose first folder holds `git-mem` (the built launcher), as a global install makes. */
function pathWithGitMem(): string {
  const bin = tmpDir('gm-bin-');
  symlinkSync(BIN, join(bin, 'git-mem'));
  return `${bin}${delimiter}${process.env.PATH}`;
}

describe('the manual page', () => {
  it('is built from the command table and shipped by package.json', async () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    expect(pkg.man).toEqual(['./man/man1/git-mem.1']);
    expect(pkg.files).toContain('man');
    const built = readFileSync(MAN, 'utf8');
    // the build's page is exactly what the current command table renders (no drift)
    expect(built).toBe(
      manPage(await commandTable({ loaders: commandLoaders, aliases: commandAliases }), VERSION),
    );
    expect(built).toMatch(/^\.TH GIT\\-MEM 1 /);
    for (const c of await commandTable({ loaders: commandLoaders, aliases: commandAliases }))
      expect(built).toContain(`\\fBgit mem ${c.name.replace(/-/g, '\\-')}\\fR`);
  });

  it.runIf(has('man'))('is what `man git-mem`, `git help mem` and `git mem --help` show', () => {
    const env = {
      ...isolatedEnv(),
      MANPATH: join(ROOT, 'man'),
      MANPAGER: 'cat',
      PAGER: 'cat',
      MANWIDTH: '100',
    };
    const man = spawnSync('man', ['-P', 'cat', 'git-mem'], { env, encoding: 'utf8' });
    expect(man.status, man.stderr).toBe(0);
    expect(man.stdout).toMatch(/GIT-MEM\(1\)/);
    expect(man.stdout).toMatch(/git mem add \[options\]/);
    expect(man.stdout).toMatch(/--title STRING\s+one-line title \(at most 300 characters\); required/);
    expect(man.stdout).toMatch(/git mem completion <shell>/);
    const cwd = tmpDir('gm-help-');
    for (const args of [
      ['help', 'mem'],
      ['mem', '--help'],
    ]) {
      const g = spawnSync('git', args, { cwd, env: { ...env, PATH: pathWithGitMem() }, encoding: 'utf8' });
      expect(g.status, `git ${args.join(' ')}: ${g.stderr}`).toBe(0);
      expect(g.stdout).toMatch(/GIT-MEM\(1\)[\s\S]*git mem show <ref>/);
    }
  });
});

describe('help on the command line', () => {
  const env = isolatedEnv();
  const cwd = tmpDir('gm-help-');

  it('git mem help <command> and <command> -h print that command and its options', () => {
    for (const args of [
      ['help', 'add'],
      ['add', '-h'],
      ['add', '--help'],
    ]) {
      const r = runBin(args, { cwd, env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^git mem add/);
      expect(r.stdout).toMatch(/--title\s+one-line title/);
      expect(r.stdout).not.toMatch(/Did you mean/);
    }
    const alias = runBin(['help', 'ls'], { cwd, env });
    expect(alias.stdout).toMatch(/^git mem list/);
    // the choices read apart from the other notes: `required` is not one of them
    expect(runBin(['config', '--help'], { cwd, env }).stdout).toMatch(
      /\n {2}action +\[one of get\|set\|unset\|list, required\]\n/,
    );
  });

  it('git mem help with no command, and -h, list the commands', () => {
    for (const args of [['help'], ['-h']]) {
      const r = runBin(args, { cwd, env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/git mem completion <shell>/);
    }
  });

  it('an unknown command is one line; no command says where help is, once', () => {
    const r = runBin(['help', 'nosuch', '--json'], { cwd, env });
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    // the command it does not know, and where the list of commands is (the hint)
    expect(errorOf(r)).toMatchObject({ code: 'E_INVALID_ARG', hint: 'git mem help lists the commands' });
    expect(errorOf(r).message).toContain('"nosuch"');
    // a bare `git mem`: one line saying where help is
    const none = runBin([], { cwd, env });
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/^git-mem: error: [^\n]* \(see git mem --help\)\n$/);
    const noneJson = runBin(['--json'], { cwd, env });
    expect(noneJson.code).toBe(2);
    expect(errorOf(noneJson)).toMatchObject({ code: 'E_INVALID_ARG', hint: 'see git mem --help' });
  });
});

describe('shell completion', () => {
  const env = isolatedEnv();
  const cwd = tmpDir('gm-compl-');
  const script = (shell: string) => {
    const r = runBin(['completion', shell], { cwd, env });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };

  /** Sources the script in a real bash, sets the words as bash would for TAB, and prints COMPREPLY. */
  function complete(words: string[], fn: string, prelude = ''): string[] {
    const file = join(tmpDir('gm-compl-'), 'git-mem.bash');
    writeFileSync(file, script('bash'));
    const quoted = words.map((w) => `'${w}'`).join(' ');
    const line = words.join(' ');
    const prog = `${prelude}
source '${file}'
COMP_WORDS=(${quoted}); COMP_CWORD=${words.length - 1}; COMP_LINE='${line}'; COMP_POINT=${line.length}
${fn}
printf '%s\\n' "\${COMPREPLY[@]}"`;
    const r = spawnSync('bash', ['--norc', '--noprofile', '-c', prog], { env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    return r.stdout.split('\n').filter(Boolean);
  }

  it.runIf(has('bash'))('bash: git mem ad → add, options of the command, a subcommand after it', () => {
    expect(complete(['git', 'mem', 'ad'], '_git_mem')).toEqual(['add']);
    expect(complete(['git-mem', 'ad'], '_git_mem_cmd')).toEqual(['add']);
    expect(complete(['git-mem', 'add', '--ti'], '_git_mem_cmd')).toEqual(['--title']);
    expect(complete(['git', 'mem', 'config', ''], '_git_mem')).toEqual(['get', 'set', 'unset', 'list']);
    expect(complete(['git', 'mem', 'comp'], '_git_mem')).toEqual(['completion']);
  });

  const gitCompletion = '/usr/share/bash-completion/completions/git';
  it.runIf(has('bash') && existsSync(gitCompletion))(
    "bash: git's own completion hands `git mem` to _git_mem",
    () => {
      const prelude = `source '${gitCompletion}'`;
      expect(complete(['git', 'mem', 'ad'], '__git_wrap__git_main', prelude)).toEqual(['add']);
      expect(complete(['git', 'mem', 'show', '--gl'], '__git_wrap__git_main', prelude)).toEqual(['--global']);
    },
  );

  it('zsh and fish scripts name every command and its options', async () => {
    const zsh = script('zsh');
    const fish = script('fish');
    expect(zsh).toMatch(/^#compdef git-mem\n/);
    expect(zsh).toContain("'add:add a memory");
    expect(fish).toContain("complete -c git-mem -n '__fish_seen_subcommand_from add' -l title");
    expect(fish).toContain(
      "complete -c git -f -n '__fish_git_using_command mem; and not __fish_seen_subcommand_from",
    );
    for (const c of await commandTable({ loaders: commandLoaders, aliases: commandAliases })) {
      expect(zsh).toContain(`'${c.name}:`);
      expect(fish).toContain(`-a '${c.name}'`);
    }
    const bad = runBin(['completion', 'tcsh'], { cwd, env });
    expect(bad.code).toBe(2);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
  });
});
