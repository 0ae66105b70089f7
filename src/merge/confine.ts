/**
 * Path confinement for every command that writes files from store content
 * (export --dir, rules export, the merge driver): a relative path is resolved
 * inside its target folder or refused, and no component between the folder
 * and the file may be a symbolic link (a link would carry the write elsewhere).
 * The target folder itself may be a link: the person named it.
 */
import { lstatSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { err } from '../errors.js';

function refuse(root: string, rel: string, why: string) {
  return err(
    'E_IO',
    `refusing to write ${JSON.stringify(rel)} under ${root}: ${why}`,
    'nothing outside the target folder is ever written; remove the link or pick another folder',
    { path: rel, root },
  );
}

/** The absolute path of `rel` inside `root`; throws when it would leave `root` or pass through a link. */
export function confinedPath(root: string, rel: string): string {
  const top = resolve(root);
  if (!rel || rel.includes('\0') || isAbsolute(rel) || /^[A-Za-z]:/.test(rel))
    throw refuse(top, rel, 'not a relative path');
  const abs = resolve(top, rel);
  const r = relative(top, abs);
  if (!r || r === '..' || r.startsWith(`..${sep}`) || isAbsolute(r))
    throw refuse(top, rel, 'it resolves outside the folder');
  let cur = top;
  for (const part of r.split(sep)) {
    cur = join(cur, part);
    let st: ReturnType<typeof lstatSync> | undefined;
    try {
      st = lstatSync(cur);
    } catch {
      break; // does not exist yet: mkdir makes real folders from here on
    }
    if (st.isSymbolicLink()) throw refuse(top, rel, `${relative(top, cur)} is a symbolic link`);
  }
  return abs;
}

/** Writes `content` to `rel` inside `root` (folders made as needed), or refuses. */
export function writeConfined(root: string, rel: string, content: string | Buffer): string {
  const f = confinedPath(root, rel);
  mkdirSync(dirname(f), { recursive: true });
  // a link planted between the check and now would still be caught by the next check; the
  // file itself is replaced, never written through
  rmSync(f, { force: true });
  writeFileSync(f, content, { flag: 'wx' });
  return f;
}

/** Removes `rel` inside `root`, or refuses. */
export function removeConfined(root: string, rel: string): void {
  rmSync(confinedPath(root, rel), { force: true });
}
