/**
 * JSON shapes that commands print with `--json` and that `git mem ui` sends
 * (src/ui/wire.ts re-exports them for the page), declared once. Type-only and
 * with no import, so the page's type check (web/tsconfig.json, no Node types)
 * can read this file as it reads wire.ts.
 */

/** One line of the session list: what `git mem sessions` and the web UI's Sessions page show. */
export interface SessionRow {
  id: string;
  title: string;
  created: string;
  updated: string;
  session: unknown;
  agent: unknown;
  duration_s: unknown;
  outcome: unknown;
  compressed: boolean;
}

/** Counts of the store: what `git mem stats` prints and the web UI's Overview page starts from. */
export interface StoreStats {
  records: number;
  byType: Record<string, number>;
  byStatus: Record<string, number>;
  tokens: number;
  expired: number;
  anchored: number;
  malformed: number;
  commits: number;
  tip: string | null;
}

/** A commit on the memory ref, as `git mem log` lists it. */
export interface LogEntry {
  commit: string;
  author: string;
  email: string;
  date: string;
  subject: string;
}
