#!/usr/bin/env node
// `npm run eval:anchors`: builds repositories with known edits, anchors a
// function in each, applies the edit, commits, runs the check, and compares the
// verdict and the relocated range with the truth. Prints a confusion matrix
// and the exact-relocation accuracy; writes eval/anchors/RESULTS.md.
//
//   node eval/anchors/run.mjs [--seeds N] [--only case,case] [--verbose]
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { argOpt as opt } from '../../bench/lib.mjs';
import { mulberry32 } from '../../bench/staleness/git.mjs';
import { loadHarness } from './load-harness.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const SEEDS = Number(opt('seeds', '6'));
const ONLY = opt('only', '')
  .split(',')
  .filter(Boolean);
const VERBOSE = args.includes('--verbose');

const H = await loadHarness();

// ------------------------------------------------------------------ synthetic code
const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'total', 'count', 'index', 'value', 'cache', 'limit', 'score', 'token', 'node', 'edge', 'queue', 'batch'];
const pick = (r, xs) => xs[Math.floor(r() * xs.length)];
const int = (r, n) => Math.floor(r() * n);

let uniq = 0;
function fn(r, lang, name) {
  const n = 3 + int(r, 5);
  const body = [];
  for (let i = 0; i < n; i++) {
    const v = `${pick(r, WORDS)}${uniq++}`;
    body.push(lang === 'py' ? `    ${v} = ${pick(r, WORDS)}(a, ${int(r, 1000)})` : `  const ${v} = ${pick(r, WORDS)}(a, ${int(r, 1000)});`);
  }
  if (lang === 'py') return { name, lines: [`def ${name}(a, b):`, ...body, `    return a + b + ${int(r, 100)}`] };
  return { name, lines: [`export function ${name}(a: number, b: number) {`, ...body, `  return a + b + ${int(r, 100)};`, '}'] };
}
function file(r, lang, n, prefix) {
  const header = lang === 'py' ? ['import os', ''] : ["import { x } from './x';", ''];
  return { lang, header, blocks: Array.from({ length: n }, (_, i) => ({ ...fn(r, lang, `${prefix}_${i}_${uniq++}`), id: `${prefix}${i}` })) };
}
function render(f) {
  const lines = [...f.header];
  const ranges = new Map();
  f.blocks.forEach((b, i) => {
    if (i) lines.push('');
    ranges.set(b.id, [lines.length + 1, lines.length + b.lines.length]);
    lines.push(...b.lines);
  });
  return { text: `${lines.join('\n')}\n`, ranges };
}
const clone = (f) => ({ ...f, header: [...f.header], blocks: f.blocks.map((b) => ({ ...b, lines: [...b.lines] })) });
const comment = (f, r) => (f.lang === 'py' ? `# note ${int(r, 1e6)}` : `// note ${int(r, 1e6)}`);
function editLine(f, b, r) {
  const i = 1 + int(r, b.lines.length - 2);
  b.lines[i] = b.lines[i].replace(/\d+/, (d) => String(Number(d) + 1 + int(r, 9)));
}

// ------------------------------------------------------------------ cases
// Each returns { lang, files0: {path: model}, anchor: {path, id, symbol}, step(ctx) applying edits, expect }
const CASES = {
  insert_above(r, lang) {
    return simple(r, lang, (f) => {
      const k = 1 + int(r, 6);
      const at = int(r, f.header.length + 1);
      f.header.splice(at, 0, ...Array.from({ length: k }, () => comment(f, r)));
    });
  },
  remove_above(r, lang) {
    return simple(r, lang, (f, a) => {
      const i = f.blocks.findIndex((b) => b.id === a);
      f.blocks.splice(int(r, i), 1);
    }, { at: 'late' });
  },
  edit_elsewhere(r, lang) {
    return simple(r, lang, (f, a) => {
      const others = f.blocks.filter((b) => b.id !== a);
      editLine(f, pick(r, others), r);
    });
  },
  move_within(r, lang) {
    return simple(r, lang, (f, a) => {
      const i = f.blocks.findIndex((b) => b.id === a);
      const [b] = f.blocks.splice(i, 1);
      let j = int(r, f.blocks.length + 1);
      if (j === i) j = (j + 2) % (f.blocks.length + 1);
      f.blocks.splice(j, 0, b);
    });
  },
  reorder(r, lang) {
    return simple(r, lang, (f) => {
      for (let i = f.blocks.length - 1; i > 0; i--) {
        const j = int(r, i + 1);
        [f.blocks[i], f.blocks[j]] = [f.blocks[j], f.blocks[i]];
      }
    });
  },
  whitespace_reformat(r, lang) {
    return simple(r, lang === 'py' ? 'ts' : lang, (f) => {
      for (const b of f.blocks) b.lines = b.lines.map((l) => l.replace(/^( +)/, '$1$1').replace(/, /g, ',  '));
    });
  },
  edit_inside(r, lang) {
    return simple(r, lang, (f, a) => editLine(f, f.blocks.find((b) => b.id === a), r), { expect: 'changed' });
  },
  insert_inside(r, lang) {
    return simple(r, lang, (f, a) => {
      const b = f.blocks.find((x) => x.id === a);
      b.lines.splice(1 + int(r, b.lines.length - 2), 0, f.lang === 'py' ? '    pass' : '  debugger;');
    }, { expect: 'changed' });
  },
  delete_range(r, lang) {
    return simple(r, lang, (f, a) => {
      f.blocks = f.blocks.filter((b) => b.id !== a);
    }, { expect: 'changed' });
  },
  duplicate_edited(r, lang) {
    // an identical copy of the anchored block exists elsewhere; the anchored copy is edited
    const c = simple(r, lang, (f, a) => editLine(f, f.blocks.find((b) => b.id === a), r), { expect: 'changed' });
    const f = c.files0[c.anchor.path];
    const src = f.blocks.find((b) => b.id === c.anchor.id);
    f.blocks.push({ ...src, lines: [...src.lines], id: 'copy' });
    return c;
  },
  duplicate_shifted(r, lang) {
    const c = simple(r, lang, (f) => f.header.push(comment(f, r), comment(f, r)));
    const f = c.files0[c.anchor.path];
    const src = f.blocks.find((b) => b.id === c.anchor.id);
    f.blocks.push({ ...src, lines: [...src.lines], id: 'copy' });
    return c;
  },
  context_edited(r, lang) {
    // the lines right above and below the range change, and the block shifts: context must not decide alone
    return simple(r, lang, (f, a) => {
      const i = f.blocks.findIndex((b) => b.id === a);
      const prev = f.blocks[i - 1];
      const next = f.blocks[i + 1];
      if (prev) prev.lines[prev.lines.length - 1] = `${prev.lines[prev.lines.length - 1]} `.trimEnd() + (f.lang === 'py' ? '  # tail' : ' // tail');
      if (next) next.lines[0] = next.lines[0].replace('(a', '(aa');
      f.header.push(comment(f, r));
    });
  },
  moved_and_edited(r, lang) {
    return simple(r, lang, (f, a) => {
      const i = f.blocks.findIndex((b) => b.id === a);
      const [b] = f.blocks.splice(i, 1);
      editLine(f, b, r);
      f.blocks.splice((i + 3) % (f.blocks.length + 1), 0, b);
    }, { expect: 'changed' });
  },
  partial_range_shifted(r, lang) {
    return simple(r, lang, (f) => f.header.push(comment(f, r), comment(f, r)), { sub: [1, 2] });
  },
  partial_range_edited_next_to_it(r, lang) {
    // edit the line just after a 2-line range inside a function
    return simple(r, lang, (f, a) => {
      const b = f.blocks.find((x) => x.id === a);
      b.lines[3] = b.lines[3].replace(/\d+/, '99999');
    }, { sub: [1, 2] });
  },
  near_copy_inserted_above(r, lang) {
    // a copy of the anchored block with one line changed is inserted above it
    return simple(r, lang, (f, a) => {
      const i = f.blocks.findIndex((b) => b.id === a);
      const src = f.blocks[i];
      const copy = { ...src, lines: [...src.lines], id: 'near' };
      editLine(f, copy, r);
      f.blocks.splice(i, 0, copy);
    });
  },
  exact_copy_inserted_above(r, lang) {
    return simple(r, lang, (f, a) => {
      const i = f.blocks.findIndex((b) => b.id === a);
      const src = f.blocks[i];
      f.blocks.splice(int(r, i), 0, { ...src, lines: [...src.lines], id: 'twin' });
    });
  },
  common_line_reordered(r, lang) {
    // a one-line anchor on a line that every function shares, then the functions are reordered
    const c = simple(r, lang, (f) => {
      for (let i = f.blocks.length - 1; i > 0; i--) {
        const j = int(r, i + 1);
        [f.blocks[i], f.blocks[j]] = [f.blocks[j], f.blocks[i]];
      }
    });
    const f = c.files0[c.anchor.path];
    for (const b of f.blocks) b.lines[b.lines.length - (f.lang === 'py' ? 1 : 2)] = f.lang === 'py' ? '    return a + b' : '  return a + b;';
    const blk = f.blocks.find((b) => b.id === c.anchor.id);
    const k = blk.lines.length - (f.lang === 'py' ? 1 : 2);
    c.anchor.sub = [k, k];
    return c;
  },
  move_across_files(r, lang) {
    const a = file(r, lang, 6, 'a');
    const b = file(r, lang, 4, 'b');
    const ext = lang === 'py' ? 'py' : 'ts';
    const id = a.blocks[2].id;
    return {
      files0: { [`src/a.${ext}`]: a, [`src/b.${ext}`]: b },
      anchor: { path: `src/a.${ext}`, id },
      step(files) {
        const fa = files[`src/a.${ext}`];
        const fb = files[`src/b.${ext}`];
        const i = fa.blocks.findIndex((x) => x.id === id);
        const [blk] = fa.blocks.splice(i, 1);
        fb.blocks.splice(int(r, fb.blocks.length + 1), 0, blk);
      },
      expect: { status: 'moved', path: `src/b.${ext}`, id },
    };
  },
  file_deleted(r, lang) {
    const c = simple(r, lang, () => {});
    const p = c.anchor.path;
    c.step = (files) => {
      delete files[p];
    };
    c.expect = { status: 'deleted' };
    return c;
  },
  symbol_moved(r, lang) {
    return simple(r, lang, (f) => f.header.push(comment(f, r), comment(f, r), comment(f, r)), { symbol: true });
  },
  symbol_edited(r, lang) {
    return simple(r, lang, (f, a) => editLine(f, f.blocks.find((b) => b.id === a), r), { symbol: true, expect: 'changed' });
  },
  symbol_renamed(r, lang) {
    return simple(r, lang, (f, a) => {
      const b = f.blocks.find((x) => x.id === a);
      b.lines[0] = b.lines[0].replace(b.name, `${b.name}_renamed`);
    }, { symbol: true, expect: 'symbol_renamed' });
  },
  symbol_removed(r, lang) {
    return simple(r, lang, (f, a) => {
      f.blocks = f.blocks.filter((b) => b.id !== a);
    }, { symbol: true, expect: 'symbol_removed' });
  },
};
for (const pctEdit of [0, 30, 60, 90]) {
  CASES[`rename_${pctEdit}pct_edited`] = (r, lang) => {
    const ext = lang === 'py' ? 'py' : 'ts';
    const f = file(r, lang, 8, 'r');
    const id = f.blocks[3].id;
    return {
      files0: { [`src/old.${ext}`]: f },
      anchor: { path: `src/old.${ext}`, id },
      step(files) {
        const g = files[`src/old.${ext}`];
        delete files[`src/old.${ext}`];
        files[`lib/new_name.${ext}`] = g;
        // edit pctEdit % of the lines outside the anchored block, in place
        const pool = [];
        g.blocks.forEach((b) => {
          if (b.id !== id) b.lines.forEach((_, i) => pool.push([b, i]));
        });
        const total = render(g).text.split('\n').length - 1;
        const want = Math.round((pctEdit / 100) * total);
        for (let k = 0; k < want && pool.length; k++) {
          const [b, i] = pool.splice(int(r, pool.length), 1)[0];
          b.lines[i] = g.lang === 'py' ? `    x${int(r, 1e9)} = ${int(r, 1e9)}` : `  const x${int(r, 1e9)} = ${int(r, 1e9)};`;
        }
        for (let k = pool.length; k < want; k++) g.header.push(comment(g, r));
      },
      expect: { status: 'renamed', path: `lib/new_name.${ext}`, id },
    };
  };
}
for (const n of [1, 200]) {
  CASES[`history_${n}_commits`] = (r, lang) => {
    const c = simple(r, lang, () => {});
    c.commits = n;
    c.step = (files, k) => {
      const f = files[c.anchor.path];
      const others = f.blocks.filter((b) => b.id !== c.anchor.id);
      const op = k % 4;
      if (op === 0) f.header.push(comment(f, r));
      else if (op === 1) editLine(f, pick(r, others), r);
      else if (op === 2 && f.header.length > 3) f.header.splice(2, 1);
      else f.blocks.splice(int(r, f.blocks.length + 1), 0, { ...fn(r, f.lang, `h_${uniq++}`), id: `h${uniq++}` });
    };
    return c;
  };
  CASES[`history_${n}_commits_edited`] = (r, lang) => {
    const c = CASES[`history_${n}_commits`](r, lang);
    const inner = c.step;
    const editAt = Math.floor(n / 2);
    c.step = (files, k) => {
      inner(files, k);
      if (k === editAt) editLine(files[c.anchor.path], files[c.anchor.path].blocks.find((b) => b.id === c.anchor.id), r);
    };
    c.expect = { status: 'changed' };
    return c;
  };
}

function simple(r, lang, edit, o = {}) {
  const ext = lang === 'py' ? 'py' : 'ts';
  const path = `src/m_${int(r, 1000)}.${ext}`;
  const f = file(r, lang, 8, 'f');
  const idx = o.at === 'late' ? 5 + int(r, 3) : 2 + int(r, 4);
  const id = f.blocks[idx].id;
  return {
    files0: { [path]: f },
    anchor: { path, id, symbol: !!o.symbol, sub: o.sub },
    step(files) {
      edit(files[path], id);
    },
    expect: o.expect ? { status: o.expect } : { status: 'auto', path, id },
  };
}

// ------------------------------------------------------------------ running
const STATUSES = ['fresh', 'moved', 'renamed', 'changed', 'symbol_removed', 'symbol_renamed', 'deleted'];
const STALE = new Set(['changed', 'symbol_removed', 'symbol_renamed', 'deleted']);
const work = mkdtempSync(join(tmpdir(), 'gm-eval-'));
const env = {
  PATH: process.env.PATH,
  HOME: work,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: join(work, '.gitconfig'),
  GIT_AUTHOR_NAME: 'Eval',
  GIT_AUTHOR_EMAIL: 'eval@example.com',
  GIT_COMMITTER_NAME: 'Eval',
  GIT_COMMITTER_EMAIL: 'eval@example.com',
  GIT_MEM_HOME: join(work, 'gm-home'),
};
writeFileSync(env.GIT_CONFIG_GLOBAL, '[init]\n\tdefaultBranch = main\n');
const git = (cwd, ...a) => execFileSync('git', a, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

function writeAll(dir, files) {
  const out = {};
  for (const [p, f] of Object.entries(files)) {
    const { text, ranges } = render(f);
    mkdirSync(dirname(join(dir, p)), { recursive: true });
    writeFileSync(join(dir, p), text);
    out[p] = ranges;
  }
  return out;
}
function commitAll(dir, msg) {
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '--allow-empty', '-m', msg);
}

async function runCase(name, seed) {
  const r = mulberry32(seed * 7919 + name.length * 104729 + [...name].reduce((a, c) => a + c.charCodeAt(0), 0));
  const lang = seed % 2 ? 'py' : 'ts';
  const c = CASES[name](r, lang);
  const dir = join(work, `${name}-${seed}`);
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q');
  let files = Object.fromEntries(Object.entries(c.files0).map(([p, f]) => [p, clone(f)]));
  const ranges0 = writeAll(dir, files);
  commitAll(dir, 'base');
  const store = await H.openStore(dir, env);
  try {
    await H.init(store);
    const sub = ([a, b], o) => (o ? [a + o[0], a + o[1]] : [a, b]);
    const [s, e] = sub(ranges0[c.anchor.path].get(c.anchor.id), c.anchor.sub);
    const blk = files[c.anchor.path].blocks.find((b) => b.id === c.anchor.id);
    const spec = c.anchor.symbol ? `${c.anchor.path}#${blk.name}` : `${c.anchor.path}:${s}-${e}`;
    await H.addAnchored(store, `${name} ${seed}`, spec, c.anchor.symbol);
    const n = c.commits ?? 1;
    let ranges;
    for (let k = 0; k < n; k++) {
      files = Object.fromEntries(Object.entries(files).map(([p, f]) => [p, clone(f)]));
      c.step(files, k);
      // deletions: remove files no longer in the model
      for (const p of git(dir, 'ls-files').split('\n').filter(Boolean)) if (!files[p]) rmSync(join(dir, p));
      ranges = writeAll(dir, files);
      commitAll(dir, `step ${k}`);
    }
    // truth
    let expect = c.expect;
    if (expect.status === 'auto' || expect.id) {
      const path = expect.path ?? c.anchor.path;
      const range = sub(ranges[path]?.get(expect.id ?? c.anchor.id), c.anchor.sub);
      const status = expect.status === 'auto' ? (path === c.anchor.path && range[0] === s && range[1] === e ? 'fresh' : 'moved') : expect.status;
      expect = { status, path, range };
    }
    const rep = await H.check(store, { dryRun: true });
    const res = rep.results[0];
    return { name, seed, lang, expect, got: res ? { status: res.verdict.status, to: res.verdict.to, reason: res.verdict.reason } : { status: 'none' } };
  } finally {
    store.close();
  }
}

const names = Object.keys(CASES).filter((n) => !ONLY.length || ONLY.includes(n));
const rows = [];
const t0 = Date.now();
for (const name of names) {
  const seeds = name.startsWith('history_200') ? Math.max(2, Math.ceil(SEEDS / 4)) : SEEDS;
  for (let seed = 1; seed <= seeds; seed++) {
    try {
      rows.push(await runCase(name, seed));
    } catch (e) {
      rows.push({ name, seed, expect: { status: '?' }, got: { status: 'error', reason: String(e?.message ?? e) } });
    }
  }
  process.stderr.write(`eval: ${name} done\n`);
}
rmSync(work, { recursive: true, force: true });

// ------------------------------------------------------------------ report
const cols = [...STATUSES, 'error'];
const matrix = new Map();
for (const r of rows) {
  const k = r.expect.status;
  if (!matrix.has(k)) matrix.set(k, Object.fromEntries(cols.map((c) => [c, 0])));
  const m = matrix.get(k);
  m[r.got.status in m ? r.got.status : 'error']++;
}
const edited = rows.filter((r) => STALE.has(r.expect.status));
const editedOk = edited.filter((r) => ['fresh', 'moved', 'renamed'].includes(r.got.status));
const movers = rows.filter((r) => ['moved', 'renamed'].includes(r.expect.status));
const exact = (r) =>
  ['fresh', 'moved', 'renamed'].includes(r.got.status) &&
  r.got.to?.path === r.expect.path &&
  r.got.to?.lines?.[0] === r.expect.range?.[0] &&
  r.got.to?.lines?.[1] === r.expect.range?.[1];
const moversExact = movers.filter(exact);
const intact = rows.filter((r) => ['fresh', 'moved', 'renamed'].includes(r.expect.status));
const intactExact = intact.filter(exact);
const correct = rows.filter((r) => r.got.status === r.expect.status && (!r.expect.range || exact(r)));
const pctS = (a, b) => (b ? `${((100 * a) / b).toFixed(1)} %` : 'n/a');

const out = [];
out.push('## anchors evaluation', '');
out.push(`${rows.length} cases (${names.length} kinds × seeds, TypeScript and Python alternating), ${((Date.now() - t0) / 1000).toFixed(1)} s. Command: \`npm run eval:anchors\`.`, '');
out.push('The code is synthetic: functions whose lines carry distinct identifiers, edited by scripted operations (one commit, or 200). Real histories have more repeated lines and messier edits, so read these figures as what the algorithm gets right by construction on each kind of change, not as a measurement comparable to LHDiff\'s or git blame\'s figures on real histories. The cases that stress repetition (duplicate_*, *_copy_inserted_above, common_line_reordered) are the ones to watch; common_line_reordered failed 1 of 8 before the distinctive-context check was added.', '');
out.push(`- **Edited anchors reported fresh/moved/renamed: ${editedOk.length} of ${edited.length}** (goal 0)`);
out.push(`- **Moved/renamed anchors relocated to the exact range: ${moversExact.length} of ${movers.length} = ${pctS(moversExact.length, movers.length)}** (goal ≥ 97 %; LHDiff 97.0 %, git blame -M 92.5 % on their benchmarks)`);
out.push(`- Intact anchors (fresh + moved + renamed) at the exact range: ${intactExact.length} of ${intact.length} = ${pctS(intactExact.length, intact.length)}`);
out.push(`- Verdict exactly right (status, and range where one is expected): ${correct.length} of ${rows.length} = ${pctS(correct.length, rows.length)}`, '');
out.push('Confusion matrix (rows: truth, columns: verdict):', '');
out.push(`| truth \\ verdict | ${cols.join(' | ')} |`, `|---|${cols.map(() => '---:').join('|')}|`);
for (const s of [...STATUSES, '?']) {
  const m = matrix.get(s);
  if (m) out.push(`| ${s} | ${cols.map((c) => m[c] || '·').join(' | ')} |`);
}
out.push('', 'Per case kind (right / total):', '', '| case | right | total | wrong verdicts |', '|---|---:|---:|---|');
for (const name of names) {
  const rs = rows.filter((r) => r.name === name);
  const ok = rs.filter((r) => r.got.status === r.expect.status && (!r.expect.range || exact(r)));
  const bad = rs
    .filter((r) => !ok.includes(r))
    .map((r) => `${r.expect.status}→${r.got.status}${r.got.to?.lines ? `@${r.got.to.path}:${r.got.to.lines.join('-')}` : ''}${r.expect.range ? ` (want ${r.expect.path}:${r.expect.range.join('-')})` : ''}`)
    .slice(0, 3)
    .join('; ');
  out.push(`| ${name} | ${ok.length} | ${rs.length} | ${bad} |`);
}
if (VERBOSE) {
  out.push('', '```');
  for (const r of rows) if (!(r.got.status === r.expect.status && (!r.expect.range || exact(r)))) out.push(JSON.stringify(r));
  out.push('```');
}
const text = out.join('\n');
writeFileSync(join(here, 'RESULTS.md'), `${text}\n`);
process.stdout.write(`${text}\n`);
