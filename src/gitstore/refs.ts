/**
 * Compare-and-swap of a loose ref without a git process, by git's own lock
 * protocol: create `<ref>.lock` exclusively, check the ref still holds the
 * expected value (loose file, else packed-refs), write the new value into the
 * lock and rename it over the ref. Any git process honours the same lock, so
 * this is as safe against concurrent writers as `git update-ref`.
 *
 * Only the plain case is handled here; whenever git would do more than that
 * (the reftable backend, a reflog to append to, a reference-transaction hook)
 * or anything is unexpected, the answer is "unsupported" and the caller runs
 * `git update-ref`.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';

/**
 * Reads a ref straight from the files backend (a loose ref, else packed-refs)
 * to save a git process on every command. undefined = "ask git" (symbolic
 * refs, the reftable backend, anything unexpected); null = no such ref.
 * Git writes both files by atomic rename, so a read never sees half a write.
 */
export function readRefFast(commonDir: string, ref: string): string | null | undefined {
  try {
    if (existsSync(join(commonDir, 'reftable'))) return undefined;
    try {
      const loose = readFileSync(join(commonDir, ref), 'utf8').trim();
      return /^[0-9a-f]{40}$/.test(loose) ? loose : undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
    }
    let packed: string;
    try {
      packed = readFileSync(join(commonDir, 'packed-refs'), 'utf8');
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'ENOENT' ? null : undefined;
    }
    const at = packed.indexOf(` ${ref}\n`);
    if (at < 40) return null;
    const oid = packed.slice(at - 40, at);
    return /^[0-9a-f]{40}$/.test(oid) && (at === 40 || packed[at - 41] === '\n') ? oid : undefined;
  } catch {
    return undefined;
  }
}

export type CasOutcome = 'moved' | 'lost' | 'locked' | 'unsupported';

export interface CasContext {
  commonDir: string;
  /** core.logAllRefUpdates as configured (undefined when unset) */
  logAllRefUpdates?: string;
  /** core.hooksPath as configured, relative paths against the work tree */
  hooksPath?: string;
  workTree?: string;
}

/** Whether git would do more than write the ref file for this update (then git must do it). */
function needsGit(c: CasContext, ref: string): boolean {
  if (existsSync(join(c.commonDir, 'reftable'))) return true;
  if (String(c.logAllRefUpdates ?? '').toLowerCase() === 'always') return true;
  if (existsSync(join(c.commonDir, 'logs', ref))) return true;
  const hooks = c.hooksPath
    ? isAbsolute(c.hooksPath)
      ? c.hooksPath
      : join(c.workTree ?? c.commonDir, c.hooksPath)
    : join(c.commonDir, 'hooks');
  return existsSync(join(hooks, 'reference-transaction'));
}

export function casLooseRef(c: CasContext, ref: string, newOid: string, expected: string | null): CasOutcome {
  if (!/^refs\/[A-Za-z0-9._/-]+$/.test(ref) || ref.includes('..') || !/^[0-9a-f]{40}$/.test(newOid))
    return 'unsupported';
  if (needsGit(c, ref)) return 'unsupported';
  const file = join(c.commonDir, ref);
  const lock = `${file}.lock`;
  let fd: number;
  try {
    mkdirSync(dirname(file), { recursive: true });
    fd = openSync(lock, 'wx', 0o666);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EEXIST' ? 'locked' : 'unsupported';
  }
  let renamed = false;
  try {
    const current = readRefFast(c.commonDir, ref);
    if (current === undefined) return 'unsupported'; // a symbolic ref or something odd: git decides
    if (current !== expected) return 'lost';
    writeSync(fd, `${newOid}\n`);
    closeSync(fd);
    fd = -1;
    try {
      renameSync(lock, file);
    } catch {
      return 'unsupported'; // e.g. a directory in the way (refs/memory/…): git says what is wrong
    }
    renamed = true;
    return 'moved';
  } finally {
    if (fd >= 0) closeSync(fd);
    if (!renamed) rmSync(lock, { force: true });
  }
}
