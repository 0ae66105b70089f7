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
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..');
const BIN = join(root, 'bin', 'git-mem.js');
const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
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

function mulberry32(a) {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const git = (gitDir, argv, opts = {}) =>
  execFileSync('git', [`--git-dir=${gitDir}`, ...argv], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...opts,
  });

// ------------------------------------------------------------------ git reading (cached)
function reader(gitDir) {
  const files = new Map();
  const trees = new Map();
  return {
    tree(commit) {
      let t = trees.get(commit);
      if (!t) {
        t = new Map();
        for (const line of git(gitDir, ['ls-tree', '-r', '-z', commit]).split('\0')) {
          if (!line) continue;
          const tab = line.indexOf('\t');
          const [, type, blob] = line.slice(0, tab).split(' ');
          if (type === 'blob') t.set(line.slice(tab + 1), blob);
        }
        trees.set(commit, t);
      }
      return t;
    },
    lines(blob) {
      let l = files.get(blob);
      if (!l) {
        const text = git(gitDir, ['cat-file', 'blob', blob]);
        l = text.split('\n');
        if (l.length && l[l.length - 1] === '') l.pop();
        files.set(blob, l);
      }
      return l;
    },
  };
}

/** 1-based start lines where `block` occurs contiguously and exactly in `lines`. */
function occurrences(lines, block, norm = (s) => s) {
  const out = [];
  const b = block.map(norm);
  const first = b[0];
  for (let i = 0; i + b.length <= lines.length; i++) {
    if (norm(lines[i]) !== first) continue;
    let ok = true;
    for (let j = 1; j < b.length; j++)
      if (norm(lines[i + j]) !== b[j]) {
        ok = false;
        break;
      }
    if (ok) out.push(i + 1);
  }
  return out;
}

/** Hunks of `git diff -U0 blobA blobB` (git's own diff, default algorithm). */
function hunks(gitDir, a, b) {
  if (a === b) return [];
  const out = git(gitDir, ['diff', '-U0', '--no-color', '--no-ext-diff', a, b]);
  const hs = [];
  for (const m of out.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm))
    hs.push({ a: +m[1], b: m[2] === undefined ? 1 : +m[2], c: +m[3], d: m[4] === undefined ? 1 : +m[4] });
  return hs;
}

/** Maps [s,e] through hunks: {touched} or {start} (the new first line). */
function mapRange(hs, s, e) {
  let off = 0;
  for (const h of hs) {
    if (h.b === 0) {
      // insertion after old line h.a
      if (h.a < s) off += h.d;
      else if (h.a < e) return { touched: true };
    } else {
      const last = h.a + h.b - 1;
      if (last < s) off += h.d - h.b;
      else if (h.a <= e) return { touched: true };
    }
  }
  return { start: s + off };
}

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
    if (elsewhere(rd, repo.gitDir, null, A, text, [path]).hits.length > 0 !== shared) continue;
    const key = `${path}:${s}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ path, lines: [s, e], text, gitDir: repo.gitDir, stratum: shared ? 'shared' : 'unique' });
  }
  return out;
}

// ------------------------------------------------------------------ the oracle (git only)
function grepFiles(gitDir, commit, line) {
  try {
    return [
      ...new Set(
        git(gitDir, ['grep', '-F', '-l', '-e', line, commit])
          .split('\n')
          .filter(Boolean)
          .map((l) => l.slice(commit.length + 1)),
      ),
    ];
  } catch {
    return []; // exit 1: no match
  }
}

/** Where the exact text is in files other than `exclude` at B, not counting copies that were there at A. */
function elsewhere(rd, gitDir, A, B, text, exclude) {
  const probe = [...text].sort((x, y) => y.trim().length - x.trim().length)[0].trim();
  const hits = [];
  const preexisting = [];
  for (const q of grepFiles(gitDir, B, probe)) {
    if (exclude.includes(q)) continue;
    const blob = rd.tree(B).get(q);
    if (!blob) continue;
    const occ = occurrences(rd.lines(blob), text);
    if (!occ.length) continue;
    const atA = A && rd.tree(A).get(q);
    if (atA && occurrences(rd.lines(atA), text).length) preexisting.push(q);
    else for (const o of occ) hits.push({ path: q, lines: [o, o + text.length - 1] });
  }
  return { hits, preexisting };
}

// indentation is meaning here (as in docs/anchors.md): a re-indent is an edit
const INDENT = /\.(py|pyi|pyw|pyx|pxd|bzl|star|ya?ml|mk|mak|hs|lhs|elm|purs|idr|fs|fsi|fsx|nim|nims|nimble|coffee|litcoffee|gd|mojo|pug|jade|sass|styl|slim|haml|rst)$|(^|\/)(GNUm|M|m)akefile$/;
const noWs = (s) => s.replace(/\s+/g, '');
const keepIndent = (l) => {
  const m = /^\s*/.exec(l)[0];
  return m + l.slice(m.length).replace(/\s+/g, ' ').trim();
};
/**
 * U1: the text is still there when whitespace is ignored (re-indented, re-wrapped, blank lines
 * added or removed) — in P, or in exactly one other file new to it. Whether that is an edit is
 * a policy question (a newline in a string literal is one), so the oracle says unsure; except in
 * languages where indentation is meaning, where a changed indent is an edit (R8i) and a change
 * of spaces inside lines is unsure.
 */
/** `want` (whitespace removed) in `lines` (whitespace removed), starting at a line start and ending at a line end. */
function wsAligned(lines, want) {
  const parts = lines.map(noWs);
  const joined = parts.join('');
  const starts = new Set();
  const ends = new Set();
  let o = 0;
  for (const p of parts) {
    starts.add(o);
    o += p.length;
    ends.add(o);
  }
  for (let i = joined.indexOf(want); i >= 0; i = joined.indexOf(want, i + 1))
    if (starts.has(i) && ends.has(i + want.length)) return true;
  return false;
}

function wsOnly(rd, A, B, an, P, linesB) {
  const want = noWs(an.text.join('\n'));
  if (!want) return null;
  const files = [];
  if (P) files.push({ path: P, lines: linesB });
  {
    const probe = [...an.text].sort((x, y) => y.trim().length - x.trim().length)[0].trim();
    for (const q of grepFiles(an.gitDir, B, probe)) {
      if (q === an.path || q === P) continue;
      const atA = rd.tree(A).get(q);
      if (atA && wsAligned(rd.lines(atA), want)) continue;
      files.push({ path: q, lines: rd.lines(rd.tree(B).get(q)) });
    }
  }
  for (const f of files) {
    if (!wsAligned(f.lines, want)) continue;
    if (INDENT.test(an.path) && !occurrences(f.lines, an.text, keepIndent).length)
      return { label: 'changed', to: null, rule: 'R8i', why: 'indentation changed where it is meaning' };
    return { label: 'unsure', why: `whitespace-only change (re-indent, re-wrap or blank lines) in ${f.path}`, rule: 'U1' };
  }
  return null;
}

function label(rd, repo, A, B, renames, an) {
  const { gitDir } = repo;
  const [s, e] = an.lines;
  const n = e - s + 1;
  const tb = rd.tree(B);
  const blobA = rd.tree(A).get(an.path);
  let P = tb.has(an.path) ? an.path : renames.get(an.path);
  if (P && !tb.has(P)) P = undefined;
  const renamed = P !== undefined && P !== an.path;
  const range = (p, start) => ({ path: p, lines: [start, start + n - 1] });
  if (P) {
    const blobB = tb.get(P);
    const linesB = rd.lines(blobB);
    const m = mapRange(hunks(gitDir, blobA, blobB), s, e);
    const occ = occurrences(linesB, an.text);
    if (!m.touched) {
      const to = range(P, m.start);
      if (renamed) return { label: 'renamed', to, rule: 'R3' };
      return { label: m.start === s ? 'fresh' : 'moved', to, rule: m.start === s ? 'R1' : 'R2' };
    }
    if (occ.length === 1) return { label: renamed ? 'renamed' : 'moved', to: range(P, occ[0]), rule: 'R4' };
    if (occ.length > 1)
      return { label: 'ambiguous', to: null, candidates: occ.map((o) => range(P, o)), rule: 'R5' };
    const other = elsewhere(rd, gitDir, A, B, an.text, [P, an.path]);
    // boilerplate (shared stratum) that left a file still there, with one new copy elsewhere: as
    // likely edited in place next to a coincidental copy as moved
    if (other.hits.length === 1 && an.stratum === 'shared')
      return { label: 'unsure', why: `text left the file; one new copy in ${other.hits[0].path}, but the text is boilerplate`, rule: 'U4' };
    if (other.hits.length === 1) return { label: 'moved', to: other.hits[0], rule: 'R6' };
    if (other.hits.length > 1)
      return { label: 'unsure', why: `edited in place, or moved to one of ${other.hits.length} new copies`, rule: 'U3' };
    const ws = wsOnly(rd, A, B, an, P, linesB);
    if (ws) return ws;
    return { label: 'changed', to: null, rule: 'R8' };
  }
  const other = elsewhere(rd, gitDir, A, B, an.text, [an.path]);
  // the file is gone and its text is in a file that did not exist at A: a rename by content
  // (git's -M stops at 50 % similarity); into a file that existed, a move
  if (other.hits.length === 1)
    return rd.tree(A).has(other.hits[0].path)
      ? { label: 'moved', to: other.hits[0], rule: 'R9' }
      : { label: 'renamed', to: other.hits[0], rule: 'R9r' };
  if (other.hits.length > 1) return { label: 'ambiguous', to: null, candidates: other.hits, rule: 'R7' };
  if (other.preexisting.length) return { label: 'unsure', why: 'only a copy that existed at A', rule: 'U2' };
  const ws = wsOnly(rd, A, B, an, null, null);
  if (ws) return ws;
  return { label: 'deleted', to: null, rule: 'R10' };
}

// ------------------------------------------------------------------ git-mem (the real CLI)
function gm(cwd, argv, input) {
  return execFileSync(process.execPath, [BIN, ...argv], {
    cwd,
    encoding: 'utf8',
    input,
    maxBuffer: 256 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', GIT_MEM_NO_UPDATE_CHECK: '1' },
  });
}

function judgeWithGitMem(repo, A, Bs, anchors) {
  const dir = mkdtempSync(join(tmpdir(), 'gm-real-'));
  try {
    execFileSync('git', ['clone', '-q', '--shared', '--no-checkout', repo.gitDir, dir], { stdio: 'pipe' });
    const g = (argv) => execFileSync('git', ['-C', dir, ...argv], { encoding: 'utf8', stdio: 'pipe' });
    g(['checkout', '-q', '-B', 'evalbase', A]);
    g(['config', 'user.name', 'eval']);
    g(['config', 'user.email', 'eval@example.invalid']);
    g(['config', 'mem.default-branch', 'evalbase']);
    gm(dir, ['init']);
    const jsonl = anchors
      .map((an, i) =>
        JSON.stringify({
          type: 'architecture',
          title: `anchor ${i} ${an.path}:${an.lines[0]}-${an.lines[1]}`,
          body: `eval anchor ${i}`,
          tags: [`a${i}`],
          anchors: [{ path: an.path, lines: an.lines, commit: A }],
        }),
      )
      .join('\n');
    gm(dir, ['import', '--jsonl', '-'], `${jsonl}\n`);
    gm(dir, ['check']); // completes the imported anchors at A (HEAD, the default branch's tip)
    const out = new Map();
    for (const B of Bs) {
      const t0 = performance.now();
      const r = JSON.parse(gm(dir, ['check', '--rev', B, '--dry-run', '--verbose', '--json']));
      const ms = performance.now() - t0;
      const byIdx = new Map();
      for (const x of r.results ?? []) {
        const m = /^anchor (\d+) /.exec(x.title ?? '');
        if (m) byIdx.set(Number(m[1]), x);
      }
      out.set(B, { byIdx, ms, counts: r.counts });
    }
    return out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
      const renames = new Map();
      for (const l of git(repo.gitDir, ['diff', '--name-status', '-M', A, B]).split('\n')) {
        const f = l.split('\t');
        if (f[0]?.startsWith('R')) renames.set(f[1], f[2]);
      }
      const v = verdicts.get(B);
      checkMs.push({ repo: repo.name, n: anchors.length, ms: v.ms });
      anchors.forEach((an, i) => {
        const oracle = label(rd, repo, A, B, renames, an);
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
