/**
 * Compare-and-swap of loose refs without a git process, by git's own lock
 * protocol (the files backend's transaction): create `<ref>.lock`
 * exclusively for every ref, check each still holds the expected value
 * (loose file, else packed-refs), write the new values into the locks, append
 * the reflog lines git would, and rename the locks over the refs. Any git
 * process honours the same locks, so this is as safe against concurrent
 * writers as `git update-ref --stdin`, and a crash leaves each ref at its old
 * or its new value.
 *
 * Only that case is handled here; whenever git would do more (the reftable
 * backend, a reference-transaction hook) or anything is unexpected, the
 * answer is "unsupported" and the caller runs `git update-ref`.
 */
import {
  appendFileSync,
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

/**
 * HEAD's commit id from the files backend: a detached HEAD's id, or the branch
 * it names read by readRefFast. undefined = "ask git" (an unborn branch, a
 * symbolic ref elsewhere, the reftable backend, anything unexpected).
 */
export function readHeadFast(gitDir: string, commonDir: string): string | undefined {
  try {
    const head = readFileSync(join(gitDir, 'HEAD'), 'utf8').trim();
    if (/^[0-9a-f]{40}$/.test(head)) return head;
    const m = /^ref: (refs\/heads\/[^\s]+)$/.exec(head);
    return (m && readRefFast(commonDir, m[1])) || undefined;
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
  /** a bare repository keeps no reflogs unless core.logAllRefUpdates says so */
  bare?: boolean;
}

/** One compare-and-swap: `ref` to `next` if it still holds `expected` (null: absent). */
export interface CasUpdate {
  ref: string;
  next: string;
  expected: string | null;
}

/** What a reflog line needs besides the ids: who and why (git's committer identity and `-m`). */
export interface ReflogEntry {
  name: string;
  email: string;
  message: string;
  /** seconds since the epoch; now when absent */
  when?: number;
}

/** Whether git would run a reference-transaction hook or use another backend (then git must do it). */
function needsGit(c: CasContext): boolean {
  if (existsSync(join(c.commonDir, 'reftable'))) return true;
  const hooks = c.hooksPath
    ? isAbsolute(c.hooksPath)
      ? c.hooksPath
      : join(c.workTree ?? c.commonDir, c.hooksPath)
    : join(c.commonDir, 'hooks');
  return existsSync(join(hooks, 'reference-transaction'));
}

/**
 * Whether git keeps a reflog for this update: it appends to an existing one,
 * and creates one by core.logAllRefUpdates (default: true with a work tree) —
 * `always` for every ref, `true` for branches, remote-tracking refs and notes.
 */
export function reflogWanted(c: CasContext, ref: string): boolean {
  if (existsSync(join(c.commonDir, 'logs', ref))) return true;
  const v = String(c.logAllRefUpdates ?? (c.bare ? 'false' : 'true')).toLowerCase();
  if (v === 'always') return true;
  if (!['true', 'yes', 'on', '1'].includes(v)) return false;
  return /^refs\/(heads|remotes|notes)\//.test(ref);
}

/** A reflog line as git writes it: `old new Name <email> seconds ±hhmm<TAB>message`. */
export function reflogLine(old: string | null, next: string, e: ReflogEntry, date = new Date()): string {
  const off = -date.getTimezoneOffset();
  const abs = Math.abs(off);
  const tz = `${off < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}${String(abs % 60).padStart(2, '0')}`;
  const when = e.when ?? Math.floor(date.getTime() / 1000);
  // git collapses the message's whitespace (newlines included) to single spaces
  const msg = e.message.replace(/\s+/g, ' ').trim();
  const who = `${e.name.replace(/[<>\n]/g, '')} <${e.email.replace(/[<>\n]/g, '')}>`;
  return `${old ?? ZERO} ${next} ${who} ${when} ${tz}${msg ? `\t${msg}` : ''}\n`;
}

const ZERO = '0'.repeat(40);

/**
 * Moves loose refs together by git's files-backend transaction: lock every
 * ref (in name order, as git does), check each still holds what it was
 * expected to, write the new values into the locks, append the reflog lines
 * git would, and rename the locks over the refs. A reflog needs `reflog` (who
 * and why); without it such an update is "unsupported" and git does it.
 */
export function casLooseRefs(c: CasContext, updates: readonly CasUpdate[], reflog?: ReflogEntry): CasOutcome {
  const sorted = [...updates].sort((a, b) => (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0));
  for (let i = 0; i < sorted.length; i++) {
    const u = sorted[i];
    if (!/^refs\/[A-Za-z0-9._/-]+$/.test(u.ref) || u.ref.includes('..') || u.ref.endsWith('.lock'))
      return 'unsupported';
    if (!/^[0-9a-f]{40}$/.test(u.next) || (i && sorted[i - 1].ref === u.ref)) return 'unsupported';
  }
  if (needsGit(c)) return 'unsupported';
  const logs = sorted.map((u) => reflogWanted(c, u.ref));
  if (logs.some(Boolean) && !reflog) return 'unsupported';
  const locks: Array<{ file: string; lock: string; fd: number }> = [];
  let renamed = 0;
  try {
    for (const u of sorted) {
      const file = join(c.commonDir, u.ref);
      const lock = `${file}.lock`;
      try {
        mkdirSync(dirname(file), { recursive: true });
        locks.push({ file, lock, fd: openSync(lock, 'wx', 0o666) });
      } catch (e) {
        return (e as NodeJS.ErrnoException).code === 'EEXIST' ? 'locked' : 'unsupported';
      }
    }
    for (const u of sorted) {
      const current = readRefFast(c.commonDir, u.ref);
      if (current === undefined) return 'unsupported'; // a symbolic ref or something odd: git decides
      if (current !== u.expected) return 'lost';
    }
    const date = new Date();
    sorted.forEach((u, i) => {
      const l = locks[i];
      writeSync(l.fd, `${u.next}\n`);
      closeSync(l.fd);
      l.fd = -1;
      if (logs[i] && reflog) {
        const log = join(c.commonDir, 'logs', u.ref);
        mkdirSync(dirname(log), { recursive: true });
        appendFileSync(log, reflogLine(u.expected, u.next, reflog, date), { mode: 0o666 });
      }
    });
    for (const l of locks) {
      try {
        renameSync(l.lock, l.file);
      } catch (e) {
        // the first rename failing leaves everything as it was; git reports what is wrong
        if (!renamed) return 'unsupported';
        throw e;
      }
      renamed++;
    }
    return 'moved';
  } finally {
    for (const l of locks) {
      if (l.fd >= 0) closeSync(l.fd);
    }
    for (const l of locks.slice(renamed)) rmSync(l.lock, { force: true });
  }
}
