/**
 * What the agent hooks inject (seed 000 injection order, seed 002 framing):
 * at session start the rules in scope, the core memories, the last two
 * session summaries of the last 7 days and the memories flagged stale; on
 * each prompt only the memories that clear a relevance bar. Everything is
 * wrapped in a `<memory>` frame as reference material, never instructions,
 * and kept under the agent's 10,000-character cap.
 *
 * The session-start pack is composed here from the catalog (its sections are
 * specific to a session start: stale flags, recent sessions, core types); the
 * per-prompt part lives in relevance.ts (a lexical pass over the catalog, the
 * same whether the hook or a search daemon runs it). Loading the search index in a
 * one-shot hook costs seconds at 10k memories, so hooks never do.
 */
import { staleReasons, staleReasonText } from '../anchors/types.js';
import type { CatalogEntry } from '../gitstore/catalog.js';
import type { Store } from '../gitstore/store.js';
import { isExpired, type MemoryRecord } from '../model/record.js';
import {
  clip,
  frame,
  type Injection,
  MAX_CONTEXT_CHARS,
  neutralize,
  oneLine,
  PRIORITY,
} from '../safety/frame.js';
import { type NamedStore, rulesFor } from '../search/rules.js';
import { sessionEntries } from './sessions.js';

/** Standing knowledge for every session; situational memories (known fixes, failed attempts…) come per prompt. */
const CORE_TYPES = new Set(['constraint', 'security', 'convention', 'decision', 'architecture', 'strategy']);
function isCore(e: CatalogEntry): boolean {
  if (e.tags.includes('core')) return true;
  return CORE_TYPES.has(e.type) && e.confidence >= 0.7 && (e.type !== 'strategy' || e.confidence > 0.7);
}

function usable(e: CatalogEntry, now: number): boolean {
  return e.status === 'active' && !isExpired(e, now) && e.type !== 'session' && e.type !== 'rule';
}

function readRecords(store: Store, entries: CatalogEntry[]): Promise<MemoryRecord[]> {
  return store.readRecords(entries);
}

/** Adds lines to a section while they fit; returns the text (empty when nothing fit). */
function fill(head: string, items: string[], budget: number): { text: string; used: number; count: number } {
  let text = head;
  let count = 0;
  for (const it of items) {
    if (text.length + it.length + 1 > budget) break;
    text += `\n${it}`;
    count++;
  }
  return count ? { text, used: text.length, count } : { text: '', used: 0, count: 0 };
}

/** A team store's core memories (none before its first fetch). */
async function teamCore(
  store: Store,
  coreOf: (entries: Iterable<CatalogEntry>, n: number) => CatalogEntry[],
): Promise<MemoryRecord[]> {
  if (!(await store.tip())) return [];
  return readRecords(store, coreOf((await store.catalog()).entries.values(), 20));
}

/** The SessionStart context pack. */
export async function sessionStartContext(
  store: Store,
  opts: {
    currentSession?: string;
    now?: number;
    maxChars?: number;
    global?: Store;
    /** team stores (src/commands/stores.ts): their rules and core memories, after the project's, labelled */
    teams?: readonly NamedStore[];
  } = {},
): Promise<Injection> {
  const now = opts.now ?? Date.now();
  const max = opts.maxChars ?? MAX_CONTEXT_CHARS;
  const tip = await store.tip();
  if (!tip) return { text: '', ids: [] };
  const cat = await store.catalog();
  const ids: string[] = [];
  const overhead = frame('session-start', ['']).length + 20;
  let budget = max - overhead;

  // stale flags (small, always kept)
  const stale = [...cat.entries.values()].filter((e) => e.status === 'stale').slice(0, 12);
  let staleText = '';
  if (stale.length) {
    const recs = await readRecords(store, stale);
    const lines = recs.map((r) => {
      const reason = staleReasons(r).map(staleReasonText).join('; ');
      return `- [${r.id.slice(0, 12)}] ${oneLine(neutralize(r.title), 140)}${reason ? ` — ${oneLine(neutralize(reason), 120)}` : ''}`;
    });
    staleText = fill(
      '## Possibly stale (the code they describe changed; do not rely on them)',
      lines,
      Math.min(1000, budget),
    ).text;
    budget -= staleText.length;
  }

  // recent sessions: the last two of the last 7 days, not this one
  const weekAgo = now - 7 * 86_400_000;
  const recent = sessionEntries(cat.entries.values())
    .filter((e) => Date.parse(e.updated) >= weekAgo && e.status === 'active')
    .slice(0, 4);
  let sessionsText = '';
  if (recent.length) {
    const recs = (await readRecords(store, recent))
      .filter((r) => (r.extra.session as { id?: string } | undefined)?.id !== opts.currentSession)
      .slice(0, 2);
    const per = Math.floor(Math.min(3600, budget * 0.4) / Math.max(1, recs.length));
    const parts = recs.map((r) => {
      ids.push(r.id);
      // the body's headings go below the title's (a resumed part's ### too)
      const body = neutralize(r.body)
        .trim()
        .replace(/^(##+) /gm, '##$1 ');
      return clip(`### ${neutralize(r.title)}\n${body}`, per);
    });
    if (parts.length)
      sessionsText = `## Recent sessions (summaries of earlier sessions; they may be outdated)\n${parts.join('\n\n')}`;
    budget -= sessionsText.length;
  }

  // rules in scope (no file at session start: unscoped rules in full, scoped ones with their globs)
  const rules = await rulesFor(store, undefined, opts.global, opts.teams).catch(() => []);
  const ruleLines = [...rules]
    .sort((a, b) => a.scope.length - b.scope.length)
    .map((r) => {
      const scope = r.scope.length ? ` (applies to ${r.scope.join(', ')})` : '';
      const from = r.origin === 'team' ? ` (from ${r.store})` : '';
      return `- ${oneLine(neutralize(r.title), 160)}${scope}${from}: ${oneLine(neutralize(r.body), r.scope.length ? 240 : 600)}`;
    });
  const rulesFill = fill('## Rules', ruleLines, Math.floor(budget * 0.5));
  budget -= rulesFill.used;
  for (const r of rules.slice(0, rulesFill.count)) ids.push(r.id);

  // core memories: constraints first, then strategies that work, conventions, decisions…
  const coreOf = (entries: Iterable<CatalogEntry>, n: number) =>
    [...entries]
      .filter((e) => usable(e, now) && isCore(e))
      .sort(
        (a, b) =>
          (PRIORITY[b.type] ?? 3) - (PRIORITY[a.type] ?? 3) ||
          b.confidence - a.confidence ||
          (a.updated < b.updated ? 1 : a.updated > b.updated ? -1 : 0),
      )
      .slice(0, n);
  const coreRecs = await readRecords(store, coreOf(cat.entries.values(), 40));
  const coreLines = coreRecs.map(
    (r) =>
      `- (${r.type}) ${oneLine(neutralize(r.title), 160)}: ${oneLine(neutralize(r.body), 220)} [${r.id.slice(0, 12)}]`,
  );
  // then each team store's, in the order registered, saying where they come from
  for (const t of opts.teams ?? []) {
    const recs = await teamCore(t.store, coreOf).catch(() => []);
    coreRecs.push(...recs);
    for (const r of recs)
      coreLines.push(
        `- (${r.type}, from ${t.name}) ${oneLine(neutralize(r.title), 160)}: ${oneLine(neutralize(r.body), 220)} [${r.id.slice(0, 12)}]`,
      );
  }
  const coreFill = fill('## Core memories', coreLines, budget);
  for (const r of coreRecs.slice(0, coreFill.count)) ids.push(r.id);

  const sections = [rulesFill.text, coreFill.text, sessionsText, staleText].filter(Boolean);
  if (!sections.length) return { text: '', ids: [] };
  return { text: frame('session-start', sections, max), ids };
}
