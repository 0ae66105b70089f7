#!/usr/bin/env node
// `npm run bench:staleness [-- --quick] [-- --json]`: code-memory staleness on public histories.
// Anchors (line ranges and symbols) sampled with a seed at commits A; each system says, at later
// commits B (1, 10, 50, 200 first-parent commits on) and in constructed cases (rename, move across
// files, squash, rebase), whether each anchor is stale and where it is; an oracle that uses only
// git says what is true. Methods: bench/staleness/README.md. The mirrors are read from
// $GIT_MEM_BENCH_MIRRORS (bench/staleness/fetch.sh clones them); missing ones are skipped.
//
//   --quick           a subset (1 base commit per repository, fewer anchors): < 10 min on 2 cores
//   --json            print the summary as one JSON document, the last line of the output
//   --repos a,b       only repositories whose name contains one of these
//   --systems a,b     only these systems
//   --seed S          the sampling seed (default 32)
//   --out FILE        where the full run writes its results (default bench/staleness/RESULTS.md)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, homedir, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { argOpt as opt } from '../lib.mjs';
import { ADAPTERS } from './adapters/index.mjs';
import { buildCases, scratchClone } from './cases.mjs';
import { git, mulberry32, reader, renamesBetween } from './git.mjs';
import { exactPlace, movedRow, score } from './metrics.mjs';
import { label, truthOf } from './oracle.mjs';
import { REPOS } from './repos.mjs';
import { lineAnchors, sourceFiles, symbolAnchors } from './sample.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const QUICK = args.includes('--quick');
const JSON_OUT = args.includes('--json');
const SEED = Number(opt('seed', '32'));
const DISTANCES = [1, 10, 50, 200];
const P = QUICK
  ? { bases: 1, lines: 10, symbols: 4, spacing: 150, sizes: { rename: 3, move: 4, series: 6, seriesSymbols: 2 } }
  : { bases: 3, lines: 25, symbols: 10, spacing: 150, sizes: { rename: 4, move: 5, series: 12, seriesSymbols: 4 } };
const MIRRORS = process.env.GIT_MEM_BENCH_MIRRORS ?? join(homedir(), '.cache', 'git-mem-bench');
const log = (...a) => console.error(...a);

function mirrorOf(name) {
  const d = join(MIRRORS, name.replace('/', '+'));
  for (const c of [join(d, 'repo'), d]) if (existsSync(join(c, 'HEAD')) && existsSync(join(c, 'objects'))) return c;
  return null;
}

const repos = REPOS.filter((r) => !opt('repos') || opt('repos').split(',').some((x) => r.name.includes(x)))
  .map((r) => ({ ...r, gitDir: mirrorOf(r.name) }))
  .filter((r) => {
    if (!r.gitDir) log(`skipping ${r.name}: no mirror under ${MIRRORS} (run bench/staleness/fetch.sh)`);
    return !!r.gitDir;
  });
const systems = ADAPTERS.filter((a) => !opt('systems') || opt('systems').split(',').includes(a.name));
if (!repos.length) {
  log(`bench:staleness: no repository mirrors under ${MIRRORS}; fetch them with bench/staleness/fetch.sh (GIT_MEM_BENCH_MIRRORS=dir)`);
  if (JSON_OUT) console.log(JSON.stringify({ systems: [] }));
  process.exit(0);
}

const t0 = performance.now();
const rows = []; // {repo, group, kind, anchor, base, target, oracle, truth, verdicts}
const time = new Map(systems.map((s) => [s.name, { ms: 0, n: 0 }]));

/**
 * Every system judges one batch: anchors made at `base`, each meant for some groups, and targets
 * [{commit, group}]. Systems judge every anchor at every target (one git-mem session per batch);
 * rows, labelled by the oracle, are kept for the anchors of the target's group.
 */
async function judge(rd, repo, base, targets, anchors) {
  if (!anchors.length || !targets.length) return;
  const commits = targets.map((t) => t.commit);
  const verdicts = {};
  for (const s of systems) {
    const t = performance.now();
    try {
      // a reader of its own: each system pays for the git reads it makes
      verdicts[s.name] = await s.judge({ rd: reader(rd.gitDir), base, targets: commits, anchors });
    } catch (e) {
      log(`${repo.name} ${base.slice(0, 10)}: ${s.name} failed: ${String(e.stderr ?? e.message).split('\n')[0]}`);
      verdicts[s.name] = null;
    }
    const tm = time.get(s.name);
    tm.ms += performance.now() - t;
    tm.n += anchors.length * commits.length;
  }
  targets.forEach(({ commit: B, group }, ti) => {
    const renames = renamesBetween(rd.gitDir, base, B);
    anchors.forEach((an, ai) => {
      if (!an.groups.includes(group)) return;
      const oracle = label(rd, base, B, renames, an);
      const v = {};
      for (const s of systems) if (verdicts[s.name]) v[s.name] = verdicts[s.name][ti][ai];
      rows.push({ repo: repo.name, group, kind: an.kind, anchor: an, base, target: B, oracle, truth: truthOf(oracle.label), verdicts: v });
    });
  });
}

const pinned = [];
for (const repo of repos) {
  const rs = performance.now();
  const rand = mulberry32(SEED ^ (repo.name.length * 7919));
  let fp;
  try {
    fp = git(repo.gitDir, ['rev-list', '--first-parent', '--reverse', repo.head]).trim().split('\n');
  } catch {
    log(`skipping ${repo.name}: the mirror lacks commit ${repo.head}`);
    continue;
  }
  pinned.push(repo);
  const bases = [];
  for (let k = 0; k < P.bases; k++) {
    const iA = fp.length - 1 - 200 - k * P.spacing;
    if (iA >= 0) bases.push(iA);
  }
  // a scratch clone (shared objects) holds the constructed commits beside the whole history
  const scratch = scratchClone(repo.gitDir);
  try {
    const rd = reader(scratch.gitDir);
    const cases = buildCases(rd, repo, fp, bases[0], rand, P.sizes, scratch.dir);
    for (const iA of bases) {
      const A = fp[iA];
      const far = fp[iA + 200];
      const files = sourceFiles(rd, repo, A, far);
      const groups = DISTANCES.map((d) => `+${d}`);
      const anchors = [...lineAnchors(rd, repo, A, far, rand, P.lines, files), ...symbolAnchors(rd, repo, A, far, rand, P.symbols, files)].map(
        (an) => ({ ...an, groups }),
      );
      const targets = DISTANCES.map((d, i) => ({ commit: fp[iA + d], group: groups[i] }));
      // the cases made on this base commit join its batch
      for (const c of cases.filter((c) => c.base === A)) {
        anchors.push(...c.anchors.map((an) => ({ ...an, groups: [c.group] })));
        targets.push({ commit: c.target, group: c.group });
      }
      await judge(rd, repo, A, targets, anchors);
    }
    // the cases on other base commits (squash and rebase: anchors made on an original commit)
    const others = new Map();
    for (const c of cases.filter((c) => !bases.some((iA) => fp[iA] === c.base))) {
      const b = others.get(c.base) ?? { anchors: new Map(), targets: [] };
      for (const an of c.anchors) {
        const key = `${an.kind}:${an.path}:${an.lines.join('-')}`;
        const had = b.anchors.get(key);
        if (had) had.groups.push(c.group);
        else b.anchors.set(key, { ...an, groups: [c.group] });
      }
      b.targets.push({ commit: c.target, group: c.group });
      others.set(c.base, b);
    }
    for (const [base, b] of others) await judge(rd, repo, base, b.targets, [...b.anchors.values()]);
  } finally {
    scratch.remove();
  }
  log(`${repo.name}: ${rows.filter((r) => r.repo === repo.name).length} judgements (${((performance.now() - rs) / 1000).toFixed(1)} s)`);
}
const secs = (performance.now() - t0) / 1000;
/** CPU seconds of this process and the processes it waited for (Linux /proc; null elsewhere). */
function cpuSeconds() {
  const own = process.cpuUsage();
  let children = 0;
  try {
    const f = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
    children = (Number(f[13]) + Number(f[14])) / 100; // cutime + cstime, in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
  return (own.user + own.system) / 1e6 + children;
}
const cpu = cpuSeconds();
const load = loadavg();

// ------------------------------------------------------------------ report
const GROUPS = [...DISTANCES.map((d) => `+${d}`), 'rename', 'move', 'squash', 'rebase'];
const pct = (x) => `${(100 * x).toFixed(1)} %`;
const summary = systems.map((s) => {
  const t = time.get(s.name);
  return { name: s.name, ...score(rows, s.name), msPerAnchor: Number((t.ms / Math.max(1, t.n)).toFixed(3)) };
});

const md = [];
md.push(`# Code-memory staleness benchmark: results${QUICK ? ' (quick subset)' : ''}`);
md.push('');
md.push(
  `${rows.length} anchor judgements (${rows.filter((r) => r.truth === 'stale').length} stale, ${rows.filter((r) => r.truth === 'valid').length} valid, ${rows.filter((r) => !r.truth).length} the oracle is unsure of) in ${pinned.length} repositories; methods, oracle and its limits: [README.md](README.md).`,
);
md.push('');
md.push('## All judgements');
md.push('');
md.push('| system | judged | stale served | false stale | exact relocation | ms per anchor |');
md.push('|---|---:|---:|---:|---:|---:|');
for (const s of summary)
  md.push(
    `| ${s.name} | ${s.n} | ${s.staleServedCount} of ${s.stale} = ${pct(s.staleServed)} | ${s.falseStaleCount} of ${s.valid} = ${pct(s.falseStale)} | ${s.relocationExactCount} of ${s.moved} = ${pct(s.relocationExact)} | ${s.msPerAnchor} |`,
  );
md.push('');
md.push('## Per distance and case');
md.push('');
md.push('Stale served / false stale / exact relocation, as counts of the stale, valid and moved anchors of the group.');
md.push('');
md.push(`| group | stale | valid | moved | ${systems.map((s) => s.name).join(' | ')} |`);
md.push(`|---|---:|---:|---:|${systems.map(() => '---').join('|')}|`);
for (const g of GROUPS) {
  const gr = rows.filter((r) => r.group === g);
  if (!gr.length) continue;
  const any = score(gr, systems[0].name);
  md.push(
    `| ${g} | ${any.stale} | ${any.valid} | ${any.moved} | ${systems
      .map((s) => {
        const x = score(gr, s.name);
        return `${x.staleServedCount} / ${x.falseStaleCount} / ${x.relocationExactCount}`;
      })
      .join(' | ')} |`,
  );
}
md.push('');
md.push('## Per anchor kind');
md.push('');
md.push(`| kind | stale | valid | moved | ${systems.map((s) => s.name).join(' | ')} |`);
md.push(`|---|---:|---:|---:|${systems.map(() => '---').join('|')}|`);
for (const k of ['lines', 'symbol']) {
  const gr = rows.filter((r) => r.kind === k);
  if (!gr.length) continue;
  const any = score(gr, systems[0].name);
  md.push(
    `| ${k} | ${any.stale} | ${any.valid} | ${any.moved} | ${systems
      .map((s) => {
        const x = score(gr, s.name);
        return `${x.staleServedCount} / ${x.falseStaleCount} / ${x.relocationExactCount}`;
      })
      .join(' | ')} |`,
  );
}
md.push('');
md.push('## Per repository (git-mem)');
md.push('');
md.push('| repository | language | judged | stale served | false stale | exact relocation |');
md.push('|---|---|---:|---:|---:|---:|');
for (const repo of pinned) {
  const x = score(rows.filter((r) => r.repo === repo.name), 'git-mem');
  md.push(`| ${repo.name} | ${repo.lang} | ${x.n} | ${x.staleServedCount} of ${x.stale} | ${x.falseStaleCount} of ${x.valid} | ${x.relocationExactCount} of ${x.moved} |`);
}
md.push('');
md.push('## git-mem misses');
md.push('');
md.push('Stale anchors git-mem served, valid anchors it called stale, and moved anchors it placed elsewhere than the oracle:');
md.push('');
const loc = (l) => (l ? `${l.path}:${l.lines ? l.lines.join('-') : '?'}` : '—');
const misses = rows.filter((r) => {
  const v = r.verdicts['git-mem'];
  if (!v || !r.truth) return false;
  if (r.truth === 'stale') return !v.stale;
  return v.stale || (movedRow(r) && !exactPlace(r, v.to));
});
if (!misses.length) md.push('None.');
for (const r of misses.slice(0, 80)) {
  const v = r.verdicts['git-mem'];
  md.push(
    `- ${r.repo} ${r.group} ${r.kind} \`${r.anchor.path}:${r.anchor.lines.join('-')}\`${r.anchor.symbol ? ` (${r.anchor.symbol})` : ''} at ${r.base.slice(0, 10)} → ${r.target.slice(0, 10)}: oracle **${r.oracle.label}** (${r.oracle.rule}${r.oracle.to ? ` → ${loc(r.oracle.to)}` : ''}), git-mem **${v.status ?? v.error}** ${v.to ? `→ ${loc(v.to)}` : ''} — ${v.reason ?? ''}`,
  );
}
if (misses.length > 80) md.push(`- … and ${misses.length - 80} more`);
md.push('');
md.push('## Oracle unsure (excluded)');
md.push('');
const uns = rows.filter((r) => !r.truth);
const byRule = new Map();
for (const r of uns) byRule.set(r.oracle.rule, (byRule.get(r.oracle.rule) ?? 0) + 1);
md.push(uns.length ? `${uns.length}: ${[...byRule].map(([k, n]) => `${k} ${n}`).join(', ')}` : 'None.');
md.push('');
md.push('## Conditions');
md.push('');
const gitVersion = execFileSync('git', ['--version'], { encoding: 'utf8' }).trim();
md.push(`- Command: \`npm run bench:staleness --${QUICK ? ' --quick' : ''}\` (seed ${SEED}; ${P.bases} base commit(s) per repository, ${P.lines} line and ${P.symbols} symbol anchors each; distances ${DISTANCES.join(', ')} first-parent commits)`);
md.push(
  `- Date ${new Date().toISOString()}; ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; node ${process.version}; ${gitVersion}`,
);
md.push(
  `- Time: ${secs.toFixed(0)} s wall${cpu === null ? '' : `, ${cpu.toFixed(0)} s of CPU (this process and its git and git-mem processes; the run is sequential, so about its wall time on an otherwise idle machine)`}; load average at the end ${load.map((x) => x.toFixed(1)).join(' ')}`,
);
md.push('- git-mem: the CLI of this checkout (bin/git-mem.js → dist), one clone per base commit and case; its time per anchor includes the clone, checkout, import and the completing check');
md.push('- Repositories (first-parent history of the pinned commit):');
for (const r of pinned) md.push(`  - ${r.name} (${r.lang}) ${r.head}`);
md.push('');

const out = opt('out', join(here, QUICK ? 'RESULTS-quick.md' : 'RESULTS.md'));
writeFileSync(out, md.join('\n'));
log(md.slice(0, 14).join('\n'));
log(`\nwrote ${out} (${secs.toFixed(1)} s)`);
if (JSON_OUT) console.log(JSON.stringify({ systems: summary }));
