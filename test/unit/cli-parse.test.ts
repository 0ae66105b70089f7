/**
 * The parse tier: every command in the registry (src/cli/commands.ts), its
 * argv read through the real parser and the command's own builder, exactly as
 * main() reads it (parseCommandLine) — no git, no process, no store. What a
 * command line means is tested here; what the command then does to a store is
 * an ops test. Errors are asserted by code and exit code, never by wording.
 */
import { describe, expect, it } from 'vitest';
import { commandInfo, type OptionInfo } from '../../src/cli/args.js';
import type { AnyCommand } from '../../src/cli/command.js';
import { commandAliases, commandLoaders, loadCommand } from '../../src/cli/commands.js';
import { parseCommandLine } from '../../src/cli/main.js';
import { asGitMemError } from '../../src/errors.js';

/** Parses `argv` (the whole command line, command name first) as main() does. */
async function parseLine(argv: string[]): Promise<Record<string, unknown>> {
  const at = argv.findIndex((a) => !a.startsWith('-'));
  const command = await loadCommand(argv[at]);
  if (!command) throw new Error(`no command ${argv[at]}`);
  return parseCommandLine(argv, at, command);
}

/** The error a command line is refused with: its code and exit code (what scripts and agents read). */
async function refusal(argv: string[]): Promise<{ code: string; exit: number }> {
  try {
    await parseLine(argv);
  } catch (e) {
    const ge = asGitMemError(e);
    if (!ge) throw e;
    return { code: ge.code, exit: ge.exitCode };
  }
  throw new Error(`parsed: ${argv.join(' ')}`);
}

const BAD_ARG = { code: 'E_INVALID_ARG', exit: 2 };

/**
 * For every command: the least it parses with, and the typed options that
 * gives. A command added to the registry without an entry here fails the
 * first test below.
 */
const MINIMAL: Record<string, { argv: string[]; args: Record<string, unknown> }> = {
  init: { argv: ['init'], args: {} },
  add: { argv: ['add', '--title', 'T', '-c', 'body'], args: { title: 'T', content: 'body' } },
  show: { argv: ['show', 'abc'], args: { ref: 'abc' } },
  list: { argv: ['list'], args: {} },
  update: { argv: ['update', 'abc', '--title', 'New'], args: { ref: 'abc', title: 'New' } },
  rm: { argv: ['rm', 'abc', 'def'], args: { refs: ['abc', 'def'] } },
  verify: { argv: ['verify', 'abc'], args: { refs: ['abc'] } },
  mv: { argv: ['mv', 'abc', 'a/b'], args: { ref: 'abc', alias: 'a/b' } },
  supersede: { argv: ['supersede', 'old', 'new'], args: { old: 'old', new: 'new' } },
  history: { argv: ['history'], args: {} },
  prune: { argv: ['prune'], args: {} },
  import: { argv: ['import', 'x.jsonl'], args: { file: 'x.jsonl' } },
  export: { argv: ['export'], args: { jsonl: true } },
  stats: { argv: ['stats'], args: {} },
  doctor: { argv: ['doctor'], args: {} },
  config: { argv: ['config', 'get', 'context-budget'], args: { action: 'get', key: 'context-budget' } },
  rules: { argv: ['rules'], args: {} },
  check: { argv: ['check'], args: {} },
  stale: { argv: ['stale'], args: {} },
  blame: { argv: ['blame', 'src/a.ts:3'], args: { target: 'src/a.ts:3' } },
  reanchor: { argv: ['reanchor', 'abc'], args: { id: 'abc' } },
  ci: { argv: ['ci', '--base', 'main'], args: { base: 'main' } },
  hooks: { argv: ['hooks', 'install'], args: { action: 'install' } },
  search: { argv: ['search', 'two', 'words'], args: { query: ['two', 'words'] } },
  context: { argv: ['context'], args: {} },
  reindex: { argv: ['reindex'], args: {} },
  daemon: { argv: ['daemon', 'status'], args: { action: 'status' } },
  models: { argv: ['models', 'list'], args: { action: 'list' } },
  sync: { argv: ['sync'], args: {} },
  pull: { argv: ['pull', 'origin'], args: { remote: 'origin' } },
  push: { argv: ['push'], args: {} },
  remote: { argv: ['remote', 'status'], args: { action: 'status' } },
  store: { argv: ['store', 'list'], args: { action: 'list' } },
  conflicts: { argv: ['conflicts'], args: {} },
  resolve: { argv: ['resolve', 'abc', '--take', 'ours'], args: { ref: 'abc', take: 'ours' } },
  'merge-driver': {
    argv: ['merge-driver', 'O', 'A', 'B'],
    args: { base: 'O', current: 'A', other: 'B' },
  },
  ui: { argv: ['ui'], args: {} },
  mcp: { argv: ['mcp'], args: {} },
  lsp: { argv: ['lsp'], args: {} },
  sessions: { argv: ['sessions'], args: {} },
  checkpoint: { argv: ['checkpoint'], args: {} },
  review: { argv: ['review'], args: {} },
  consolidate: { argv: ['consolidate'], args: {} },
  strategy: { argv: ['strategy', 'list'], args: { action: 'list' } },
  hook: { argv: ['hook', 'post-commit'], args: { name: 'post-commit' } },
  help: { argv: ['help', 'add'], args: { command: 'add' } },
  completion: { argv: ['completion', 'bash'], args: { shell: 'bash' } },
};

const NAMES = Object.keys(commandLoaders);
const infoOf = async (name: string) => commandInfo((await loadCommand(name)) as AnyCommand);

describe('every registry command parses its minimal command line', () => {
  it('has an entry in the table (a new command needs one)', () => {
    expect(NAMES.filter((n) => !(n in MINIMAL))).toEqual([]);
    expect(Object.keys(MINIMAL).filter((n) => !NAMES.includes(n))).toEqual([]);
  });

  it.each(NAMES)('%s', async (name) => {
    const m = MINIMAL[name];
    expect(await parseLine(m.argv)).toMatchObject(m.args);
  });

  it('aliases parse as their command', async () => {
    for (const [alias, name] of Object.entries(commandAliases)) {
      const m = MINIMAL[name];
      expect(await parseLine([alias, ...m.argv.slice(1)]), alias).toMatchObject(m.args);
    }
  });
});

describe('typed options', () => {
  it('add: repeated arrays keep order, numbers are numbers, dashes are camelCase too, booleans negate', async () => {
    const a = await parseLine([
      'add',
      '--title',
      'T',
      '--content=b',
      '--tags',
      'x',
      '--tags',
      'y',
      '--scope',
      'src/**',
      '--confidence',
      '0.5',
      '--allow-secret',
      '--no-global',
    ]);
    expect(a).toMatchObject({
      title: 'T',
      content: 'b',
      tags: ['x', 'y'],
      scope: ['src/**'],
      confidence: 0.5,
      'allow-secret': true,
      allowSecret: true,
      global: false,
    });
  });

  it('global options before the command name; --json everywhere; a repeated scalar keeps its last value', async () => {
    expect(await parseLine(['--json', 'list', '--type', 'fact', '--type', 'rule'])).toMatchObject({
      json: true,
      type: ['fact', 'rule'],
    });
    expect(await parseLine(['history', '-n', '3', '-n', '5', 'ref'])).toMatchObject({ limit: 5, ref: 'ref' });
  });

  it('-- ends the options: a body that starts with a dash is a positional', async () => {
    expect(await parseLine(['search', '--', '--not-a-flag'])).toMatchObject({ query: ['--not-a-flag'] });
  });

  it('update: only what is passed is set (the operation changes only that)', async () => {
    const a = await parseLine(['update', 'abc', '--add-tag', 'n', '--clear-expiry']);
    expect(a).toMatchObject({ ref: 'abc', addTag: ['n'], clearExpiry: true });
    for (const k of ['title', 'content', 'type', 'status', 'expires', 'tags'])
      expect(a[k], k).toBeUndefined();
  });

  it('hook keeps options it does not know (a hook must never fail on what git passes it)', async () => {
    // an unknown option is a flag (it cannot know it takes a value): the word after it is an argument
    expect(await parseLine(['hook', 'claude-code', '--event', 'x'])).toMatchObject({
      name: 'claude-code',
      event: true,
      args: ['x'],
    });
  });
});

describe('refusals: E_INVALID_ARG and exit 2, for every command', () => {
  it('an unknown flag', async () => {
    for (const name of NAMES) {
      const info = await infoOf(name);
      if (!info.strict) continue; // hook keeps unknown options
      expect(await refusal([...MINIMAL[name].argv, '--no-such-flag']), name).toEqual(BAD_ARG);
    }
  });

  it('a missing required positional or option', async () => {
    let seen = 0;
    for (const name of NAMES) {
      const info = await infoOf(name);
      const required = [...info.positionals, ...info.options].filter((o) => o.required);
      if (!required.length) continue;
      seen++;
      expect(await refusal([name]), name).toEqual(BAD_ARG);
    }
    expect(seen).toBeGreaterThan(10);
  });

  it('a value outside the choices, for every positional and option with choices', async () => {
    let seen = 0;
    for (const name of NAMES) {
      const info = await infoOf(name);
      const first = info.positionals[0];
      if (first?.choices) {
        seen++;
        expect(await refusal([name, 'no-such-choice']), name).toEqual(BAD_ARG);
      }
      for (const o of info.options.filter((x) => x.choices)) {
        seen++;
        expect(
          await refusal([...MINIMAL[name].argv, `--${o.name}`, 'no-such-choice']),
          `${name} --${o.name}`,
        ).toEqual(BAD_ARG);
      }
    }
    expect(seen).toBeGreaterThan(10);
  });

  it('a number that is not one, for every number option', async () => {
    let seen = 0;
    for (const name of NAMES) {
      const nums = (await infoOf(name)).options.filter((o: OptionInfo) => o.type === 'number');
      for (const o of nums) {
        seen++;
        expect(await refusal([...MINIMAL[name].argv, `--${o.name}`, 'lots']), `${name} --${o.name}`).toEqual(
          BAD_ARG,
        );
      }
    }
    expect(seen).toBeGreaterThan(5);
  });

  it('an extra positional, an option with no value, a value given to a boolean', async () => {
    expect(await refusal(['show', 'a', 'b'])).toEqual(BAD_ARG);
    expect(await refusal(['add', '--title'])).toEqual(BAD_ARG);
    expect(await refusal(['list', '--include-expired=yes'])).toEqual(BAD_ARG);
    expect(await refusal(['add', '--title', 'T', '-x'])).toEqual(BAD_ARG);
  });
});
