import type { PullResult, PushResultInfo, SyncResult } from '../merge/sync.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

const short = (c: string | null) => (c ? c.slice(0, 12) : '(none)');

/** One human line (or two) for a pull or a sync. */
export function describePull(r: PullResult | SyncResult): string {
  const lines: string[] = [];
  const src = `${r.remote}/memory`;
  switch (r.action) {
    case 'empty':
      lines.push(`${r.remote} has no memory yet`);
      break;
    case 'up-to-date':
      lines.push(`Already up to date with ${src} (${short(r.after)})`);
      break;
    case 'ahead':
      lines.push(`refs/memory is ahead of ${src} (${short(r.after)})`);
      break;
    case 'created':
      lines.push(`Took the memory from ${src} (${short(r.after)})`);
      break;
    case 'fast-forward':
      lines.push(`Fast-forwarded refs/memory to ${src}: ${short(r.before)}..${short(r.after)}`);
      break;
    case 'merged':
      lines.push(`Merged ${src} into refs/memory (${short(r.after)})`);
      break;
  }
  if ('pushed' in r) {
    const what = [r.pushed ? 'memory' : '', r.pushedNotes ? 'notes' : ''].filter(Boolean).join(' and ');
    if (what)
      lines.push(`Pushed ${what} to ${r.remote}${r.attempts > 1 ? ` (after ${r.attempts} attempts)` : ''}`);
  }
  if (r.notes === 'merged' || r.notes === 'fast-forward' || r.notes === 'created')
    lines.push(`Notes: ${r.notes}`);
  if (r.conflicts.length) {
    lines.push(
      `${r.conflicts.length} record${r.conflicts.length === 1 ? '' : 's'} flagged for review: git mem conflicts`,
    );
  }
  // this clone's own changes a merge did not keep, whoever built that merge
  for (const f of r.flagged ?? []) {
    let what = 'your edit was kept in the attic';
    if (f.reason === 'deletion') what = 'your deletion lost to an edit';
    else if (f.reason === 'fields') {
      const at = (f.attic ?? []).map((h) => `git show refs/memory:attic/${f.id.slice(-2)}/${f.id}/${h}.md`);
      what = `your ${f.fields?.join(', ') || 'field'} edit lost to a later one; yours is in the attic: ${at.join(', ')}`;
    }
    lines.push(`${f.id.slice(0, 12)}  ${f.title}: ${what}`);
  }
  if (r.flagged?.some((f) => f.reason !== 'fields'))
    lines.push('Review: git mem conflicts, then git mem resolve ID');
  return lines.join('\n');
}

export function describePush(r: PushResultInfo): string {
  const what = [r.pushed ? 'memory' : '', r.pushedNotes ? 'notes' : ''].filter(Boolean).join(' and ');
  return what ? `Pushed ${what} to ${r.remote} (${short(r.local)})` : `Nothing to push to ${r.remote}`;
}

export default defineCommand({
  command: 'sync [remote]',
  describe: 'fetch, merge and push the memory and its notes (default remote: the upstream, else origin)',
  builder: (y) =>
    y
      .positional('remote', { type: 'string', describe: 'remote name' })
      .option('retries', {
        type: 'number',
        default: 8,
        describe: 'fetch-merge-push rounds after a rejected push',
      })
      .option('global', { type: 'boolean', describe: 'sync the personal global store' })
      .option('quiet', { alias: 'q', type: 'boolean', describe: 'print nothing on success' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, config: true });
    const { sync } = await import('../merge/sync.js');
    const r = await sync(store, { remote: a.remote, retries: a.retries, interactive: ctx.io.stdinIsTTY });
    emit(ctx, r, () => (a.quiet ? '' : describePull(r)));
  },
});
