/**
 * `blame`: what memory says about some lines of a file at HEAD — the
 * memories anchored to those lines and the rules whose scope covers the
 * file, each with who wrote it and when, the verdict of its anchor at HEAD
 * and when git-mem last confirmed it. The CLI (`git mem blame`), the web
 * UI's code view and pull-request comments call this one function.
 *
 * The verdicts are judged at HEAD by the one judge (judgeAnchors, as `git
 * mem check` and `stale` on a branch use it) and nothing is written.
 * Anchors are found through the anchor index: those made at this path, and
 * those whose file changed since they were last placed (a rename or a move
 * may have brought their text here); an anchor a check already found stale
 * at the file as it still is stays where it was judged.
 */
import { judgeAnchors } from '../anchors/check.js';
import { revParseVia, treeBlobs } from '../anchors/gitio.js';
import {
  type AnchorIndex,
  anchorIndex,
  entriesAt,
  type IndexEntry,
  scanIndex,
} from '../anchors/index-cache.js';
import { loadRecords } from '../anchors/record-cache.js';
import {
  baseOf,
  type FullAnchor,
  isComplete,
  type Loc,
  STALE_VERDICTS,
  type Verdict,
  type VerdictStatus,
} from '../anchors/types.js';
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import type { Provenance } from '../model/provenance.js';
import type { MemoryRecord, MemoryType, Status } from '../model/record.js';
import { rulesFor } from '../search/rules.js';

export interface BlameOptions {
  /** Repository-relative path, forward slashes. */
  path: string;
  /** First line (1-based); with no `start`, the whole file. */
  start?: number;
  /** Last line (default `start`). */
  end?: number;
}

/** A place in the code: a path, its lines and the symbol, when known. */
export interface BlameLoc {
  path: string;
  lines: [number, number] | null;
  symbol: string | null;
}

export interface BlameMemory {
  id: string;
  alias: string | null;
  type: MemoryType;
  title: string;
  status: Status;
  /** `Name <email>` of the git identity that added it */
  author: string | null;
  /** a person or an agent (null: a record from before git-mem kept it) */
  by: Provenance | null;
  created: string;
  updated: string;
  /** the anchor as it was made (its position in the record's anchors) */
  anchor: BlameLoc & { index: number };
  /** where the anchored code is at HEAD (null: nowhere — deleted, removed, or ambiguous) */
  at: BlameLoc | null;
  /** the anchor's verdict at HEAD, judged now */
  verdict: { status: VerdictStatus; reason: string; confidence: number; stale: boolean };
  /**
   * When git-mem last confirmed the anchored code: the last check that recorded a
   * fresh, moved or renamed verdict (`by: check`), else the anchoring itself
   * (`by: anchor`: no check has recorded anything since); null when the last
   * verdict a check recorded was stale.
   */
  verified: { at: string; commit: string | null; by: 'check' | 'anchor' } | null;
}

export interface BlameRule {
  id: string;
  alias: string | null;
  title: string;
  scope: string[];
  /** the glob that matched the file, or null for a rule without scope (it applies everywhere) */
  matched: string | null;
  author: string | null;
  by: Provenance | null;
  created: string;
  updated: string;
}

export interface BlameResult {
  path: string;
  lines: [number, number] | null;
  /** the code commit judged (HEAD) */
  head: string;
  /** the memory commit read (null: no store yet) */
  memoryCommit: string | null;
  /** anchored to the lines, in line order at HEAD */
  memories: BlameMemory[];
  /** active project rules whose scope covers the file, most specific first (those already in `memories` left out) */
  rules: BlameRule[];
}

/** Statuses blame leaves out: memories that no longer speak for the code. */
const RETIRED = new Set(['superseded', 'archived']);

function checkPath(path: string): string {
  const p = path.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
  if (!p || p.startsWith('/') || p.split('/').some((s) => s === '..' || s === '.' || s === ''))
    throw err(
      'E_INVALID_ARG',
      `invalid path "${path}"`,
      'pass a path relative to the repository root, like src/db/query.ts',
    );
  return p;
}

function lineCount(b: Buffer): number {
  if (!b.length) return 0;
  let n = 0;
  for (const c of b) if (c === 10) n++;
  return b[b.length - 1] === 10 ? n : n + 1;
}

const overlaps = (a: readonly [number, number] | undefined | null, r: [number, number] | null): boolean =>
  !a || !r || (a[0] <= r[1] && a[1] >= r[0]);

const locOf = (l: Loc): BlameLoc => ({ path: l.path, lines: l.lines ?? null, symbol: l.symbol ?? null });

/**
 * What blame reads for any file at one memory tip and HEAD: the anchor index
 * (loaded, its lines parsed only when needed), HEAD's blob of each indexed
 * path, the live anchors whose file changed since they were placed (they may
 * have moved anywhere, so every file's blame judges them) and the verdicts
 * judged so far. All of it follows from the two commit ids: a long-lived store
 * (the LSP, MCP and UI servers: `store.longLived`) keeps the last one for the
 * next file; a one-shot command builds it for its one file.
 */
interface Scope {
  head: string;
  idx: AnchorIndex;
  tblobs: Map<string, string>;
  roaming: IndexEntry[];
  /** verdicts at HEAD by anchor (record blob and position): judged once per scope */
  verdicts: Map<string, Promise<Verdict>>;
}

const kept = new WeakMap<Store, { key: string; head: string; scope: Promise<Scope> }>();

function scopeOf(store: Store, tip: string | null, head: string): Promise<Scope> {
  if (!store.longLived) return buildScope(store, tip, head);
  const key = `${tip} ${head}`;
  const k = kept.get(store);
  if (k?.key === key) return k.scope;
  // only the memory ref moved (a memory added, a check recorded): HEAD's tree as listed already
  const listed =
    k?.head === head
      ? k.scope.then(
          (s) => s.tblobs,
          () => undefined,
        )
      : undefined;
  const scope = buildScope(store, tip, head, listed);
  kept.set(store, { key, head, scope });
  scope.catch(() => {
    if (kept.get(store)?.scope === scope) kept.delete(store);
  });
  return scope;
}

/** Indexed paths beyond one `git ls-tree` of pathspecs (a process per 500): HEAD's whole tree is listed once instead. */
const PATHSPECS = 500;

async function buildScope(
  store: Store,
  tip: string | null,
  head: string,
  listed?: Promise<Map<string, string> | undefined>,
): Promise<Scope> {
  // the index loaded (and brought up to the tip), no line parsed
  let idx = await anchorIndex(store, tip, new Set());
  const paths = new Set<string>();
  if (!scanIndex(idx, (p) => !paths.add(p))) {
    // the journal does not fit the file: anchorIndex builds the index again
    idx = await anchorIndex(store, tip);
    scanIndex(idx, (p) => !paths.add(p));
  }
  const known = await listed;
  // the paths whose blob at HEAD is not known yet (a path not in HEAD's tree is listed again: it is absent)
  const wanted = known ? [...paths].filter((p) => !known.has(p)) : [...paths];
  const many = wanted.length > PATHSPECS;
  const tblobs = await treeBlobs(store.repo, head, many ? undefined : wanted);
  if (many) for (const p of tblobs.keys()) if (!paths.has(p)) tblobs.delete(p);
  if (known) for (const [p, b] of known) if (paths.has(p)) tblobs.set(p, b);
  const settled = (e: IndexEntry) => e.s === 1 && e.sb !== undefined && (tblobs.get(e.p) ?? '') === e.sb;
  // only the lines whose file is not the blob they were placed at are parsed
  const roaming = (scanIndex(idx, (p, b) => b !== null && tblobs.get(p) !== b) ?? []).filter(
    (e) => !RETIRED.has(e.status) && !e.i && e.b !== null && !settled(e),
  );
  return { head, idx, tblobs, roaming, verdicts: new Map() };
}

/** The line range of a blame (FILE:START-END), or null for the whole file. */
function rangeOf(opts: Pick<BlameOptions, 'start' | 'end'>): [number, number] | null {
  if (opts.start === undefined && opts.end === undefined) return null;
  const start = opts.start ?? 1;
  const end = opts.end ?? start;
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 1 || end < start)
    throw err(
      'E_INVALID_ARG',
      `invalid line range ${start}-${end}`,
      'lines start at 1 and END is at least START: FILE:START-END',
    );
  return [start, end];
}

/** The memory of one anchor, when its code is on these lines at HEAD (or was, when it is gone). */
function memoryHere(
  e: IndexEntry,
  a: FullAnchor,
  v: Verdict,
  r: MemoryRecord,
  path: string,
  range: [number, number] | null,
): BlameMemory | null {
  let here: boolean;
  if (v.to) here = v.to.path === path && overlaps(v.to.lines, range);
  else if (v.candidates?.length) here = v.candidates.some((c) => c.path === path && overlaps(c.lines, range));
  else {
    const b = isComplete(a) ? baseOf(a) : null;
    here = (b?.path ?? a.path) === path && overlaps(b?.lines ?? a.lines, range);
  }
  if (!here) return null;
  const recorded = a.verdict;
  const verified: BlameMemory['verified'] = recorded
    ? STALE_VERDICTS.has(recorded.status)
      ? null
      : { at: recorded.checked, commit: recorded.commit ?? null, by: 'check' }
    : {
        at: String((a.reanchored as { at?: unknown } | undefined)?.at ?? r.created),
        commit: a.commit ?? null,
        by: 'anchor',
      };
  return {
    id: r.id,
    alias: r.alias ?? null,
    type: r.type,
    title: r.title,
    status: r.status,
    author: r.author ?? null,
    by: r.by ?? null,
    created: r.created,
    updated: r.updated,
    anchor: { index: e.n, path: a.path, lines: a.lines ?? null, symbol: a.symbol ?? null },
    at: v.to ? locOf(v.to) : null,
    verdict: {
      status: v.status,
      reason: v.reason,
      confidence: v.confidence,
      stale: STALE_VERDICTS.has(v.status),
    },
    verified,
  };
}

/** The rules in force for the file (project rules, as `git mem rules --file` lists them), but those anchored here. */
async function rulesHere(
  store: Store,
  tip: string | null,
  path: string,
  anchored: ReadonlySet<string>,
): Promise<BlameRule[]> {
  const inForce = tip ? (await rulesFor(store, path)).filter((x) => !anchored.has(x.id)) : [];
  const cat = inForce.length ? await store.catalogAt(tip) : undefined;
  const ruleRecords = cat
    ? await store.readRecords(inForce.map((x) => ({ id: x.id, oid: cat.oidOf(x.id)! })))
    : [];
  const byId = new Map(ruleRecords.map((r) => [r.id, r]));
  return inForce.map((x) => {
    const r = byId.get(x.id);
    return {
      id: x.id,
      alias: x.alias,
      title: x.title,
      scope: x.scope,
      matched: x.matched,
      author: r?.author ?? null,
      by: r?.by ?? null,
      created: r?.created ?? '',
      updated: r?.updated ?? '',
    };
  });
}

/** The verdicts of anchors at the scope's HEAD, each judged once in the scope. */
async function judgedIn(
  scope: Scope,
  store: Store,
  entries: IndexEntry[],
  anchors: FullAnchor[],
): Promise<Verdict[]> {
  const key = (e: IndexEntry) => `${e.oid}\t${e.n}`;
  const todo = entries.flatMap((e, i) => (scope.verdicts.has(key(e)) ? [] : [i]));
  if (todo.length) {
    const p = judgeAnchors(
      store,
      scope.head,
      todo.map((i) => anchors[i]),
    );
    todo.forEach((i, k) => {
      scope.verdicts.set(
        key(entries[i]),
        p.then((v) => v[k]),
      );
    });
    p.catch(() => {
      for (const i of todo) scope.verdicts.delete(key(entries[i]));
    });
  }
  return Promise.all(entries.map((e) => scope.verdicts.get(key(e))!));
}

export async function blame(store: Store, opts: BlameOptions): Promise<BlameResult> {
  const path = checkPath(opts.path);
  const range = rangeOf(opts);
  const head = await revParseVia(store, 'HEAD');
  if (!head) throw err('E_REV', 'HEAD is not a commit yet', 'make a first commit, then blame its files');
  const [tip, file] = await Promise.all([store.tip(), store.catFile.read(`${head}:${path}`)]);
  if (file && file.type !== 'blob')
    throw err(
      'E_INVALID_ARG',
      `${path} is a ${file.type === 'tree' ? 'directory' : file.type} at HEAD`,
      'pass a file',
    );
  if (file && range) {
    const n = lineCount(file.content);
    if (range[1] > n)
      throw err(
        'E_INVALID_ARG',
        `${path} has ${n} line${n === 1 ? '' : 's'} at HEAD (${head.slice(0, 12)}); ${range[0] === range[1] ? `line ${range[0]} is` : `lines ${range[0]}-${range[1]} are`} past its end`,
        `pass lines within 1-${n}`,
      );
  }

  // 1. the anchors that may be here: made at this path, or moved since they were placed
  const scope = await scopeOf(store, tip, head);
  const here = entriesAt(scope.idx, path);
  if (!here)
    throw err(
      'E_IO',
      `the anchor index at ${tip?.slice(0, 12)} does not fit its journal`,
      'run the command again',
    );
  const candidates = [
    ...here.filter((e) => !RETIRED.has(e.status)),
    ...scope.roaming.filter((e) => e.p !== path),
  ];
  if (!file && !candidates.some((e) => e.p === path))
    throw err(
      'E_NOT_FOUND',
      `${path} is not a file at HEAD (${head.slice(0, 12)})`,
      'blame reads committed files: check the path, or commit the file first',
    );

  // 2. their records, and every candidate judged at HEAD (nothing written)
  const oids = new Map(candidates.map((e) => [e.id, e.oid]));
  const records = await loadRecords(
    store,
    [...oids].map(([id, oid]) => ({ id, oid })),
  );
  const picked: Array<{ e: IndexEntry; a: FullAnchor }> = [];
  for (const e of candidates) {
    const a = records.get(e.id)?.anchors[e.n] as FullAnchor | undefined;
    if (a) picked.push({ e, a });
  }
  // the file is as the anchor was last placed: fresh where it was, nothing to read (as check does)
  const same = (e: IndexEntry, a: FullAnchor) => !e.s && isComplete(a) && scope.tblobs.get(e.p) === e.b;
  const toJudge = picked.filter((p) => !same(p.e, p.a));
  const judged = await judgedIn(
    scope,
    store,
    toJudge.map((p) => p.e),
    toJudge.map((p) => p.a),
  );
  let j = 0;
  const verdicts: Verdict[] = picked.map(({ e, a }) => {
    if (!same(e, a)) return judged[j++];
    const b = baseOf(a)!;
    const at: Loc = b.lines ? { path: b.path, lines: b.lines } : { path: b.path };
    return {
      status: 'fresh',
      reason: 'same blob',
      confidence: 1,
      from: at,
      to: at,
      commit: head,
      checked: new Date().toISOString(),
    };
  });

  // 3. those whose code is on these lines at HEAD (or was, when it is gone)
  const memories: BlameMemory[] = [];
  picked.forEach(({ e, a }, i) => {
    const m = memoryHere(e, a, verdicts[i], records.get(e.id)!, path, range);
    if (m) memories.push(m);
  });
  const first = (m: BlameMemory) => m.at?.lines?.[0] ?? m.anchor.lines?.[0] ?? 0;
  memories.sort(
    (x, y) =>
      first(x) - first(y) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0) || x.anchor.index - y.anchor.index,
  );

  // 4. the rules in force for the file (project rules, as `git mem rules --file` lists them)
  const rules = await rulesHere(store, tip, path, new Set(memories.map((m) => m.id)));
  return { path, lines: range, head, memoryCommit: tip, memories, rules };
}
