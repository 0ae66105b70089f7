/**
 * `git mem checkpoint`: runs extraction over the buffered agent events not
 * yet checkpointed (all sessions, or one) and files the proposals as pending.
 * The agent hooks run it detached (--quiet) at checkpoint triggers.
 */
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'checkpoint',
  describe:
    'extract proposals from buffered agent events now (the hooks do this every 10 events and at session end)',
  builder: (y) =>
    y
      .option('session', { type: 'string', describe: 'only this agent session id' })
      .option('final', { type: 'boolean', describe: 'the session ended: also write its summary' })
      .option('trigger', {
        type: 'string',
        describe: 'why (recorded in the result): count, test-pass, commit, stop…',
      })
      .option('recover', { type: 'boolean', describe: 'finish sessions whose end was never written' })
      .option('exclude', { type: 'string', describe: 'with --recover: skip this session (the current one)' })
      .option('quiet', {
        type: 'boolean',
        describe: 'print nothing; log failures to .git/mem/logs/hooks.log',
      }),
  async run(a, ctx) {
    const { runCheckpoint, bufferedSessions, recoverSessions } = await import('../agents/checkpoint.js');
    const { logLine } = await import('../agents/events.js');
    const store = await openStore(ctx);
    try {
      if (a.recover) {
        const done = await recoverSessions(store, a.exclude ? String(a.exclude) : undefined);
        if (!a.quiet)
          emit(
            ctx,
            done.map((s) => ({ session: s, recovered: true })),
            () =>
              done.length ? done.map((s) => `recovered session ${s}`).join('\n') : 'Nothing to recover.',
          );
        return 0;
      }
      const sessions = a.session
        ? [String(a.session)]
        : bufferedSessions(store.repo.commonDir).map((s) => s.session);
      const results: Awaited<ReturnType<typeof runCheckpoint>>[] = [];
      for (const s of sessions) {
        const r = await runCheckpoint(store, s, {
          final: !!a.final,
          trigger: a.trigger ? String(a.trigger) : a.final ? 'session-end' : 'manual',
          wait: !a.quiet,
        });
        if (!a.session && !r.newEvents && !r.summary && !r.skipped) continue;
        results.push(r);
      }
      if (a.quiet) return 0;
      const json = results.map((r) => ({
        session: r.session,
        trigger: r.trigger,
        skipped: r.skipped ?? null,
        events: r.events,
        new_events: r.newEvents,
        proposals: r.proposals.map((p) => ({ id: p.id, type: p.type, title: p.title, status: p.status })),
        considered: r.verdicts,
        summary: r.summary ?? null,
      }));
      emit(ctx, json, () => {
        if (!results.length) return 'Nothing to checkpoint: no new agent events.';
        return results
          .map((r) => {
            if (r.skipped) return `session ${r.session}: skipped (${r.skipped})`;
            const lines = [
              `session ${r.session}: ${r.newEvents} new events, ${r.proposals.length} proposal(s)`,
            ];
            for (const p of r.proposals) lines.push(`  pending ${p.id.slice(0, 12)}  ${p.type}  ${p.title}`);
            if (r.summary) lines.push(`  summary ${r.summary.id.slice(0, 12)} (${r.summary.outcome})`);
            if (r.proposals.length) lines.push('Review them with: git mem review');
            return lines.join('\n');
          })
          .join('\n');
      });
      return 0;
    } catch (e) {
      if (!a.quiet) throw e;
      logLine(store.repo.commonDir, `checkpoint ${a.session ?? ''}: ${(e as Error).message}`);
      return 0;
    }
  },
});
