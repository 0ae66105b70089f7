/**
 * Typed errors with stable codes (in the style of isomorphic-git's errors).
 * Every user-facing failure is a GitMemError: one line naming the problem,
 * an optional hint naming the fix, and a code that scripts can rely on.
 */
export type ErrorCode =
  | 'E_NOT_A_REPO'
  | 'E_UNSUPPORTED_REPO'
  | 'E_LOCKED'
  | 'E_NOT_INITIALIZED'
  | 'E_NOT_FOUND'
  | 'E_AMBIGUOUS'
  | 'E_ALIAS_TAKEN'
  | 'E_INVALID_ARG'
  | 'E_INVALID_RECORD'
  | 'E_SECRET'
  | 'E_TOO_LARGE'
  | 'E_BINARY'
  | 'E_CONFLICT_RETRY'
  | 'E_GIT'
  | 'E_FORMAT'
  | 'E_REV'
  | 'E_DUPLICATE'
  | 'E_MERGE'
  | 'E_REMOTE'
  | 'E_FORBIDDEN'
  | 'E_ANCHOR'
  | 'E_IO'
  /** a consolidation proposal whose memories changed since it was made */
  | 'E_STALE_PROPOSAL';

/** Exit codes: 1 = operation failed, 2 = usage / bad input, 3 = not found, 4 = conflict, 5 = forbidden (a read-only token). */
const EXIT: Partial<Record<ErrorCode, number>> = {
  E_INVALID_ARG: 2,
  E_INVALID_RECORD: 2,
  E_SECRET: 2,
  E_TOO_LARGE: 2,
  E_BINARY: 2,
  E_ALIAS_TAKEN: 2,
  E_AMBIGUOUS: 2,
  E_REV: 2,
  E_DUPLICATE: 2,
  E_ANCHOR: 2,
  E_NOT_FOUND: 3,
  E_CONFLICT_RETRY: 4,
  E_MERGE: 4,
  E_STALE_PROPOSAL: 4,
  E_FORBIDDEN: 5,
};

export class GitMemError extends Error {
  readonly code: ErrorCode;
  readonly hint?: string;
  readonly data?: Record<string, unknown>;
  constructor(code: ErrorCode, message: string, hint?: string, data?: Record<string, unknown>) {
    super(message);
    this.name = 'GitMemError';
    this.code = code;
    this.hint = hint;
    this.data = data;
  }
  get exitCode(): number {
    return EXIT[this.code] ?? 1;
  }
  /** One line for people: the problem, then the fix. */
  toLine(): string {
    return this.hint ? `${this.message} (${this.hint})` : this.message;
  }
  toJSON(): Record<string, unknown> {
    return { error: { code: this.code, message: this.message, hint: this.hint, ...(this.data ?? {}) } };
  }
}

export const err = (code: ErrorCode, message: string, hint?: string, data?: Record<string, unknown>) =>
  new GitMemError(code, message, hint, data);

export function isGitMemError(e: unknown): e is GitMemError {
  return e instanceof GitMemError;
}

/** What each operating-system error a file system raises means, and what to do about it. */
const OS_ERRORS: Record<string, { what: string; fix: string }> = {
  EACCES: { what: 'permission denied', fix: 'check the owner and mode of that path, or run as its owner' },
  EPERM: {
    what: 'operation not permitted',
    fix: 'check the owner and mode of that path, or run as its owner',
  },
  EROFS: { what: 'the file system is read-only', fix: 'run it where the repository is writable' },
  ENOSPC: { what: 'no space left on the device', fix: 'free some disk space and run it again' },
  EDQUOT: { what: 'the disk quota is used up', fix: 'free some space in your quota and run it again' },
  EFBIG: { what: 'the file is too large for the file system', fix: 'free some space or name another path' },
  EISDIR: { what: 'it is a directory', fix: 'name a file, not a directory' },
  ENOTDIR: { what: 'a part of that path is not a directory', fix: 'name a path whose folders exist' },
  ENOENT: { what: 'no such file or directory', fix: 'name a path that exists (its folder must exist)' },
  EMFILE: { what: 'too many open files', fix: 'raise the limit of open files (ulimit -n) and run it again' },
  ENFILE: { what: 'too many open files in the system', fix: 'close some programs and run it again' },
};

/**
 * The typed error for a failure that is not a bug: a GitMemError as it is, and an
 * operating system's refusal (a read-only `.git`, a full disk, a directory where a file
 * was named) as E_IO with one line naming the path and the fix. Everything else is
 * undefined: an internal error. Every reporter (the CLI, the MCP server, the web UI)
 * asks this one function, so no operation wraps its file calls itself.
 */
export function asGitMemError(e: unknown): GitMemError | undefined {
  if (isGitMemError(e)) return e;
  const o = e as { code?: unknown; syscall?: unknown; path?: unknown } | null;
  if (!o || typeof o !== 'object' || typeof o.code !== 'string' || !Object.hasOwn(OS_ERRORS, o.code))
    return undefined;
  // an error of node's file system (it names a system call); a child process that could not
  // start (spawn git ENOENT) names one too, and says so
  if (typeof o.syscall !== 'string') return undefined;
  const spawn = o.syscall.startsWith('spawn');
  const { what, fix } =
    spawn && o.code === 'ENOENT'
      ? { what: 'no such program', fix: 'install it and put it on PATH' }
      : OS_ERRORS[o.code];
  const path = typeof o.path === 'string' ? o.path : undefined;
  const verb = spawn ? 'run' : o.syscall;
  return new GitMemError('E_IO', `cannot ${verb}${path ? ` ${JSON.stringify(path)}` : ''}: ${what}`, fix, {
    errno: o.code,
    syscall: o.syscall,
    ...(path ? { path } : {}),
  });
}
