import {
  type FullAnchor,
  locString,
  STALE_VERDICTS,
  staleReasons,
  staleReasonText,
} from '../anchors/types.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

export default defineCommand({
  command: 'stale',
  describe: 'list stale memories with the reasons (run git mem check first)',
  builder: (y) => y,
  async run(_a, ctx) {
    const store = await openStore(ctx);
    const tip = await store.tip();
    const cat = await store.catalogAt(tip);
    const ids = [...cat.entries.values()]
      .filter((e) => e.status === 'stale')
      .map((e) => e.id)
      .sort();
    const out: Array<Record<string, unknown>> = [];
    const text: string[] = [];
    for (const id of ids) {
      const r = await store.readRecord(tip, id);
      const anchors = (r.anchors as FullAnchor[])
        .filter((a) => a.verdict && STALE_VERDICTS.has(a.verdict.status))
        .map((a) => ({
          path: a.path,
          lines: a.lines ?? null,
          symbol: a.symbol ?? null,
          status: a.verdict!.status,
          reason: a.verdict!.reason,
          to: a.verdict!.to,
          commit: a.verdict!.commit,
        }));
      const why = staleReasons(r);
      out.push({ id, title: r.title, type: r.type, reasons: why.map(staleReasonText), anchors });
      text.push(`${cat.abbrev(id)} ${r.type} "${r.title}"`);
      for (const w of why)
        text.push(
          w.verdict ? `  ${w.verdict.padEnd(14)} ${locString(w.anchor)}  ${w.reason}` : `  ${w.reason}`,
        );
    }
    emit(ctx, out, () => {
      if (!out.length) return 'No stale memories.';
      return [
        ...text,
        '',
        'Fix the memory (git mem update), confirm it (git mem reanchor ID) or retire it (git mem rm / supersede).',
      ].join('\n');
    });
  },
});
