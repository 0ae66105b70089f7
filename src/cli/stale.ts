import { type FullAnchor, locString, STALE_VERDICTS } from '../anchors/types.js';
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
      const reasons = Array.isArray(r.extra.stale_reasons)
        ? (r.extra.stale_reasons as string[])
        : anchors.map((a) => `${a.path}: ${a.status}: ${a.reason}`);
      out.push({ id, title: r.title, type: r.type, reasons, anchors });
    }
    emit(ctx, out, () => {
      if (!out.length) return 'No stale memories.';
      const lines: string[] = [];
      for (const o of out) {
        lines.push(`${cat.abbrev(String(o.id))} ${o.type} "${o.title}"`);
        for (const a of o.anchors as Array<{
          path: string;
          lines: [number, number] | null;
          status: string;
          reason: string;
          to: unknown;
        }>) {
          lines.push(
            `  ${a.status.padEnd(14)} ${locString({ path: a.path, lines: a.lines ?? undefined })}  ${a.reason}`,
          );
        }
      }
      lines.push(
        '',
        'Fix the memory (git mem update), confirm it (git mem reanchor ID) or retire it (git mem rm / supersede).',
      );
      return lines.join('\n');
    });
  },
});
