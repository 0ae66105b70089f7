/**
 * The one validator at the trust boundary. Everything git-mem did not write
 * itself (a fetched remote memory, a folder being imported, a merge driver's
 * input, a commit being exported as files) passes these checks before it is
 * merged, committed or written to disk:
 *
 * - tree entry names: no `.`, `..`, `.git` (any case), separators, control
 *   characters or invalid UTF-8, and no two names in one tree that collide on
 *   a case-insensitive or Unicode-normalising file system;
 * - modes: plain files (100644) and folders only (no symlinks, gitlinks or
 *   executables);
 * - layout and depth: exactly the store's shallow layout (below), nothing
 *   deeper;
 * - sizes: the limits local writes have;
 * - content: UTF-8, `format: 1`, records that parse and validate with their
 *   id matching their path, anchors inside the repository, tombstones and the
 *   shared config that parse.
 *
 * The store layout:
 *   FORMAT, config.yaml
 *   memories/<xx>/<ID>.md            (xx: the id's fan-out)
 *   tombstones/<xx>/<ID>.yaml
 *   attic/<xx>/<ID>/<16 hex>.md
 *   anchors/<hh>/<blob>              (a blob named by its own id; hh: its first two digits)
 *   anchors/<hh>/<commit>/<blob>
 *
 * Notes fetched from a remote (refs/notes/memory) pass the same walk with
 * the notes layout: two-hex fan-out folders, files named by an object id,
 * each note at most 256 KiB of UTF-8 JSON lines of {id, verdict, reason, …}.
 *
 * The pure checks work on names, modes and buffers; `validateTree` walks a
 * commit's tree through git, skipping every subtree and blob that is the same
 * as in the commits it is compared against (the local tip, the merge base),
 * so a sync reads only what the remote changed.
 */
import { type ErrorCode, err } from '../errors.js';
import { git } from '../gitstore/git.js';
import { FORMAT_PATH, FORMAT_VERSION, SHARED_CONFIG_PATH, type Store } from '../gitstore/store.js';
import { fanout, isId } from '../model/id.js';
import {
  LIMITS,
  type MemoryRecord,
  readRecordParts,
  recordFromParts,
  recordProblems,
} from '../model/record.js';
import { anchorPathProblem, type FieldProblem, recordFieldProblems } from '../model/schema.js';
import { parse as parseYaml } from '../model/yaml.js';
import { parseTombstone } from './merge-commits.js';

/** Largest files the store holds (bytes), by kind: what local writes can produce, with room for YAML. */
const FILE_LIMITS = {
  record: LIMITS.frontmatterBytes + LIMITS.bodyBytes + 16,
  tombstone: 64 * 1024,
  config: 64 * 1024,
  format: 4 * 1024,
};

/** Deepest path of the layout (anchors/<hh>/<commit>/<blob>, attic/<xx>/<id>/<hash>.md). */
const MAX_DEPTH = 4;

export interface Problem {
  /** The path in the tree (or folder); may hold anything a hostile tree holds: show it with showPath. */
  path: string;
  message: string;
  /** 'record': a record that does not parse or validate; 'entry': everything else. */
  kind: 'entry' | 'record';
  /** The commit whose tree it was found in (validateTree over several commits). */
  commit?: string;
  /** A record's field that breaks its limit (src/model/schema.ts), and the code a local write gets for it. */
  field?: string;
  code?: ErrorCode;
  /** Every field of that record that breaks its limit (the first is `field`). */
  fields?: FieldProblem[];
}

const TREE_MODES = new Set(['40000', '040000']);
const FANOUT_RE = /^[0-9A-Z]{2}$/;
const HEX2_RE = /^[0-9a-f]{2}$/;
const ATTIC_NAME_RE = /^[0-9a-f]{16}\.md$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A path fit for a one-line message: control characters and odd bytes escaped. */
export function showPath(path: string): string {
  return /[\u0000-\u001f\u007f\ufffd"\\]/.test(path) ? JSON.stringify(path) : path;
}

// ------------------------------------------------------------------ names

/** What is wrong with one tree entry name (a single path component), or null. */
export function nameProblem(name: string): string | null {
  if (name === '') return 'an entry with an empty name';
  if (name === '.' || name === '..') return `an entry named "${name}" (it would write outside its folder)`;
  // .git, and the spellings Windows and macOS file systems treat as .git
  const bare = name.replace(/[\u200b-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g, '');
  if (/^\.git[. ]*$/i.test(bare) || /^git~\d+$/i.test(bare))
    return `an entry named ${JSON.stringify(name)} (git's own folder)`;
  if (name.includes('/') || name.includes('\\'))
    return `an entry named ${JSON.stringify(name)} holds a path separator`;
  if (/[\u0000-\u001f\u007f]/.test(name))
    return `an entry named ${JSON.stringify(name)} holds control characters`;
  if (name.includes('\ufffd')) return `an entry named ${JSON.stringify(name)} is not valid UTF-8`;
  return null;
}

/** Pairs of names in one folder that one file system would store as one file. */
export function collisionProblems(names: readonly string[]): Array<{ name: string; message: string }> {
  const out: Array<{ name: string; message: string }> = [];
  const exact = new Set<string>();
  const nfc = new Map<string, string>();
  const folded = new Map<string, string>();
  for (const n of names) {
    if (exact.has(n)) {
      out.push({ name: n, message: `two entries named ${JSON.stringify(n)} in one folder` });
      continue;
    }
    exact.add(n);
    const c = n.normalize('NFC');
    const prevC = nfc.get(c);
    if (prevC !== undefined) {
      out.push({
        name: n,
        message: `${JSON.stringify(prevC)} and ${JSON.stringify(n)} are one name after Unicode normalisation (NFC/NFD): they collide on macOS`,
      });
      continue;
    }
    nfc.set(c, n);
    const f = c.toLowerCase();
    const prevF = folded.get(f);
    if (prevF !== undefined) {
      out.push({
        name: n,
        message: `${JSON.stringify(prevF)} and ${JSON.stringify(n)} differ only in case: they collide on case-insensitive file systems`,
      });
      continue;
    }
    folded.set(f, n);
  }
  return out;
}

// ------------------------------------------------------------------ modes and layout

function modeProblem(mode: string, isTree: boolean): string | null {
  if (mode === '120000') return 'a symbolic link (mode 120000): the store holds plain files only';
  if (mode === '160000') return 'a gitlink (mode 160000, a submodule): the store holds plain files only';
  if (isTree) return TREE_MODES.has(mode) ? null : `a folder with mode ${mode}`;
  if (mode === '100755') return 'an executable file (mode 100755): the store holds plain files only';
  if (mode !== '100644') return `a file with mode ${mode}: the store holds plain files (100644) only`;
  return null;
}

const LAYOUT_HELP =
  'the store holds FORMAT, config.yaml, memories/<xx>/<ID>.md, tombstones/<xx>/<ID>.yaml, attic/<xx>/<ID>/<hash>.md and anchors/…';

const isHex = (s: string, len?: number) =>
  /^[0-9a-f]+$/.test(s) && (len ? s.length === len : s.length === 40 || s.length === 64);

/**
 * Whether an entry `name` of kind tree/blob belongs at `parents` in the layout
 * (a message when not). `oid` and `hexLen` (40 or 64) check anchors' blobs,
 * which are named by their own id; without them any id-shaped name passes.
 */
function layoutProblem(
  parents: readonly string[],
  name: string,
  isTree: boolean,
  oid?: string,
  hexLen?: number,
): string | null {
  const where = [...parents, name].join('/');
  const notHere = (what: string) => `${where} is not part of the store layout (${what})`;
  const [top, second, third] = parents;
  const blobNamed = (expect: string) =>
    isTree ? `${where} is a folder where the layout has a file (${expect})` : null;
  const folderNamed = (expect: string) =>
    !isTree ? `${where} is a file where the layout has a folder (${expect})` : null;
  switch (parents.length) {
    case 0:
      if (name === FORMAT_PATH || name === SHARED_CONFIG_PATH) return blobNamed(name);
      if (['memories', 'tombstones', 'attic', 'anchors'].includes(name)) return folderNamed(`${name}/`);
      return notHere(LAYOUT_HELP);
    case 1: {
      const re = top === 'anchors' ? HEX2_RE : FANOUT_RE;
      if (!re.test(name)) return notHere(`${top}/ holds two-character fan-out folders`);
      return folderNamed(`${top}/${top === 'anchors' ? '<hh>' : '<xx>'}/`);
    }
    case 2: {
      if (top === 'memories' || top === 'tombstones') {
        const ext = top === 'memories' ? '.md' : '.yaml';
        const id = name.endsWith(ext) ? name.slice(0, -ext.length) : '';
        if (!isId(id) || fanout(id) !== second)
          return notHere(`${top}/${second}/ holds <ID>${ext} files whose ID ends in ${second}`);
        return blobNamed(`${top}/<xx>/<ID>${ext}`);
      }
      if (top === 'attic') {
        if (!isId(name) || fanout(name) !== second)
          return notHere(`attic/${second}/ holds one folder per record id ending in ${second}`);
        return folderNamed('attic/<xx>/<ID>/');
      }
      // anchors/<hh>/: a blob named by its id, or a checked commit's folder
      if (!isHex(name, hexLen) || !name.startsWith(second))
        return notHere(`anchors/${second}/ holds objects named by ids starting with ${second}`);
      if (!isTree && oid && oid !== name) return `${where} is named for object ${name} but holds ${oid}`;
      return null;
    }
    case 3:
      if (top === 'attic') {
        if (!ATTIC_NAME_RE.test(name)) return notHere('attic/<xx>/<ID>/ holds <16 hex digits>.md files');
        return blobNamed('attic/<xx>/<ID>/<hash>.md');
      }
      if (top === 'anchors' && third !== undefined) {
        if (!isHex(name, hexLen))
          return notHere(`anchors/${second}/${third}/ holds blobs named by their ids`);
        if (isTree) return blobNamed('anchors/<hh>/<commit>/<blob>');
        if (oid && oid !== name) return `${where} is named for object ${name} but holds ${oid}`;
        return null;
      }
      return notHere(LAYOUT_HELP);
    default:
      return `${where} is deeper than the store layout allows (at most ${MAX_DEPTH} levels)`;
  }
}

/**
 * Checks a whole path (a file in an imported folder, a merge driver's path):
 * every component's name, then the layout. Null when the path is a file the
 * store may hold.
 */
export function pathProblem(path: string): string | null {
  const segs = path.split('/');
  if (segs.length > MAX_DEPTH + 1) return `${path} is deeper than the store layout allows`;
  for (let i = 0; i < segs.length; i++) {
    const n = nameProblem(segs[i]);
    if (n) return n;
    const l = layoutProblem(segs.slice(0, i), segs[i], i < segs.length - 1);
    if (l) return l;
  }
  return null;
}

// ------------------------------------------------------------------ content

/** Where an anchor path fails to stay inside the repository, or null (the one rule: src/model/schema.ts). */
export { anchorPathProblem };

/**
 * What local writes refuse in a record: the one table of limits (src/model/schema.ts), anchors'
 * paths included. Null when it may be written.
 */
export function recordProblem(r: MemoryRecord): string | null {
  return recordProblems(r)[0]?.message ?? null;
}

/** The size limit of a layout path (null: no limit, an anchored code blob). */
export function sizeLimit(path: string): number | null {
  if (path === FORMAT_PATH) return FILE_LIMITS.format;
  if (path === SHARED_CONFIG_PATH) return FILE_LIMITS.config;
  if (path.startsWith('memories/') || path.startsWith('attic/')) return FILE_LIMITS.record;
  if (path.startsWith('tombstones/')) return FILE_LIMITS.tombstone;
  return null;
}

function sizeProblem(path: string, size: number): string | null {
  const limit = sizeLimit(path);
  return limit !== null && size > limit
    ? `is ${size} bytes, over the ${limit}-byte limit for this file`
    : null;
}

/** Reads the store format from a FORMAT file's text; NaN when it does not say. */
function formatVersion(text: string): number {
  try {
    const v = parseYaml(text, { maxAliasCount: 0 }) as { format?: unknown } | null;
    return typeof v?.format === 'number' ? v.format : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/**
 * Checks a file's content for its layout path: size, UTF-8, and its schema.
 * Anchored code blobs are not read (any bytes are fine there).
 */
export function blobProblem(path: string, content: Buffer): Problem | null {
  const entry = (message: string): Problem => ({ path, message, kind: 'entry' });
  const size = sizeProblem(path, content.length);
  if (size) return entry(size);
  if (path.startsWith('anchors/')) return null;
  let text: string;
  try {
    text = utf8.decode(content);
  } catch {
    return entry('is not valid UTF-8');
  }
  if (path === FORMAT_PATH) {
    const v = formatVersion(text);
    if (v !== FORMAT_VERSION)
      return entry(
        Number.isNaN(v)
          ? `does not say "format: ${FORMAT_VERSION}"`
          : `says format ${v}; this git-mem reads format ${FORMAT_VERSION} only`,
      );
    return null;
  }
  if (path === SHARED_CONFIG_PATH) {
    try {
      const v = parseYaml(text, { maxAliasCount: LIMITS.yamlAliases });
      if (v !== null && v !== undefined && (typeof v !== 'object' || Array.isArray(v)))
        return entry('is not a YAML mapping');
    } catch (e) {
      return entry(`is not valid YAML (${(e as Error).message.split('\n')[0]})`);
    }
    return null;
  }
  const segs = path.split('/');
  if (segs[0] === 'tombstones') {
    const id = segs[2].replace(/\.yaml$/, '');
    try {
      const t = parseTombstone(text, id);
      if (t.deleted !== undefined && Number.isNaN(Date.parse(String(t.deleted))))
        return entry(`is a tombstone with an invalid date ${JSON.stringify(String(t.deleted))}`);
    } catch (e) {
      return entry(`is a malformed tombstone: ${(e as Error).message}`);
    }
    return null;
  }
  if (segs[0] === 'memories' || segs[0] === 'attic') {
    const id = segs[0] === 'memories' ? segs[2].replace(/\.md$/, '') : segs[2];
    const unparsed = (e: unknown): Problem => ({
      path,
      message: `does not parse: ${(e as Error).message}`,
      kind: 'record',
    });
    let parts: ReturnType<typeof readRecordParts>;
    try {
      parts = readRecordParts(text, path);
    } catch (e) {
      return unparsed(e);
    }
    // the frontmatter as read, before the reader's defaults: what a local write would have had to hold
    const fields = recordFieldProblems(parts.frontmatter, parts.body);
    const p = fields[0];
    if (p) return { path, message: p.message, kind: 'record', field: p.field, code: p.code, fields };
    let r: MemoryRecord;
    try {
      r = recordFromParts(parts.frontmatter, parts.body, path);
    } catch (e) {
      return unparsed(e);
    }
    if (r.id !== id) return { path, message: `its id ${r.id} does not match its path`, kind: 'record' };
    return null;
  }
  return null;
}

// ------------------------------------------------------------------ notes

/** Largest note (all lines of one commit's note) and largest line, in bytes. */
export const NOTE_LIMITS = { note: 256 * 1024, line: 16 * 1024 };
/** Deepest fan-out git notes uses (xx/xx/…/<rest>): folders before the note's file. */
const NOTES_MAX_FANOUT = 4;

/**
 * Whether an entry belongs in a notes tree (refs/notes/memory): two-hex-digit
 * fan-out folders, then a file named by the rest of the annotated object's id.
 */
function notesLayoutProblem(
  parents: readonly string[],
  name: string,
  isTree: boolean,
  _oid: string | undefined,
  hexLen = 40,
): string | null {
  const where = [...parents, name].join('/');
  const used = parents.join('').length;
  if (isTree) {
    if (!HEX2_RE.test(name) || parents.length >= NOTES_MAX_FANOUT)
      return `${where} is not part of a notes tree (folders are two hex digits of an object id, at most ${NOTES_MAX_FANOUT} deep)`;
    return null;
  }
  if (!/^[0-9a-f]+$/.test(name) || used + name.length !== hexLen)
    return `${where} is not part of a notes tree (a note is named by the id of the object it annotates)`;
  return null;
}

/** What is wrong with a note's text (UTF-8 JSON lines of {id, verdict, reason, …}), or null. */
export function noteProblem(content: Buffer): string | null {
  if (content.length > NOTE_LIMITS.note)
    return `is ${content.length} bytes, over the ${NOTE_LIMITS.note}-byte limit for a note`;
  let text: string;
  try {
    text = utf8.decode(content);
  } catch {
    return 'is not valid UTF-8';
  }
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (!line.trim()) continue;
    const at = `line ${i + 1}`;
    if (Buffer.byteLength(line) > NOTE_LIMITS.line)
      return `${at} is over the ${NOTE_LIMITS.line}-byte limit for a note line`;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      return `${at} is not JSON`;
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) return `${at} is not a JSON object`;
    const o = v as Record<string, unknown>;
    if (typeof o.id !== 'string' || !isId(o.id)) return `${at} has no record id`;
    if (typeof o.verdict !== 'string' || !/^[a-z][a-z_-]{0,31}$/.test(o.verdict))
      return `${at} has no verdict`;
    if (typeof o.reason !== 'string') return `${at} has no reason`;
    if (o.path !== undefined) {
      const p = anchorPathProblem(o.path);
      if (p) return `${at}: ${p}`;
    }
    if (
      o.lines !== undefined &&
      o.lines !== null &&
      !(Array.isArray(o.lines) && o.lines.length === 2 && o.lines.every((n) => Number.isInteger(n) && n >= 0))
    )
      return `${at} has lines that are not [start, end]`;
  }
  return null;
}

/** Where a kind of tree puts things, how large its files may be, and what their content must be. */
interface Layout {
  entry: (
    parents: readonly string[],
    name: string,
    isTree: boolean,
    oid: string | undefined,
    hexLen: number,
  ) => string | null;
  limit: (path: string) => number | null;
  /** Whether the content of a file at `path` is read and checked (anchored code is not). */
  read: (path: string) => boolean;
  content: (path: string, content: Buffer) => Problem | null;
}

const LAYOUTS: Record<'store' | 'notes', Layout> = {
  store: {
    entry: layoutProblem,
    limit: sizeLimit,
    read: (path) => !path.startsWith('anchors/'),
    content: blobProblem,
  },
  notes: {
    entry: notesLayoutProblem,
    limit: () => NOTE_LIMITS.note,
    read: () => true,
    content: (path, content) => {
      const m = noteProblem(content);
      return m ? { path, message: m, kind: 'entry' } : null;
    },
  },
};

// ------------------------------------------------------------------ trees through git

interface RawEntry {
  mode: string;
  name: string;
  oid: string;
}

/** Parses a raw tree object (`<mode> <name>\0<id bytes>`…); names decoded as UTF-8 (bad bytes → U+FFFD). */
export function parseTree(buf: Buffer, hashBytes: number): RawEntry[] {
  const out: RawEntry[] = [];
  let i = 0;
  while (i < buf.length) {
    const sp = buf.indexOf(0x20, i);
    const nul = buf.indexOf(0, sp + 1);
    if (sp < 0 || nul < 0 || nul + 1 + hashBytes > buf.length) throw new Error('malformed tree object');
    out.push({
      mode: buf.toString('latin1', i, sp),
      name: buf.toString('utf8', sp + 1, nul),
      oid: buf.toString('hex', nul + 1, nul + 1 + hashBytes),
    });
    i = nul + 1 + hashBytes;
  }
  return out;
}

export interface ValidateOptions {
  /** Commits whose identical subtrees and blobs are trusted (the local tip, the merge base). */
  against?: ReadonlyArray<string | null>;
  /** Also check file contents: true (default) sizes, UTF-8 and schemas; 'sizes' sizes only. */
  content?: boolean | 'sizes';
  /** Collect up to this many problems instead of stopping at the first (doctor). */
  limit?: number;
  /** The kind of tree: the memory store (default) or a notes tree (refs/notes/memory). */
  layout?: 'store' | 'notes';
}

async function rootTrees(store: Store, commits: string[]): Promise<Map<string, string>> {
  const objs = await store.catFile.readMany(commits);
  const out = new Map<string, string>();
  commits.forEach((c, i) => {
    const o = objs[i];
    const m = o?.type === 'commit' ? /^tree ([0-9a-f]+)\n/.exec(o.content.toString('latin1', 0, 80)) : null;
    if (m) out.set(c, m[1]);
  });
  return out;
}

/** Sizes of objects by one `git cat-file --batch-check` (no content read). */
async function objectSizes(
  store: Store,
  oids: string[],
): Promise<Map<string, { type: string; size: number }>> {
  const out = new Map<string, { type: string; size: number }>();
  if (!oids.length) return out;
  const r = await git(['cat-file', '--batch-check'], {
    cwd: store.repo.cwd,
    env: store.repo.env,
    input: `${[...new Set(oids)].join('\n')}\n`,
  });
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [oid, type, size] = line.split(' ');
    if (oid && size !== undefined) out.set(oid, { type, size: Number(size) });
  }
  return out;
}

/**
 * Walks the trees of `commits` (one commit, or several: every commit a sync
 * brings), checking every entry that differs from the same path in the
 * `against` commits, then the contents of the files that differ. An entry
 * (path, mode and object) is checked once however many of the commits hold
 * it. Returns the problems found (at most `limit`, default 1), each naming
 * the commit it was found in; [] when all is fine.
 */
export async function validateTree(
  store: Store,
  commits: string | readonly string[],
  opts: ValidateOptions = {},
): Promise<Problem[]> {
  const list = [...new Set(typeof commits === 'string' ? [commits] : commits)];
  const limit = opts.limit ?? 1;
  const layout = LAYOUTS[opts.layout ?? 'store'];
  const problems: Problem[] = [];
  const add = (p: Problem) => {
    if (problems.length < limit) problems.push(p);
  };
  if (!list.length) return problems;
  const hexLen = list[0].length;
  const inList = new Set(list);
  const against = [...new Set((opts.against ?? []).filter((c): c is string => !!c && !inList.has(c)))];
  const roots = await rootTrees(store, [...list, ...against]);
  const trusted = against.map((c) => roots.get(c) ?? null);
  type Node = { segs: string[]; oid: string; against: Array<string | null>; commit: string };
  const seen = new Set<string>();
  let level: Node[] = [];
  for (const c of list) {
    const root = roots.get(c);
    if (!root) {
      add({ path: '', message: `${c} is not a commit`, kind: 'entry', commit: c });
      continue;
    }
    if (seen.has(`\0${root}`) || trusted.includes(root)) continue;
    seen.add(`\0${root}`);
    level.push({ segs: [], oid: root, against: trusted, commit: c });
  }
  const blobs: Array<{ path: string; oid: string; commit: string }> = [];
  while (level.length && problems.length < limit) {
    const want = [...new Set(level.flatMap((n) => [n.oid, ...n.against.filter((x): x is string => !!x)]))];
    const objs = await store.catFile.readMany(want);
    const byOid = new Map<string, RawEntry[] | null>();
    want.forEach((oid, i) => {
      const o = objs[i];
      let entries: RawEntry[] | null = null;
      try {
        if (o && o.type === 'tree') entries = parseTree(o.content, hexLen / 2);
      } catch {}
      byOid.set(oid, entries);
    });
    const next: Node[] = [];
    for (const node of level) {
      const here = node.segs.join('/');
      const commit = node.commit;
      const entries = byOid.get(node.oid);
      if (!entries) {
        add({ path: here, message: 'is a tree object git cannot read', kind: 'entry', commit });
        continue;
      }
      const others = node.against.map((oid) => {
        const es = oid ? byOid.get(oid) : null;
        return es ? new Map(es.map((e) => [e.name, e])) : null;
      });
      for (const c of collisionProblems(entries.map((e) => e.name)))
        add({ path: [...node.segs, c.name].join('/'), message: c.message, kind: 'entry', commit });
      for (const e of entries) {
        const path = [...node.segs, e.name].join('/');
        if (others.some((m) => m?.get(e.name)?.oid === e.oid && m.get(e.name)!.mode === e.mode)) continue;
        const key = `${path}\0${e.mode}\0${e.oid}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const isTree = TREE_MODES.has(e.mode);
        const problem =
          nameProblem(e.name) ??
          modeProblem(e.mode, isTree) ??
          layout.entry(node.segs, e.name, isTree, isTree ? undefined : e.oid, hexLen);
        if (problem) {
          add({ path, message: problem, kind: 'entry', commit });
          continue;
        }
        if (isTree) {
          next.push({
            segs: [...node.segs, e.name],
            oid: e.oid,
            against: others.map((m) => {
              const o = m?.get(e.name);
              return o && TREE_MODES.has(o.mode) ? o.oid : null;
            }),
            commit,
          });
        } else blobs.push({ path, oid: e.oid, commit });
      }
    }
    level = next;
  }
  if (problems.length >= limit || opts.content === false) return problems;
  // contents: sizes first (a 50 MB blob is never read), then one pipelined read
  const sizes = await objectSizes(
    store,
    blobs.map((b) => b.oid),
  );
  const toRead: typeof blobs = [];
  for (const b of blobs) {
    const s = sizes.get(b.oid);
    if (s?.type !== 'blob') {
      add({
        path: b.path,
        message: `is not a readable blob (${s?.type ?? 'missing'})`,
        kind: 'entry',
        commit: b.commit,
      });
      continue;
    }
    const max = layout.limit(b.path);
    if (max !== null && s.size > max)
      add({
        path: b.path,
        message: `is ${s.size} bytes, over the ${max}-byte limit for this file`,
        kind: 'entry',
        commit: b.commit,
      });
    else if (layout.read(b.path)) toRead.push(b);
  }
  if (problems.length >= limit || opts.content === 'sizes') return problems;
  const got = await store.catFile.readMany(toRead.map((b) => b.oid));
  toRead.forEach((b, i) => {
    const o = got[i];
    const p = o
      ? layout.content(b.path, o.content)
      : { path: b.path, message: 'is missing', kind: 'entry' as const };
    if (p) add({ ...p, commit: b.commit });
  });
  return problems;
}

/** The commit that last changed `path` on the way to `tip` (the tip when git cannot say). */
export async function commitOfPath(store: Store, tip: string, path: string): Promise<string> {
  if (!path || /[\u0000-\u001f]/.test(path)) return tip;
  const r = await git(['log', '-1', '--format=%H', tip, '--', `:(literal)${path}`], {
    cwd: store.repo.cwd,
    env: store.repo.env,
    allowFail: true,
  });
  return (r.code === 0 && r.stdout.toString().trim()) || tip;
}

/** The most commits one sync may bring: each is read (their trees feed history and --at). */
export const MAX_INCOMING_COMMITS = 50_000;

/**
 * The commits `theirs` brings that none of `against` has (theirs first), or a
 * refusal when there are more than MAX_INCOMING_COMMITS.
 */
async function incomingCommits(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
  source: string,
): Promise<string[]> {
  const known = against.filter((c): c is string => !!c);
  const r = await git(
    [
      'rev-list',
      `--max-count=${MAX_INCOMING_COMMITS + 1}`,
      theirs,
      ...(known.length ? ['--not', ...known] : []),
    ],
    { cwd: store.repo.cwd, env: store.repo.env },
  );
  const list = r.stdout.toString().split('\n').filter(Boolean);
  if (list.length > MAX_INCOMING_COMMITS) {
    throw err(
      'E_MERGE',
      `${source} brings more than ${MAX_INCOMING_COMMITS} new commits (tip ${theirs.slice(0, 12)}): too many to check in one sync`,
      'nothing was merged and the local memory is unchanged; squash the remote history where it was written (git mem export, then import into a fresh store), then sync again',
      { commit: theirs },
    );
  }
  return list.includes(theirs) ? [theirs, ...list.filter((c) => c !== theirs)] : list;
}

/**
 * The first problem of what `theirs` brings beyond `against`: the tip's tree
 * gets every check; the commits under it (history and --at read them) get
 * the structural ones (names, modes, layout, depth, collisions) and sizes,
 * not the schemas, so a record a later commit fixed does not refuse the
 * remote for good (fixing it in history would take a force-push).
 */
async function firstIncomingProblem(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
  source: string,
  layout: 'store' | 'notes',
): Promise<Problem | undefined> {
  const commits = await incomingCommits(store, theirs, against, source);
  if (!commits.length) return undefined; // nothing new: the local refs hold all of it
  const [p] = await validateTree(store, theirs, { against, layout });
  if (p) return p;
  const under = commits.filter((c) => c !== theirs);
  if (!under.length) return undefined;
  const [q] = await validateTree(store, under, { against: [...against, theirs], layout, content: 'sizes' });
  return q;
}

/**
 * Refuses a remote commit whose tree fails any check, or a commit under it
 * that fails the structural checks or sizes, in one line naming the commit,
 * the path and what is wrong. Compared against `against` (the local tip and
 * the merge bases), only what the remote changed is read.
 */
export async function assertIncoming(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
  source = 'the remote memory',
): Promise<void> {
  const p = await firstIncomingProblem(store, theirs, against, source, 'store');
  if (!p) return;
  const commit = await commitOfPath(store, p.commit ?? theirs, p.path);
  const what = p.kind === 'record' ? 'a malformed record' : 'an invalid entry';
  throw err(
    'E_MERGE',
    `${source} holds ${what} ${showPath(p.path) || '(root)'} (commit ${commit.slice(0, 12)}): ${p.message}`,
    'nothing was merged and the local memory is unchanged; fix or remove it where it was written, then sync again',
    { path: p.path, commit, ...(p.field ? { field: p.field, reason: p.code } : {}) },
  );
}

/**
 * With `sync.require-signed` (`git config mem.sync.requireSigned true`):
 * refuses the remote when a commit it brings is not signed by a trusted key
 * (git's %G? is G: gpg.ssh.allowedSignersFile for ssh keys, the gpg trust
 * database for gpg ones), in one line naming the commit and what is wrong
 * with it. Commits the local store already has are not looked at.
 */
export async function assertIncomingSigned(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
  source = 'the remote memory',
): Promise<void> {
  const commits = await incomingCommits(store, theirs, against, source);
  if (!commits.length) return;
  const { commitInfo } = await import('../gitstore/commit-info.js');
  const infos = await commitInfo(store, commits);
  // the oldest offender first: the one whose author set-up to fix
  for (const c of [...commits].reverse()) {
    const sig = infos.get(c)?.signature;
    if (sig?.status === 'good') continue;
    const key = sig?.key ? ` ${sig.key}` : '';
    const what =
      !sig || sig.status === 'none'
        ? 'is not signed'
        : sig.status === 'untrusted'
          ? `is signed by a key this clone does not trust${key}`
          : sig.status === 'unverifiable'
            ? `has a signature this clone cannot check${key} (for ssh keys, set gpg.ssh.allowedSignersFile)`
            : `has a ${sig.status} signature${key}`;
    throw err(
      'E_MERGE',
      `${source}: commit ${c.slice(0, 12)} ${what}, and sync.require-signed is set`,
      "nothing was merged and the local memory is unchanged; its author signs memory commits with git config commit.gpgsign true, and their key goes in your allowed signers (gpg.ssh.allowedSignersFile) or gpg's trust; then sync again",
      { commit: c, signature: sig?.status ?? 'none' },
    );
  }
}

/**
 * Refuses fetched notes (refs/notes/memory of a remote) when their tip holds
 * an entry a notes tree does not (names, modes, fan-out, depth) or a note
 * that is not UTF-8 JSON lines of {id, verdict, reason} within the size
 * limits, or when a commit under it fails the structural checks or sizes.
 */
export async function assertIncomingNotes(
  store: Store,
  theirs: string,
  against: ReadonlyArray<string | null>,
): Promise<void> {
  const source = 'the remote notes (refs/notes/memory)';
  const p = await firstIncomingProblem(store, theirs, against, source, 'notes');
  if (!p) return;
  const commit = await commitOfPath(store, p.commit ?? theirs, p.path);
  throw err(
    'E_MERGE',
    `${source} hold an invalid note ${showPath(p.path) || '(root)'} (commit ${commit.slice(0, 12)}): ${p.message}`,
    'nothing was merged and the local memory and notes are unchanged; remove that note where it was written, then sync again',
    { path: p.path, commit },
  );
}
