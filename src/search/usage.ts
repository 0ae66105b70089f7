/**
 * Local usage counters (seed 000's importance): how often a memory was
 * retrieved, and when last. Kept in .git/mem/usage.log as appended lines
 * (one small append per read, safe with concurrent readers), never in the
 * shared ref: a read never makes a commit.
 */
import { appendFileSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { memDir, type Repo } from '../gitstore/repo.js';

export interface Usage {
  count: number;
  last: string;
}

function file(repo: Repo): string {
  return join(memDir(repo), 'usage.log');
}

/** Parses the log: lines `ISO-time id id id…` (pure). */
export function parseUsage(text: string): Map<string, Usage> {
  const out = new Map<string, Usage>();
  for (const line of text.split('\n')) {
    const parts = line.trim().split(/\s+/);
    if (parts.length < 2) continue;
    const [when, ...ids] = parts;
    // a compacted line is `ISO-time id=count`
    for (const raw of ids) {
      const eq = raw.indexOf('=');
      const id = eq > 0 ? raw.slice(0, eq) : raw;
      const n = eq > 0 ? Number(raw.slice(eq + 1)) || 0 : 1;
      const u = out.get(id);
      if (u) {
        u.count += n;
        if (when > u.last) u.last = when;
      } else out.set(id, { count: n, last: when });
    }
  }
  return out;
}

const memo = new Map<string, { size: number; usage: Map<string, Usage> }>();

function readUsage(repo: Repo): Map<string, Usage> {
  const f = file(repo);
  try {
    const size = statSync(f).size;
    const m = memo.get(f);
    if (m && m.size === size) return m.usage;
    const usage = parseUsage(readFileSync(f, 'utf8'));
    memo.set(f, { size, usage });
    return usage;
  } catch {
    return new Map();
  }
}

export function usageCounts(repo: Repo): Map<string, number> {
  const out = new Map<string, number>();
  for (const [id, u] of readUsage(repo)) out.set(id, u.count);
  return out;
}

/** Records that these memories were used (retrieved into a result or a pack). Never throws. */
export function recordUse(repo: Repo, ids: readonly string[], now = new Date()): void {
  if (!ids.length) return;
  try {
    const f = file(repo);
    appendFileSync(f, `${now.toISOString()} ${ids.join(' ')}\n`);
    // compact a large log into one line per id
    const size = statSync(f).size;
    if (size > 1 << 20) {
      const usage = parseUsage(readFileSync(f, 'utf8'));
      const tmp = `${f}.${process.pid}.tmp`;
      writeFileSync(tmp, [...usage].map(([id, u]) => `${u.last} ${id}=${u.count}`).join('\n') + '\n');
      renameSync(tmp, f);
    }
  } catch {
    // usage is an optimisation; a read-only .git must not fail a search
  }
}
