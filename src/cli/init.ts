import { initStore } from '../commands/memory.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'init',
  describe: "create the memory store on refs/memory, or adopt the remote's in a clone (idempotent)",
  builder: (y) =>
    y
      .option('global', { type: 'boolean', describe: 'initialise the personal global store' })
      .option('remote-setup', {
        type: 'boolean',
        describe: 'also make git fetch bring the memory from the default remote',
      })
      .option('merge-driver', {
        type: 'boolean',
        describe: 'register git mem merge-driver (for export --dir files)',
      }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, create: true });
    // a clone of a repository whose remote has memory adopts it: a second root would diverge from the team's
    const adoption =
      a.global || (await store.tip())
        ? undefined
        : await (await import('../merge/adopt.js')).adoptRemoteMemory(store, {
            autoFetch: true,
            force: true,
          });
    const r = await initStore(store);
    const rs = a.global
      ? {}
      : await (await import('../merge/remote.js')).initRemoteStep(store, !!a['remote-setup']);
    const setup = a['merge-driver'] && !a.global ? await import('../merge/driver-setup.js') : undefined;
    const md = setup ? await setup.registerMergeDriver(store.repo) : undefined;
    const mdNote = md
      ? `\nRegistered the merge driver (${md.config}); memory files marked in ${md.gitattributes}`
      : '';
    const remoteNote = (rs.hint ? `\n${rs.hint}` : '') + mdNote;
    // on a branch the record does not follow, once: how to make it the recorded one
    const hint = a.global
      ? undefined
      : await (await import('../anchors/branch.js')).recordedBranchHint(store).catch(() => undefined);
    const adopted = adoption?.action === 'pulled' ? adoption : undefined;
    const failed =
      adoption?.action === 'failed'
        ? `\nCould not ask ${adoption.remote} for its memory (${adoption.reason}); this store starts afresh and git mem sync merges the team's later`
        : '';
    emit(
      ctx,
      {
        created: r.created,
        repaired: !!r.repaired,
        ref: store.ref,
        commit: r.commit,
        gitDir: store.repo.commonDir,
        ...(adopted ? { adopted: { remote: adopted.remote, commit: adopted.tip } } : {}),
        ...(rs.setup ? { remoteSetup: rs.setup } : {}),
        ...(md ? { mergeDriver: md } : {}),
        ...(hint ? { hint } : {}),
      },
      () =>
        (adopted
          ? `Adopted ${adopted.remote}'s memory store on ${store.ref} (${r.commit.slice(0, 12)}) in ${store.repo.commonDir}\nNext: git mem list; share yours with git mem sync`
          : r.repaired
            ? `Wrote ${store.ref}'s unreadable FORMAT file again (format 1; every record reads as it) (${r.commit.slice(0, 12)})`
            : r.created
              ? `Initialized git-mem store on ${store.ref} (${r.commit.slice(0, 12)}) in ${store.repo.commonDir}\nNext: git mem add --type decision --title "…" --content "…"`
              : `git-mem store already initialized on ${store.ref} (${r.commit.slice(0, 12)}); nothing to do`) +
        failed +
        remoteNote +
        (hint ? `\n${hint}` : ''),
    );
  },
});
