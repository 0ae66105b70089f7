// git-mem, the real product: its CLI (bin/git-mem.js of this checkout; `npm run build` first) in a
// temporary `git clone --shared` of the repository, as eval/anchors/real.mjs drives it. The
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

function gm(cwd, argv, input) {
  return execFileSync(process.execPath, [BIN, ...argv], {
    cwd,
    encoding: 'utf8',
    input,
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', GIT_MEM_NO_UPDATE_CHECK: '1', CI: 'true' },
  });
}

export default {
  name: 'git-mem',
  source: 'git-mem anchors (docs/anchors.md): git diff line mapping, search of the anchored text with context, whole-tree rename/move detection, tree-sitter symbols',
  judge({ rd, base, targets, anchors }) {
    const dir = mkdtempSync(join(tmpdir(), 'gm-stale-'));
    try {
      execFileSync('git', ['clone', '-q', '--shared', '--no-checkout', rd.gitDir, dir], { stdio: 'pipe' });
      const g = (argv) => execFileSync('git', ['-C', dir, ...argv], { encoding: 'utf8', stdio: 'pipe' });
      g(['checkout', '-q', '-B', 'benchbase', base]);
      g(['config', 'user.name', 'bench']);
      g(['config', 'user.email', 'bench@example.invalid']);
      g(['config', 'mem.default-branch', 'benchbase']);
      gm(dir, ['init']);
      // the anchored code is public code under test, not this user's: tokens in test fixtures are expected
      gm(dir, ['config', 'set', 'secret-scan', 'off']);
      const jsonl = anchors
        .map((an, i) =>
          JSON.stringify({
            type: 'architecture',
            title: `anchor ${i} ${an.path}`,
            body: `bench anchor ${i}`,
            tags: [`a${i}`],
            anchors: [an.kind === 'symbol' ? { path: an.path, symbol: an.symbol, commit: base } : { path: an.path, lines: an.lines, commit: base }],
          }),
        )
        .join('\n');
      gm(dir, ['import', '--jsonl', '-'], `${jsonl}\n`);
      gm(dir, ['check']); // completes the imported anchors at the base commit (HEAD)
      return targets.map((B) => {
        const r = JSON.parse(gm(dir, ['check', '--rev', B, '--dry-run', '--verbose', '--json']));
        const byIdx = new Map();
        for (const x of r.results ?? []) {
          const m = /^anchor (\d+) /.exec(x.title ?? '');
          if (m) byIdx.set(Number(m[1]), x);
        }
        return anchors.map((an, i) => {
          const x = byIdx.get(i);
          if (!x) return { stale: false, to: null, error: 'no verdict' };
          let to = x.to ?? null;
          // the blob fast path lists {path} without lines: the same blob at the same path is the same range
          if (to && !to.lines && to.path === an.path && !STALE.has(x.status)) to = { path: to.path, lines: x.from?.lines ?? an.lines };
          return { stale: STALE.has(x.status), to: STALE.has(x.status) ? null : to, status: x.status, reason: x.reason };
        });
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
