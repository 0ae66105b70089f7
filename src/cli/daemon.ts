import { err } from '../errors.js';
import { Store } from '../gitstore/store.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'daemon <action>',
  describe:
    "the query daemon: keeps the search index in memory and answers search, context, add's duplicate check and the agent's prompts on a Unix socket in .git/mem, and runs the post-commit hook of its work tree (start|stop|status|run)",
  builder: (y) =>
    y
      .positional('action', {
        type: 'string',
        choices: ['start', 'stop', 'status', 'run'],
        describe: 'run = in the foreground',
      })
      .option('idle', { type: 'number', describe: 'seconds without requests before it exits (default 600)' })
      .option('ref', { type: 'string', hidden: true }),
  async run(a, ctx) {
    const base = await openStore(ctx);
    const store = a.ref ? new Store(base.repo, String(a.ref)) : base;
    if (store !== base) ctx.stores.push(store);
    const client = await import('../daemon/client.js');
    // one daemon serves the repository (its socket is in the common git dir), whichever worktree
    // started it: it answers queries of the store, which every worktree shares
    const startedIn = (r: { workTree?: string | null } | undefined) =>
      typeof r?.workTree === 'string' && r.workTree !== (store.repo.workTree ?? null)
        ? r.workTree
        : undefined;
    const elsewhere = (r: { workTree?: string | null }) => {
      const wt = startedIn(r);
      return wt ? ` (started in ${wt})` : '';
    };
    switch (a.action) {
      case 'status': {
        const r = await client.pingDaemon(store);
        const value = r
          ? {
              running: true,
              pid: r.pid,
              tip: r.tip,
              memories: r.memories,
              uptimeMs: r.uptimeMs,
              workTree: r.workTree ?? null,
              socket: client.socketPath(store),
            }
          : { running: false, socket: client.socketPath(store) };
        emit(ctx, value, () =>
          r
            ? `daemon ${r.pid} serving ${r.memories} memor${r.memories === 1 ? 'y' : 'ies'} at ${String(r.tip).slice(0, 12)} (up ${Math.round((r.uptimeMs ?? 0) / 1000)} s)${elsewhere(r)}`
            : 'no daemon running',
        );
        return;
      }
      case 'stop': {
        const was = await client.pingDaemon(store);
        const stopped = await client.stopDaemon(store);
        const other = startedIn(was);
        emit(ctx, { stopped, workTree: was?.workTree ?? null }, () =>
          stopped
            ? `daemon stopped${other ? ` (the repository's, started in ${other})` : ''}`
            : 'no daemon running',
        );
        return;
      }
      case 'start': {
        const r = (await client.pingDaemon(store)) ?? (await client.startDaemon(store, ctx.env));
        if (!r) throw err('E_IO', 'the daemon did not start', 'run git mem daemon run to see why');
        emit(
          ctx,
          { running: true, pid: r.pid, tip: r.tip, memories: r.memories, workTree: r.workTree ?? null },
          () => `daemon ${r.pid} serving ${r.memories} memor${r.memories === 1 ? 'y' : 'ies'}${elsewhere(r)}`,
        );
        return;
      }
      case 'run': {
        const { serve } = await import('../daemon/server.js');
        const idleMs =
          a.idle !== undefined ? Number(a.idle) * 1000 : Number(ctx.env.GIT_MEM_DAEMON_IDLE_MS) || undefined;
        // the signals are ours before the socket listens: one that comes while it starts stops it
        // once it is up (a signal in between would otherwise end the process without its clean stop)
        let h: Awaited<ReturnType<typeof serve>> | undefined;
        let stopAsked = false;
        const onSignal = () => {
          // a second signal ends the process at once (as before: the listeners are gone)
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
          stopAsked = true;
          h?.stop();
        };
        process.on('SIGTERM', onSignal);
        process.on('SIGINT', onSignal);
        try {
          try {
            const { postCommitHook } = await import('../hooks/post-commit.js');
            h = await serve(store, { idleMs, log: (s) => ctx.io.err(`${s}\n`), postCommit: postCommitHook });
          } catch (e) {
            if ((e as NodeJS.ErrnoException).code === 'EADDRINUSE') return 0; // another daemon serves this store
            throw e;
          }
          if (stopAsked) h.stop();
          await h.done;
          return 0;
        } finally {
          process.off('SIGTERM', onSignal);
          process.off('SIGINT', onSignal);
        }
      }
    }
  },
});
