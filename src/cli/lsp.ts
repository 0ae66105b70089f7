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
      // the Confirm action: the operation `git mem verify ID` runs (src/commands/verify.ts)
      verify: async (id, store) => {
        const { verifyMemories } = await import('../commands/verify.js');
        const r = await verifyMemories(store, [id]);
        return { id: r.records[0]?.id, verified: r.records[0]?.verified, commit: r.commit };
      },
    });
    return 0;
  },
});
