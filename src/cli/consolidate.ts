/**
 * `git mem consolidate`: proposes merges, supersedes and archives of
 * near-duplicate, contradicted and outdated memories as pending review
 * items (src/agents/consolidate.ts). Nothing active changes until they are
 * approved in `git mem review`, or here with --apply.
 */
import { err } from '../errors.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'consolidate',
  describe:
    'propose merges, supersedes and archives of near-duplicate, contradicted or outdated memories, as pending review items (nothing active changes until approved in git mem review)',
  builder: (y) =>
    y
      .option('dry-run', { type: 'boolean', describe: 'print the proposals only; write nothing' })
      .option('apply', {
        type: 'boolean',
        describe: 'approve every proposal found, as git mem review --approve would (for scripts)',
      })
      .option('llm', {
        type: 'boolean',
        describe:
          'let the configured model (llm.* settings) write merged text; the deterministic text if it fails',
      })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    if (a['dry-run'] && a.apply)
      throw err('E_INVALID_ARG', '--dry-run and --apply contradict each other', 'pass one of them');
    const store = await openStore(ctx, { global: a.global });
    const [{ consolidate, evidenceLine }, { trustedLlmSettings }] = await Promise.all([
      import('../agents/consolidate.js'),
      import('../agents/llm.js'),
    ]);
    const res = await consolidate(store, {
      dryRun: a['dry-run'],
      apply: a.apply,
      ...(a.llm ? { llm: { settings: await trustedLlmSettings(store), env: ctx.env } } : {}),
    });
    emit(ctx, res, () => {
      if (!res.proposals.length)
        return `Nothing to consolidate among ${res.scanned} active memor${res.scanned === 1 ? 'y' : 'ies'}.`;
      const lines = res.proposals.map((p) => {
        const ids = p.ids.map((id) => id.slice(0, 12));
        const what =
          p.kind === 'merge'
            ? `merge ${ids.join(' + ')} into "${p.merged?.title}"${p.merged?.writer === 'llm' ? ' (text by the model)' : ''}`
            : p.kind === 'supersede'
              ? `supersede ${ids[0]} by ${ids[1]}`
              : `archive ${ids[0]} (keep ${ids[1]})`;
        const state =
          p.state === 'applied'
            ? 'applied'
            : p.state === 'proposed'
              ? 'would propose'
              : p.state === 'pending'
                ? `already pending as ${p.reviewId?.slice(0, 12)}`
                : `pending as ${p.reviewId?.slice(0, 12)}`;
        const failed = p.merged?.llmFailure ? `\n  model not used: ${p.merged.llmFailure}` : '';
        return `${what} — ${state}\n  why: ${p.reason}\n  evidence: ${evidenceLine(p.evidence)}${failed}`;
      });
      const tail = a['dry-run']
        ? 'Nothing written (--dry-run).'
        : a.apply
          ? 'Applied.'
          : 'Approve with git mem review --approve ID, reject with --reject ID.';
      return `${lines.join('\n\n')}\n\n${tail}`;
    });
  },
});
