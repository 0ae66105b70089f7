import { defineCommand } from './command.js';

export default defineCommand({
  command: 'lsp',
  describe:
    'serve the memory to editors as a Language Server over stdio (hover, code lenses, stale diagnostics, code actions; docs/lsp.md)',
  async run(_a, ctx) {
    // the server loads only here, so other commands never pay for it
    const { serveLsp } = await import('../lsp/server.js');
    await serveLsp(ctx, {
      log: (l) => ctx.io.err(`${l}\n`),
      // the Confirm action's operation, `(id, store) => verify(store, id)`: `git mem verify` is being
      // added beside this command; until it is wired here the action answers that verify is unavailable
      verify: undefined,
    });
    return 0;
  },
});
