/**
 * Context packs (pure): memory text for an agent's prompt under a token
 * budget. Sections in priority order (seed 001: procedural before semantic
 * before episodic): rules in scope, constraints, best matches, latest
 * session summaries. An item that does not fit whole may go in shortened;
 * the pack never exceeds the budget. The text is framed as reference
 * material by the one framing function (src/safety/frame.ts), which
 * neutralises the assembled text so memory text can neither close the frame
 * nor smuggle control characters.
 */

import { estimateTokens } from '../model/record.js';
import { frame, frameOverhead, neutralize } from '../safety/frame.js';

export type Section = 'rules' | 'constraints' | 'matches' | 'sessions';

const SECTION_TITLES: Record<Section, string> = {
  rules: 'Rules in scope',
  constraints: 'Constraints',
  matches: 'Relevant memories',
  sessions: 'Recent sessions',
};

export interface PackCandidate {
  id: string;
  alias?: string | null;
  type: string;
  title: string;
  body: string;
  status?: string;
  section: Section;
  /** short reason shown after the title (e.g. "scope src/db/**", "stale") */
  note?: string;
  /** a best match's ranking score (orders a team store's matches among the project's: src/search/layers.ts) */
  score?: number;
  /** the team store it comes from (unset: the project's own memory); shown after the id */
  store?: string;
}

export interface PackItem {
  id: string;
  type: string;
  title: string;
  tokens: number;
  section: Section;
  /** true when the body was shortened to fit */
  truncated?: boolean;
  /** the store it comes from, when team stores are consulted: `project` or a team store's name */
  store?: string;
}

export interface Pack {
  text: string;
  items: PackItem[];
  tokens: number;
  /**
   * Set when there were memories for the pack but the budget held none: the budget the
   * first of them needs whole.
   */
  needed?: number;
}

function oneLine(s: string): string {
  return neutralize(s).replace(/\s+/g, ' ').trim();
}

/**
 * An item: a heading and its text, or — with no room for any text — one line (its title), so the
 * pack never holds a heading without a body.
 */
function itemText(c: PackCandidate, body: string): string {
  const id = c.alias ? `${c.alias}, ${c.id.slice(0, 12)}` : c.id.slice(0, 12);
  const ref = c.store && c.store !== 'project' ? `${id}, store ${oneLine(c.store)}` : id;
  const note = c.note ? `; ${oneLine(c.note)}` : '';
  const head = `${oneLine(c.title)} (${c.type}${c.status && c.status !== 'active' ? `, ${c.status}` : ''}; ${ref}${note})`;
  const b = neutralize(body).trim();
  return b ? `### ${head}\n${b}\n` : `- ${head}\n`;
}

/** The first sentence or line of a body, at most `max` characters. */
function shorten(body: string, max: number): string {
  const flat = body.replace(/\s+/g, ' ').trim();
  const m = /^(.{20,}?[.!?])(\s|$)/.exec(flat);
  let s = m ? m[1] : flat;
  if (s.length > max) s = `${s.slice(0, Math.max(0, max - 1)).replace(/\s+\S*$/, '')}…`;
  return s;
}

/**
 * The share of the budget the session summaries' section may take at most: episodic memory is a
 * small section of its own, never what crowds out knowledge (a summary over it goes in shortened,
 * or as its title).
 */
export const SESSIONS_SHARE = 0.25;

/**
 * Fills the budget in the order given (callers order by section, then rank).
 * Greedy: an item that does not fit whole is tried shortened, then skipped;
 * later (smaller) items may still fit.
 */
export function assemblePack(cands: PackCandidate[], budget: number): Pack {
  const overhead = frameOverhead('context');
  const first = cands[0];
  // the budget the first (most important) memory needs whole, for a budget that holds nothing
  const needed = () =>
    first
      ? {
          needed: Math.ceil(
            (overhead +
              `## ${SECTION_TITLES[first.section]}\n\n${itemText(first, first.body)}`.trimEnd().length) /
              4,
          ),
        }
      : {};
  if (budget <= 0 || Math.ceil(overhead / 4) > budget) return { text: '', items: [], tokens: 0, ...needed() };
  const parts = new Map<Section, string[]>();
  const items: PackItem[] = [];
  const content = () => {
    const out: string[] = [];
    for (const sec of ['rules', 'constraints', 'matches', 'sessions'] as Section[]) {
      const p = parts.get(sec);
      if (p?.length) out.push(`## ${SECTION_TITLES[sec]}\n\n${p.join('\n')}`.trimEnd());
    }
    return out;
  };
  // the size while filling: items are neutralised already and neutralising never lengthens a text,
  // so the framed pack is at most this long
  const size = () => {
    const c = content();
    return Math.ceil((overhead + c.reduce((n, s) => n + s.length, 0) + 2 * Math.max(0, c.length - 1)) / 4);
  };
  const render = () => frame('context', content());
  let current = size();
  const seen = new Set<string>();
  for (const c of cands) {
    if (seen.has(c.id)) continue;
    const tryAdd = (text: string, truncated: boolean): boolean => {
      const list = parts.get(c.section) ?? [];
      list.push(text);
      parts.set(c.section, list);
      const total = size();
      const sessionsFit =
        c.section !== 'sessions' ||
        Math.ceil(`## ${SECTION_TITLES.sessions}\n\n${list.join('\n')}`.trimEnd().length / 4) <=
          budget * SESSIONS_SHARE;
      if (total <= budget && sessionsFit) {
        items.push({
          id: c.id,
          type: c.type,
          title: c.title,
          tokens: total - current,
          section: c.section,
          ...(truncated ? { truncated } : {}),
          ...(c.store ? { store: c.store } : {}),
        });
        current = total;
        return true;
      }
      list.pop();
      if (!list.length) parts.delete(c.section);
      return false;
    };
    if (tryAdd(itemText(c, c.body), false)) {
      seen.add(c.id);
      continue;
    }
    const short = shorten(c.body, 160);
    if (short && short !== c.body.trim() && tryAdd(itemText(c, short), true)) {
      seen.add(c.id);
      continue;
    }
    if (tryAdd(itemText(c, ''), true)) seen.add(c.id);
  }
  if (!items.length) return { text: '', items: [], tokens: 0, ...needed() };
  const text = render();
  return { text, items, tokens: estimateTokens(text) };
}
