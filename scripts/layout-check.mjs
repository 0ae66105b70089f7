#!/usr/bin/env node
// Lists the source files over the line limit and the functions over the length limit in src/
// (git-mem issue #29: no source file over 600 lines, no function over 150). Functions are found
// with the TypeScript compiler's own parser (typescript 7's API, `typescript/unstable/sync`, one
// tsgo process): declarations, methods, accessors, constructors, function expressions and arrow
// functions with a body, each measured from its first line (comments before it aside) to its last.
// Usage: node scripts/layout-check.mjs [--json] [--max-file N] [--max-function N] [dir...]
// Exit status 1 when anything is over a limit.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { resolve } from 'node:path';
import { API } from 'typescript/unstable/sync';
import { isFunctionLikeDeclaration } from 'typescript/unstable/ast/is';
import { computeLineStarts, skipTrivia } from 'typescript/unstable/ast/scanner';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = Number(args[i + 1]);
  args.splice(i, 2);
  return v;
};
const json = args.includes('--json');
if (json) args.splice(args.indexOf('--json'), 1);
const MAX_FILE = opt('--max-file', 600);
const MAX_FUNCTION = opt('--max-function', 150);
const roots = args.length ? args : ['src'];

function* sources(dir) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) yield* sources(p);
    else if (/\.(ts|tsx|mts)$/.test(name) && !name.endsWith('.d.ts')) yield p;
  }
}

function lineOf(starts, pos) {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= pos) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

function nameOf(node, text) {
  // a function's own name, else the name it is given (a variable, a property), else none
  const named = node.name ?? node.parent?.name;
  return named && typeof named.pos === 'number' ? text.slice(skipTrivia(text, named.pos), named.end) : '(anonymous)';
}

export function layout(files) {
  const api = new API({ cwd: process.cwd() });
  const bigFiles = [];
  const bigFunctions = [];
  try {
    const snap = api.updateSnapshot({ openProject: resolve('tsconfig.json') });
    const program = snap.getProjects()[0].program;
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
      if (lines > MAX_FILE) bigFiles.push({ file, lines });
      const sf = program.getSourceFile(resolve(file));
      if (!sf) throw new Error(`${file} is not in tsconfig.json's project`);
      const starts = computeLineStarts(text);
      const visit = (node) => {
        if (isFunctionLikeDeclaration(node) && node.body) {
          const start = lineOf(starts, skipTrivia(text, node.pos));
          const end = lineOf(starts, node.end - 1);
          const n = end - start + 1;
          if (n > MAX_FUNCTION) bigFunctions.push({ file, name: nameOf(node, text), line: start, lines: n });
        }
        node.forEachChild(visit);
      };
      visit(sf);
    }
  } finally {
    api.close();
  }
  return { bigFiles, bigFunctions };
}

const files = roots.flatMap((r) => [...sources(r)]).map((f) => relative(process.cwd(), f));
const { bigFiles, bigFunctions } = layout(files);
if (json) console.log(JSON.stringify({ maxFile: MAX_FILE, maxFunction: MAX_FUNCTION, bigFiles, bigFunctions }, null, 2));
else {
  for (const f of bigFiles) console.log(`file     ${f.file}: ${f.lines} lines (max ${MAX_FILE})`);
  for (const f of bigFunctions)
    console.log(`function ${f.file}:${f.line} ${f.name}: ${f.lines} lines (max ${MAX_FUNCTION})`);
}
process.exitCode = bigFiles.length || bigFunctions.length ? 1 : 0;
