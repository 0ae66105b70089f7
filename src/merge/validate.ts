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
 * The pure checks (here) work on names, modes and buffers; `validateTree`
 * (src/merge/validate-tree.ts) walks a commit's tree through git, skipping every subtree and blob that is the same
 * as in the commits it is compared against (the local tip, the merge base),
 * so a sync reads only what the remote changed.
 */
import type { ErrorCode } from '../errors.js';
import { FORMAT_PATH, FORMAT_VERSION, SHARED_CONFIG_PATH } from '../gitstore/store.js';
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
import { type Found, found, type ProblemKind } from './problems.js';

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
  /** Which check refused it (src/merge/problems.ts): E_MERGE's `data.problem`. */
  problem: ProblemKind;
  /** The commit whose tree it was found in (validateTree over several commits). */
  commit?: string;
  /** A record's field that breaks its limit (src/model/schema.ts), and the code a local write gets for it. */
  field?: string;
  code?: ErrorCode;
  /** Every field of that record that breaks its limit (the first is `field`). */
  fields?: FieldProblem[];
}

export const TREE_MODES = new Set(['40000', '040000']);
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
export function nameProblem(name: string): Found | null {
  if (name === '') return found('empty-name', 'an entry with an empty name');
  if (name === '.' || name === '..')
    return found('dot-name', `an entry named "${name}" (it would write outside its folder)`);
  // .git, and the spellings Windows and macOS file systems treat as .git
  const bare = name.replace(/[\u200b-\u200f\u202a-\u202e\u206a-\u206f\ufeff]/g, '');
  if (/^\.git[. ]*$/i.test(bare) || /^git~\d+$/i.test(bare))
    return found('git-name', `an entry named ${JSON.stringify(name)} (git's own folder)`);
  if (name.includes('/') || name.includes('\\'))
    return found('separator', `an entry named ${JSON.stringify(name)} holds a path separator`);
  if (/[\u0000-\u001f\u007f]/.test(name))
    return found('control-chars', `an entry named ${JSON.stringify(name)} holds control characters`);
  if (name.includes('\ufffd'))
    return found('not-utf8', `an entry named ${JSON.stringify(name)} is not valid UTF-8`);
  return null;
}

/** Pairs of names in one folder that one file system would store as one file. */
export function collisionProblems(names: readonly string[]): Array<Found & { name: string }> {
  const out: Array<Found & { name: string }> = [];
  const exact = new Set<string>();
  const nfc = new Map<string, string>();
  const folded = new Map<string, string>();
  for (const n of names) {
    if (exact.has(n)) {
      out.push({
        name: n,
        problem: 'same-name',
        message: `two entries named ${JSON.stringify(n)} in one folder`,
      });
      continue;
    }
    exact.add(n);
    const c = n.normalize('NFC');
    const prevC = nfc.get(c);
    if (prevC !== undefined) {
      out.push({
        name: n,
        problem: 'unicode-collision',
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
        problem: 'case-collision',
        message: `${JSON.stringify(prevF)} and ${JSON.stringify(n)} differ only in case: they collide on case-insensitive file systems`,
      });
      continue;
    }
    folded.set(f, n);
  }
  return out;
}

// ------------------------------------------------------------------ modes and layout

export function modeProblem(mode: string, isTree: boolean): Found | null {
  if (mode === '120000')
    return found('symlink', 'a symbolic link (mode 120000): the store holds plain files only');
  if (mode === '160000')
    return found('gitlink', 'a gitlink (mode 160000, a submodule): the store holds plain files only');
  if (isTree) return TREE_MODES.has(mode) ? null : found('mode', `a folder with mode ${mode}`);
  if (mode === '100755')
    return found('executable', 'an executable file (mode 100755): the store holds plain files only');
  if (mode !== '100644')
    return found('mode', `a file with mode ${mode}: the store holds plain files (100644) only`);
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
export function layoutProblem(
  parents: readonly string[],
  name: string,
  isTree: boolean,
  oid?: string,
  hexLen?: number,
): Found | null {
  const where = [...parents, name].join('/');
  const notHere = (what: string) => found('layout', `${where} is not part of the store layout (${what})`);
  const [top, second, third] = parents;
  const blobNamed = (expect: string) =>
    isTree ? found('file-or-folder', `${where} is a folder where the layout has a file (${expect})`) : null;
  const folderNamed = (expect: string) =>
    !isTree ? found('file-or-folder', `${where} is a file where the layout has a folder (${expect})`) : null;
  const misnamed = (held: string) =>
    found('object-name', `${where} is named for object ${name} but holds ${held}`);
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
      if (!isTree && oid && oid !== name) return misnamed(oid);
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
        if (oid && oid !== name) return misnamed(oid);
        return null;
      }
      return notHere(LAYOUT_HELP);
    default:
      return found(
        'too-deep',
        `${where} is deeper than the store layout allows (at most ${MAX_DEPTH} levels)`,
      );
  }
}

/**
 * Checks a whole path (a file in an imported folder, a merge driver's path):
 * every component's name, then the layout. Null when the path is a file the
 * store may hold.
 */
export function pathProblem(path: string): Found | null {
  const segs = path.split('/');
  if (segs.length > MAX_DEPTH + 1) return found('too-deep', `${path} is deeper than the store layout allows`);
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

export function sizeProblem(path: string, size: number): Found | null {
  const limit = sizeLimit(path);
  return limit !== null && size > limit
    ? found('too-large', `is ${size} bytes, over the ${limit}-byte limit for this file`)
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
  const entry = (problem: ProblemKind, message: string): Problem => ({
    path,
    message,
    kind: 'entry',
    problem,
  });
  const size = sizeProblem(path, content.length);
  if (size) return entry(size.problem, size.message);
  if (path.startsWith('anchors/')) return null;
  let text: string;
  try {
    text = utf8.decode(content);
  } catch {
    return entry('not-utf8', 'is not valid UTF-8');
  }
  if (path === FORMAT_PATH) {
    const v = formatVersion(text);
    if (v !== FORMAT_VERSION)
      return entry(
        'format',
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
        return entry('config', 'is not a YAML mapping');
    } catch (e) {
      return entry('config', `is not valid YAML (${(e as Error).message.split('\n')[0]})`);
    }
    return null;
  }
  const segs = path.split('/');
  if (segs[0] === 'tombstones') {
    const id = segs[2].replace(/\.yaml$/, '');
    try {
      const t = parseTombstone(text, id);
      if (t.deleted !== undefined && Number.isNaN(Date.parse(String(t.deleted))))
        return entry('tombstone', `is a tombstone with an invalid date ${JSON.stringify(String(t.deleted))}`);
    } catch (e) {
      return entry('tombstone', `is a malformed tombstone: ${(e as Error).message}`);
    }
    return null;
  }
  if (segs[0] === 'memories' || segs[0] === 'attic') {
    const id = segs[0] === 'memories' ? segs[2].replace(/\.md$/, '') : segs[2];
    const unparsed = (e: unknown): Problem => ({
      path,
      message: `does not parse: ${(e as Error).message}`,
      kind: 'record',
      problem: 'record',
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
    if (p)
      return {
        path,
        message: p.message,
        kind: 'record',
        problem: 'record-field',
        field: p.field,
        code: p.code,
        fields,
      };
    let r: MemoryRecord;
    try {
      r = recordFromParts(parts.frontmatter, parts.body, path);
    } catch (e) {
      return unparsed(e);
    }
    if (r.id !== id)
      return { path, message: `its id ${r.id} does not match its path`, kind: 'record', problem: 'record' };
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
export function notesLayoutProblem(
  parents: readonly string[],
  name: string,
  isTree: boolean,
  _oid: string | undefined,
  hexLen = 40,
): Found | null {
  const where = [...parents, name].join('/');
  const used = parents.join('').length;
  if (isTree) {
    if (!HEX2_RE.test(name) || parents.length >= NOTES_MAX_FANOUT)
      return found(
        'layout',
        `${where} is not part of a notes tree (folders are two hex digits of an object id, at most ${NOTES_MAX_FANOUT} deep)`,
      );
    return null;
  }
  if (!/^[0-9a-f]+$/.test(name) || used + name.length !== hexLen)
    return found(
      'layout',
      `${where} is not part of a notes tree (a note is named by the id of the object it annotates)`,
    );
  return null;
}

/** What is wrong with a note's text (UTF-8 JSON lines of {id, verdict, reason, …}), or null. */
export function noteProblem(content: Buffer): Found | null {
  if (content.length > NOTE_LIMITS.note)
    return found(
      'too-large',
      `is ${content.length} bytes, over the ${NOTE_LIMITS.note}-byte limit for a note`,
    );
  let text: string;
  try {
    text = utf8.decode(content);
  } catch {
    return found('not-utf8', 'is not valid UTF-8');
  }
  const line = (message: string) => found('note', message);
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const ln = lines[i];
    if (!ln.trim()) continue;
    const at = `line ${i + 1}`;
    if (Buffer.byteLength(ln) > NOTE_LIMITS.line)
      return found('too-large', `${at} is over the ${NOTE_LIMITS.line}-byte limit for a note line`);
    let v: unknown;
    try {
      v = JSON.parse(ln);
    } catch {
      return line(`${at} is not JSON`);
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) return line(`${at} is not a JSON object`);
    const o = v as Record<string, unknown>;
    if (typeof o.id !== 'string' || !isId(o.id)) return line(`${at} has no record id`);
    if (typeof o.verdict !== 'string' || !/^[a-z][a-z_-]{0,31}$/.test(o.verdict))
      return line(`${at} has no verdict`);
    if (typeof o.reason !== 'string') return line(`${at} has no reason`);
    if (o.path !== undefined) {
      const p = anchorPathProblem(o.path);
      if (p) return line(`${at}: ${p}`);
    }
    if (
      o.lines !== undefined &&
      o.lines !== null &&
      !(Array.isArray(o.lines) && o.lines.length === 2 && o.lines.every((n) => Number.isInteger(n) && n >= 0))
    )
      return line(`${at} has lines that are not [start, end]`);
  }
  return null;
}
