/**
 * What the server knows of one file, and how it is shown in a buffer.
 *
 * A file's view is the answer of the operations for it at HEAD and the memory
 * tip — `blame` (the memories anchored to it, judged at HEAD, with who and
 * when and when last confirmed), their records (the body, the reasons a check
 * recorded for a stale one), `rulesFor` (the rules in force: project, team
 * and personal) and the search usage counts (how often each was retrieved) —
 * computed once per (HEAD, tip) in the background. Hover, code lenses and
 * diagnostics are then pure functions of the view and the buffer's text: the
 * ranges at HEAD are mapped through a line diff of HEAD's file against the
 * buffer (src/anchors/diff.ts, as a check maps them through a commit), so an
 * unsaved edit moves or flags them at once.
 */
import { diffLines, mapRange } from '../anchors/diff.js';
import { staleReasons, staleReasonText } from '../anchors/types.js';
import type { BlameMemory } from '../commands/blame.js';
import type { RuleInForce } from '../commands/rules.js';
import type { MemoryRecord } from '../model/record.js';
import type { Doc, Range } from './documents.js';

export interface Placed {
  m: BlameMemory;
  /** the record (body, stale reasons); absent when it could not be read */
  rec?: MemoryRecord;
  /** the anchored lines at HEAD, 1-based inclusive (null: the whole file) */
  head: [number, number] | null;
  /** stale: its anchor's verdict at HEAD is stale, or the memory is marked stale */
  stale: boolean;
  /** why it is stale (the recorded reasons, else the verdict's) */
  reasons: string[];
}

export interface FileView {
  path: string;
  head: string | null;
  tip: string | null;
  /** the file at HEAD, as lines (null: not in HEAD's tree) */
  headLines: string[] | null;
  placed: Placed[];
  rules: RuleInForce[];
  usage: ReadonlyMap<string, number>;
}

/** One memory placed in the buffer. */
export interface Shown {
  p: Placed;
  /** buffer lines, 1-based inclusive (null: the whole file) */
  lines: [number, number] | null;
  /** the anchored lines differ in the buffer from HEAD (an edit not yet committed) */
  edited: boolean;
}

export function placedOf(m: BlameMemory, rec: MemoryRecord | undefined, headLen: number): Placed {
  const l = m.at?.lines ?? m.anchor.lines;
  let head: [number, number] | null = null;
  if (l && headLen > 0) {
    const s = Math.min(Math.max(1, l[0]), headLen);
    head = [s, Math.min(Math.max(s, l[1]), headLen)];
  }
  const stale = m.verdict.stale || m.status === 'stale';
  let reasons: string[] = [];
  if (stale) {
    const recorded = rec && m.status === 'stale' ? staleReasons(rec).map(staleReasonText) : [];
    reasons = m.verdict.stale ? [m.verdict.reason] : recorded;
    if (!reasons.length) reasons = recorded.length ? recorded : ['marked stale'];
  }
  return { m, rec, head, stale, reasons };
}

const diffs = new WeakMap<FileView, { doc: Doc; version: number; text: string; shown: Shown[] }>();

/** The view's memories placed in the buffer's text (cached per document version). */
export function place(view: FileView, doc: Doc | undefined): Shown[] {
  if (!doc || !view.headLines) return view.placed.map((p) => ({ p, lines: p.head, edited: false }));
  const c = diffs.get(view);
  if (c && c.doc === doc && c.version === doc.version && c.text === doc.text) return c.shown;
  const lines = doc.lines;
  const d = diffLines(view.headLines, lines);
  const shown = view.placed.map((p): Shown => {
    if (!p.head) return { p, lines: null, edited: false };
    const r = mapRange(d, p.head[0], p.head[1]);
    const max = Math.max(1, lines.length);
    const s = Math.min(Math.max(1, r.start), max);
    return { p, lines: [s, Math.min(Math.max(s, r.end), max)], edited: !r.intact };
  });
  diffs.set(view, { doc, version: doc.version, text: doc.text, shown });
  return shown;
}

const lineRange = (l: [number, number] | null, doc: Doc | undefined): Range => {
  if (!l) return { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  const endText = doc?.lines[l[1] - 1];
  return {
    start: { line: l[0] - 1, character: 0 },
    end: { line: l[1] - 1, character: endText?.length ?? 0 },
  };
};

/** Text from a record (a teammate's, an agent's) made plain for an editor: no control characters. */
export function plain(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '');
}
const inline = (s: string) => plain(s).replace(/\s+/g, ' ').trim();

export interface Diagnostic {
  range: Range;
  severity: 1 | 2 | 3 | 4;
  source: 'git-mem';
  code: string;
  message: string;
  data: { id: string };
}

/** Stale memories as warnings on their lines; anchored lines edited in the buffer as information. */
export function diagnostics(view: FileView, doc: Doc): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const s of place(view, doc)) {
    const { m } = s.p;
    if (s.p.stale)
      out.push({
        range: lineRange(s.lines, doc),
        severity: 2,
        source: 'git-mem',
        code: 'stale',
        message: `stale memory "${inline(m.title)}": ${inline(s.p.reasons.join('; '))}`,
        data: { id: m.id },
      });
    else if (s.edited)
      out.push({
        range: lineRange(s.lines, doc),
        severity: 3,
        source: 'git-mem',
        code: 'edited',
        message: `edited lines anchored by ${m.type} "${inline(m.title)}" (not committed): check it still holds, then re-anchor or update it`,
        data: { id: m.id },
      });
  }
  return out;
}

/** The memories on a buffer line (0-based), most relevant first: the tightest anchor, then the most used, then the newest. */
export function memoriesAt(view: FileView, doc: Doc | undefined, line: number): Shown[] {
  const at = line + 1;
  const span = (s: Shown) => (s.lines ? s.lines[1] - s.lines[0] : Number.MAX_SAFE_INTEGER);
  const hit = place(view, doc).filter((s) => (s.lines ? s.lines[0] <= at && at <= s.lines[1] : line === 0));
  const seen = new Set<string>();
  return hit
    .sort(
      (a, b) =>
        span(a) - span(b) ||
        (view.usage.get(b.p.m.id) ?? 0) - (view.usage.get(a.p.m.id) ?? 0) ||
        (a.p.m.updated < b.p.m.updated ? 1 : a.p.m.updated > b.p.m.updated ? -1 : 0),
    )
    .filter((s) => !seen.has(s.p.m.id) && !!seen.add(s.p.m.id));
}

const who = (m: BlameMemory): string => {
  const by =
    m.by?.kind === 'agent' ? `${m.by.agent ?? 'an agent'}${m.by.model ? ` (${m.by.model})` : ''}` : '';
  const person = m.author?.replace(/\s*<[^>]*>$/, '') ?? '';
  return inline([person, by && `via ${by}`].filter(Boolean).join(' ') || 'unknown');
};

/** The record's own `verified: {by, at}` (a person confirmed it), when it has one. */
function recordVerified(rec: MemoryRecord | undefined): string | null {
  const v = (rec as { verified?: unknown } | undefined)?.verified ?? rec?.extra?.verified;
  if (!v || typeof v !== 'object') return null;
  const { by, at } = v as { by?: unknown; at?: unknown };
  const parts = [typeof by === 'string' ? by : '', typeof at === 'string' ? at.slice(0, 10) : ''].filter(
    Boolean,
  );
  return parts.length ? inline(parts.join(' on ')) : 'yes';
}

/** The hover: the memories on the line and the rules in force for the file, as Markdown. */
export function hoverMarkdown(view: FileView, shown: Shown[]): string {
  const parts: string[] = [];
  for (const s of shown) {
    const { m, rec } = s.p;
    const id = m.alias ?? m.id.slice(0, 12);
    const state = s.p.stale
      ? `**stale**: ${inline(s.p.reasons.join('; '))}`
      : s.edited
        ? `${m.status} · anchored lines edited in this buffer`
        : m.status;
    const confirmed = recordVerified(rec);
    const checked = m.verified
      ? `anchor confirmed ${m.verified.at.slice(0, 10)} by ${m.verified.by === 'check' ? 'a check' : 'anchoring'}`
      : 'anchor not confirmed since it went stale';
    parts.push(
      [
        `**${m.type}**: ${inline(m.title)} \`${inline(id)}\``,
        '',
        plain(rec?.body ?? '').trim(),
        '',
        `*${who(m)} · ${m.created.slice(0, 10)}${m.updated !== m.created ? ` (updated ${m.updated.slice(0, 10)})` : ''} · ${state} · ${confirmed ? `verified by ${confirmed}` : checked}*`,
      ].join('\n'),
    );
  }
  if (view.rules.length) {
    const rules = view.rules.map(
      (r) =>
        `- ${inline(r.title)} \`${inline(r.alias ?? r.id.slice(0, 12))}\`${r.matched ? ` (${inline(r.matched)})` : ''}${r.origin === 'project' ? '' : ` · ${inline(r.store)}`}`,
    );
    parts.push(`**Rules in force for ${inline(view.path)}**\n\n${rules.join('\n')}`);
  }
  return parts.join('\n\n---\n\n');
}

export interface CodeLens {
  range: Range;
  command: { title: string; command: string; arguments: unknown[] };
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** One lens above each anchored range ("2 memories · 1 stale"), and one at the top when rules are in force. */
export function codeLenses(view: FileView, doc: Doc | undefined): CodeLens[] {
  const groups = new Map<number, Shown[]>();
  for (const s of place(view, doc)) {
    const k = s.lines ? s.lines[0] : 1;
    const g = groups.get(k);
    if (g) g.push(s);
    else groups.set(k, [s]);
  }
  const out: CodeLens[] = [];
  if (view.rules.length)
    out.push({
      range: lineRange(null, doc),
      command: {
        title: `${plural(view.rules.length, 'rule', 'rules')} in force`,
        command: 'git-mem.open',
        arguments: [view.rules[0].id],
      },
    });
  for (const [line, g] of [...groups].sort((a, b) => a[0] - b[0])) {
    const ids = [...new Set(g.map((s) => s.p.m.id))];
    const stale = new Set(g.filter((s) => s.p.stale).map((s) => s.p.m.id)).size;
    const edited = new Set(g.filter((s) => s.edited && !s.p.stale).map((s) => s.p.m.id)).size;
    const title = [
      plural(ids.length, 'memory', 'memories'),
      stale ? `${stale} stale` : '',
      edited ? `${edited} edited` : '',
    ]
      .filter(Boolean)
      .join(' · ');
    const first = memoriesAt(view, doc, line - 1)[0]?.p.m.id ?? ids[0];
    out.push({
      range: lineRange([line, line], doc),
      command: { title, command: 'git-mem.open', arguments: [first] },
    });
  }
  return out;
}
