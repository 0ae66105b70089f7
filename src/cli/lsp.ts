import type { Store } from '../gitstore/store.js';
import { defineCommand } from './command.js';
import type { Ctx } from './context.js';

/**
 * The LSP's "Open in git mem ui": one page server for the editor's session (started at the first
 * open, on a store of its own, 127.0.0.1, closed with the process), and for each memory a page
 * file (mode 600) that sends the browser on to a one-time link and the memory's route. What
 * `git mem ui --open` does, without a terminal.
 */
function uiOpener(ctx: Ctx): {
  open: (id: string, store: Store) => Promise<string>;
  close: () => Promise<void>;
} {
  let server: Promise<{ link(): string; close(): Promise<void> }> | undefined;
  const files: Array<() => void> = [];
  process.once('exit', () => {
    for (const remove of files) remove();
  });
  const open = async (id: string, store: Store): Promise<string> => {
    server ??= (async () => {
      const [{ startUi }, { Store: StoreClass }] = await Promise.all([
        import('../ui/server.js'),
        import('../gitstore/store.js'),
      ]);
      const own = new StoreClass(store.repo);
      return startUi(
        { store: own, cwd: store.repo.workTree ?? ctx.cwd, env: ctx.env },
        { port: 0, log: () => {} },
      );
    })();
    const { linkFile } = await import('../ui/link-file.js');
    const { pathToFileURL } = await import('node:url');
    const file = linkFile(`${(await server).link()}#/m/${id}`);
    files.push(file.remove);
    return pathToFileURL(file.path).href;
  };
  const close = async () => {
    for (const remove of files.splice(0)) remove();
    await (await server?.catch(() => undefined))?.close();
  };
  return { open, close };
}

export default defineCommand({
  command: 'lsp',
  describe:
    'serve the memory to editors as a Language Server over stdio (hover, code lenses, stale diagnostics, code actions; docs/lsp.md)',
  async run(_a, ctx) {
    // the server loads only here, so other commands never pay for it
    const { serveLsp } = await import('../lsp/server.js');
    const opener = uiOpener(ctx);
    await serveLsp(ctx, {
      log: (l) => ctx.io.err(`${l}\n`),
      openInUi: opener.open,
      // the Confirm action: the operation `git mem verify ID` runs (src/commands/verify.ts)
      verify: async (id, store) => {
        const { verifyMemories } = await import('../commands/verify.js');
        const r = await verifyMemories(store, [id]);
        return { id: r.records[0]?.id, verified: r.records[0]?.verified, commit: r.commit };
      },
    });
    // the page server the editor's "Open" started, if any: the session is over
    await opener.close();
    return 0;
  },
});
