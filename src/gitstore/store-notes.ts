/**
 * Git notes on a notes ref (the post-commit hook's verdicts on `refs/notes/memory`): what a note
 * adds, how its new text is made from the note already there (lines kept, none duplicated, at the
 * fan-out git chose), and the secret scan of its lines. The store writes and publishes them
 * (src/gitstore/store-write.ts: beside a memory commit, or alone).
 */
import { err } from '../errors.js';
import { scanSecrets } from '../safety/secrets.js';
import type { CatFile } from './git.js';
import { parseTree } from './tree.js';

/**
 * Lines to add to the git note of `object` on a notes ref, written with a store
 * write and published in the same ref transaction (the post-commit hook's
 * verdicts). Lines already there are kept, none is duplicated; a note already
 * there stays where it is (at any fan-out git chose), a new one goes at the
 * fan-out the notes tree already uses.
 */
export interface NoteAdd {
  ref: string;
  object: string;
  lines: readonly string[];
  message: string;
}

/** A NoteAdd made concrete against the notes ref's tip: the note's whole text and where it goes. */
export type PendingNote = NoteAdd & { expected: string | null; path: string; text: string };

/**
 * What a NoteAdd writes on the notes ref's tip `expected` (null: no notes ref yet): the note's
 * whole new text (the lines there already, then the new ones), or null when the note already says
 * all of it.
 */
export async function pendingNote(
  catFile: CatFile,
  expected: string | null,
  add: NoteAdd | null,
): Promise<PendingNote | null> {
  if (!add?.lines.length) return null;
  let have: string[] = [];
  const o = add.object;
  let path = o;
  if (expected) {
    // the note of `object` at any fan-out git uses (none, 2/38, 2/2/36)
    const paths = [o, `${o.slice(0, 2)}/${o.slice(2)}`, `${o.slice(0, 2)}/${o.slice(2, 4)}/${o.slice(4)}`];
    const blobs = await catFile.readMany([...paths.map((p) => `${expected}:${p}`), `${expected}^{tree}`]);
    const at = blobs.findIndex((b, i) => i < paths.length && b?.type === 'blob');
    if (at >= 0) {
      path = paths[at];
      have = blobs[at]!.content.toString('utf8').split('\n').filter(Boolean);
    } else {
      // a new note goes where its neighbours are: under two-hex folders once git fanned the tree out
      const root = blobs[paths.length];
      if (
        root?.type === 'tree' &&
        parseTree(root.content).some((e) => e.tree && /^[0-9a-f]{2}$/.test(e.name))
      )
        path = paths[1];
    }
  }
  const there = new Set(have);
  const fresh = [...new Set(add.lines)].filter((l) => !there.has(l));
  if (!fresh.length) return null;
  return { ...add, expected, path, text: `${[...have, ...fresh].join('\n')}\n` };
}

/** The lines a note adds pass the secret scan (E_SECRET); notes are pushed beside the memory ref. */
export function assertNoteClean(add: NoteAdd): void {
  const f = scanSecrets(add.lines.join('\n'))[0];
  if (!f) return;
  throw err(
    'E_SECRET',
    `refusing to write a likely secret into ${add.ref}: ${f.kind} in the note of ${add.object.slice(0, 12)} at line ${f.line}, column ${f.column} (${f.preview})`,
    'remove it from what the note records',
    { kind: f.kind, ref: add.ref, line: f.line, column: f.column },
  );
}
