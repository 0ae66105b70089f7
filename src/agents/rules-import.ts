/**
 * `git mem rules import`: reads the rule files agents already have — CLAUDE.md,
 * AGENTS.md, `.cursor/rules/*.mdc` (and the legacy `.cursorrules`),
 * `.github/copilot-instructions.md`, `.github/instructions/*.instructions.md`,
 * Claude Code's `.claude/rules/*.md` — into `rule` records. Our own marked sections are skipped (they came from the
 * store: importing them back would loop), and rules already in the store (same
 * body, or same title and scope) are not added twice.
 *
 * Parsing is pure (text in, drafts out); `importRules` reads files and writes
 * one commit.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { importRecords } from '../commands/bulk.js';
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { identLine } from '../gitstore/store-config.js';
import { newId } from '../model/id.js';
import { LIMITS, type MemoryRecord, newRecord } from '../model/record.js';
import { scanSecrets } from '../safety/secrets.js';
import {
  BEGIN,
  loadRules,
  normText,
  splitFront,
  stripSections,
  TARGETS,
  type Target,
} from './rules-export.js';

export interface RuleDraft {
  title: string;
  body: string;
  scope: string[];
  /** file it came from, relative to the root */
  source: string;
  target: Target;
  tags: string[];
  /** the text was added by hand to a file of one rule that export writes (it holds our section) */
  inGenerated?: boolean;
}

export interface ImportSkip {
  title: string;
  source: string;
  reason: string;
}

// ------------------------------------------------------------------ parsing

function clean(s: string): string {
  return s
    .replace(/\r\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

function oneLine(s: string, max = 120): string {
  const t = s
    .replace(/\s+/g, ' ')
    .replace(/^[#>*\-\s]+/, '')
    .trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

function titleFromName(path: string): string {
  const stem = basename(path)
    .replace(/\.instructions\.md$|\.mdc$|\.md$/i, '')
    .replace(/^git-mem-/, '');
  const words = stem.replace(/[-_.]+/g, ' ').trim();
  return words ? words[0].toUpperCase() + words.slice(1) : stem;
}

interface Heading {
  line: number;
  level: number;
  text: string;
}

function headings(lines: string[]): Heading[] {
  const out: Heading[] = [];
  let fence: string | null = null;
  lines.forEach((l, i) => {
    const f = /^\s*(```|~~~)/.exec(l);
    if (f) {
      if (fence === null) fence = f[1];
      else if (f[1] === fence) fence = null;
      return;
    }
    if (fence !== null) return;
    const m = /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(l);
    if (m) out.push({ line: i, level: m[1].length, text: m[2].trim() });
  });
  return out;
}

/**
 * A free-form instructions file (CLAUDE.md, AGENTS.md, copilot-instructions.md,
 * .cursorrules) → one rule per top-level section. A single leading `# Title`
 * is the document's title, not a rule; text before the first section is a
 * rule of its own.
 */
export function parseMarkdownRules(text: string, source: string, target: Target): RuleDraft[] {
  const lines = clean(stripSections(text)).split('\n');
  if (!lines.join('').trim()) return [];
  const hs = headings(lines);
  let docTitle: string | undefined;
  let from = 0;
  if (hs.length && hs[0].level === 1 && hs.filter((h) => h.level === 1).length === 1) {
    docTitle = hs[0].text;
    from = hs[0].line + 1;
    hs.shift();
  }
  const level = hs.length ? Math.min(...hs.map((h) => h.level)) : 0;
  const splits = hs.filter((h) => h.level === level);
  const out: RuleDraft[] = [];
  const push = (title: string, body: string) => {
    const b = clean(body);
    if (b)
      out.push({
        title: oneLine(title),
        body: `${b}\n`,
        scope: [],
        source,
        target,
        tags: ['imported', target],
      });
  };
  const preambleEnd = splits.length ? splits[0].line : lines.length;
  const preamble = lines.slice(from, preambleEnd).join('\n');
  if (preamble.trim()) push(docTitle ?? `Instructions from ${source}`, preamble);
  splits.forEach((h, i) => {
    const end = i + 1 < splits.length ? splits[i + 1].line : lines.length;
    push(h.text, lines.slice(h.line + 1, end).join('\n'));
  });
  return out;
}

/** Tolerant `key: value` frontmatter (Cursor writes globs unquoted, which strict YAML rejects). */
export function parseFrontLines(front: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!front) return out;
  for (const l of front.split(/\r?\n/)) {
    const m = /^([A-Za-z][\w-]*)\s*:\s*(.*?)\s*$/.exec(l);
    if (!m) continue;
    let v = m[2];
    if (/^".*"$/.test(v)) {
      try {
        v = JSON.parse(v);
      } catch {
        v = v.slice(1, -1);
      }
    } else if (/^'.*'$/.test(v)) v = v.slice(1, -1).replace(/''/g, "'");
    out[m[1]] = v;
  }
  return out;
}

function globList(v: string | undefined): string[] {
  if (!v) return [];
  let s = v.trim();
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  return s
    .split(',')
    .map((g) => g.trim().replace(/^["']|["']$/g, ''))
    .filter(Boolean);
}

function firstHeading(body: string): { title?: string; rest: string } {
  const lines = body.split('\n');
  const hs = headings(lines);
  if (!hs.length || lines.slice(0, hs[0].line).join('').trim()) return { rest: body };
  return { title: hs[0].text, rest: lines.slice(hs[0].line + 1).join('\n') };
}

/** One Cursor rule file → one rule (description, globs, alwaysApply). */
export function parseCursorRule(text: string, source: string): RuleDraft[] {
  const { front, body } = splitFront(text.replace(/\r\n/g, '\n'));
  const fm = parseFrontLines(front);
  const content = clean(stripSections(body));
  if (!content) return [];
  const h = firstHeading(content);
  const title = oneLine(fm.description || h.title || titleFromName(source));
  const always = /^true$/i.test(fm.alwaysApply ?? '');
  const globs = always ? [] : globList(fm.globs);
  const tags = ['imported', 'cursor'];
  // "agent requested" rules (no globs, not always applied) become unscoped rules; the tag keeps the origin
  if (!always && !globs.length) tags.push('agent-requested');
  const b = h.title && h.title === fm.description ? clean(h.rest) || content : content;
  return [{ title, body: `${b}\n`, scope: globs, source, target: 'cursor', tags }];
}

/** Splits at commas outside braces: `a/**, src/*.{ts,tsx}` → two globs. */
function splitGlobs(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '{') depth++;
    else if (ch === '}') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) {
      out.push(cur);
      cur = '';
    } else cur += ch;
  }
  out.push(cur);
  return out.map((g) => g.trim().replace(/^["']|["']$/g, '')).filter(Boolean);
}

/**
 * Claude Code's `paths:` from a rule file's frontmatter: a YAML list (quoted or
 * not: `- **\/*.ts` is not valid YAML, but people write it), a flow list, or
 * one glob.
 */
export function claudePathsOf(front: string | null): string[] {
  if (!front) return [];
  const lines = front.split(/\r?\n/);
  const at = lines.findIndex((l) => /^paths\s*:/.test(l));
  if (at < 0) return [];
  const inline = lines[at].replace(/^paths\s*:\s*/, '').trim();
  if (inline) {
    if (inline.startsWith('[') && inline.endsWith(']')) return splitGlobs(inline.slice(1, -1));
    return [inline.replace(/^["']|["']$/g, '')].filter(Boolean);
  }
  const out: string[] = [];
  for (const l of lines.slice(at + 1)) {
    const m = /^\s*-\s*(.*?)\s*$/.exec(l);
    if (!m) break;
    const g = m[1].replace(/^["']|["']$/g, '');
    if (g) out.push(g);
  }
  return out;
}

/** One Claude Code rule file (`.claude/rules/*.md`) → one rule (paths; none: always loaded). */
function parseClaudeRuleFile(text: string, source: string): RuleDraft[] {
  const { front, body } = splitFront(text.replace(/\r\n/g, '\n'));
  const content = clean(stripSections(body));
  if (!content) return [];
  const h = firstHeading(content);
  return [
    {
      title: oneLine(h.title || titleFromName(source)),
      body: `${h.title ? clean(h.rest) || content : content}\n`,
      scope: claudePathsOf(front),
      source,
      target: 'claude-rules',
      tags: ['imported', 'claude-rules'],
    },
  ];
}

/** One Copilot path-specific instructions file → one rule (applyTo). */
function parseCopilotInstructions(text: string, source: string): RuleDraft[] {
  const { front, body } = splitFront(text.replace(/\r\n/g, '\n'));
  const fm = parseFrontLines(front);
  const content = clean(stripSections(body));
  if (!content) return [];
  const h = firstHeading(content);
  const globs = globList(fm.applyTo).filter((g) => g !== '**' && g !== '**/*');
  return [
    {
      title: oneLine(h.title || titleFromName(source)),
      body: `${h.title ? clean(h.rest) || content : content}\n`,
      scope: globs,
      source,
      target: 'copilot',
      tags: ['imported', 'copilot'],
    },
  ];
}

// ------------------------------------------------------------------ sources

type Reader = (path: string) => string | null;
type Lister = (dir: string) => string[];

/** A file of one rule that export wrote (it holds our section): what else it says was added by hand to that rule. */
function marked(drafts: RuleDraft[], text: string): RuleDraft[] {
  return text.includes(BEGIN) ? drafts.map((d) => ({ ...d, inGenerated: true })) : drafts;
}

/** Reads every known rule file of the chosen formats (pure given the reader). */
function collectDrafts(targets: Target[], read: Reader, list: Lister): RuleDraft[] {
  const out: RuleDraft[] = [];
  const md = (path: string, t: Target) => {
    const text = read(path);
    if (text !== null) out.push(...parseMarkdownRules(text, path, t));
  };
  for (const t of targets) {
    if (t === 'claude') {
      md('CLAUDE.md', t);
      md('.claude/CLAUDE.md', t);
    }
    if (t === 'agents') md('AGENTS.md', t);
    if (t === 'claude-rules') {
      for (const name of list('.claude/rules')) {
        if (!name.endsWith('.md')) continue;
        const path = `.claude/rules/${name}`;
        const text = read(path);
        if (text !== null) out.push(...marked(parseClaudeRuleFile(text, path), text));
      }
    }
    if (t === 'cursor') {
      md('.cursorrules', t);
      for (const name of list('.cursor/rules')) {
        if (!name.endsWith('.mdc')) continue;
        const path = `.cursor/rules/${name}`;
        const text = read(path);
        if (text !== null) out.push(...marked(parseCursorRule(text, path), text));
      }
    }
    if (t === 'copilot') {
      md('.github/copilot-instructions.md', t);
      for (const name of list('.github/instructions')) {
        if (!name.endsWith('.instructions.md')) continue;
        const path = `.github/instructions/${name}`;
        const text = read(path);
        if (text !== null) out.push(...marked(parseCopilotInstructions(text, path), text));
      }
    }
  }
  return out;
}

function scopeKey(scope: string[]): string {
  return [...scope].sort().join('\0');
}

/** Drops drafts already in the store or earlier in the same import (same body, or same title + scope). Pure. */
export function dedupDrafts(
  drafts: RuleDraft[],
  existing: Array<{ title: string; body: string; scope: string[] }>,
): { keep: RuleDraft[]; skipped: ImportSkip[] } {
  const bodies = new Map<string, string>();
  const titles = new Map<string, string>();
  for (const r of existing) {
    bodies.set(normText(r.body), 'already in the store');
    titles.set(`${normText(r.title)}\0${scopeKey(r.scope)}`, 'already in the store');
  }
  const keep: RuleDraft[] = [];
  const skipped: ImportSkip[] = [];
  for (const d of drafts) {
    if (d.inGenerated) {
      // not a rule of its own: importing it would make a second rule of the same name, and the
      // next export would write both
      skipped.push({
        title: d.title,
        source: d.source,
        reason:
          'text added to a file git mem rules export writes: put it in that rule (git mem update) or in a file of your own',
      });
      continue;
    }
    const b = normText(d.body);
    const t = `${normText(d.title)}\0${scopeKey(d.scope)}`;
    const why = bodies.get(b) ?? titles.get(t);
    if (why) {
      skipped.push({ title: d.title, source: d.source, reason: why });
      continue;
    }
    bodies.set(b, `duplicate of a rule in ${d.source}`);
    titles.set(t, `duplicate of a rule in ${d.source}`);
    keep.push(d);
  }
  return { keep, skipped };
}

// ------------------------------------------------------------------ I/O

export interface ImportOptions {
  targets?: Target[];
  dir: string;
  dryRun?: boolean;
  allowSecret?: boolean;
  now?: Date;
}

export interface ImportResult {
  imported: Array<{ id: string | null; title: string; source: string; scope: string[] }>;
  skipped: ImportSkip[];
  commit: string | null;
}

export async function importRules(store: Store, opts: ImportOptions): Promise<ImportResult> {
  const targets = opts.targets ?? [...TARGETS];
  const read: Reader = (p) => {
    const f = join(opts.dir, p);
    return existsSync(f) ? readFileSync(f, 'utf8') : null;
  };
  const list: Lister = (d) => {
    const f = join(opts.dir, d);
    return existsSync(f) ? readdirSync(f).sort() : [];
  };
  const drafts = collectDrafts(targets, read, list);
  const { keep, skipped } = dedupDrafts(drafts, await loadRules(store));
  const now = opts.now ?? new Date();
  const ident = await store.ident();
  const records: MemoryRecord[] = [];
  for (const d of keep) {
    if (!opts.allowSecret) {
      const f = scanSecrets(`${d.title}\n${d.body}`);
      if (f.length) {
        throw err(
          'E_SECRET',
          `${d.source}: the rule "${d.title}" looks like it holds a secret (${f[0].kind})`,
          'remove it from the file, or pass --allow-secret',
        );
      }
    }
    let body = d.body;
    if (Buffer.byteLength(body) > LIMITS.bodyBytes) body = `${body.slice(0, LIMITS.bodyBytes / 2)}\n…\n`;
    records.push(
      newRecord({
        id: newId(now.getTime()),
        type: 'rule',
        title: d.title,
        body,
        now: now.toISOString(),
        author: identLine(ident),
        by: store.writerActor(),
        tags: d.tags,
        scope: d.scope,
        source: d.source,
      }),
    );
  }
  let commit: string | null = null;
  if (records.length && !opts.dryRun)
    commit = (await importRecords(store, records, { allowSecret: opts.allowSecret })).commit;
  return {
    imported: records.map((r) => ({
      id: opts.dryRun ? null : r.id,
      title: r.title,
      source: r.source ?? '',
      scope: r.scope,
    })),
    skipped,
    commit,
  };
}
