/**
 * The Code page: the repository's files at HEAD (`git ls-tree`) with the
 * memories that apply to each: anchored to it, or scoped to it by globs
 * (rules among them). The tree is computed once per HEAD and memory tip and
 * served a folder at a time, from the anchors and scopes as recorded; the
 * panel of one file asks the operations themselves: `git mem blame`'s
 * (the memories on the file judged at HEAD, and the project's rules for
 * it), rulesFor for the personal store, and the filter of `git mem list
 * --scope-file` for the other memories scoped to it.
 */
import { type BlameRule, blame } from '../commands/blame.js';
import { makeFilter } from '../commands/list.js';
import { err } from '../errors.js';
import type { CatalogEntry } from '../gitstore/catalog.js';
import type { Store } from '../gitstore/store.js';
import { matcher } from '../model/glob.js';
import { expiredAt, ruleInForce } from '../model/record.js';
import { type RuleInForce, rulesFor } from '../search/rules.js';
import { type Memo, memoOf, type UiEnv } from './env.js';
import type {
  CodeFileEntry,
  CodeFolder,
  CodeTree,
  Conforms,
  FileMemory,
  FilePanel,
  FileRule,
  Is,
  ScopedMemory,
} from './wire.js';

/** Memories that are no longer in force are left out of the tree. */
const RETIRED = new Set(['archived', 'superseded']);

export interface FileMarks {
  anchored: string[];
  scoped: string[];
  rules: string[];
}

export interface DirInfo {
  files: number;
  /** files with at least one memory */
  covered: number;
  /** distinct memories anchored or scoped under it */
  memories: Set<string>;
}

export interface CodeIndex {
  head: string | null;
  tip: string | null;
  files: string[];
  marks: Map<string, FileMarks>;
  dirs: Map<string, DirInfo>;
}

async function headCommit(store: Store): Promise<string | null> {
  return (await store.catFile.read('HEAD^{commit}').catch(() => null))?.oid ?? null;
}

/** A scope glob as rulesFor reads it: the glob, or everything under it when it names a folder. */
function scopeTest(scope: readonly string[]): (p: string) => boolean {
  return matcher(
    scope.flatMap((g) => [g, `${g.replace(/\/$/, '')}/**`]),
    { dot: true },
  );
}

async function buildIndex(env: UiEnv, head: string | null, tip: string | null): Promise<CodeIndex> {
  const files = head
    ? (await env.store.lsTree(head)).filter((e) => e.type === 'blob').map((e) => e.path)
    : [];
  const marks = new Map<string, FileMarks>();
  const mark = (p: string) => {
    let m = marks.get(p);
    if (!m) {
      m = { anchored: [], scoped: [], rules: [] };
      marks.set(p, m);
    }
    return m;
  };
  const fileSet = new Set(files);
  const entries: CatalogEntry[] = [];
  for (const s of [env.store, env.global]) {
    if (!s || !(await s.tip())) continue;
    for (const e of (await s.catalog()).entries.values()) if (!RETIRED.has(e.status)) entries.push(e);
  }
  const scoped: Array<{ e: CatalogEntry; test: (p: string) => boolean }> = [];
  for (const e of entries) {
    for (const p of e.anchors) if (fileSet.has(p)) mark(p).anchored.push(e.id);
    if (e.scope.length)
      scoped.push({ e, test: e.type === 'rule' ? scopeTest(e.scope) : matcher(e.scope, { dot: true }) });
  }
  const expired = expiredAt(Date.now());
  for (const f of files) {
    for (const { e, test } of scoped) {
      // a rule without scope applies everywhere: it is counted in the panel, not on every file
      if (!test(f)) continue;
      if (e.type === 'rule') {
        if (ruleInForce(e, expired)) mark(f).rules.push(e.id);
      } else mark(f).scoped.push(e.id);
    }
  }
  const dirs = new Map<string, DirInfo>();
  for (const f of files) {
    const m = marks.get(f);
    const ids = m ? [...m.anchored, ...m.scoped, ...m.rules] : [];
    const parts = f.split('/');
    for (let i = 0; i < parts.length; i++) {
      const d = parts.slice(0, i).join('/');
      let info = dirs.get(d);
      if (!info) {
        info = { files: 0, covered: 0, memories: new Set() };
        dirs.set(d, info);
      }
      info.files++;
      if (ids.length) info.covered++;
      for (const id of ids) info.memories.add(id);
    }
  }
  return { head, tip, files, marks, dirs };
}

const memo = new WeakMap<UiEnv, Memo<CodeIndex>>();

/** The index of the code at HEAD against the memory at its tip (remembered until either moves). */
export async function codeIndex(env: UiEnv): Promise<CodeIndex> {
  const head = await headCommit(env.store);
  const tip = await env.store.tip();
  const gtip = env.global ? await env.global.tip() : null;
  return memoOf(memo, env).get(`${head}:${tip}:${gtip}`, () => buildIndex(env, head, tip));
}

/** The folders and files directly in `dir` ('' = the root), folders first. */
export async function codeTree(env: UiEnv, dir: string): Promise<CodeTree> {
  const idx = await codeIndex(env);
  const d = dir.replace(/^\/+|\/+$/g, '');
  if (d && !idx.dirs.has(d)) throw err('E_NOT_FOUND', `no folder ${d} at HEAD`);
  const prefix = d ? `${d}/` : '';
  const folders = new Map<string, DirInfo>();
  const files: CodeFileEntry[] = [];
  for (const f of idx.files) {
    if (!f.startsWith(prefix)) continue;
    const rest = f.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash >= 0) {
      const sub = `${prefix}${rest.slice(0, slash)}`;
      if (!folders.has(sub)) folders.set(sub, idx.dirs.get(sub)!);
    } else {
      const m = idx.marks.get(f);
      files.push({
        name: rest,
        path: f,
        anchored: m?.anchored.length ?? 0,
        scoped: m?.scoped.length ?? 0,
        rules: m?.rules.length ?? 0,
      });
    }
  }
  const info = idx.dirs.get(d);
  return {
    head: idx.head,
    dir: d,
    files: info?.files ?? 0,
    folders: [...folders].map(
      ([path, i]): CodeFolder => ({
        name: path.slice(prefix.length),
        path,
        files: i.files,
        covered: i.covered,
        memories: i.memories.size,
      }),
    ),
    entries: files,
  };
}

const MAX_FILE_BYTES = 256 * 1024;

/** The rules of the panel are blame's and rulesFor's as they are, with their origin and body. */
type _RuleChecks = [
  Is<Conforms<BlameRule & { origin: 'project'; body: string }, Extract<FileRule, { origin: 'project' }>>>,
  Is<Conforms<Omit<RuleInForce, 'origin'> & { origin: 'global' }, Extract<FileRule, { origin: 'global' }>>>,
];

const short = (t: string) => (t.length > 4000 ? `${t.slice(0, 4000)}…` : t);

/** The bodies of some records of a store (the rules blame names), read in one batch. */
async function bodiesOf(store: Store, ids: string[]): Promise<Map<string, string>> {
  const cat = await store.catalog();
  const entries = ids.flatMap((id) => {
    const oid = cat.oidOf(id);
    return oid ? [{ id, oid }] : [];
  });
  return new Map((await store.readRecords(entries)).map((r) => [r.id, short(r.body)]));
}

/**
 * The panel of one file: its text at HEAD, the memories anchored to it (with
 * the ranges and what the last check said), the rules in force for it and
 * the other memories scoped to it.
 */
export async function codeFile(env: UiEnv, path: string): Promise<FilePanel> {
  const p = path.replace(/^\/+/, '');
  if (!p || p.split('/').some((s) => s === '..' || s === '.'))
    throw err('E_INVALID_ARG', `invalid path "${path}"`);
  const idx = await codeIndex(env);
  const obj = idx.head ? await env.store.catFile.read(`${idx.head}:${p}`).catch(() => null) : null;
  const exists = !!obj && obj.type === 'blob';
  const binary = exists && obj.content.subarray(0, 8000).includes(0);
  const text =
    exists && !binary && obj.content.length <= MAX_FILE_BYTES ? obj.content.toString('utf8') : null;
  // what `git mem blame` says of the file: the memories anchored to it, judged at HEAD, and the
  // project's rules for it; then the personal store's rules
  const anchored: FileMemory[] = [];
  const rules: FileRule[] = [];
  if (idx.head && exists && (await env.store.tip())) {
    const b = await blame(env.store, { path: p });
    for (const m of b.memories) {
      const prev = anchored.find((x) => x.id === m.id);
      const anchor: FileMemory['anchors'][number] = {
        lines: m.at?.lines ?? null,
        symbol: m.at?.symbol ?? m.anchor.symbol,
        verdict: m.verdict.status,
      };
      if (prev) prev.anchors.push(anchor);
      else
        anchored.push({
          store: 'project',
          id: m.id,
          title: m.title,
          type: m.type,
          status: m.status,
          by: m.by,
          anchors: [anchor],
        });
    }
    const bodies = await bodiesOf(
      env.store,
      b.rules.map((r) => r.id),
    );
    for (const r of b.rules) rules.push({ ...r, origin: 'project', body: bodies.get(r.id) ?? '' });
  }
  if (env.global && (await env.global.tip()))
    for (const r of await rulesFor(env.global, p))
      rules.push({ ...r, origin: 'global', store: 'global', body: short(r.body) });
  // scoped non-rule memories: what `git mem list --scope-file` selects, minus the anchored ones
  const scopedKeep = makeFilter({ scopeFile: p });
  const scoped: ScopedMemory[] = [];
  for (const [name, s] of [
    ['project', env.store],
    ['global', env.global],
  ] as const) {
    if (!s || !(await s.tip())) continue;
    for (const e of (await s.catalog()).entries.values()) {
      if (e.type === 'rule' || RETIRED.has(e.status) || !e.scope.length || !scopedKeep(e)) continue;
      scoped.push({ store: name, id: e.id, title: e.title, type: e.type, status: e.status, scope: e.scope });
    }
  }
  return {
    head: idx.head,
    path: p,
    exists,
    binary,
    size: exists ? obj.content.length : 0,
    text,
    anchored,
    rules,
    scoped,
  };
}
