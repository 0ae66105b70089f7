import type { AnchorResult, CheckReport } from '../anchors/check.js';
import { locString, VERDICTS } from '../anchors/types.js';
import { err } from '../errors.js';
import { defineCommand } from './command.js';
import { emit, openStore, secretPolicy } from './context.js';

function resultJSON(r: AnchorResult) {
  return {
    id: r.id,
    title: r.title,
    anchor: r.index,
    path: r.anchor.path,
    lines: r.anchor.lines ?? null,
    symbol: r.anchor.symbol ?? null,
    status: r.verdict.status,
    reason: r.verdict.reason,
    confidence: r.verdict.confidence,
    from: r.verdict.from,
    to: r.verdict.to,
    ...(r.verdict.candidates ? { candidates: r.verdict.candidates } : {}),
    stale: r.stale,
    ...(r.newer ? { newer: true } : {}),
  };
}

function countVerdicts(results: readonly AnchorResult[]): Record<string, number> {
  const c: Record<string, number> = Object.fromEntries(VERDICTS.map((v) => [v, 0]));
  for (const r of results) c[r.verdict.status] = (c[r.verdict.status] ?? 0) + 1;
  return c;
}

function reportJSON(rep: CheckReport, all = false) {
  return {
    target: rep.target,
    memoryCommit: rep.memoryCommit,
    recorded: rep.recorded,
    checked: rep.checked,
    counts: countVerdicts(rep.results),
    results: rep.results
      .filter((r) => all || r.verdict.status !== 'fresh' || r.verdict.reason !== 'same blob')
      .map(resultJSON),
    changes: rep.changes,
    // the branch the shared record follows; shared: false when the target is not its tip (nothing recorded)
    branch: rep.branch ?? null,
    // anchors whose verdicts were not recorded: the record confirmed them at a commit the target does not contain
    newer: rep.newer ?? 0,
    // anchors not checked: a path outside the repository or lines that are not a range (git mem doctor names them)
    invalid: rep.invalid.map((x) => ({ id: x.id, anchor: x.index, path: x.path, problem: x.problem })),
    // literal scope entries: renamed with their file (recorded with the verdicts), or matching no file
    scopes: rep.scopes ?? { moved: [], lost: [] },
  };
}

function humanLine(r: AnchorResult): string {
  const to =
    r.verdict.to && locString(r.verdict.to) !== locString(r.verdict.from)
      ? ` → ${locString(r.verdict.to)}`
      : '';
  const newer = r.newer ? ' (not recorded: the record is newer than this checkout)' : '';
  return `${r.verdict.status.padEnd(14)} ${r.id.slice(0, 12)} ${locString(r.verdict.from)}${to}  ${r.verdict.reason}${newer}${r.title ? `  "${r.title}"` : ''}`;
}

export default defineCommand({
  command: 'check [ids..]',
  describe: 'check code anchors against HEAD (or --rev / --worktree) and record the verdicts',
  builder: (y) =>
    y
      .positional('ids', {
        type: 'string',
        array: true,
        describe: 'only these memories (id, prefix or alias)',
      })
      .option('all', { type: 'boolean', describe: 'check every anchor (the default)' })
      .option('since', { type: 'string', describe: 'only anchors of files changed since this revision' })
      .option('rev', { type: 'string', describe: 'check against this code revision (default HEAD)' })
      .option('worktree', { type: 'boolean', describe: 'check against the working tree (reports only)' })
      .option('dry-run', { type: 'boolean', describe: 'report verdicts, record nothing' })
      .option('verbose', { type: 'boolean', alias: 'v', describe: 'list fresh anchors too' }),
  async run(a, ctx) {
    if (a.all && a.since) throw err('E_INVALID_ARG', 'pass either --all or --since, not both');
    if (a.worktree && a.rev) throw err('E_INVALID_ARG', 'pass either --worktree or --rev, not both');
    const store = await openStore(ctx);
    const tip = await store.tip();
    const given = a.ids ?? [];
    const ids = given.length ? await resolveIds(store, given.map(String), tip) : undefined;
    const { runCheck } = await import('../anchors/check.js');
    const rep = await runCheck(store, {
      target: a.rev,
      worktree: !!a.worktree,
      since: a.since,
      ids,
      dryRun: !!a['dry-run'],
      titles: !!a.verbose,
      allowSecret: await secretPolicy(ctx, store, undefined, {}),
    });
    emit(ctx, reportJSON(rep, !!a.verbose), () => {
      const counts = countVerdicts(rep.results);
      const summary = Object.entries(counts)
        .filter(([, n]) => n)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ');
      const lines = [
        `Checked ${rep.checked} anchor${rep.checked === 1 ? '' : 's'} against ${rep.target.slice(0, 12)}: ${summary || 'none'}`,
      ];
      for (const r of rep.results)
        if (a.verbose || r.verdict.status !== 'fresh') lines.push(`  ${humanLine(r)}`);
      const elsewhere = rep.branch?.shared === false;
      for (const c of rep.changes)
        lines.push(
          `${c.id.slice(0, 12)} ${c.from} → ${c.to}${elsewhere ? ' at this commit' : ''}${c.title ? ` "${c.title}"` : ''}`,
        );
      if (rep.newer) {
        const n = rep.newer;
        lines.push(
          `${n} anchor${n === 1 ? ' was' : 's were'} confirmed at a commit ${rep.target.slice(0, 12)} does not contain (the record is newer than this checkout): not recorded; git pull, then check again`,
        );
      }
      for (const x of rep.invalid)
        lines.push(
          `  ${'not checked'.padEnd(14)} ${x.id.slice(0, 12)} anchor ${x.index}: ${x.problem} (git mem doctor)`,
        );
      for (const m of rep.scopes?.moved ?? [])
        lines.push(`  ${'scope renamed'.padEnd(14)} ${m.id.slice(0, 12)} ${m.from} → ${m.to}`);
      for (const x of rep.scopes?.lost ?? [])
        lines.push(
          `  ${'scope lost'.padEnd(14)} ${x.id.slice(0, 12)} ${x.path} matches no file (git mem update ${x.id.slice(0, 12)} --scope …)${x.title ? `  "${x.title}"` : ''}`,
        );
      if (rep.recorded) lines.push(`Recorded in ${rep.memoryCommit!.slice(0, 12)}`);
      else if (a['dry-run'] || a.worktree) lines.push('Nothing recorded (dry run)');
      else if (rep.branch && !rep.branch.shared)
        lines.push(
          `Nothing recorded: the shared record follows ${rep.branch.name}, and ${rep.target.slice(0, 12)} is not its tip (these verdicts are for this commit only)`,
        );
      return lines.join('\n');
    });
  },
});

async function resolveIds(
  store: import('../gitstore/store.js').Store,
  refs: string[],
  tip: string | null,
): Promise<string[]> {
  if (!tip) throw err('E_NOT_FOUND', `no memory matches "${refs[0]}"`, 'the store is empty');
  const cat = await store.catalogAt(tip);
  return refs.map((r) => cat.resolve(r));
}
