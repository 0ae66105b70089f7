/**
 * OKF bundles on disk (docs/okf.md): `git mem export --format okf --dir DIR` and
 * `git mem import --okf DIR`. The mapping is pure (src/model/okf.ts); this is the
 * file system around it. An import goes through the one import of memories
 * (importItems: secret scan, the record checks, one commit, dedup by id and alias).
 */
import { lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { revParseVia, treeBlobs } from '../anchors/gitio.js';
import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { FOREIGN_KEY, fromConcept, type Note, type OkfFile, RESERVED, toBundle } from '../model/okf.js';
import { anchorPathProblem, isRepoPath } from '../model/paths.js';
import { readFrontmatter, splitFrontmatter } from '../model/record.js';
import { LIMITS } from '../model/schema.js';
import { exportRecords, type ImportItem, type ImportOptions, importItems } from './bulk.js';
import { decodeText } from './context.js';

/** The largest concept file an import reads: a record's frontmatter and body at their limits, and room. */
export const CONCEPT_BYTES = LIMITS.frontmatterBytes + LIMITS.bodyBytes + 4096;
/** The most files an import walks. */
export const BUNDLE_FILES = 100_000;

/** The bundle of a store at a commit: files in memory, nothing written. */
export async function okfBundle(
  store: Store,
  commit: string,
): Promise<{ files: OkfFile[]; notes: Note[]; concepts: number }> {
  const lines = await exportRecords(store, commit);
  return { ...toBundle(lines), concepts: lines.length };
}

/**
 * Writes a bundle into `dir`: refused when `dir` holds anything, unless `force`
 * (then files of the same name are overwritten, others left). Every file is made
 * before this is called, so an error of the mapping writes nothing.
 */
export function writeBundle(dir: string, files: readonly OkfFile[], force: boolean): void {
  let entries: string[] = [];
  try {
    if (!lstatSync(dir).isDirectory())
      throw err('E_INVALID_ARG', `${dir} is not a folder`, 'pass a new or empty folder to --dir');
    entries = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  if (entries.length && !force)
    throw err('E_INVALID_ARG', `${dir} is not empty`, 'pass an empty folder, or --force to write over it');
  for (const f of files) {
    const p = join(dir, ...f.path.split('/'));
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, f.text);
  }
}

/**
 * A concept file's text: a regular file (the walk passed over links, devices and pipes) whose
 * size is checked before it is read, so a 10 MB file is refused unread; not UTF-8 is E_BINARY.
 */
function readConcept(file: string, path: string): string {
  const tooLarge = () =>
    err(
      'E_TOO_LARGE',
      `${path} is over the ${CONCEPT_BYTES}-byte limit`,
      'split it, or leave it out of the bundle',
    );
  if (lstatSync(file).size > CONCEPT_BYTES) throw tooLarge();
  const buf = readFileSync(file);
  if (buf.length > CONCEPT_BYTES) throw tooLarge();
  return decodeText(buf, path);
}

/** A concept file read from a bundle, or why a file was passed over. */
interface Walked {
  concepts: Array<{ path: string; fm: Record<string, unknown>; body: string }>;
  skipped: Array<{ path: string; reason: string }>;
}

/**
 * Reads a bundle's concept files: every `.md` but the reserved index.md and log.md, each
 * through a size bound and as UTF-8. Symbolic links are never followed (a link may name
 * anything outside the bundle); a file without frontmatter or without a `type` is passed
 * over and reported (OKF §11: not a concept).
 */
export function readBundle(root: string): Walked {
  const out: Walked = { concepts: [], skipped: [] };
  try {
    if (!lstatSync(root).isDirectory()) throw new Error('not a folder');
  } catch {
    throw err('E_INVALID_ARG', `${root} is not a folder`, 'pass the folder of an OKF bundle to --okf');
  }
  let seen = 0;
  const walk = (rel: string) => {
    const entries = readdirSync(rel ? join(root, rel) : root, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    );
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.name.startsWith('.')) continue;
      if (++seen > BUNDLE_FILES)
        throw err('E_TOO_LARGE', `the bundle has over ${BUNDLE_FILES} files`, 'import it in parts');
      if (e.isSymbolicLink()) out.skipped.push({ path, reason: 'symbolic link (not followed)' });
      else if (e.isDirectory()) walk(path);
      else if (!e.isFile() || !/\.md$/i.test(e.name))
        out.skipped.push({ path, reason: 'not a markdown file' });
      else if (RESERVED.has(e.name.toLowerCase()))
        out.skipped.push({ path, reason: 'reserved (index.md, log.md)' });
      else {
        const text = readConcept(join(root, path), path);
        let fm: unknown;
        let body: string;
        try {
          const split = splitFrontmatter(text);
          if (Buffer.byteLength(split.yaml) > LIMITS.frontmatterBytes)
            throw new Error('frontmatter too large');
          fm = readFrontmatter(split.yaml);
          body = split.body;
        } catch (x) {
          out.skipped.push({ path, reason: `no readable frontmatter (${(x as Error).message})` });
          continue;
        }
        const type = (fm as { type?: unknown } | null)?.type;
        if (!fm || typeof fm !== 'object' || Array.isArray(fm) || typeof type !== 'string' || !type.trim())
          out.skipped.push({ path, reason: 'no type (not an OKF concept)' });
        else out.concepts.push({ path, fm: fm as Record<string, unknown>, body });
      }
    }
  };
  walk('');
  return out;
}

/**
 * `git mem import --okf DIR`: the bundle's concepts as memories, in one commit. A
 * foreign concept's `repo:` sources become anchors only when their path is a file of
 * the committed tree (HEAD); the others stay sources.
 */
export async function importOkf(store: Store, root: string, opts: ImportOptions = {}) {
  const { concepts, skipped } = readBundle(root);
  const bundle = basename(root) || 'bundle';
  const read = concepts.map((c) => ({ path: c.path, ...fromConcept(c.path, c.fm, c.body, bundle) }));
  // a code source that leaves the repository is refused as the same anchor of a local write is
  for (const r of read)
    for (const c of r.code) {
      const p = anchorPathProblem(c.path);
      if (p)
        throw err(
          'E_ANCHOR',
          `${r.path}: source ${JSON.stringify(c.source.resource)}: ${p}`,
          'fix or remove the source in the bundle; nothing was imported',
        );
    }
  const wanted = [...new Set(read.flatMap((r) => r.code.map((c) => c.path)).filter(isRepoPath))];
  const head = wanted.length ? await revParseVia(store, 'HEAD') : null;
  const tree = head ? await treeBlobs(store.repo, head, wanted) : new Map<string, string>();
  const counts = new Map<string, number>();
  const count = (k: string, n = 1) => counts.set(k, (counts.get(k) ?? 0) + n);
  const items: ImportItem[] = read.map((r, i) => {
    if (r.foreignType) count(`type:${r.foreignType}`);
    const anchors: Array<Record<string, unknown>> = [];
    for (const c of r.code) {
      if (isRepoPath(c.path) && tree.has(c.path)) {
        anchors.push({
          path: c.path,
          ...(c.lines ? { lines: c.lines } : {}),
          ...(c.symbol ? { symbol: c.symbol } : {}),
        });
        count('anchored');
      } else {
        r.line[FOREIGN_KEY] ??= {};
        const f = r.line[FOREIGN_KEY] as Record<string, unknown>;
        f.sources = [...((f.sources as unknown[]) ?? []), c.source];
        count('unresolved');
      }
    }
    if (anchors.length) r.line.anchors = anchors;
    return { o: r.line, line: i + 1, where: r.path };
  });
  const res = await importItems(store, items, opts);
  const notes: Note[] = [];
  for (const [k, n] of counts) {
    if (k.startsWith('type:'))
      notes.push({
        kind: 'type',
        count: n,
        message: `OKF type "${k.slice(5)}" is not a git-mem type: imported as convention, the type kept (okf.type)`,
      });
  }
  if (counts.get('anchored'))
    notes.push({
      kind: 'anchored',
      count: counts.get('anchored')!,
      unit: ['code source', 'code sources'],
      message: 'a file of the committed tree (HEAD): anchored',
    });
  if (counts.get('unresolved'))
    notes.push({
      kind: 'unresolved',
      count: counts.get('unresolved')!,
      unit: ['code source', 'code sources'],
      message: 'not a file of the committed tree (HEAD): kept as a source, not an anchor',
    });
  return { ...res, concepts: concepts.length, skipped, notes };
}
