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
