/**
 * One source for every agent's rules: the `rule` records on refs/memory are
 * written into the files each agent reads — CLAUDE.md, AGENTS.md, Cursor's
 * `.cursor/rules/*.mdc`, Copilot's `.github/copilot-instructions.md` and
 * `.github/instructions/*.instructions.md`, Claude Code's path-scoped
 * `.claude/rules/*.md` — always inside a marked section
 * (`<!-- git-mem:begin rules -->` … `<!-- git-mem:end -->`), so hand-written
 * text around it is kept, and exporting twice changes nothing. Without named
 * targets, export and its `--check` take the team's setting `rules.targets`,
 * else the targets whose files already hold git-mem's sections (what an
 * earlier export wrote).
 *
 * Rendering (rules-render.ts) is pure, rules in, file texts out; the plan here is too;
 * `exportRules` does the I/O.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { confinedPath, removeConfined, writeConfined } from '../merge/confine.js';
import { expiredAt, parseRecord, recordPath, ruleInForce, splitFrontmatter } from '../model/record.js';
import { RULE_TARGETS } from '../model/rule-targets.js';
import {
  BEGIN,
  claudeFrontmatter,
  copilotFrontmatter,
  cursorFrontmatter,
  type ExportRule,
  markdownSection,
  ruleFileText,
  spliceSection,
  splitFront,
  stripSections,
} from './rules-render.js';

export {
  BEGIN,
  END,
  type ExportRule,
  findSection,
  mdBody,
  mdLine,
  scopeGlobs,
  spliceSection,
  splitFront,
  stripSections,
  yamlString,
} from './rules-render.js';

/** Prefix of the per-rule files we own in .cursor/rules and .github/instructions. */
const FILE_PREFIX = 'git-mem-';

export const TARGETS = RULE_TARGETS;
export type Target = (typeof TARGETS)[number];
/**
 * What `all` means: the instruction files every export wrote before
 * claude-rules existed. claude-rules moves scoped rules out of CLAUDE.md, so
 * it is named on its own (an upgrade does not change what `--to all` writes).
 */
export const ALL_TARGETS: readonly Target[] = ['claude', 'agents', 'cursor', 'copilot'];
const TARGET_LIST = [...ALL_TARGETS, 'all', 'claude-rules'].join('|');

export interface FileChange {
  /** path relative to the export root, with forward slashes */
  path: string;
  target: Target;
  action: 'created' | 'updated' | 'unchanged' | 'removed';
}

/**
 * Parses a --to list: claude, agents, cursor, copilot, claude-rules, all (comma-separated or
 * repeated). `all` is ALL_TARGETS for export; import reads every format (`every`).
 */
export function parseTargets(values: string[], every: readonly Target[] = ALL_TARGETS): Target[] {
  const out = new Set<Target>();
  for (const v of values
    .flatMap((x) => x.split(','))
    .map((x) => x.trim().toLowerCase())
    .filter(Boolean)) {
    if (v === 'all') for (const t of every) out.add(t);
    else if ((TARGETS as readonly string[]).includes(v)) out.add(v as Target);
    else throw err('E_INVALID_ARG', `unknown target "${v}"`, `use --to ${TARGET_LIST}`);
  }
  if (!out.size) throw err('E_INVALID_ARG', 'no target given', `use --to ${TARGET_LIST}`);
  return TARGETS.filter((t) => out.has(t));
}

// ------------------------------------------------------------------ file names

function slugify(s: string, max = 48): string {
  const slug = s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return (slug.slice(0, max).replace(/-+$/, '') || 'rule').toString();
}

/** Stable, unique file stems for the per-rule files (alias, else title; the id breaks ties). */
function ruleStems(rules: ExportRule[]): Map<string, string> {
  const base = new Map<string, string>();
  const count = new Map<string, number>();
  for (const r of rules) {
    const s = slugify(r.alias ? r.alias.replace(/\//g, '-') : r.title);
    base.set(r.id, s);
    count.set(s, (count.get(s) ?? 0) + 1);
  }
  const out = new Map<string, string>();
  for (const r of rules) {
    const s = base.get(r.id)!;
    out.set(r.id, `${FILE_PREFIX}${count.get(s)! > 1 ? `${s}-${slugify(r.id.slice(-6))}` : s}`);
  }
  return out;
}

// ------------------------------------------------------------------ plan

/** The desired state of every file a target owns (null = remove our part). Pure apart from reading. */
export interface PlannedFile {
  path: string;
  target: Target;
  /** new full text; '' means delete the file */
  text: string;
  old: string | null;
}

function sortRules(rules: ExportRule[]): ExportRule[] {
  // unscoped (always-on) rules first, then by id (creation order): stable across exports
  return [...rules].sort(
    (a, b) =>
      (a.scope.length === 0 ? 0 : 1) - (b.scope.length === 0 ? 0 : 1) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

type Reader = (path: string) => string | null;
type Lister = (dir: string) => string[];

function planMarkdown(
  path: string,
  target: Target,
  rules: ExportRule[],
  read: Reader,
  heading?: string,
): PlannedFile {
  const old = read(path);
  const text = spliceSection(old, rules.length ? markdownSection(rules, heading) : null, path);
  return { path, target, text, old };
}

function planRuleFiles(
  dir: string,
  ext: string,
  target: Target,
  rules: ExportRule[],
  front: (r: ExportRule) => string,
  read: Reader,
  list: Lister,
): PlannedFile[] {
  const out: PlannedFile[] = [];
  const stems = ruleStems(rules);
  const wanted = new Set<string>();
  for (const r of rules) {
    const path = `${dir}/${stems.get(r.id)}${ext}`;
    wanted.add(path);
    const old = read(path);
    out.push({ path, target, text: ruleFileText(old, front(r), r, path), old });
  }
  // our files for rules that are gone: delete, or keep only the hand-written part
  for (const name of list(dir)) {
    const path = `${dir}/${name}`;
    if (!name.startsWith(FILE_PREFIX) || !name.endsWith(ext) || wanted.has(path)) continue;
    const old = read(path);
    if (old === null || !old.includes(BEGIN)) continue;
    const { front: fm, body } = splitFront(old);
    const rest = spliceSection(body, null, path);
    out.push({
      path,
      target,
      text: rest.trim() ? `${fm === null ? '' : `---\n${fm}\n---\n`}${rest}` : '',
      old,
    });
  }
  return out;
}

/** Lowercase words only, so a rule body and the same text in a file compare equal whatever the markup and wrapping. */
export function normText(s: string): string {
  return s
    .toLowerCase()
    .replace(/[`*_>#-]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The hand-written text an agent already reads for a target: the files
 * outside our marked sections, and the rule files that are not ours.
 */
function handWritten(t: Target, read: Reader, list: Lister): string {
  const own = (path: string) => stripSections(read(path) ?? '');
  const others = (dir: string, ext: string) =>
    list(dir)
      .filter((n) => n.endsWith(ext) && !n.startsWith(FILE_PREFIX))
      .map((n) => own(`${dir}/${n}`));
  const parts =
    t === 'claude' || t === 'claude-rules'
      ? [own('CLAUDE.md'), own('.claude/CLAUDE.md'), ...others('.claude/rules', '.md')]
      : t === 'agents'
        ? [own('AGENTS.md')]
        : t === 'cursor'
          ? [own('.cursorrules'), ...others('.cursor/rules', '.mdc')]
          : [own('.github/copilot-instructions.md'), ...others('.github/instructions', '.instructions.md')];
  return normText(parts.join('\n'));
}

/**
 * Rules whose text the target's hand-written files already hold (a rule
 * `rules import` took from CLAUDE.md, say) are not written into that
 * target again: the agent would read them twice.
 */
function notHandWritten(rules: ExportRule[], t: Target, read: Reader, list: Lister): ExportRule[] {
  const text = handWritten(t, read, list);
  if (!text) return rules;
  return rules.filter((r) => {
    const body = normText(r.body);
    return !body || !text.includes(body);
  });
}

export function planExport(
  rules: ExportRule[],
  targets: Target[],
  read: Reader,
  list: Lister,
): PlannedFile[] {
  const all = sortRules(rules);
  const plans: PlannedFile[] = [];
  for (const t of targets) {
    const sorted = notHandWritten(all, t, read, list);
    // Claude Code reads CLAUDE.md and .claude/rules: with both targets, scoped rules go to their files only
    const both = targets.includes('claude') && targets.includes('claude-rules');
    if (t === 'claude')
      plans.push(planMarkdown('CLAUDE.md', t, both ? sorted.filter((r) => !r.scope.length) : sorted, read));
    if (t === 'claude-rules')
      plans.push(
        ...planRuleFiles(
          '.claude/rules',
          '.md',
          t,
          both ? sorted.filter((r) => r.scope.length > 0) : sorted,
          claudeFrontmatter,
          read,
          list,
        ),
      );
    if (t === 'agents') plans.push(planMarkdown('AGENTS.md', t, sorted, read));
    if (t === 'cursor')
      plans.push(...planRuleFiles('.cursor/rules', '.mdc', t, sorted, cursorFrontmatter, read, list));
    if (t === 'copilot') {
      const always = sorted.filter((r) => r.scope.length === 0);
      const scoped = sorted.filter((r) => r.scope.length > 0);
      plans.push(planMarkdown('.github/copilot-instructions.md', t, always, read));
      plans.push(
        ...planRuleFiles(
          '.github/instructions',
          '.instructions.md',
          t,
          scoped,
          copilotFrontmatter,
          read,
          list,
        ),
      );
    }
  }
  // a file that does not exist and would stay empty is no change to report
  return plans.filter((p) => p.old !== null || p.text !== '');
}

function changeOf(p: PlannedFile): FileChange {
  const action: FileChange['action'] =
    p.old === null
      ? p.text === ''
        ? 'unchanged'
        : 'created'
      : p.text === p.old
        ? 'unchanged'
        : p.text === ''
          ? 'removed'
          : 'updated';
  return { path: p.path, target: p.target, action };
}

// ------------------------------------------------------------------ I/O

/** The project rules in force (active, not expired), in id order. */
export async function loadRules(store: Store): Promise<ExportRule[]> {
  const tip = await store.tip();
  if (!tip) return [];
  const cat = await store.catalog();
  const expired = expiredAt(Date.now());
  const entries = [...cat.entries.values()]
    .filter((e) => ruleInForce(e, expired))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const blobs = await store.catFile.readMany(entries.map((e) => e.oid));
  // title, scope and alias come from the catalog; only the body is read (no YAML parse: 2-3 ms a record)
  return entries.map((e, i) => {
    const text = blobs[i]!.content.toString('utf8');
    let body: string;
    try {
      body = splitFrontmatter(text).body;
    } catch {
      body = parseRecord(text, recordPath(e.id)).body;
    }
    return { id: e.id, title: e.title, body, scope: e.scope, alias: e.alias };
  });
}

/**
 * The targets whose files hold git-mem's sections (what an earlier export
 * wrote), in TARGETS order: what export and --check take when none is named.
 */
export function targetsInUse(read: Reader, list: Lister): Target[] {
  const ours = (path: string) => (read(path) ?? '').includes(BEGIN);
  const ownFiles = (dir: string, ext: string) =>
    list(dir).some((n) => n.startsWith(FILE_PREFIX) && n.endsWith(ext) && ours(`${dir}/${n}`));
  const used: Record<Target, boolean> = {
    claude: ours('CLAUDE.md'),
    agents: ours('AGENTS.md'),
    cursor: ownFiles('.cursor/rules', '.mdc'),
    copilot: ours('.github/copilot-instructions.md') || ownFiles('.github/instructions', '.instructions.md'),
    'claude-rules': ownFiles('.claude/rules', '.md'),
  };
  return TARGETS.filter((t) => used[t]);
}

export interface ExportOptions {
  /** the targets; default: those in use (targetsInUse) */
  targets?: Target[];
  /** root directory the files are written under (the work tree by default) */
  dir: string;
  /** compute the changes, write nothing */
  check?: boolean;
}

function exportRulesToDir(
  rules: ExportRule[],
  opts: ExportOptions,
): { targets: Target[]; files: FileChange[] } {
  // every path is resolved inside the target folder, never through a symbolic link
  const read: Reader = (p) => {
    const f = confinedPath(opts.dir, p);
    return existsSync(f) ? readFileSync(f, 'utf8') : null;
  };
  const list: Lister = (d) => {
    const f = confinedPath(opts.dir, d);
    return existsSync(f) ? readdirSync(f).sort() : [];
  };
  const targets = opts.targets ?? targetsInUse(read, list);
  if (!targets.length && rules.length)
    throw err(
      'E_INVALID_ARG',
      'no target given, and no agent rule file here holds git-mem rules yet to take the targets from',
      `name them: git mem rules export --to ${TARGET_LIST}; or for the team and CI, once: git mem config set rules.targets claude,claude-rules --shared`,
    );
  const plans = planExport(rules, targets, read, list);
  const changes = plans.map(changeOf);
  if (opts.check) return { targets, files: changes };
  plans.forEach((p, i) => {
    const c = changes[i];
    if (c.action === 'created' || c.action === 'updated') writeConfined(opts.dir, p.path, p.text);
    else if (c.action === 'removed') removeConfined(opts.dir, p.path);
  });
  return { targets, files: changes };
}

export async function exportRules(
  store: Store,
  opts: ExportOptions,
): Promise<{ rules: number; targets: Target[]; files: FileChange[] }> {
  const rules = await loadRules(store);
  return { rules: rules.length, ...exportRulesToDir(rules, opts) };
}
