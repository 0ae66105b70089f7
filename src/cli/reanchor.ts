import { parseAnchorSpecs } from '../anchors/types.js';
import { err } from '../errors.js';
import { defineCommand } from './command.js';
import { emit, openStore, secretPolicy } from './context.js';

export default defineCommand({
  command: 'reanchor <id>',
  describe:
    'anchor a memory again where its code is now (or to new --anchor/--symbol specs); a stale memory becomes active',
  builder: (y) =>
    y
      .positional('id', { type: 'string', describe: 'id, prefix or alias' })
      .option('anchor', {
        type: 'string',
        array: true,
        describe: 'replace the anchors: PATH[:START[-END]] (repeatable)',
      })
      .option('symbol', {
        type: 'string',
        array: true,
        describe: 'replace the anchors: [PATH#]NAME (repeatable)',
      })
      .option('any-branch', {
        type: 'boolean',
        describe:
          'move the shared record from a branch other than the default one (it follows the default branch)',
      })
      .option('allow-secret', {
        type: 'boolean',
        describe: 'write the anchored file even if it holds text that looks like a secret',
      }),
  async run(a, ctx) {
    const store = await openStore(ctx);
    if (!store.repo.workTree) throw err('E_ANCHOR', 'anchors need a work tree', 'run inside a checkout');
    const specs = parseAnchorSpecs(a.anchor ?? [], a.symbol ?? []);
    const { reanchor } = await import('../anchors/reanchor.js');
    const r = await reanchor(
      store,
      String(a.id),
      ctx.cwd,
      specs.length ? specs : undefined,
      !!a['any-branch'],
      await secretPolicy(ctx, store, a['allow-secret'], {}),
    );
    emit(
      ctx,
      {
        id: r.record.id,
        commit: r.commit,
        status: r.record.status,
        anchors: r.record.anchors,
        dropped: r.dropped,
        notes: r.notes,
        unchanged: !!r.unchanged,
      },
      () =>
        [
          r.unchanged
            ? `${r.record.id.slice(0, 12)} "${r.record.title}" is already anchored where its code is: nothing changed`
            : `Re-anchored ${r.record.id.slice(0, 12)} "${r.record.title}" (${r.record.status}, ${(r.commit ?? '').slice(0, 12)})`,
          ...r.record.anchors.map(
            (x) =>
              `  anchor ${x.path}${x.lines ? `:${x.lines[0]}-${x.lines[1]}` : ''}${x.symbol ? ` (${x.symbol})` : ''}`,
          ),
          ...r.dropped.map((d) => `  dropped ${d} (its code is gone)`),
          ...r.notes.map((n) => `  note: ${n}`),
        ].join('\n'),
    );
  },
});
