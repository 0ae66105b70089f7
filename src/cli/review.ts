/**
 * `git mem review`: the queue of pending proposals. Lists them; approves
 * (optionally edited) or rejects by id for scripts; asks one by one in a
 * terminal.
 */
import { err } from '../errors.js';
import type { MemoryRecord } from '../model/record.js';
import { terminalText } from '../safety/terminal.js';
import { defineCommand } from './command.js';
import type { Ctx } from './context.js';
import { emit, list, openStore } from './context.js';

function pendingText(r: MemoryRecord): string {
  const p = (r.extra.proposal ?? {}) as Record<string, unknown>;
  return `${r.id.slice(0, 12)}  ${r.type}  ${r.title}\n  from ${p.method ?? r.source ?? '?'}${p.session ? ` (session ${String(p.session).slice(0, 12)})` : ''}, confidence ${r.confidence}\n  ${r.body.trim().split('\n').slice(0, 8).join('\n  ')}`;
}

async function interactive(
  ctx: Ctx,
  items: MemoryRecord[],
  act: {
    approve: (id: string, e?: { title?: string }) => Promise<unknown>;
    reject: (id: string) => Promise<unknown>;
  },
) {
  const { createInterface } = await import('node:readline');
  const term = ctx.io.terminal ?? { input: process.stdin, output: process.stdout };
  const rl = createInterface({ ...term, terminal: term.input === process.stdin ? undefined : false });
  // answers are read as a queue of lines, so ones typed (or pasted) ahead are kept, not dropped
  const lines = rl[Symbol.asyncIterator]();
  const done = { approved: 0, rejected: 0, skipped: 0 };
  // Ctrl+D (end of input) or Ctrl+C ends the review quietly
  rl.on('SIGINT', () => rl.close());
  const ask = async (q: string): Promise<string | null> => {
    term.output.write(q);
    try {
      const next = await lines.next();
      return next.done ? null : String(next.value).trim();
    } catch {
      return null;
    }
  };
  try {
    for (const r of items) {
      ctx.io.out(`\n${terminalText(pendingText(r))}\n`);
      const a = await ask('[a]pprove, [e]dit title and approve, [r]eject, [s]kip, [q]uit? ');
      if (a === null) break;
      const ans = a.toLowerCase();
      if (ans === 'q') break;
      if (ans === 'a') {
        await act.approve(r.id);
        done.approved++;
      } else if (ans === 'e') {
        const title = await ask(`title [${r.title}]: `);
        if (title === null) break;
        await act.approve(r.id, title ? { title } : {});
        done.approved++;
      } else if (ans === 'r') {
        await act.reject(r.id);
        done.rejected++;
      } else done.skipped++;
    }
  } finally {
    rl.close();
  }
  ctx.io.out(`${done.approved} approved, ${done.rejected} rejected, ${done.skipped} skipped\n`);
}

export default defineCommand({
  command: 'review',
  describe: 'review pending proposals: list them, --approve ID, --reject ID (interactive in a terminal)',
  builder: (y) =>
    y
      .option('approve', {
        type: 'string',
        array: true,
        describe: 'approve these pending ids (becomes active)',
      })
      .option('reject', {
        type: 'string',
        array: true,
        describe: 'reject these pending ids (removed, never proposed again here)',
      })
      .option('title', { type: 'string', describe: 'with one --approve: edit the title first' })
      .option('content', { type: 'string', describe: 'with one --approve: replace the body first' }),
  async run(a, ctx) {
    const store = await openStore(ctx);
    const rv = await import('../agents/review.js');
    const approve = list(a.approve);
    const reject = list(a.reject);
    if ((a.title !== undefined || a.content !== undefined) && approve.length !== 1) {
      throw err(
        'E_INVALID_ARG',
        '--title/--content edit one proposal',
        'pass exactly one --approve ID with them',
      );
    }
    if (approve.length || reject.length) {
      const both = approve.filter((x) => reject.includes(x));
      if (both.length) throw err('E_INVALID_ARG', `${both[0]} is both approved and rejected`, 'pick one');
      // resolve every id first so a typo changes nothing
      const cat = await store.catalog();
      for (const id of [...approve, ...reject]) {
        const full = cat.resolve(id);
        if (cat.entries.get(full)?.status !== 'pending')
          throw err(
            'E_INVALID_ARG',
            `${id} is ${cat.entries.get(full)?.status}, not pending`,
            'see the queue with git mem review',
          );
      }
      const out: Array<{ id: string; action: string; title: string }> = [];
      for (const id of approve) {
        const r = await rv.approveProposal(store, id, {
          title: a.title === undefined ? undefined : String(a.title),
          body: a.content === undefined ? undefined : String(a.content),
        });
        out.push({ id: r.id, action: 'approved', title: r.title });
      }
      for (const id of reject) {
        const r = await rv.rejectProposal(store, id);
        out.push({ id: r.id, action: 'rejected', title: r.title });
      }
      emit(ctx, out, () => out.map((o) => `${o.action} ${o.id.slice(0, 12)} ${o.title}`).join('\n'));
      return;
    }
    const items = await rv.listPending(store);
    if (!ctx.json && ctx.io.isTTY && ctx.io.stdinIsTTY && items.length) {
      await interactive(ctx, items, {
        approve: (id, e) => rv.approveProposal(store, id, e),
        reject: (id) => rv.rejectProposal(store, id),
      });
      return;
    }
    emit(ctx, items.map(rv.proposalJSON), () =>
      items.length
        ? `${items.map(pendingText).join('\n\n')}\n\nApprove with git mem review --approve ID, reject with --reject ID.`
        : 'No pending proposals.',
    );
  },
});
