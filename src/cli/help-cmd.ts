import { err } from '../errors.js';
import { defineCommand } from './command.js';

export default defineCommand({
  command: 'help [command]',
  describe: 'show the help of one command (git mem --help shows the manual page)',
  builder: (y) => y.positional('command', { type: 'string', describe: 'the command to explain' }),
  async run(a, ctx) {
    const name = a.command === undefined ? undefined : String(a.command);
    const cli = ctx.cli;
    if (!cli) throw new Error('help runs only from the command line (main.ts provides the command table)');
    if (name !== undefined && !cli.has(name))
      throw err('E_INVALID_ARG', `no command "${name}"`, 'git mem help lists the commands');
    return cli.help(name);
  },
});
