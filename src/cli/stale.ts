import { sharedTarget } from '../anchors/branch.js';
import { runCheck } from '../anchors/check.js';
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
  describe:
    'list stale memories with the reasons (run git mem check first); on another branch, as judged at its HEAD',
  builder: (y) => y,
  async run(_a, ctx) {
    const store = await openStore(ctx);
    const tip = await store.tip();
    const cat = await store.catalogAt(tip);
    const head = (await store.catFile.read('HEAD^{commit}'))?.oid;
    const shared = head ? await sharedTarget(store, head) : undefined;
    if (head && shared && !shared.shared) {
      // the record follows the default branch: here the anchors are judged at HEAD, and nothing is written
      const report = await runCheck(store, { target: head, dryRun: true, titles: true });
      const byId = new Map<string, typeof report.results>();
      for (const r of report.results) if (r.stale) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
      const out = [...byId].map(([id, rs]) => ({
        id,
        title: rs[0].title,
        type: cat.entries.get(id)?.type ?? null,
        at: head,
        reasons: rs.map((r) => `${locString(r.anchor)}: ${r.verdict.status}: ${r.verdict.reason}`),
        anchors: rs.map((r) => ({
          path: r.anchor.path,
          lines: r.anchor.lines ?? null,
          symbol: r.anchor.symbol ?? null,
          status: r.verdict.status,
          reason: r.verdict.reason,
          to: r.verdict.to,
          commit: head,
        })),
      }));
      emit(ctx, out, () => {
        const note = `(judged at ${head.slice(0, 12)}: the shared record follows ${shared.branch.name})`;
        if (!out.length) return `No memories are stale at HEAD ${note}.`;
        return [
          ...out.flatMap((m) => [
            `${cat.abbrev(m.id)} ${m.type ?? ''} "${m.title}"`,
            ...m.anchors.map((x) => `  ${x.status.padEnd(14)} ${x.path}  ${x.reason}`),
          ]),
          '',
          note,
        ].join('\n');
      });
      return;
    }
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
