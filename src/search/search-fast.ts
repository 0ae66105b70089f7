/**
 * Fast path of `git mem search` (bin/git-mem.js runs it before loading the
 * CLI bundle): when a query daemon of this build already serves the store,
 * ask it directly and print the answer, without starting git or loading the
 * CLI. Anything unusual (an option it does not know, GIT_DIR set, no daemon,
 * an error reply) returns undefined and the full CLI handles the command, so
 * every message and every fallback stays the CLI's own.
 */
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { ask, buildId } from './daemon-client.js';
import { DEFAULT_SOCKET } from './daemon-wire.js';
import { hitLines, type SearchHitView } from './format.js';

interface Parsed {
  json: boolean;
  query: string[];
  file?: string;
  types: string[];
  tags: string[];
  limit: number;
  all: boolean;
}

function parse(args: string[]): Parsed | undefined {
  const p: Parsed = { json: false, query: [], types: [], tags: [], limit: 10, all: false };
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '--') {
      p.query.push(...args.slice(i + 1));
      break;
    }
    if (!a.startsWith('-')) {
      p.query.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = eq > 0 ? a.slice(0, eq) : a;
    const value = (): string | undefined => (eq > 0 ? a.slice(eq + 1) : args[++i]);
    if (name === '--json' && eq < 0) p.json = true;
    else if (name === '--all' && eq < 0) p.all = true;
    else if (name === '--file') p.file = value();
    else if (name === '--type') p.types.push(...(value() ?? '').split(','));
    else if (name === '--tag') p.tags.push(...(value() ?? '').split(','));
    else if (name === '--limit' || name === '-n') {
      const n = Number(value());
      if (!Number.isInteger(n) || n <= 0) return undefined;
      p.limit = n;
    } else return undefined;
    if (p.file === undefined && name === '--file') return undefined;
  }
  p.types = p.types.map((t) => t.trim()).filter(Boolean);
  p.tags = p.tags.map((t) => t.trim()).filter(Boolean);
  return p;
}

/** The work tree and common git dir above `cwd`, found without running git. */
export function findRepo(cwd: string): { workTree: string; commonDir: string } | undefined {
  let dir = realpathSync(resolve(cwd));
  for (;;) {
    const dotgit = join(dir, '.git');
    if (existsSync(dotgit)) {
      let gitDir = dotgit;
      if (!statSync(dotgit).isDirectory()) {
        const m = /^gitdir:\s*(.+)\s*$/m.exec(readFileSync(dotgit, 'utf8'));
        if (!m) return undefined;
        gitDir = resolve(dir, m[1].trim());
      }
      let commonDir = gitDir;
      const cd = join(gitDir, 'commondir');
      if (existsSync(cd)) commonDir = resolve(gitDir, readFileSync(cd, 'utf8').trim());
      return { workTree: dir, commonDir };
    }
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

export async function fastSearch(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  cwd: string = process.cwd(),
  write: (s: string) => void = (s) => process.stdout.write(s),
): Promise<{ code: number } | undefined> {
  try {
    if (argv[0] !== 'search' && argv[0] !== 'find') return undefined;
    if (env.GIT_DIR || env.GIT_WORK_TREE || env.GIT_COMMON_DIR) return undefined;
    if (['0', 'off', 'no', 'false'].includes(String(env.GIT_MEM_DAEMON ?? '').toLowerCase()))
      return undefined;
    const p = parse(argv.slice(1));
    if (!p) return undefined;
    const repo = findRepo(cwd);
    if (!repo) return undefined;
    const sock = join(repo.commonDir, ...DEFAULT_SOCKET);
    if (!existsSync(sock)) return undefined;
    let file: string | undefined;
    if (p.file !== undefined) {
      const rel = relative(repo.workTree, isAbsolute(p.file) ? p.file : resolve(realpathSync(cwd), p.file))
        .split('\\')
        .join('/');
      if (rel.startsWith('..') || isAbsolute(rel)) return undefined;
      file = rel;
    }
    const query = p.query.join(' ');
    if (!query.trim() && !file && !p.types.length && !p.tags.length) return undefined;
    const q = { query, file, types: p.types, tags: p.tags, limit: p.limit, includeStale: p.all };
    const reply = await ask(sock, { op: 'search', q }, 30_000);
    if (!reply.ok || reply.build !== buildId() || !Array.isArray(reply.result)) return undefined;
    const hits = reply.result as SearchHitView[];
    write(p.json ? `${JSON.stringify(hits, null, 2)}\n` : `${hitLines(hits)}\n`);
    return { code: 0 };
  } catch {
    return undefined;
  }
}
