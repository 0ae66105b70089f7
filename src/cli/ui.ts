/**
 * `git mem ui`: the memory in a local web page (src/ui/server.ts). Prints a
 * one-time link (a new one each time the last is used) and serves until Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { err } from '../errors.js';
import { linkFile } from '../ui/link-file.js';
import { defineCommand } from './command.js';
import { type Ctx, maybeGlobalStore, openStore } from './context.js';

/** Opens a URL or file in the browser: $BROWSER when set, else the platform's opener. */
function openBrowser(ctx: Ctx, url: string): void {
  const browser = ctx.env.BROWSER?.split(':')[0];
  const [cmd, args] = browser
    ? [browser, [url]]
    : process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url.replace(/&/g, '^&')]]
        : ['xdg-open', [url]];
  try {
    const c = spawn(cmd, args, { detached: true, stdio: 'ignore', env: ctx.env });
    c.on('error', () => ctx.io.err(`git-mem ui: could not start ${cmd}; open the URL yourself\n`));
    c.unref();
  } catch {
    ctx.io.err(`git-mem ui: could not start ${cmd}; open the URL yourself\n`);
  }
}

export default defineCommand({
  command: 'ui',
  describe:
    'browse, review and repair the memory in a local web page (127.0.0.1 only; the printed link opens it once); Ctrl-C stops it',
  builder: (y) =>
    y
      .option('port', { type: 'number', describe: 'port to listen on (default: a free one)' })
      .option('open', { type: 'boolean', describe: 'open the page in the browser' }),
  async run(a, ctx) {
    const port = a.port ?? 0;
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw err('E_INVALID_ARG', `--port must be a whole number from 0 to 65535, not ${a.port}`);
    const store = await openStore(ctx, { read: true });
    // the personal store beside it (not again when the store is the personal one: outside a repository)
    const g = await maybeGlobalStore(ctx);
    const global = g && g.repo.gitDir !== store.repo.gitDir ? g : undefined;
    const { startUi } = await import('../ui/server.js');
    const server = await startUi(
      { store, global, cwd: ctx.cwd, env: ctx.env },
      {
        port,
        log: (l) => ctx.io.err(`${l}\n`),
        // the printed link opens the page once: the next, for another browser (the page keeps its key)
        onSpent: (next) =>
          ctx.json
            ? ctx.io.out(`${JSON.stringify({ url: next })}\n`)
            : ctx.io.out(
                `git-mem ui: ${next} (the link above was used; this one opens the page once more)\n`,
              ),
      },
    );
    // Ctrl-C is ours before anyone can have the URL: a signal from the moment the URL is out
    // (a browser that opened it, a script that read it) closes the server and exits 0
    const stopped = new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    if (ctx.json) ctx.io.out(`${JSON.stringify({ url: server.url, port: server.port })}\n`);
    else
      ctx.io.out(
        `git-mem ui: ${server.url}\n(serving ${store.repo.workTree ?? store.repo.cwd}; Ctrl-C stops it)\n`,
      );
    // the browser gets a link of its own, through a file: the printed one stays the user's
    const file = a.open ? linkFile(server.link()) : undefined;
    if (file) openBrowser(ctx, file.path);
    await stopped;
    await server.close();
    file?.remove();
    return 0;
  },
});
