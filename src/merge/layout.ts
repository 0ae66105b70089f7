/**
 * The checked-out file layout: `git mem export --dir PATH` writes the tree of
 * refs/memory as files (FORMAT, config.yaml, memories/, tombstones/, attic/),
 * `git mem import --dir PATH` makes the store's content match such a
 * directory again, in one commit. Teams that keep their memory in a branch
 * merge those files with `git mem merge-driver`.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import { ensureFormat } from '../commands/memory.js';
import { err } from '../errors.js';
import { FORMAT_PATH, SHARED_CONFIG_PATH, type Store } from '../gitstore/store.js';
import {
  idFromPath,
  type MemoryRecord,
  parseRecord,
  RECORDS_DIR,
  serializeRecord,
  TOMBSTONES_DIR,
  tombstonePath,
  validateRecord,
} from '../model/record.js';
import { stringify } from '../model/yaml.js';
import { assertNoSecrets } from '../safety/secrets.js';
import { ATTIC_DIR } from './engine.js';
import { parseTombstone } from './merge-commits.js';

/** The top-level folders of the layout that export owns (files there not in the store are removed). */
export const LAYOUT_DIRS = [RECORDS_DIR, TOMBSTONES_DIR, ATTIC_DIR];
const TOMB_RE = /^tombstones\/[0-9A-Z]{2}\/([0-9A-Z]{26})\.yaml$/;
const ATTIC_RE = /^attic\/[0-9A-Z]{2}\/[0-9A-Z]{26}\/[0-9a-f]{16}\.md$/;

function walk(root: string, sub: string, out: string[]): void {
  const dir = join(root, sub);
  if (!existsSync(dir)) return;
  for (const name of readdirSync(dir)) {
    const rel = sub ? `${sub}/${name}` : name;
    const st = statSync(join(root, rel));
    if (st.isDirectory()) walk(root, rel, out);
    else if (st.isFile()) out.push(rel);
  }
}

/** Files of the layout under `dir`, as tree paths (forward slashes). */
export function layoutFiles(dir: string): string[] {
  const out: string[] = [];
  for (const d of LAYOUT_DIRS) walk(dir, d, out);
  for (const f of [FORMAT_PATH, SHARED_CONFIG_PATH]) if (existsSync(join(dir, f))) out.push(f);
  return out.map((p) => p.split(sep).join('/')).sort();
}

export interface ExportDirResult {
  dir: string;
  commit: string;
  written: number;
  unchanged: number;
  removed: number;
}

export async function exportDir(store: Store, commit: string, dir: string): Promise<ExportDirResult> {
  const entries = (await store.lsTree(commit)).filter((e) => e.type === 'blob');
  const blobs = await store.catFile.readMany(entries.map((e) => e.oid));
  mkdirSync(dir, { recursive: true });
  const keep = new Set<string>();
  let written = 0;
  let unchanged = 0;
  entries.forEach((e, i) => {
    const b = blobs[i];
    if (!b) throw err('E_GIT', `object ${e.oid} for ${e.path} is missing`, 'run git mem doctor');
    keep.add(e.path);
    const f = join(dir, e.path);
    if (existsSync(f) && readFileSync(f).equals(b.content)) {
      unchanged++;
      return;
    }
    mkdirSync(dirname(f), { recursive: true });
    writeFileSync(f, b.content);
    written++;
  });
  let removed = 0;
  for (const p of layoutFiles(dir)) {
    if (keep.has(p) || p === FORMAT_PATH || p === SHARED_CONFIG_PATH) continue;
    rmSync(join(dir, p));
    removed++;
  }
  return { dir, commit, written, unchanged, removed };
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
  const files = layoutFiles(dir);
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
  const show = (p: string) => join(dir, p);
  const texts = new Map<string, string>();
  const records = new Map<string, MemoryRecord>();
  const aliases = new Map<string, string>();
  for (const p of files) {
    const text = readFileSync(join(dir, p), 'utf8');
    texts.set(p, text);
    if (p.startsWith(`${RECORDS_DIR}/`)) {
      const id = idFromPath(p);
      if (!id)
        throw err('E_INVALID_RECORD', `${show(p)} is not named memories/<xx>/<ID>.md`, 'move or delete it');
      let r: MemoryRecord;
      try {
        r = parseRecord(text, p);
        if (r.id !== id) throw new Error(`its id ${r.id} does not match its file name`);
        validateRecord(r);
      } catch (e) {
        throw err(
          'E_INVALID_RECORD',
          `${show(p)} does not parse: ${(e as Error).message}`,
          'fix the file; nothing was imported',
          { path: p },
        );
      }
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
    } else if (p.startsWith(`${TOMBSTONES_DIR}/`)) {
      const id = TOMB_RE.exec(p)?.[1];
      try {
        if (!id) throw new Error('not named tombstones/<xx>/<ID>.yaml');
        parseTombstone(text, id);
      } catch (e) {
        throw err(
          'E_INVALID_RECORD',
          `${show(p)} does not parse: ${(e as Error).message}`,
          'fix the file; nothing was imported',
          { path: p },
        );
      }
    } else if (p.startsWith(`${ATTIC_DIR}/`) && !ATTIC_RE.test(p)) {
      throw err('E_INVALID_RECORD', `${show(p)} is not named attic/<xx>/<ID>/<hash>.md`, 'move or delete it');
    }
  }
  const ident = await store.ident();
  const res = await store.write(async (tx) => {
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
          if (r.clock <= old.clock) out = serializeRecord({ ...r, clock: old.clock + 1, updated: now });
          stats.updated++;
        } else stats.added++;
        assertNoSecrets({ title: r.title, body: r.body, source: r.source }, opts.allowSecret);
        tx.put(p, out);
      } else tx.put(p, text);
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
            clock = old.clock + 1;
            title = old.title;
          } catch {}
          tx.put(
            tp,
            stringify({
              id,
              deleted: now,
              by: `${ident.name} <${ident.email}>`,
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
