#!/usr/bin/env node
// Issue #16 item 1: builds a corpus of public developer prose (docs, READMEs, changelogs of
// public repositories) for training domain word associations. Input: bare git directories
// (e.g. the ones `fetch github:owner/name` brings to /work/.mirror/owner+name/repo, or
// `git clone --bare`). Output: one line per document section (split at markdown headings and
// blank-line runs), written as git-mem's own index terms (src/search/text.ts: lowercase,
// camelCase split, stop words dropped, Porter stems), so associations are between the very
// terms the index holds.
//
//   npx esbuild src/search/text.ts --format=esm --outfile=/tmp/para/text.mjs
//   node eval/retrieval/domain-corpus.mjs --mirrors /work/.mirror --text /tmp/para/text.mjs --out /tmp/para/corpus.txt
//
// Never trains on the eval set: every repository named as a `source` of a memory of
// ../shared/eval/corpus.jsonl is skipped (--exclude-from), besides the eval files themselves.
// At most --max-terms-per-repo terms (default 1.5M) per repository, sampled evenly.
// English only: translated trees (i18n/, locales, /zh/, README-ja.md, …) are skipped, and a file
// needs 3 % of its words to be common English function words. Identical blobs count once.
import { execFileSync, spawn } from 'node:child_process';
import { createWriteStream, existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (n, d) => (args.includes(n) ? args[args.indexOf(n) + 1] : d);
const mirrors = resolve(opt('--mirrors', '/work/.mirror'));
const out = resolve(opt('--out', '/tmp/para/corpus.txt'));
const { words, terms } = await import(pathToFileURL(resolve(opt('--text', '/tmp/para/text.mjs'))).href);
// --repos owner/name,… : only these (default: every repository under --mirrors)
const only = opt('--repos', '') ? new Set(opt('--repos', '').split(',').map((r) => r.toLowerCase())) : undefined;
const cap = Number(opt('--max-terms-per-repo', '1500000'));
const HERE = dirname(fileURLToPath(import.meta.url));
const excludeFrom = resolve(opt('--exclude-from', join(HERE, '..', '..', '..', 'shared', 'eval', 'corpus.jsonl')));

// repositories the eval memories were written from: never in the training text
const excluded = new Set();
if (existsSync(excludeFrom)) {
  for (const line of readFileSync(excludeFrom, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    const s = JSON.parse(line).source ?? '';
    const m = /github\.com\/([^/]+\/[^/#?]+)/.exec(s) ?? /^([\w.-]+\/[\w.-]+):/.exec(s);
    if (m) excluded.add(m[1].toLowerCase());
  }
} else {
  process.stderr.write(`warning: ${excludeFrom} not found: no eval source repository is excluded\n`);
}

const LANG =
  /(^|\/)(i18n|locales?|translations?|translated|lang|zh|zh-cn|zh-tw|zh-hans|zh-hant|cn|ja|jp|ko|kr|es|fr|de|pt|pt-br|ru|it|uk|tr|id|pl|fa|bn|vi|th|he|ar|hi|nl|sv|cs|hu|ro|el)(\/|$)|[-_.](zh|ja|ko|es|fr|de|pt|ru|it|uk|tr|id|pl|fa|vi|th|he|ar)([-_][a-z]{2,4})?\.(md|mdx|rst|txt)$/i;
const SKIP = /(^|\/)(node_modules|vendor|third_party|fixtures?|__fixtures__|__snapshots__|test\/fixtures|licenses?)(\/|$)|LICENSE|\.min\./i;
const EXT = /\.(md|mdx|markdown|rst|adoc|asciidoc|txt)$/i;
const FUNC = new Set('the and to of is in that for it with as be this you are on can or if'.split(' '));

const repos = readdirSync(mirrors)
  .filter((d) => existsSync(join(mirrors, d, 'repo')))
  .map((d) => ({ name: d.replace('+', '/'), dir: join(mirrors, d, 'repo') }))
  .filter((r) => !excluded.has(r.name.toLowerCase()) && (!only || only.has(r.name.toLowerCase())));

const sink = createWriteStream(out);
const seen = new Set();
const report = [];
for (const r of repos) {
  let list;
  try {
    list = execFileSync('git', ['--git-dir', r.dir, 'ls-tree', '-r', '-l', 'HEAD'], {
      encoding: 'utf8',
      maxBuffer: 1 << 30,
    });
  } catch {
    continue;
  }
  const blobs = [];
  for (const line of list.split('\n')) {
    const m = /^\d+ blob ([0-9a-f]+)\s+(\d+)\t(.+)$/.exec(line);
    if (!m) continue;
    const [, oid, size, path] = m;
    if (!EXT.test(path) || LANG.test(path) || SKIP.test(path) || +size > 2e6 || seen.has(oid)) continue;
    if (/\.txt$/i.test(path) && !/(^|\/)(doc|docs|documentation)\//i.test(path)) continue;
    seen.add(oid);
    blobs.push(oid);
  }
  let bytes = 0;
  let sections = 0;
  let toks = 0;
  const secs = [];
  // one cat-file --batch per repository
  const cat = spawn('git', ['--git-dir', r.dir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'ignore'] });
  const chunks = [];
  cat.stdout.on('data', (c) => chunks.push(c));
  const done = new Promise((res) => cat.on('close', res));
  cat.stdin.end(blobs.map((b) => `${b}\n`).join(''));
  await done;
  const buf = Buffer.concat(chunks);
  let at = 0;
  while (at < buf.length) {
    const nl = buf.indexOf(10, at);
    const head = buf.toString('utf8', at, nl).split(' ');
    const size = +head[2];
    const text = buf.toString('utf8', nl + 1, nl + 1 + size);
    at = nl + 1 + size + 1;
    const ws = words(text.slice(0, 20000));
    let f = 0;
    for (const w of ws) if (FUNC.has(w)) f++;
    if (ws.length < 30 || f / ws.length < 0.03) continue;
    bytes += size;
    // sections: markdown/rst headings or runs of two blank lines
    for (const sec of text
      .replace(/<[^>]{0,200}>/g, ' ')
      .replace(/\]\([^)]*\)/g, ']')
      .split(/\n(?=#{1,6} |[=\-~^]{4,}\n)|\n\s*\n\s*\n/)) {
      const ts = terms(sec).filter((t) => t.length > 1 && t.length < 40 && !/^\d+$/.test(t));
      if (ts.length < 5) continue;
      secs.push(ts);
      toks += ts.length;
    }
  }
  // a repository with much text (versioned docs) gives an even sample of its sections, at most `cap` terms
  const keep = toks > cap ? cap / toks : 1;
  toks = 0;
  let acc = 0;
  for (const ts of secs) {
    acc += keep;
    if (acc < 1) continue;
    acc -= 1;
    sink.write(`${ts.join(' ')}\n`);
    sections++;
    toks += ts.length;
  }
  report.push({ repo: r.name, files: blobs.length, mb: +(bytes / 1e6).toFixed(2), sections, tokens: toks });
  process.stderr.write(`${r.name}: ${blobs.length} files, ${(bytes / 1e6).toFixed(1)} MB, ${toks} terms\n`);
}
sink.end();
const tot = report.reduce((a, r) => ({ mb: a.mb + r.mb, tokens: a.tokens + r.tokens }), { mb: 0, tokens: 0 });
process.stderr.write(
  `excluded (eval sources): ${[...excluded].filter((e) => repos.every((r) => r.name.toLowerCase() !== e)).length} names; ` +
    `total ${tot.mb.toFixed(1)} MB of text, ${tot.tokens} terms from ${report.length} repositories\n`,
);
console.log(JSON.stringify(report));
