import { err } from '../errors.js';
import { defineCommand } from './command.js';
import { commandAliases, commandLoaders } from './commands.js';

export default defineCommand({
  command: 'help [command]',
  describe: 'show the help of one command (git mem --help shows the manual page)',
  builder: (y) => y.positional('command', { type: 'string', describe: 'the command to explain' }),
  async run(a, ctx) {
    const name = a.command === undefined ? undefined : String(a.command);
    if (name !== undefined && !Object.hasOwn(commandLoaders, name) && !Object.hasOwn(commandAliases, name))
      throw err('E_INVALID_ARG', `no command "${name}"`, 'git mem help lists the commands');
    const { main } = await import('./main.js');
    return main([...(name === undefined ? [] : [name]), '--help'], ctx.io, { cwd: ctx.cwd, env: ctx.env });
  },
});
