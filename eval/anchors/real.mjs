#!/usr/bin/env node
// `npm run eval:anchors:real`: git-mem's anchor verdicts on real histories of
// public projects, against labels from an oracle that uses only git itself
// (git diff, git grep, git cat-file) — the rules are in eval/anchors/REAL.md.
//
// For each repository (bare mirrors fetched under /work/.mirror/<owner>+<name>/repo,
// or GIT_MEM_REAL_MIRRORS=dir): commits A on the first-parent history, random
// informative line ranges at A, later commits B (A + 20 and A + 200 first-parent
// commits). The real CLI (bin/git-mem.js; run `npm run build` first) judges them
// in a temporary `git clone --shared`: import the anchors at A, `check` to
// complete them there, then `check --rev B --dry-run --verbose --json`.
// Writes eval/anchors/RESULTS-real.md.
//
//   node eval/anchors/real.mjs [--repos a,b] [--anchors N] [--bases N] [--seed S] [--verbose]
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// the git reads, the oracle and the CLI driver are the staleness benchmark's (one implementation)
import { argOpt as opt } from '../../bench/lib.mjs';
import { withGitMemClone } from '../../bench/staleness/adapters/git-mem.mjs';
import { git, hunks, mulberry32, occurrences, reader, renamesBetween } from '../../bench/staleness/git.mjs';
import { elsewhere, label } from '../../bench/staleness/oracle.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const BIN = join(root, 'bin', 'git-mem.js');
const args = process.argv.slice(2);
const VERBOSE = args.includes('--verbose');
const MIRRORS = process.env.GIT_MEM_REAL_MIRRORS ?? '/work/.mirror';
const ANCHORS = Number(opt('anchors', '25')); // per base commit A, text unique in the repository
const SHARED = Number(opt('shared', '8')); // per base commit A, text also in other files (boilerplate)
const BASES = Number(opt('bases', '3')); // base commits A per repository
const SEED = Number(opt('seed', '13'));
const GAPS = (opt('gaps', '20,200') ?? '').split(',').map(Number);

const REPOS = [
  { name: 'expressjs/express', lang: 'JavaScript', ext: /\.(js|mjs|cjs)$/ },
  { name: 'pallets/flask', lang: 'Python', ext: /\.py$/ },
  { name: 'spf13/cobra', lang: 'Go', ext: /\.go$/ },
  { name: 'vuejs/core', lang: 'TypeScript', ext: /\.(ts|tsx)$/ },
].filter((r) => !opt('repos') || opt('repos').split(',').some((x) => r.name.includes(x)));
const SKIP_PATH = /(^|\/)(node_modules|vendor|dist|third_party)\/|\.min\.js$|\.d\.ts$/;

// ------------------------------------------------------------------ anchor selection
const informative = (l) => (l.match(/[A-Za-z0-9_]/g) ?? []).length >= 6 && /[A-Za-z_]{3,}/.test(l);
function pickAnchors(rd, repo, A, B, rand, n, shared = false) {
  const tree = rd.tree(A);
  const srcs = [...tree.keys()].filter((p) => repo.ext.test(p) && !SKIP_PATH.test(p));
  const changed = new Set(
    git(repo.gitDir, ['diff', '--name-only', '--no-renames', A, B])
      .split('\n')
      .filter((p) => tree.has(p) && repo.ext.test(p) && !SKIP_PATH.test(p)),
  );
  const changedList = [...changed];
  const out = [];
  const seen = new Set();
  for (let tries = 0; out.length < n && tries < n * (shared ? 30 : 60); tries++) {
    // two thirds from files the larger gap changes (so edits happen), one third from any file
    const fromChanged = changedList.length && rand() < 2 / 3;
    const path = fromChanged
      ? changedList[Math.floor(rand() * changedList.length)]
      : srcs[Math.floor(rand() * srcs.length)];
    if (!path) break;
    const lines = rd.lines(tree.get(path));
    if (lines.length < 5 || lines.length > 20000) continue;
    const len = 3 + Math.floor(rand() * 13); // 3..15
    let s = 1 + Math.floor(rand() * Math.max(1, lines.length - len + 1));
    if (fromChanged && rand() < 0.5) {
      // half of those start near a hunk of A..B, where edits are likely
      const hs = hunks(repo.gitDir, tree.get(path), rd.tree(B).get(path) ?? tree.get(path));
      if (hs.length) {
        const h = hs[Math.floor(rand() * hs.length)];
        s = Math.max(1, h.a - Math.floor(rand() * len));
      }
    }
    const e = Math.min(lines.length, s + len - 1);
    if (e - s + 1 < 3) continue;
    const text = lines.slice(s - 1, e);
    const info = text.filter(informative).length;
    const blank = text.filter((l) => !/[A-Za-z0-9_]/.test(l)).length;
    if (info < 2 || info < text.length / 2 || blank > text.length / 3) continue;
    if (text.some((l) => l.length > 300)) continue; // minified or generated
    if (occurrences(lines, text).length !== 1) continue; // must be unique in its file at A …
    // … and in the repository ("unique" stratum), or also in other files ("shared" stratum)
    if (elsewhere(rd, null, A, text, [path]).hits.length > 0 !== shared) continue;
    const key = `${path}:${s}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, lines: [s, e], text, stratum: shared ? 'shared' : 'unique' });
  }
  return out;
}

// ------------------------------------------------------------------ git-mem (the real CLI)
function judgeWithGitMem(repo, A, Bs, anchors) {
  const records = anchors.map((an, i) => ({
    type: 'architecture',
    title: `anchor ${i} ${an.path}:${an.lines[0]}-${an.lines[1]}`,
    body: `eval anchor ${i}`,
    tags: [`a${i}`],
    anchors: [{ path: an.path, lines: an.lines, commit: A }],
  }));
  return withGitMemClone({ gitDir: repo.gitDir, base: A, records, bin: BIN }, (check) => new Map(Bs.map((B) => [B, check(B)])));
}

// ------------------------------------------------------------------ run
const LABELS = ['fresh', 'moved', 'renamed', 'changed', 'deleted', 'ambiguous'];
const VERDICTS = ['fresh', 'moved', 'renamed', 'changed', 'symbol_removed', 'symbol_renamed', 'deleted', 'ambiguous', 'missing'];
const present = REPOS.map((r) => ({ ...r, gitDir: join(MIRRORS, `${r.name.replace('/', '+')}`, 'repo') })).filter(
  (r) => existsSync(r.gitDir),
);
if (!present.length) {
  console.log(
    `eval:anchors:real: no repository mirrors under ${MIRRORS} (fetch github:expressjs/express, pallets/flask, spf13/cobra, vuejs/core as bare repos at <dir>/<owner>+<name>/repo); skipped`,
  );
  process.exit(0);
}
for (const r of REPOS)
  if (!present.includes(r) && !present.some((p) => p.name === r.name)) console.log(`skipping ${r.name}: no mirror`);

const t0 = performance.now();
const rows = []; // {repo, A, B, gap, anchor, oracle, verdict}
const checkMs = [];
for (const repo of present) {
  const rand = mulberry32(SEED ^ repo.name.length * 7919);
  const rd = reader(repo.gitDir);
  const fp = git(repo.gitDir, ['rev-list', '--first-parent', '--reverse', 'HEAD']).trim().split('\n');
  const maxGap = Math.max(...GAPS);
  const head = fp.length - 1 - maxGap;
  for (let k = 0; k < BASES; k++) {
    const ai = head - k * Math.max(1, Math.floor((head - 1) / (BASES + 1)));
    if (ai < 0) break;
    const A = fp[ai];
    const Bs = GAPS.map((g) => fp[ai + g]);
    const anchors = [
      ...pickAnchors(rd, repo, A, Bs[Bs.length - 1], rand, ANCHORS),
      ...pickAnchors(rd, repo, A, Bs[Bs.length - 1], rand, SHARED, true),
    ];
    const verdicts = judgeWithGitMem(repo, A, Bs, anchors);
    GAPS.forEach((gap, gi) => {
      const B = Bs[gi];
      const renames = renamesBetween(repo.gitDir, A, B, { copies: false });
      const v = verdicts.get(B);
      checkMs.push({ repo: repo.name, n: anchors.length, ms: v.ms });
      anchors.forEach((an, i) => {
        const oracle = label(rd, A, B, renames, an);
        const x = v.byIdx.get(i);
        // `check --verbose` lists blob-fast-path anchors as {path} without lines
        // (the cached index has none): the same blob at the same path is the same range.
        let to = x?.to ?? null;
        if (to && !to.lines && to.path === an.path && /same blob/.test(x.reason ?? '')) to = { path: to.path, lines: an.lines };
        const verdict = x ? { status: x.status, to, reason: x.reason, confidence: x.confidence } : { status: 'missing' };
        rows.push({ repo: repo.name, A, B, gap, anchor: an, oracle, verdict });
        if (VERBOSE && oracle.label !== verdict.status)
          console.log(`${repo.name} +${gap} ${an.path}:${an.lines.join('-')} oracle=${oracle.label} git-mem=${verdict.status} ${verdict.reason ?? ''}`);
      });
    });
    console.log(`${repo.name} A=${A.slice(0, 10)} ${anchors.length} anchors, gaps ${GAPS.join('/')}: done (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
}
const secs = (performance.now() - t0) / 1000;

// ------------------------------------------------------------------ report
const sameLoc = (a, b) => a && b && a.path === b.path && a.lines?.[0] === b.lines?.[0] && a.lines?.[1] === b.lines?.[1];
function matrix(rs) {
  const m = new Map();
  for (const r of rs) {
    const k = `${r.oracle.label}|${r.verdict.status}`;
    m.set(k, (m.get(k) ?? 0) + 1);
  }
  const cols = VERDICTS.filter((v) => rs.some((r) => r.verdict.status === v) || ['fresh', 'moved', 'renamed', 'changed', 'deleted', 'ambiguous'].includes(v));
  const lab = [...LABELS, 'unsure'].filter((l) => rs.some((r) => r.oracle.label === l) || LABELS.includes(l));
  const lines = [`| oracle \\ git-mem | ${cols.join(' | ')} | total |`, `|---|${cols.map(() => '---:').join('|')}|---:|`];
  for (const l of lab) {
    const cells = cols.map((c) => m.get(`${l}|${c}`) ?? 0);
    lines.push(`| ${l} | ${cells.map((x) => x || '·').join(' | ')} | ${cells.reduce((a, b) => a + b, 0)} |`);
  }
  return lines.join('\n');
}
function stats(rs) {
  const sure = rs.filter((r) => r.oracle.label !== 'unsure');
  const edited = sure.filter((r) => r.oracle.label === 'changed' || r.oracle.label === 'deleted');
  const editedOk = edited.filter((r) => ['fresh', 'moved', 'renamed'].includes(r.verdict.status));
  const reloc = sure.filter((r) => r.oracle.label === 'moved' || r.oracle.label === 'renamed');
  const relocExact = reloc.filter((r) => ['moved', 'renamed', 'fresh'].includes(r.verdict.status) && sameLoc(r.verdict.to, r.oracle.to));
  const intact = sure.filter((r) => ['fresh', 'moved', 'renamed'].includes(r.oracle.label));
  const intactExact = intact.filter((r) => ['moved', 'renamed', 'fresh'].includes(r.verdict.status) && sameLoc(r.verdict.to, r.oracle.to));
  const intactStale = intact.filter((r) => ['changed', 'deleted', 'symbol_removed', 'symbol_renamed'].includes(r.verdict.status));
  const exact = sure.filter((r) => {
    if (r.oracle.label === 'ambiguous') return r.verdict.status === 'ambiguous';
    if (r.oracle.label === 'changed' || r.oracle.label === 'deleted') return r.verdict.status === r.oracle.label;
    return r.verdict.status === r.oracle.label && sameLoc(r.verdict.to, r.oracle.to);
  });
  const staleAgree = sure.filter((r) => {
    const os = r.oracle.label === 'changed' || r.oracle.label === 'deleted';
    const vs = ['changed', 'deleted', 'symbol_removed', 'symbol_renamed'].includes(r.verdict.status);
    return os === vs;
  });
  return { n: rs.length, unsure: rs.length - sure.length, sure, edited, editedOk, reloc, relocExact, intact, intactExact, intactStale, exact, staleAgree };
}
const pct = (a, b) => (b ? `${((100 * a) / b).toFixed(1)} %` : 'n/a');
const s = stats(rows);
const md = [];
md.push('## anchors on real histories');
md.push('');
md.push(
  `${rows.length} anchor judgements (${rows.length / GAPS.length} line anchors × ${GAPS.length} later commits: +${GAPS.join(' and +')} first-parent commits) in ${present.length} public repositories, ${secs.toFixed(1)} s. Command: \`npm run eval:anchors:real\` (seed ${SEED}; per base commit ${ANCHORS} anchors of the unique stratum and up to ${SHARED} of the shared one; ${BASES} base commits per repository). Oracle and rules: [REAL.md](REAL.md).`,
);
md.push('');
md.push(`- **Edited anchors (oracle changed or deleted) called fresh, moved or renamed: ${s.editedOk.length} of ${s.edited.length}** (goal 0)`);
md.push(`- Moved/renamed anchors relocated to the exact range: ${s.relocExact.length} of ${s.reloc.length} = ${pct(s.relocExact.length, s.reloc.length)}`);
md.push(`- Intact anchors (fresh + moved + renamed) at the exact range: ${s.intactExact.length} of ${s.intact.length} = ${pct(s.intactExact.length, s.intact.length)}; called stale: ${s.intactStale.length}`);
md.push(`- Stale or not, as the oracle says: ${s.staleAgree.length} of ${s.sure.length} = ${pct(s.staleAgree.length, s.sure.length)}`);
md.push(`- Verdict exactly right (status, and range where one is expected): ${s.exact.length} of ${s.sure.length} = ${pct(s.exact.length, s.sure.length)}`);
md.push(`- Oracle unsure (excluded from the figures above): ${s.unsure}`);
md.push('');
md.push('Overall confusion matrix (rows: oracle label, columns: git-mem verdict):');
md.push('');
md.push(matrix(rows));
md.push('');
md.push('Per stratum (unique: the anchored text is nowhere else in the repository at A; shared: it also occurs in other files at A, boilerplate that a cross-file search could take for the anchor):');
md.push('');
md.push('| stratum | judgements | unsure | edited called fresh/moved/renamed | relocation exact | stale or not as the oracle says | verdict exactly right |');
md.push('|---|---:|---:|---:|---:|---:|---:|');
for (const st of ['unique', 'shared']) {
  const t = stats(rows.filter((r) => r.anchor.stratum === st));
  md.push(
    `| ${st} | ${t.n} | ${t.unsure} | ${t.editedOk.length} of ${t.edited.length} | ${t.relocExact.length} of ${t.reloc.length} | ${t.staleAgree.length} of ${t.sure.length} | ${t.exact.length} of ${t.sure.length} |`,
  );
}
md.push('');
md.push('Shared stratum alone:');
md.push('');
md.push(matrix(rows.filter((r) => r.anchor.stratum === 'shared')));
md.push('');
md.push('Per repository:');
md.push('');
md.push('| repository | language | judgements | unsure | edited called fresh/moved/renamed | relocation exact | verdict exactly right |');
md.push('|---|---|---:|---:|---:|---:|---:|');
for (const repo of present) {
  const t = stats(rows.filter((r) => r.repo === repo.name));
  md.push(
    `| ${repo.name} | ${repo.lang} | ${t.n} | ${t.unsure} | ${t.editedOk.length} of ${t.edited.length} | ${t.relocExact.length} of ${t.reloc.length} | ${t.exact.length} of ${t.sure.length} |`,
  );
}
for (const repo of present) {
  md.push('');
  md.push(`### ${repo.name}`);
  md.push('');
  md.push(matrix(rows.filter((r) => r.repo === repo.name)));
}
md.push('');
md.push('### Ambiguous row');
md.push('');
const amb = rows.filter((r) => r.oracle.label === 'ambiguous');
if (!amb.length) md.push('No anchor was ambiguous at B by the oracle in this sample.');
for (const r of amb)
  md.push(
    `- ${r.repo} ${r.A.slice(0, 10)} +${r.gap} \`${r.anchor.path}:${r.anchor.lines.join('-')}\`: ${r.oracle.candidates.length} copies at B; git-mem: ${r.verdict.status}${r.verdict.to ? ` → ${r.verdict.to.path}:${r.verdict.to.lines?.join('-')}` : ''} (confidence ${r.verdict.confidence ?? '?'})`,
  );
md.push('');
md.push('### Disagreements');
md.push('');
const dis = rows.filter((r) => r.oracle.label !== 'unsure' && !s.exact.includes(r));
if (!dis.length) md.push('None.');
for (const r of dis.slice(0, 60))
  md.push(
    `- ${r.repo} ${r.A.slice(0, 10)} +${r.gap} \`${r.anchor.path}:${r.anchor.lines.join('-')}\`: oracle **${r.oracle.label}** (${r.oracle.rule}${r.oracle.to ? ` → ${r.oracle.to.path}:${r.oracle.to.lines.join('-')}` : ''}), git-mem **${r.verdict.status}**${r.verdict.to ? ` → ${r.verdict.to.path}:${r.verdict.to.lines?.join('-')}` : ''} — ${r.verdict.reason ?? ''}`,
  );
if (dis.length > 60) md.push(`- … and ${dis.length - 60} more`);
md.push('');
md.push('### Unsure');
md.push('');
const uns = rows.filter((r) => r.oracle.label === 'unsure');
if (!uns.length) md.push('None.');
for (const r of uns)
  md.push(`- ${r.repo} ${r.A.slice(0, 10)} +${r.gap} \`${r.anchor.path}:${r.anchor.lines.join('-')}\`: ${r.oracle.why}; git-mem: ${r.verdict.status} — ${r.verdict.reason ?? ''}`);
md.push('');
md.push('Time of `git mem check --rev B` (the CLI process, per base commit and gap):');
md.push('');
for (const repo of present) {
  const ms = checkMs.filter((c) => c.repo === repo.name).map((c) => Math.round(c.ms));
  md.push(`- ${repo.name}: ${ms.join(', ')} ms (${checkMs.find((c) => c.repo === repo.name)?.n} anchors each)`);
}
md.push('');
md.push('Repositories at (first-parent HEAD of the mirror):');
md.push('');
for (const repo of present) md.push(`- ${repo.name} ${git(repo.gitDir, ['rev-parse', 'HEAD']).trim()}`);
md.push('');
writeFileSync(join(here, 'RESULTS-real.md'), `${md.join('\n')}`);
console.log(md.slice(0, 20).join('\n'));
console.log(`\nwrote eval/anchors/RESULTS-real.md (${secs.toFixed(1)} s)`);
