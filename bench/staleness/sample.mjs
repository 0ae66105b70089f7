// Seeded anchor sampling at a commit A: informative line ranges, and whole definitions
// (symbols) found by a per-language header pattern and the block that follows it. Independent of
// git-mem's parser: the extent is this file's, the name is what a person would type.
import { git, hunks, occurrences } from './git.mjs';
import { grepFiles } from './git.mjs';

const SKIP_PATH = /(^|\/)(node_modules|vendor|dist|build|third_party|fixtures?|testdata)\/|\.min\.js$|\.d\.ts$/;
const informative = (l) => (l.match(/[A-Za-z0-9_]/g) ?? []).length >= 6 && /[A-Za-z_]{3,}/.test(l);

/** Source files of the repository's language at A, and those A..far changes (where edits happen). */
export function sourceFiles(rd, repo, A, far) {
  const tree = rd.tree(A);
  const srcs = [...tree.keys()].filter((p) => repo.ext.test(p) && !SKIP_PATH.test(p));
  const changed = far
    ? git(rd.gitDir, ['diff', '--name-only', '--no-renames', A, far])
        .split('\n')
        .filter((p) => tree.has(p) && repo.ext.test(p) && !SKIP_PATH.test(p))
    : [];
  return { srcs, changed };
}

/** The text also occurs in another file at A (boilerplate): such anchors are not sampled. */
function sharedElsewhere(rd, A, text, path) {
  const probe = [...text].sort((x, y) => y.trim().length - x.trim().length)[0].trim();
  for (const q of grepFiles(rd.gitDir, A, probe)) {
    if (q === path) continue;
    const l = rd.file(A, q);
    if (l && occurrences(l, text).length) return true;
  }
  return false;
}

function acceptable(lines, s, e) {
  const text = lines.slice(s - 1, e);
  if (text.length < 3) return null;
  const info = text.filter(informative).length;
  const blank = text.filter((l) => !/[A-Za-z0-9_]/.test(l)).length;
  if (info < 2 || info < text.length / 2 || blank > text.length / 3) return null;
  if (text.some((l) => l.length > 300)) return null; // minified or generated
  if (occurrences(lines, text).length !== 1) return null; // unique in its file at A
  return text;
}

/**
 * `n` line anchors at A: a file (two thirds from files A..far changes), a range of 3–15 lines (half
 * of those in changed files start at or just above a hunk of A..far), kept when informative and
 * unique in the repository at A.
 */
export function lineAnchors(rd, repo, A, far, rand, n, files = sourceFiles(rd, repo, A, far)) {
  const { srcs, changed } = files;
  const tree = rd.tree(A);
  const out = [];
  const seen = new Set();
  for (let tries = 0; out.length < n && tries < n * 60; tries++) {
    const fromChanged = changed.length && rand() < 2 / 3;
    const path = fromChanged ? changed[Math.floor(rand() * changed.length)] : srcs[Math.floor(rand() * srcs.length)];
    if (!path) break;
    const lines = rd.lines(tree.get(path));
    if (lines.length < 5 || lines.length > 20000) continue;
    const len = 3 + Math.floor(rand() * 13);
    let s = 1 + Math.floor(rand() * Math.max(1, lines.length - len + 1));
    if (fromChanged && far && rand() < 0.5) {
      const hs = hunks(rd.gitDir, tree.get(path), rd.tree(far).get(path) ?? tree.get(path));
      if (hs.length) {
        const h = hs[Math.floor(rand() * hs.length)];
        s = Math.max(1, h.a - Math.floor(rand() * len));
      }
    }
    const e = Math.min(lines.length, s + len - 1);
    const key = `${path}:${s}`;
    if (seen.has(key)) continue;
    const text = acceptable(lines, s, e);
    if (!text || sharedElsewhere(rd, A, text, path)) continue;
    seen.add(key);
    out.push({ kind: 'lines', path, lines: [s, e], text });
  }
  return out;
}

// ---------------------------------------------------------------- symbols
// Per language: definition headers (group i: indentation, group n: the name) and how the block ends.
const LANGS = [
  { ext: /\.py$/, block: 'indent', defs: [/^(?<i>\s*)(?:async\s+)?(?:def|class)\s+(?<n>[A-Za-z_]\w*)/] },
  {
    ext: /\.(rb|rake)$/,
    block: 'end',
    defs: [/^(?<i>\s*)def\s+(?:self\.)?(?<n>[A-Za-z_]\w*[?!]?)/, /^(?<i>\s*)(?:class|module)\s+(?<n>[A-Z]\w*)\s*(?:<.*)?$/],
  },
  {
    ext: /\.go$/,
    block: 'brace',
    defs: [/^(?<i>)func\s+(?:\([^)]*\)\s*)?(?<n>[A-Za-z_]\w*)\s*[[(]/, /^(?<i>)type\s+(?<n>[A-Za-z_]\w*)\s+(?:struct|interface)\s*\{/],
  },
  {
    ext: /\.java$/,
    block: 'brace',
    defs: [
      /^(?<i>\s*)(?:(?:public|protected|private|static|final|abstract|synchronized)\s+)+(?:<[^>]+>\s+)?[\w<>[\],.?]+(?:\s*<[^>]*>)?\s+(?<n>[a-z_]\w*)\s*\(/,
      /^(?<i>\s*)(?:(?:public|protected|private|static|final|abstract)\s+)*(?:class|interface|enum|record)\s+(?<n>[A-Z]\w*)/,
    ],
  },
  {
    ext: /\.(ts|tsx|js|mjs)$/,
    block: 'brace',
    defs: [
      /^(?<i>\s*)(?:export\s+)?(?:default\s+)?(?:async\s+)?function\*?\s+(?<n>[A-Za-z_$][\w$]*)\s*[<(]/,
      /^(?<i>\s*)(?:export\s+)?(?:default\s+)?(?:abstract\s+)?(?:class|interface|enum)\s+(?<n>[A-Za-z_$][\w$]*)/,
    ],
  },
  {
    ext: /\.php$/,
    block: 'brace',
    defs: [
      /^(?<i>\s*)(?:(?:public|protected|private|static|final|abstract)\s+)*function\s+(?<n>[A-Za-z_]\w*)\s*\(/,
      /^(?<i>\s*)(?:(?:final|abstract)\s+)?(?:class|interface|trait|enum)\s+(?<n>[A-Z]\w*)/,
    ],
  },
];

const indentOf = (l) => /^\s*/.exec(l)[0].replace(/\t/g, '    ').length;
const stripStrings = (l) =>
  l
    .replace(/"(?:\\.|[^"\\])*"|'(?:\\.|[^'\\])*'|`(?:\\.|[^`\\])*`/g, '""')
    .replace(/\/\/.*$|#.*$/, '');

/** The last line (1-based) of the block a header at line h opens, or 0 when it cannot be told. */
function blockEnd(lines, h, kind) {
  const head = lines[h - 1];
  if (kind === 'indent') {
    if (!/:\s*(#.*)?$/.test(head)) return 0; // a signature over several lines: skipped
    let last = h;
    for (let k = h + 1; k <= lines.length; k++) {
      const l = lines[k - 1];
      if (!l.trim()) continue;
      if (indentOf(l) <= indentOf(head)) break;
      last = k;
    }
    return last;
  }
  if (kind === 'end') {
    const ind = /^\s*/.exec(head)[0];
    for (let k = h + 1; k <= Math.min(lines.length, h + 200); k++) {
      const l = lines[k - 1];
      if (l.startsWith(`${ind}end`) && /^\s*end\b/.test(l) && indentOf(l) === indentOf(head)) return k;
      if (l.trim() && indentOf(l) < indentOf(head)) return 0;
    }
    return 0;
  }
  let depth = 0;
  let opened = false;
  for (let k = h; k <= Math.min(lines.length, h + 300); k++) {
    const l = stripStrings(lines[k - 1]);
    if (!opened && k > h + 4) return 0;
    if (!opened && l.includes(';') && !l.includes('{')) return 0; // a declaration without a body
    for (const c of l) {
      if (c === '{') {
        depth++;
        opened = true;
      } else if (c === '}') depth--;
    }
    if (opened && depth <= 0) return depth === 0 && /^\s*\}/.test(lines[k - 1]) ? k : 0;
  }
  return 0;
}

/** Definitions in a file: {name, start (decorators/annotations included), header, end}. */
export function definitions(path, lines) {
  const lang = LANGS.find((l) => l.ext.test(path));
  if (!lang) return [];
  const out = [];
  for (let h = 1; h <= lines.length; h++) {
    let m = null;
    for (const re of lang.defs) {
      m = re.exec(lines[h - 1]);
      if (m) break;
    }
    if (!m) continue;
    const name = m.groups.n;
    if (['if', 'for', 'while', 'switch', 'return', 'new', 'catch', 'function'].includes(name)) continue;
    const end = blockEnd(lines, h, lang.block);
    if (!end) continue;
    let start = h;
    while (start > 1 && /^\s*@/.test(lines[start - 2]) && indentOf(lines[start - 2]) === indentOf(lines[h - 1])) start--;
    out.push({ name, start, header: h, end });
  }
  return out;
}

/** `n` symbol anchors at A: whole definitions of 3–60 lines whose name is defined once in the file. */
export function symbolAnchors(rd, repo, A, far, rand, n, files = sourceFiles(rd, repo, A, far)) {
  const { srcs, changed } = files;
  const tree = rd.tree(A);
  const out = [];
  const seen = new Set();
  for (let tries = 0; out.length < n && tries < n * 40; tries++) {
    const fromChanged = changed.length && rand() < 2 / 3;
    const path = fromChanged ? changed[Math.floor(rand() * changed.length)] : srcs[Math.floor(rand() * srcs.length)];
    if (!path) break;
    const lines = rd.lines(tree.get(path));
    if (lines.length > 20000) continue;
    const defs = definitions(path, lines);
    const counts = new Map();
    for (const d of defs) counts.set(d.name, (counts.get(d.name) ?? 0) + 1);
    const ok = defs.filter((d) => counts.get(d.name) === 1 && d.end - d.start + 1 >= 3 && d.end - d.start + 1 <= 60);
    if (!ok.length) continue;
    const d = ok[Math.floor(rand() * ok.length)];
    const key = `${path}#${d.name}`;
    if (seen.has(key)) continue;
    const text = lines.slice(d.start - 1, d.end);
    if (text.some((l) => l.length > 300) || occurrences(lines, text).length !== 1) continue;
    if (sharedElsewhere(rd, A, text, path)) continue;
    seen.add(key);
    out.push({ kind: 'symbol', path, symbol: d.name, header: d.header, lines: [d.start, d.end], text });
  }
  return out;
}
