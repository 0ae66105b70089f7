/**
 * The checked-out file layout: `git mem export --dir PATH` writes the tree of
 * refs/memory as files (FORMAT, config.yaml, memories/, tombstones/, attic/),
 * `git mem import --dir PATH` makes the store's content match such a
 * directory again, in one commit. Teams that keep their memory in a branch
 * merge those files with `git mem merge-driver`.
 */

import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, sep } from 'node:path';
import { err } from '../errors.js';
import { ensureFormat } from '../gitstore/format.js';
import { FORMAT_PATH, SHARED_CONFIG_PATH, type Store } from '../gitstore/store.js';
import { identLine } from '../gitstore/store-config.js';
import {
  idFromPath,
  type MemoryRecord,
  parseRecord,
  RECORDS_DIR,
  serializeRecord,
  TOMBSTONES_DIR,
  tombstonePath,
} from '../model/record.js';
import { nextClock } from '../model/schema.js';
import { stringify } from '../model/yaml.js';
import { assertNoSecrets, assertRecordClean } from '../safety/secrets.js';
import { confinedPath, removeConfined, writeConfined } from './confine.js';
import { ATTIC_DIR } from './engine.js';
import { type Found, found } from './problems.js';
import { blobProblem, pathProblem, showPath, sizeProblem } from './validate.js';
import { validateTree } from './validate-tree.js';

/** The top-level folders of the layout that export owns (files there not in the store are removed). */
const LAYOUT_DIRS = [RECORDS_DIR, TOMBSTONES_DIR, ATTIC_DIR];

/** Walks without following links: a link is listed in `other`, never entered. */
function walk(root: string, sub: string, out: string[], other: string[], depth = 0): void {
  const dir = join(root, sub);
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(dir);
  } catch {
    return;
  }
  if (!st.isDirectory()) {
    other.push(sub);
    return;
  }
  for (const name of readdirSync(dir)) {
    const rel = `${sub}/${name}`;
    const s = lstatSync(join(root, rel));
    if (s.isDirectory() && depth < 6) walk(root, rel, out, other, depth + 1);
    else if (s.isFile()) out.push(rel);
    else other.push(rel);
  }
}

/** Files of the layout under `dir`, as tree paths (forward slashes); links and other non-files apart. */
function layoutEntries(dir: string): { files: string[]; other: string[] } {
  const out: string[] = [];
  const other: string[] = [];
  for (const d of LAYOUT_DIRS) walk(dir, d, out, other);
  for (const f of [FORMAT_PATH, SHARED_CONFIG_PATH]) {
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(join(dir, f));
    } catch {}
    if (st?.isFile()) out.push(f);
    else if (st) other.push(f);
  }
  const norm = (xs: string[]) => xs.map((p) => p.split(sep).join('/')).sort();
  return { files: norm(out), other: norm(other) };
}

/** Files of the layout under `dir`, as tree paths (forward slashes). */
function layoutFiles(dir: string): string[] {
  return layoutEntries(dir).files;
}

export interface ExportDirResult {
  dir: string;
  commit: string;
  written: number;
  unchanged: number;
  /** files laid out as the store's that it no longer has */
  removed: number;
  /** files under the layout's folders that are not laid out as the store's: kept (import --dir refuses them) */
  left: string[];
}

/**
 * Writes the tree of `commit` as files under `dir`. The tree is checked first
 * (names, modes, layout, depth: nothing in it can name a path outside `dir`),
 * and every write is confined to `dir` and refused through a symbolic link.
 */
export async function exportDir(store: Store, commit: string, dir: string): Promise<ExportDirResult> {
  const [bad] = await validateTree(store, commit, { content: false });
  if (bad) {
    throw err(
      'E_INVALID_RECORD',
      `cannot export ${commit.slice(0, 12)}: ${showPath(bad.path)}: ${bad.message}`,
      'nothing was written; run git mem doctor, and remove that entry from the store',
      { path: bad.path, commit, problem: bad.problem },
    );
  }
  const entries = (await store.lsTree(commit)).filter((e) => e.type === 'blob');
  // every path is confined before anything is written
  for (const e of entries) confinedPath(dir, e.path);
  const blobs = await store.catFile.readMany(entries.map((e) => e.oid));
  mkdirSync(dir, { recursive: true });
  const keep = new Set<string>();
  let written = 0;
  let unchanged = 0;
  entries.forEach((e, i) => {
    const b = blobs[i];
    if (!b) throw err('E_GIT', `object ${e.oid} for ${e.path} is missing`, 'run git mem doctor');
    keep.add(e.path);
    const f = confinedPath(dir, e.path);
    if (existsSync(f) && statSync(f).isFile() && readFileSync(f).equals(b.content)) {
      unchanged++;
      return;
    }
    writeConfined(dir, e.path, b.content);
    written++;
  });
  let removed = 0;
  const left: string[] = [];
  for (const p of layoutFiles(dir)) {
    if (keep.has(p) || p === FORMAT_PATH || p === SHARED_CONFIG_PATH) continue;
    // only what an export could have written (the store's layout) goes; a file of someone's
    // (memories/README.md, attic/notes.txt) stays, named, for import --dir refuses it
    if (pathProblem(p)) {
      left.push(p);
      continue;
    }
    removeConfined(dir, p);
    removed++;
  }
  return { dir, commit, written, unchanged, removed, left };
}

export interface ImportDirResult {
  dir: string;
  commit: string | null;
  added: number;
  updated: number;
  removed: number;
  files: number;
}

/**
 * Makes the store hold what `dir` holds (one commit). Every record is
 * validated first: one that does not parse stops the import, naming the file,
 * and nothing is written. A changed record whose clock did not move gets the
 * next clock (so a later merge sees the edit as the newer one); a record
 * whose file is gone is deleted with a tombstone.
 */
export async function importDir(
  store: Store,
  dir: string,
  opts: { allowSecret?: boolean; now?: Date } = {},
): Promise<ImportDirResult> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw err(
      'E_INVALID_ARG',
      `--dir ${dir} is not a directory`,
      'pass the folder git mem export --dir wrote',
    );
  }
  const { files, other } = layoutEntries(dir);
  const show = (p: string) => showPath(join(dir, p));
  // the check that refused it, as a sync names it (src/merge/problems.ts)
  const refuse = (p: string, { problem, message }: Found) =>
    err(
      'E_INVALID_RECORD',
      `cannot import ${show(p)}: ${message}`,
      'fix or remove it; nothing was imported',
      {
        path: p,
        problem,
      },
    );
  if (other.length) throw refuse(other[0], found('mode', 'not a plain file or folder (a symbolic link?)'));
  if (
    !files.some(
      (f) => f.startsWith(`${RECORDS_DIR}/`) || f.startsWith(`${TOMBSTONES_DIR}/`) || f === FORMAT_PATH,
    )
  ) {
    throw err(
      'E_INVALID_ARG',
      `${dir} holds no memories/ or tombstones/ folder`,
      'pass the folder git mem export --dir wrote',
    );
  }
  const texts = new Map<string, string>();
  const records = new Map<string, MemoryRecord>();
  const aliases = new Map<string, string>();
  for (const p of files) {
    // the one validator: names and layout, then the size before reading, then the content
    const where = pathProblem(p);
    if (where) throw refuse(p, where);
    // the size before reading, by the same check a sync's tree walk applies
    const big = sizeProblem(p, statSync(join(dir, p)).size);
    if (big) throw refuse(p, big);
    const buf = readFileSync(join(dir, p));
    const bad = blobProblem(p, buf);
    if (bad) throw refuse(p, bad);
    const text = buf.toString('utf8');
    texts.set(p, text);
    const id = idFromPath(p);
    if (!id) continue;
    const r = parseRecord(text, p);
    if (r.alias) {
      const other = aliases.get(r.alias);
      if (other)
        throw err(
          'E_ALIAS_TAKEN',
          `alias "${r.alias}" is used by both ${other} and ${id}`,
          'rename one; nothing was imported',
        );
      aliases.set(r.alias, id);
    }
    records.set(id, r);
  }
  const ident = await store.ident();
  const res = await store.write(async (tx) => {
    tx.allowSecret = !!opts.allowSecret;
    await ensureFormat(tx);
    const now = (opts.now ?? new Date()).toISOString();
    const stats = { added: 0, updated: 0, removed: 0 };
    const current = tx.base ? (await tx.store.lsTree(tx.base)).filter((e) => e.type === 'blob') : [];
    const curByPath = new Map(current.map((e) => [e.path, e.oid]));
    const curBlobs = await tx.store.catFile.readMany(current.map((e) => e.oid));
    const curText = new Map(current.map((e, i) => [e.path, curBlobs[i]?.content.toString('utf8') ?? '']));
    for (const [p, text] of texts) {
      if (p === FORMAT_PATH) continue; // the store's own format stays
      if (curText.get(p) === text) continue;
      const id = idFromPath(p);
      if (id) {
        const r = records.get(id)!;
        let out = text;
        if (curByPath.has(p)) {
          const old = parseRecord(curText.get(p)!, p);
          if (r.clock <= old.clock)
            out = serializeRecord({ ...r, clock: nextClock(old.clock), updated: now });
          stats.updated++;
        } else stats.added++;
        assertRecordClean(r, { allow: opts.allowSecret });
        tx.put(p, out);
      } else {
        // a tombstone's reason, a displaced record in the attic, the shared settings: scanned as a
        // record is, before anything is written (what git mem rm --reason would refuse, import does too)
        assertNoSecrets({ [p]: text }, opts.allowSecret);
        tx.put(p, text);
      }
    }
    for (const [p] of curByPath) {
      if (texts.has(p) || p === FORMAT_PATH) continue;
      if (!LAYOUT_DIRS.some((d) => p.startsWith(`${d}/`)) && p !== SHARED_CONFIG_PATH) continue; // not ours to remove
      const id = idFromPath(p);
      if (id) {
        stats.removed++;
        const tp = tombstonePath(id);
        if (!texts.has(tp)) {
          let clock = 1;
          let title = '';
          try {
            const old = parseRecord(curText.get(p)!, p);
            clock = nextClock(old.clock);
            title = old.title;
          } catch {}
          tx.put(
            tp,
            stringify({
              id,
              deleted: now,
              by: identLine(ident),
              title,
              clock,
              reason: 'removed from the exported folder',
            }),
          );
        }
      }
      tx.remove(p);
    }
    if (!tx.changes.size) return null;
    return {
      message: `mem: import --dir (${stats.added} added, ${stats.updated} updated, ${stats.removed} removed)`,
      value: stats,
    };
  });
  const s = res.value ?? { added: 0, updated: 0, removed: 0 };
  return { dir, commit: res.commit, ...s, files: files.length };
}
