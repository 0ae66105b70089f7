/**
 * `git mem review` in a terminal: one question per proposal, answered here
 * through injected streams (the CLI reads the same questions from the tty).
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Proposal } from '../src/agents/proposal.js';
import { bufferIO } from '../src/cli/context.js';
import { main } from '../src/cli/main.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { makeRepo } from './helpers.js';

const P = (title: string, body: string): Proposal => ({
  type: 'convention',
  title,
  body,
  tags: [],
  source: 'test',
});

describe('interactive review', () => {
  it('approves, approves with a new title, rejects, skips and stops on end of input', async () => {
    const repo = makeRepo();
    await repo.memJson(['init']);
    const store = new Store(await openRepo(repo.dir, repo.env));
    const { writeProposals } = await import('../src/agents/proposal.js');
    const ids = (
      await writeProposals(
        store,
        [
          P('Staging resets every night', 'at 02:00'),
          P('Flags live in flags.yaml', 'one file'),
          P('Use pnpm, not npm', 'the lock file is pnpm-lock.yaml'),
          P('Ports above 8000 in dev', 'avoid clashes'),
          P('Logs go to stderr', 'stdout is for data'),
        ],
        { session: 'sx' },
      ).finally(() => store.close())
    ).map((r) => r.id);
    expect(ids).toHaveLength(5);

    const io = bufferIO();
    io.isTTY = true;
    io.stdinIsTTY = true;
    const output = new PassThrough();
    let shown = '';
    output.on('data', (d) => {
      shown += d;
    });
    // answers: approve, edit the title and approve, reject, skip; then the input ends (Ctrl+D)
    io.terminal = {
      input: Readable.from(['a\n', 'e\n', 'Feature flags live in flags.yaml\n', 'r\n', 's\n']),
      output,
    };
    const code = await main(['review'], io, { cwd: repo.dir, env: repo.env });
    expect(code).toBe(0);
    expect(shown).toContain('[a]pprove, [e]dit title and approve, [r]eject, [s]kip, [q]uit?');
    expect(shown).toContain('title [Flags live in flags.yaml]: ');
    expect(io.stdout).toContain('2 approved, 1 rejected, 1 skipped');

    const show = (id: string) => repo.mem(['show', id, '--json']);
    expect(JSON.parse((await show(ids[0])).stdout)).toMatchObject({
      status: 'active',
      title: 'Staging resets every night',
    });
    expect(JSON.parse((await show(ids[1])).stdout)).toMatchObject({
      status: 'active',
      title: 'Feature flags live in flags.yaml',
    });
    expect((await show(ids[2])).code).toBe(3); // rejected: gone
    // skipped, and the one never asked about once the input ended, still wait
    expect((await repo.memJson(['review'])).map((p: { id: string }) => p.id)).toEqual([ids[3], ids[4]]);
  });
});
