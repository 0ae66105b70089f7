/**
 * The engine as a git merge driver, for teams that check the memory out as
 * files (`git mem export --dir`): `git mem merge-driver %O %A %B %P`. Pure:
 * three file texts and the path in; the merged text, the attic files to
 * write beside it and whether git should stop for review out.
 */

import { idFromPath, parseRecord } from '../model/record.js';
import { parse as parseYaml, stringify } from '../model/yaml.js';
import { atticPath, type EntryState, mergeEntry, recordText, rememberText, tombstoneText } from './engine.js';
import { parseTombstone } from './merge-commits.js';

export interface DriverResult {
  /** What to write to %A; undefined leaves %A as it is (ours). */
  text?: string;
  /** Attic files to write, relative to the layout root, and whose version each holds (ours = %A, the current file). */
  attic: Array<{ path: string; text: string; side: 'ours' | 'theirs' }>;
  /** true: report a conflict to git (exit 1) so a person looks before committing. */
  conflict: boolean;
  message?: string;
  /** The version that does not parse as a record or tombstone (the merge stops for review). */
  unparsable?: { path: string; side: 'base' | 'ours' | 'theirs' };
  /** Not a memory file: merge it as text the way git would (git merge-file). */
  fallback?: boolean;
}

/** The layout root of a record path: `mem/memories/AB/ID.md` → `mem/`. */
export function layoutRoot(path: string): { root: string; rel: string } {
  const m = /(^|\/)(memories|tombstones|attic)\//.exec(path);
  if (!m) return { root: '', rel: path };
  const at = m.index + m[1].length;
  return { root: path.slice(0, at), rel: path.slice(at) };
}

const TOMB_RE = /^tombstones\/[0-9A-Z]{2}\/([0-9A-Z]{26})\.yaml$/;

export function mergeFiles(base: string, ours: string, theirs: string, path: string): DriverResult {
  const { rel } = layoutRoot(path.replace(/\\/g, '/'));
  if (ours === theirs) return { attic: [], conflict: false };
  if (base === ours) return { text: theirs, attic: [], conflict: false };
  if (base === theirs) return { attic: [], conflict: false };
  const recId = idFromPath(rel);
  const tombId = TOMB_RE.exec(rel)?.[1];
  const id = recId ?? tombId;
  if (id) {
    let unparsable: DriverResult['unparsable'];
    const state = (text: string, which: 'base' | 'ours' | 'theirs'): EntryState => {
      if (!text.trim()) return {};
      try {
        if (recId) {
          const r = parseRecord(text, path);
          rememberText(r, text);
          return { rec: r };
        }
        const t = parseTombstone(text, id);
        rememberText(t, text);
        return { tomb: t };
      } catch (e) {
        unparsable = { path, side: which };
        throw new Error(`${path} (${which}) does not parse: ${(e as Error).message}`);
      }
    };
    let b: EntryState;
    let o: EntryState;
    let t: EntryState;
    try {
      b = state(base, 'base');
      o = state(ours, 'ours');
      t = state(theirs, 'theirs');
    } catch (e) {
      return { attic: [], conflict: true, message: (e as Error).message, unparsable };
    }
    const r = mergeEntry(b, o, t);
    const text = r.state.rec ? recordText(r.state.rec) : r.state.tomb ? tombstoneText(r.state.tomb) : '';
    return {
      text,
      attic: r.attic.map((a) => ({ path: a.path, text: a.text, side: a.side })),
      conflict: r.attic.length > 0 || !!r.conflict,
      message: r.conflict ? `${path}: flagged for review (${r.conflict.join(', ')})` : undefined,
    };
  }
  if (rel === 'config.yaml') {
    const read = (s: string): Record<string, unknown> => {
      try {
        const v = parseYaml(s);
        return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
      } catch {
        return {};
      }
    };
    const [vb, vo, vt] = [read(base), read(ours), read(theirs)];
    const j = (v: unknown) => JSON.stringify(v) ?? '';
    const out: Record<string, unknown> = {};
    for (const k of [...new Set([...Object.keys(vo), ...Object.keys(vt)])].sort()) {
      const [b, o, t] = [j(vb[k]), j(vo[k]), j(vt[k])];
      const pick = o === t ? vo[k] : o === b ? vt[k] : t === b ? vo[k] : o > t ? vo[k] : vt[k];
      if (pick !== undefined) out[k] = pick;
    }
    return { text: stringify(out), attic: [], conflict: false };
  }
  if (rel.startsWith('attic/')) {
    // attic files are named by their content: both sides hold the same text or are damaged
    return { attic: [], conflict: true, message: `${path}: two different attic files under one name` };
  }
  return { attic: [], conflict: false, fallback: true };
}

export { atticPath };
