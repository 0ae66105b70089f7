/**
 * The pull-request comment `git mem ci --comment` keeps up to date: what a
 * change does to the memories anchored to its code, with what a reviewer
 * needs to act on it. Built from the `git mem ci` report and the repository:
 *
 *   - memories the change makes stale, each with the hunk that did it;
 *   - memories whose code it moves or renames, with the exact
 *     `git mem reanchor …` command that re-anchors them;
 *   - the rules whose scope covers the files it changes (rulesFor).
 *
 * The body starts with MARKER, which is how the poster finds its comment
 * again (src/ci/post.ts). Reads only: nothing is written to refs/memory.
 */
import type { CiItem, CiReport } from '../anchors/ci-format.js';
import { type FullAnchor, locString } from '../anchors/types.js';
import { git } from '../gitstore/git.js';
import type { Store } from '../gitstore/store.js';
import type { MemoryRecord } from '../model/record.js';
import { rulesFor } from '../search/rules.js';

/** The hidden first line that identifies git-mem's comment (the markdown format starts with it too). */
export const MARKER = '<!-- git-mem:ci -->';

/** GitHub refuses bodies over 65,536 characters; GitLab allows more. Stay under both. */
const MAX_BODY = 60_000;
/** Lines of diff shown per memory, and memories shown with their hunk. */
const MAX_HUNK_LINES = 30;
const MAX_WITH_HUNK = 25;
/** Changed files whose rules are looked up, and rules listed. */
const MAX_RULE_FILES = 500;
const MAX_RULES = 20;

const short = (s: string) => s.slice(0, 12);

/** Text a person wrote (titles, rule bodies) on one line, inert in Markdown: no HTML, no @mentions, no table breaks. */
function inline(s: string, max = 200): string {
  const one = s.replace(/\s+/g, ' ').trim();
  const cut = one.length > max ? `${one.slice(0, max - 1)}…` : one;
  return cut
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/\|/g, '\\|')
    .replace(/@(?=\w)/g, '@\u200b')
    .replace(/[*_`[\]]/g, (c) => `\\${c}`);
}

/** A code span that holds any text (a longer run of backticks than the text has). */
function code(s: string): string {
  const runs = s.match(/`+/g) ?? [];
  const n = Math.max(0, ...runs.map((r) => r.length)) + 1;
  const tick = '`'.repeat(n);
  return n > 1 ? `${tick} ${s} ${tick}` : `${tick}${s}${tick}`;
}

/** A fenced block that holds any text. */
function fence(lang: string, body: string): string {
  const runs = body.match(/`{3,}/g) ?? [];
  const f = '`'.repeat(Math.max(3, ...runs.map((r) => r.length + 1)));
  return `${f}${lang}\n${body.replace(/\n$/, '')}\n${f}`;
}

/** One shell word (single-quoted when it needs to be). */
export function shellWord(s: string): string {
  return /^[\w./:#@%+=,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

// ------------------------------------------------------------------ hunks

interface Hunk {
  header: string;
  lines: string[];
  /** old-file lines removed */
  removed: number[];
  /** old-file line numbers before which lines were inserted */
  inserted: number[];
}

/** The hunks of a unified diff of one file (or one rename pair). */
export function parseHunks(diff: string): Hunk[] {
  const out: Hunk[] = [];
  let cur: Hunk | null = null;
  let old = 0;
  for (const line of diff.split('\n')) {
    const h = /^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@/.exec(line);
    if (h) {
      cur = { header: line, lines: [], removed: [], inserted: [] };
      out.push(cur);
      // a hunk that removes nothing names the line after which it inserts
      old = Number(h[2] === '0' ? Number(h[1]) + 1 : h[1]);
      continue;
    }
    if (!cur) continue;
    const c = line[0];
    if (c === ' ') old++;
    else if (c === '-') cur.removed.push(old++);
    else if (c === '+') cur.inserted.push(old);
    else if (c !== '\\') continue;
    cur.lines.push(line);
  }
  return out;
}

/** Whether a hunk changes lines [s, e] of the old file (an insertion counts when it lands inside). */
function touches(h: Hunk, range: [number, number] | undefined): boolean {
  if (!range) return h.removed.length > 0 || h.inserted.length > 0;
  const [s, e] = range;
  return h.removed.some((n) => n >= s && n <= e) || h.inserted.some((n) => n > s && n <= e);
}

/** The hunks of `mb..head` that changed an anchor's lines, as diff text (capped). */
async function hunksFor(store: Store, mb: string, head: string, i: CiItem): Promise<string | null> {
  const paths = [i.from.path, ...(i.to && i.to.path !== i.from.path ? [i.to.path] : [])];
  const r = await git(
    [
      'diff',
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      '-U2',
      '-M',
      mb,
      head,
      '--',
      ...paths.map((p) => `:(literal)${p}`),
    ],
    { cwd: store.repo.cwd, env: store.repo.env, allowFail: true },
  );
  if (r.code !== 0) return null;
  const hunks = parseHunks(r.stdout.toString('utf8')).filter((h) => touches(h, i.from.lines));
  if (!hunks.length) return null;
  const lines = hunks.flatMap((h) => [h.header, ...h.lines]);
  if (lines.length <= MAX_HUNK_LINES) return lines.join('\n');
  return [
    ...lines.slice(0, MAX_HUNK_LINES),
    `… ${lines.length - MAX_HUNK_LINES} more lines: git diff ${short(mb)} ${short(head)} -- ${paths.join(' ')}`,
  ].join('\n');
}

// ------------------------------------------------------------------ reanchor commands

/** The spec that re-anchors one anchor where it is now: --symbol PATH#NAME or --anchor PATH[:S-E]. */
function specOf(a: FullAnchor, at: { path: string; lines?: [number, number]; symbol?: string }): string[] {
  const sym = at.symbol ?? a.sym?.qualified ?? a.symbol;
  if (a.symbol || a.sym) return ['--symbol', shellWord(`${at.path}#${sym}`)];
  const where = at.lines && a.lines ? `${at.path}:${at.lines[0]}-${at.lines[1]}` : at.path;
  return ['--anchor', shellWord(where)];
}

/**
 * `git mem reanchor ID --anchor … --symbol …`: every anchor of the memory,
 * the ones this change moved at their new place, the others where they are.
 * (Given specs replace all the anchors, so none may be left out.) Null when
 * one of its anchors has no place left to name.
 */
function reanchorCommand(rec: MemoryRecord, items: readonly CiItem[]): string | null {
  const args: string[] = [];
  const anchors = rec.anchors as FullAnchor[];
  for (let k = 0; k < anchors.length; k++) {
    const a = anchors[k];
    const it = items.find((x) => x.anchor === k);
    if (it) {
      // a fresh anchor of the same memory may carry no new place: it is where it was
      const at = it.to ?? (it.status === 'fresh' ? it.from : null);
      if (!at || it.status === 'ambiguous') return null;
      args.push(...specOf(a, at));
    } else {
      const at = a.current ?? a;
      args.push(...specOf(a, { path: at.path, lines: at.lines }));
    }
  }
  return args.length ? `git mem reanchor ${short(rec.id)} ${args.join(' ')}` : null;
}

// ------------------------------------------------------------------ rules

interface RuleHit {
  id: string;
  title: string;
  body: string;
  scope: string[];
  files: string[];
}

async function rulesInScope(store: Store, files: readonly string[]): Promise<RuleHit[]> {
  const by = new Map<string, RuleHit>();
  for (const f of files.slice(0, MAX_RULE_FILES)) {
    for (const r of await rulesFor(store, f)) {
      // rules without a scope apply everywhere: they are not news for a pull request
      if (r.matched === null) continue;
      let hit = by.get(r.id);
      if (!hit) {
        hit = { id: r.id, title: r.title, body: r.body, scope: r.scope, files: [] };
        by.set(r.id, hit);
      }
      hit.files.push(f);
    }
  }
  return [...by.values()].sort((a, b) => b.files.length - a.files.length || (a.id < b.id ? -1 : 1));
}

// ------------------------------------------------------------------ the body

export interface CommentOptions {
  /** this clone has no refs/memory: say so instead of "all fresh" */
  noStore?: boolean;
}

/** The comment body for a `git mem ci` report. */
export async function buildComment(store: Store, rep: CiReport, opts: CommentOptions = {}): Promise<string> {
  const repo = store.repo;
  const mbr = await git(['merge-base', rep.base, rep.head], {
    cwd: repo.cwd,
    env: repo.env,
    allowFail: true,
  });
  const mb = mbr.code === 0 ? mbr.stdout.toString().trim() : rep.base;
  const range = `${short(mb)}..${short(rep.head)}`;
  const names = await git(
    ['diff-tree', '-r', '-z', '--name-only', '--no-renames', '--diff-filter=d', mb, rep.head],
    {
      cwd: repo.cwd,
      env: repo.env,
    },
  );
  const changed = names.stdout.toString('utf8').split('\0').filter(Boolean);

  const stale = rep.items.filter((i) => i.stale);
  const moved = rep.items.filter((i) => !i.stale && i.status !== 'fresh');
  const fresh = rep.items.length - stale.length - moved.length;
  const tip = await store.tip();
  const records = new Map<string, MemoryRecord>();
  const recordOf = async (id: string) => {
    let r = records.get(id);
    if (!r && tip) {
      r = await store.readRecord(tip, id);
      records.set(id, r);
    }
    return r;
  };

  const out: string[] = [MARKER, '### git-mem: memories this change touches', ''];
  const verdict = rep.failed
    ? `❌ fails the check (\`--fail-on ${rep.failOn}\`)`
    : rep.failOn === 'never'
      ? 'reported only (`--fail-on never`)'
      : 'passes the check';
  if (opts.noStore) {
    out.push(
      `No memory store in this clone (\`refs/memory\`), so nothing to check for ${code(range)}. Fetch it before \`git mem ci\`: \`git fetch origin '+refs/mem/memory:refs/memory'\`.`,
    );
  } else if (!stale.length && !moved.length) {
    out.push(
      `✅ All fresh: ${
        rep.items.length
          ? `${rep.items.length} anchor${rep.items.length === 1 ? '' : 's'} in the files ${code(range)} changes, none affected`
          : `no memory is anchored to the code ${code(range)} changes`
      }.`,
    );
  } else {
    out.push(
      `**${stale.length} stale**, ${moved.length} moved or renamed, ${fresh} fresh in ${code(range)}: ${verdict}.`,
    );
  }

  if (stale.length) {
    out.push('', '#### ⚠️ Stale: the code under these memories changed', '');
    let shown = 0;
    for (const i of stale) {
      const to = i.to && locString(i.to) !== locString(i.from) ? ` → ${code(locString(i.to))}` : '';
      out.push(
        `- ${code(short(i.id))} **${inline(i.title)}** at ${code(locString(i.from))}${to}: ${i.status}, ${inline(i.reason)}`,
      );
      if (i.status === 'deleted') out.push(`  ${code(i.from.path)} is deleted by this change.`);
      else if (shown < MAX_WITH_HUNK) {
        const h = await hunksFor(store, mb, rep.head, i);
        if (h) {
          shown++;
          out.push(
            '',
            ...fence('diff', h)
              .split('\n')
              .map((l) => `  ${l}`),
            '',
          );
        }
      }
    }
    const id = short(stale[0].id);
    out.push(
      '',
      `Each one may now mislead an agent. Fix it (\`git mem update ${id}\`), confirm it still holds (\`git mem reanchor ${id}\`), or retire it (\`git mem rm ${id}\` / \`git mem supersede ${id} NEW\`).`,
    );
  }

  if (moved.length) {
    out.push('', '#### ↪️ Moved or renamed: re-anchor after merging', '');
    const cmds: string[] = [];
    const byId = new Map<string, CiItem[]>();
    for (const i of rep.items) byId.set(i.id, [...(byId.get(i.id) ?? []), i]);
    for (const i of moved) {
      out.push(
        `- ${code(short(i.id))} **${inline(i.title)}**: ${code(locString(i.from))} → ${code(locString(i.to))} (${i.status}${i.status === 'ambiguous' ? `: ${inline(i.reason)}` : ''})`,
      );
    }
    for (const id of new Set(moved.map((i) => i.id))) {
      // a memory with a stale anchor is in the list above: confirming it is a person's call
      if (stale.some((s) => s.id === id)) continue;
      const rec = await recordOf(id);
      const cmd = rec && reanchorCommand(rec, byId.get(id) ?? []);
      cmds.push(
        cmd ??
          `git mem reanchor ${short(id)} --anchor PATH:START-END   # the code is in more than one place: name the one it means`,
      );
    }
    if (cmds.length)
      out.push(
        '',
        'On the default branch once this is merged, from the repository root (`git mem check` follows moves by itself; this records them as confirmed):',
        '',
        fence('sh', cmds.join('\n')),
      );
  }

  if (!opts.noStore && tip) {
    const rules = await rulesInScope(store, changed);
    if (rules.length) {
      out.push('', '#### 📏 Rules in scope of the changed files', '');
      for (const r of rules.slice(0, MAX_RULES)) {
        const files = r.files.slice(0, 3).map(code).join(', ');
        const more = r.files.length > 3 ? ` and ${r.files.length - 3} more` : '';
        const body = r.body.trim() ? `: ${inline(r.body, 160)}` : '';
        out.push(
          `- ${code(short(r.id))} **${inline(r.title)}**${body} (${r.scope.map(code).join(', ')}; ${files}${more})`,
        );
      }
      if (rules.length > MAX_RULES)
        out.push(`- … and ${rules.length - MAX_RULES} more: \`git mem rules --file PATH\``);
    }
  }

  out.push(
    '',
    `<sub>Updated for ${code(short(rep.head))} by git-mem. Reproduce: ${code(`git mem ci --base ${short(rep.base)} --head ${short(rep.head)} --format comment`)}</sub>`,
  );
  // (no line of a diff block is empty: they are indented)
  let body = `${out.join('\n').replace(/\n{3,}/g, '\n\n')}\n`;
  if (body.length > MAX_BODY) {
    const note = `\n\n… cut at ${MAX_BODY} characters: run the command above for the full report.\n`;
    const cut = body.slice(0, MAX_BODY - note.length);
    body = cut.slice(0, cut.lastIndexOf('\n')) + note;
  }
  return body;
}
