// git-mem, the real product: its CLI (bin/git-mem.js of this checkout; `npm run build` first) in a
// temporary `git clone --shared` of the repository (withGitMemClone, eval/anchors/real.mjs's driver too). The
// anchors are imported at their commit (`git mem import`; line anchors as path + lines, symbol
// anchors as path + symbol name), one `git mem check` completes them there, then one
// `git mem check --rev B --dry-run --verbose --json` per target judges them all.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = process.env.GIT_MEM_BENCH_BIN ?? join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'bin', 'git-mem.js');
const STALE = new Set(['changed', 'deleted', 'symbol_removed', 'symbol_renamed']);

function gm(bin, cwd, argv, input) {
  return execFileSync(process.execPath, [bin, ...argv], {
    cwd,
    encoding: 'utf8',
    input,
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', GIT_MEM_NO_UPDATE_CHECK: '1', CI: 'true' },
  });
}

/**
 * The CLI `bin` in a temporary `git clone --shared` of `gitDir` whose default branch is at `base`,
 * holding `records` (record i titled `anchor i …`), imported and completed there by one `git mem
 * check`; calls `fn(check)`, where check(B) runs `check --rev B --dry-run --verbose --json` and
 * returns {byIdx: record index → its result, counts, ms}. Also eval/anchors/real.mjs's driver.
 */
export function withGitMemClone({ gitDir, base, records, bin = BIN }, fn) {
  const dir = mkdtempSync(join(tmpdir(), 'gm-anchors-'));
  try {
    execFileSync('git', ['clone', '-q', '--shared', '--no-checkout', gitDir, dir], { stdio: 'pipe' });
    const g = (argv) => execFileSync('git', ['-C', dir, ...argv], { encoding: 'utf8', stdio: 'pipe' });
    g(['checkout', '-q', '-B', 'benchbase', base]);
    g(['config', 'user.name', 'bench']);
    g(['config', 'user.email', 'bench@example.invalid']);
    g(['config', 'mem.default-branch', 'benchbase']);
    gm(bin, dir, ['init']);
    // the anchored code is public code under test, not this user's: tokens in test fixtures are expected
    gm(bin, dir, ['config', 'set', 'secret-scan', 'off']);
    gm(bin, dir, ['import', '--jsonl', '-'], `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
    gm(bin, dir, ['check']); // completes the imported anchors at the base commit (HEAD)
    return fn((B) => {
      const t0 = performance.now();
      const r = JSON.parse(gm(bin, dir, ['check', '--rev', B, '--dry-run', '--verbose', '--json']));
      const ms = performance.now() - t0;
      const byIdx = new Map();
      for (const x of r.results ?? []) {
        const m = /^anchor (\d+) /.exec(x.title ?? '');
        if (m) byIdx.set(Number(m[1]), x);
      }
      return { byIdx, counts: r.counts, ms };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export default {
  name: 'git-mem',
  source: 'git-mem anchors (docs/anchors.md): git diff line mapping, search of the anchored text with context, whole-tree rename/move detection, tree-sitter symbols',
  judge({ rd, base, targets, anchors }) {
    const records = anchors.map((an, i) => ({
      type: 'architecture',
      title: `anchor ${i} ${an.path}`,
      body: `bench anchor ${i}`,
      tags: [`a${i}`],
      anchors: [an.kind === 'symbol' ? { path: an.path, symbol: an.symbol, commit: base } : { path: an.path, lines: an.lines, commit: base }],
    }));
    return withGitMemClone({ gitDir: rd.gitDir, base, records }, (check) =>
      targets.map((B) => {
        const { byIdx } = check(B);
        return anchors.map((an, i) => {
          const x = byIdx.get(i);
          if (!x) return { stale: false, to: null, error: 'no verdict' };
          let to = x.to ?? null;
          // the blob fast path lists {path} without lines: the same blob at the same path is the same range
          if (to && !to.lines && to.path === an.path && !STALE.has(x.status)) to = { path: to.path, lines: x.from?.lines ?? an.lines };
          return { stale: STALE.has(x.status), to: STALE.has(x.status) ? null : to, status: x.status, reason: x.reason };
        });
      }),
    );
  },
};
