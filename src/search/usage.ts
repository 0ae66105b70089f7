/**
 * Local usage counters (seed 000's importance): how often a memory was
 * retrieved, and when last. Kept in .git/mem/usage.log as appended lines
 * (one small append per read, safe with concurrent readers), never in the
 * shared ref: a read never makes a commit.
 */
import {
  appendFileSync,
  closeSync,
  fstatSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { memDir, type Repo } from '../gitstore/repo.js';

export interface Usage {
  count: number;
  last: string;
}

/** Where the log is; its folder is made by the first append that needs it, not at every read. */
function file(repo: Repo): string {
  return join(repo.commonDir, 'mem', 'usage.log');
}

/** Parses the log: lines `ISO-time id id id…` (pure); `into` adds them to counters already read. */
export function parseUsage(text: string, into = new Map<string, Usage>()): Map<string, Usage> {
  const out = into;
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

interface UsageMemo {
  /** the file read so far: its inode (a compaction renames a new file in) and bytes up to a line end */
  ino: number;
  size: number;
  usage: Map<string, Usage>;
  counts: Map<string, number>;
}

const memo = new Map<string, UsageMemo>();

/**
 * The counters, read once and then only what was appended since: a long-lived process (MCP
 * server, UI) records a use with every search and context pack, and read the whole log back
 * with the next (~6 ms at 10k memories, for each call).
 */
function readUsage(repo: Repo): UsageMemo | undefined {
  const f = file(repo);
  let fd: number | undefined;
  try {
    fd = openSync(f, 'r');
    const st = fstatSync(fd);
    let m = memo.get(f);
    if (m && (m.ino !== st.ino || st.size < m.size)) m = undefined;
    if (!m) m = { ino: st.ino, size: 0, usage: new Map(), counts: new Map() };
    if (st.size > m.size) {
      const buf = Buffer.alloc(st.size - m.size);
      const n = readSync(fd, buf, 0, buf.length, m.size);
      // a line still being appended is read next time
      const end = buf.subarray(0, n).lastIndexOf(10) + 1;
      if (end > 0) {
        const added = parseUsage(buf.subarray(0, end).toString('utf8'));
        for (const [id, u] of added) {
          const had = m.usage.get(id);
          if (had) {
            had.count += u.count;
            if (u.last > had.last) had.last = u.last;
          } else m.usage.set(id, { ...u });
          m.counts.set(id, m.usage.get(id)!.count);
        }
        m.size += end;
      }
    }
    memo.set(f, m);
    return m;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** How often each memory was retrieved (shared with later calls: read it, do not change it). */
export function usageCounts(repo: Repo): ReadonlyMap<string, number> {
  return readUsage(repo)?.counts ?? new Map();
}

/** Records that these memories were used (retrieved into a result or a pack). Never throws. */
export function recordUse(repo: Repo, ids: readonly string[], now = new Date()): void {
  if (!ids.length) return;
  try {
    const f = file(repo);
    const line = `${now.toISOString()} ${ids.join(' ')}\n`;
    try {
      appendFileSync(f, line);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      memDir(repo);
      appendFileSync(f, line);
    }
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
