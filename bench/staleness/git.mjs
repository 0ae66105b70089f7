// Git plumbing shared by the staleness benchmark's sampler, oracle and adapters, and by
// eval/anchors/real.mjs: every read goes through `git --git-dir=… ` (mirrors are bare), blobs and
// trees are cached per process.
import { execFileSync } from 'node:child_process';

export function git(gitDir, argv, opts = {}) {
  return execFileSync('git', [`--git-dir=${gitDir}`, ...argv], {
    encoding: 'utf8',
    maxBuffer: 512 * 1024 * 1024,
    stdio: ['pipe', 'pipe', 'pipe'],
    ...opts,
  });
}

/** Lines of a text, without the final newline's empty line. */
export function splitLines(text) {
  const l = text.split('\n');
  if (l.length && l[l.length - 1] === '') l.pop();
  return l;
}

/** Cached reads of one repository: a commit's tree (path → blob id) and a blob's lines. */
export function reader(gitDir) {
  const trees = new Map();
  const blobs = new Map();
  const rd = {
    gitDir,
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
      let l = blobs.get(blob);
      if (!l) {
        l = splitLines(git(gitDir, ['cat-file', 'blob', blob]));
        blobs.set(blob, l);
      }
      return l;
    },
    /** Lines of `path` at `commit`, or null when there is no such file. */
    file(commit, path) {
      const b = rd.tree(commit).get(path);
      return b ? rd.lines(b) : null;
    },
  };
  return rd;
}

/** 1-based start lines where `block` occurs contiguously and exactly in `lines`. */
export function occurrences(lines, block, norm = (s) => s) {
  const out = [];
  if (!block.length) return out;
  const b = block.map(norm);
  for (let i = 0; i + b.length <= lines.length; i++) {
    if (norm(lines[i]) !== b[0]) continue;
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
export function hunks(gitDir, a, b) {
  if (a === b) return [];
  const out = git(gitDir, ['diff', '-U0', '--no-color', '--no-ext-diff', a, b]);
  const hs = [];
  for (const m of out.matchAll(/^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/gm))
    hs.push({ a: +m[1], b: m[2] === undefined ? 1 : +m[2], c: +m[3], d: m[4] === undefined ? 1 : +m[4] });
  return hs;
}

/** Maps lines s..e through hunks: {touched: true} or {start} (the new first line). */
export function mapRange(hs, s, e) {
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

/**
 * Renames from A to B by `git diff --name-status -M -C` (git's 50 % similarity; `copies: false`,
 * eval/anchors/REAL.md's rule: `-M` alone): old path → new path.
 */
export function renamesBetween(gitDir, A, B, { copies = true } = {}) {
  const renames = new Map();
  for (const l of git(gitDir, ['diff', '--name-status', '-M', ...(copies ? ['-C'] : []), A, B]).split('\n')) {
    const f = l.split('\t');
    if (f[0]?.startsWith('R')) renames.set(f[1], f[2]);
  }
  return renames;
}

/** Files at `commit` holding the exact string `line` (git grep -F), [] when none. */
export function grepFiles(gitDir, commit, line) {
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

/** The seeded generator every sample uses (mulberry32). */
export function mulberry32(a) {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
