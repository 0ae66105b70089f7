/**
 * The command-line parser (src/cli/args.ts) on its own: what each declaration
 * accepts and refuses, one line naming the option or argument at fault. No git,
 * no store: the commands' own builders, and small ones made here.
 */
import { describe, expect, it } from 'vitest';
import { type Argv, commandInfo, GLOBAL_OPTIONS, nearest, parse } from '../src/cli/args.js';
import { commandLoaders } from '../src/cli/commands.js';
import { isGitMemError } from '../src/errors.js';

const globals = GLOBAL_OPTIONS.filter((o) => !o.name.startsWith('no-'));
// biome-ignore lint/suspicious/noExplicitAny: builders of any option type
const cmd = (command: string, builder?: (y: Argv) => Argv<any>, describe = 'x') =>
  commandInfo({ command, describe, builder });
const run = (c: ReturnType<typeof cmd>, argv: string[]) => parse(argv, c, globals);

/** The one-line message parse() refuses `argv` with. */
function refusal(c: ReturnType<typeof cmd>, argv: string[]): string {
  try {
    run(c, argv);
  } catch (e) {
    if (!isGitMemError(e)) throw e;
    expect(e.code).toBe('E_INVALID_ARG');
    expect(e.toLine()).not.toContain('\n');
    return e.toLine();
  }
  throw new Error(`accepted: ${argv.join(' ')}`);
}

const add = cmd('add', (y) =>
  y
    .option('type', { alias: 't', type: 'string', default: 'decision' })
    .option('title', { type: 'string', demandOption: true })
    .option('scope', { type: 'string', array: true })
    .option('confidence', { type: 'number' })
    .option('format', { type: 'string', choices: ['md', 'json'] as const })
    .option('dry-run', { type: 'boolean' })
    .option('daemon', { type: 'boolean', default: true }),
);

describe('options', () => {
  it('--opt value, --opt=value, a short alias, a default, kebab and camelCase names', () => {
    expect(run(add, ['--title', 'T', '-t', 'rule', '--dry-run', '--confidence=0.5'])).toEqual({
      title: 'T',
      type: 'rule',
      confidence: 0.5,
      'dry-run': true,
      dryRun: true,
      daemon: true,
    });
    expect(run(add, ['--title=a=b']).type).toBe('decision');
    expect(run(add, ['--title=a=b']).title).toBe('a=b');
    expect(run(add, ['--title', '']).title).toBe('');
  });

  it('every boolean takes --no-x; the last of --x and --no-x wins', () => {
    expect(run(add, ['--title', 'T', '--no-daemon']).daemon).toBe(false);
    expect(run(add, ['--title', 'T', '--no-dry-run', '--dry-run']).dryRun).toBe(true);
    expect(run(add, ['--title', 'T', '--no-json']).json).toBe(false);
    expect(refusal(add, ['--title', 'T', '--no-title'])).toMatch(/^Unknown option: --no-title/);
  });

  it('an array option repeats and never swallows the words after it; a scalar keeps its last value', () => {
    const c = cmd('rules <action> [files..]', (y) =>
      y.option('scope', { type: 'string', array: true }).option('to', { type: 'string' }),
    );
    expect(run(c, ['export', '--scope', 'a', 'b', '--scope', 'c', '--to', 'x', '--to', 'y'])).toEqual({
      action: 'export',
      files: ['b'],
      scope: ['a', 'c'],
      to: 'y',
    });
  });

  it('refuses, naming the option: unknown, a typo, a missing value, a value for a flag, not a number, not a choice', () => {
    expect(refusal(add, ['--title', 'T', '--bogus'])).toBe(
      'Unknown option: --bogus (see git mem add --help)',
    );
    expect(refusal(add, ['--titel', 'T'])).toBe(
      'Unknown option: --titel. Did you mean --title? (see git mem add --help)',
    );
    expect(refusal(add, ['--title', 'T', '-z'])).toMatch(/^Unknown option: -z /);
    expect(refusal(add, ['--title'])).toMatch(/^Option --title needs a value/);
    expect(refusal(add, ['--title', '--dry-run'])).toMatch(
      /^Option --title needs a value \(.*--title=-VALUE/,
    );
    expect(refusal(add, ['--title', 'T', '--dry-run=yes'])).toMatch(/^Option --dry-run takes no value/);
    expect(refusal(add, ['--title', 'T', '--confidence', 'abc'])).toMatch(
      /^Invalid number for --confidence: "abc"/,
    );
    expect(refusal(add, ['--title', 'T', '--confidence='])).toMatch(/^Invalid number for --confidence: ""/);
    expect(refusal(add, ['--title', 'T', '--format', 'xml'])).toBe(
      'Invalid value for --format: "xml" (choose md, json)',
    );
    expect(refusal(add, [])).toBe('Missing required argument: title (see git mem add --help)');
    expect(refusal(add, ['--title', 'T', '--', '--x'])).toMatch(/^Unexpected argument: --x /);
  });

  it('a dash starts a value only after = or --', () => {
    expect(run(add, ['--title=-x']).title).toBe('-x');
    const c = cmd('show <ref>');
    expect(run(c, ['--', '-x'])).toEqual({ ref: '-x' });
    expect(refusal(c, ['-5'])).toMatch(/^Unknown option: -5 \(.*after --/);
    // a lone "-" is a word (stdin, for the commands that read it)
    expect(run(c, ['-'])).toEqual({ ref: '-' });
  });
});

describe('positionals', () => {
  const c = cmd('mv <ref> <alias> [note] [more..]', (y) =>
    y.positional('alias', { type: 'string', describe: 'the new alias' }),
  );

  it('<required>, [optional] and [variadic..] in the order of the command string', () => {
    expect(run(c, ['a', 'b'])).toEqual({ ref: 'a', alias: 'b' });
    expect(run(c, ['a', 'b', 'c', 'd', 'e'])).toEqual({ ref: 'a', alias: 'b', note: 'c', more: ['d', 'e'] });
    expect(commandInfo({ command: 'mv <ref> <alias> [note] [more..]', describe: '' }).positionals).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'more', array: true, required: false })]),
    );
  });

  it('refuses a missing or an extra word, with the usage', () => {
    expect(refusal(c, ['a'])).toBe(
      'Missing required argument: alias (usage: git mem mv <ref> <alias> [note] [more..])',
    );
    const show = cmd('show <ref>');
    expect(refusal(show, ['a', 'b'])).toBe('Unexpected argument: b (usage: git mem show <ref>)');
    const many = cmd('rm <refs..>');
    expect(run(many, ['a', 'b'])).toEqual({ refs: ['a', 'b'] });
    expect(refusal(many, [])).toMatch(/^Missing required argument: refs/);
  });

  it('checks choices', () => {
    const config = cmd('config <action> [key]', (y) =>
      y.positional('action', { choices: ['get', 'set'] as const }),
    );
    expect(run(config, ['get', 'k'])).toEqual({ action: 'get', key: 'k' });
    expect(refusal(config, ['frob'])).toBe('Invalid value for action: "frob" (choose get, set)');
  });
});

describe('strictOptions(false)', () => {
  it('keeps unknown options instead of refusing them (hooks must not fail)', () => {
    const hook = cmd('hook <name> [args..]', (y) =>
      y.positional('args', { type: 'string', array: true }).strictOptions(false),
    );
    expect(run(hook, ['pre-push', 'origin', '--weird', 'url'])).toEqual({
      name: 'pre-push',
      args: ['origin', 'url'],
      weird: true,
    });
  });
});

describe('the command table', () => {
  it('every command parses with no arguments but what it requires, and its declarations are readable', async () => {
    for (const load of Object.values(commandLoaders)) {
      const c = commandInfo((await load()).default);
      const words = c.positionals.filter((p) => p.required).map((p) => p.choices?.[0] ?? 'x');
      const opts = c.options.filter((o) => o.required).flatMap((o) => [`--${o.name}`, 'x']);
      expect(() => parse([...words, ...opts], c, globals), c.usage).not.toThrow();
    }
  });
});

describe('suggestions', () => {
  it('the nearest name within three edits, a swap of neighbours counting one', () => {
    expect(nearest('shwo', ['add', 'show', 'list'])).toBe('show');
    expect(nearest('frobnicate', ['add', 'show', 'list'])).toBeUndefined();
  });
});
