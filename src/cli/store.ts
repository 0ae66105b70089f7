import type { StoreSyncResult, TeamStoreInfo } from '../commands/stores.js';
import { err, isGitMemError } from '../errors.js';
import { openRepo } from '../gitstore/repo.js';
import { defineCommand } from './command.js';
import { emit } from './context.js';

const short = (c: string | null | undefined) => (c ? c.slice(0, 12) : '(none)');

/** One line for a team store's sync. */
export function describeStoreSync(r: StoreSyncResult): string {
  const what: Record<StoreSyncResult['action'], string> = {
    empty: 'the remote has no memory yet',
    'up-to-date': `up to date (${short(r.after)})`,
    created: `fetched (${short(r.after)})`,
    'fast-forward': `updated ${short(r.before)}..${short(r.after)}`,
    reset: `took the remote's rewritten history (${short(r.after)})`,
    merged: `merged the remote's memory (${short(r.after)})`,
    ahead: `ahead of the remote (${short(r.after)})`,
  };
  const pushed = 'pushed' in r && r.pushed ? '; pushed' : '';
  const conflicts = r.conflicts.length
    ? `; ${r.conflicts.length} record${r.conflicts.length === 1 ? '' : 's'} flagged for review`
    : '';
  return `${r.store}: ${what[r.action]}${pushed}${conflicts}`;
}

const mode = (s: { writable: boolean }) => (s.writable ? 'writable' : 'read-only');

export default defineCommand({
  command: 'store <action> [name] [url]',
  describe:
    "team and organisation stores: another repository's memory (a standards repo) read beside this project's; add, list, sync, remove",
  builder: (y) =>
    y
      .positional('action', {
        choices: ['add', 'list', 'sync', 'remove'] as const,
        describe: 'add NAME URL|PATH, list, sync [NAME], remove NAME',
      })
      .positional('name', { type: 'string', describe: 'the store name: lowercase letters, digits, dashes' })
      .positional('url', {
        type: 'string',
        describe: "add: the URL or path of the repository holding the store's memory",
      })
      .option('writable', {
        type: 'boolean',
        describe: 'add: this clone may write to it (git mem add --store NAME), syncing pushes',
      })
      .option('fetch', {
        type: 'boolean',
        default: true,
        describe: 'add: fetch it now (--no-fetch: register only; git mem store sync fetches it)',
      })
      .option('force', {
        type: 'boolean',
        describe: 'remove: even when a writable store holds memory its remote does not have yet',
      }),
  async run(a, ctx) {
    const repo = await openRepo(ctx.cwd, ctx.env);
    const m = await import('../commands/stores.js');
    const need = (what: string) => {
      if (!a.name)
        throw err('E_INVALID_ARG', `store ${a.action} needs a name`, `git mem store ${a.action} ${what}`);
      return a.name;
    };
    for (const [o, only] of [
      ['writable', 'add'],
      ['force', 'remove'],
    ] as const)
      if (a[o] && a.action !== only)
        throw err('E_INVALID_ARG', `--${o} belongs to store ${only}`, `git mem store ${only} … --${o}`);
    if (a.url !== undefined && a.action !== 'add')
      throw err(
        'E_INVALID_ARG',
        `store ${a.action} takes no URL`,
        'a URL is given once, to git mem store add',
      );

    if (a.action === 'add') {
      const name = need('NAME URL');
      if (!a.url)
        throw err('E_INVALID_ARG', 'store add needs a URL or path', `git mem store add ${name} URL`);
      const r = await m.addStore(repo, {
        name,
        url: a.url,
        writable: !!a.writable,
        fetch: a.fetch !== false,
        cwd: ctx.cwd,
        interactive: ctx.io.stdinIsTTY,
      });
      emit(ctx, r, () =>
        [
          `${r.created ? 'Registered' : 'Updated'} team store ${name} (${mode(r.store)}) at ${r.store.url}`,
          r.sync ? describeStoreSync(r.sync) : `not fetched yet: git mem store sync ${name}`,
          r.created
            ? 'search, context, rules and the agent hooks now read it after this project’s memory'
            : '',
        ]
          .filter(Boolean)
          .join('\n'),
      );
      return;
    }

    if (a.action === 'list') {
      if (a.name) throw err('E_INVALID_ARG', 'store list takes no name', 'git mem store list');
      const stores = await m.listStores(repo);
      const rows = await Promise.all(stores.map((s) => describeStore(repo, s)));
      emit(ctx, rows, () =>
        rows.length
          ? rows
              .map(
                (s) =>
                  `${s.name}  ${mode(s)}  ${s.url}  ${s.tip ? `${short(s.tip)} (${s.memories} memor${s.memories === 1 ? 'y' : 'ies'})` : '(not fetched yet)'}`,
              )
              .join('\n')
          : 'No team stores. Add one: git mem store add NAME URL',
      );
      return;
    }

    if (a.action === 'remove') {
      const name = need('NAME');
      const r = await m.removeStore(repo, name, { force: !!a.force });
      emit(
        ctx,
        r,
        () =>
          `Removed team store ${name}${r.refs.length ? ` and its ${r.refs.length} ref${r.refs.length === 1 ? '' : 's'}` : ''}`,
      );
      return;
    }

    // sync: one store, or every registered one (a failure is reported and the others still sync)
    const infos = a.name ? [await m.findStore(repo, a.name)] : await m.listStores(repo);
    if (!infos.length) {
      emit(ctx, [], () => 'No team stores to sync. Add one: git mem store add NAME URL');
      return;
    }
    const results: Array<StoreSyncResult | { store: string; error: Record<string, unknown> }> = [];
    let failed = false;
    for (const info of infos) {
      const t = m.openTeamStore(repo, info);
      ctx.stores.push(t.store);
      try {
        results.push(await m.syncStore(t, { interactive: ctx.io.stdinIsTTY }));
      } catch (e) {
        if (a.name || !isGitMemError(e)) throw e;
        failed = true;
        results.push({ store: info.name, ...(e.toJSON() as { error: Record<string, unknown> }) });
        ctx.io.err(`git-mem: ${info.name}: ${e.toLine()}\n`);
      }
    }
    emit(ctx, a.name ? results[0] : results, () =>
      results
        .filter((r): r is StoreSyncResult => !('error' in r))
        .map(describeStoreSync)
        .join('\n'),
    );
    return failed ? 1 : 0;
  },
});

/** A registered store with its local tip and memory count (for `store list`). */
async function describeStore(
  repo: import('../gitstore/repo.js').Repo,
  info: TeamStoreInfo,
): Promise<TeamStoreInfo & { tip: string | null; memories: number }> {
  const { openTeamStore } = await import('../commands/stores.js');
  const t = openTeamStore(repo, info);
  try {
    const tip = await t.store.tip();
    const memories = tip ? (await t.store.catalog()).rows.size : 0;
    return { ...info, tip, memories };
  } finally {
    t.store.close();
  }
}
