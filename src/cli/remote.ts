import { repositoryStore } from '../commands/context.js';
import { defineCommand } from './command.js';
import { emit } from './context.js';

export default defineCommand({
  command: 'remote <action> [remote]',
  describe: 'setup: make a plain git fetch bring the memory and notes refs too (remove: undo)',
  builder: (y) =>
    y
      .positional('action', {
        choices: ['setup', 'remove', 'status'] as const,
        describe: 'setup, remove or status',
      })
      .positional('remote', { type: 'string', describe: 'remote name (default: the upstream, else origin)' }),
  async run(a, ctx) {
    // the repository's store (never the global one): git's configuration is read once, as it opens
    const store = await repositoryStore(ctx, 'config');
    const m = await import('../merge/remote.js');
    const remote = await m.resolveRemote(store, a.remote);
    if (a.action === 'setup') {
      const r = await m.setupRemote(store, remote.name);
      emit(ctx, { ...r, url: remote.url }, () =>
        r.added.length
          ? `${remote.name}: git fetch now brings the memory (refs/mem/* → refs/mem-remotes/${remote.name}/) and its notes\nShare yours: git mem sync ${remote.name}`
          : `${remote.name}: already set up; nothing to do`,
      );
    } else if (a.action === 'remove') {
      const r = await m.unsetupRemote(store, remote.name);
      emit(ctx, { ...r, url: remote.url }, () =>
        r.removed.length
          ? `${remote.name}: removed the memory fetch refspecs`
          : `${remote.name}: was not set up; nothing to do`,
      );
    } else {
      const setUp = await m.isSetUp(store, remote.name);
      const t = await m.readTracking(store, remote.name);
      emit(ctx, { remote: remote.name, url: remote.url, setUp, tracking: t }, () =>
        [
          `${remote.name} (${remote.url}): ${setUp ? 'set up' : 'not set up (git mem remote setup)'}`,
          `last fetched memory: ${t.memory ? t.memory.slice(0, 12) : '(none)'}; notes: ${t.notes ? t.notes.slice(0, 12) : '(none)'}`,
        ].join('\n'),
      );
    }
  },
});
