/**
 * What a memory commit says about itself: its provenance trailers (the
 * operation, the ids, the agent; src/model/provenance.ts) and its signature
 * as git verifies it (`%G?`, with gpg.ssh.allowedSignersFile or the gpg
 * trust database deciding which keys are trusted). Read for the commits a
 * command shows, in one `git log` per call: verifying a signature runs gpg or
 * ssh-keygen, so only shown commits are verified.
 */
import { type CommitProvenance, parseTrailerLines } from '../model/provenance.js';
import { git } from './git.js';
import type { Store } from './store.js';

/** `%G?` in words. */
const SIGNATURE: Record<string, SignatureStatus> = {
  G: 'good',
  U: 'untrusted',
  B: 'bad',
  X: 'expired',
  Y: 'expired-key',
  R: 'revoked-key',
  E: 'unverifiable',
  N: 'none',
};

export type SignatureStatus =
  | 'good'
  | 'untrusted'
  | 'bad'
  | 'expired'
  | 'expired-key'
  | 'revoked-key'
  | 'unverifiable'
  | 'none';

export interface Signature {
  /** good: a valid signature by a trusted key; untrusted: valid, but the key is not trusted; none: unsigned */
  status: SignatureStatus;
  /** git's %G? letter */
  code: string;
  /** who signed (%GS), when git could tell */
  signer: string | null;
  /** the key (%GK: its fingerprint or id) */
  key: string | null;
}

export interface CommitInfo extends CommitProvenance {
  commit: string;
  /** null: not verified (past the `verify` limit of a long listing) */
  signature: Signature | null;
}

const FORMAT = '%H%x1f%G?%x1f%GS%x1f%GK%x1f%(trailers:only,unfold)%x1e';
const UNVERIFIED = '%H%x1f%x1f%x1f%x1f%(trailers:only,unfold)%x1e';

function parse(out: string): CommitInfo[] {
  const list: CommitInfo[] = [];
  for (const rec of out.split('\x1e')) {
    const [commit, code, signer, key, trailers] = rec.replace(/^\n/, '').split('\x1f');
    if (!commit || !/^[0-9a-f]{40}$/.test(commit)) continue;
    list.push({
      commit,
      ...parseTrailerLines(trailers ?? ''),
      signature: code
        ? { status: SIGNATURE[code] ?? 'unverifiable', code, signer: signer || null, key: key || null }
        : null,
    });
  }
  return list;
}

async function logOf(store: Store, commits: readonly string[], format: string): Promise<CommitInfo[]> {
  if (!commits.length) return [];
  const r = await git(['log', '--no-walk=unsorted', '--stdin', `--format=${format}`], {
    cwd: store.repo.cwd,
    env: store.repo.env,
    input: `${commits.join('\n')}\n`,
    allowFail: true,
  });
  return parse(r.stdout.toString('utf8'));
}

/**
 * Provenance and signature of each commit (missing commits are left out). Verifying a signature
 * runs gpg or ssh-keygen: only the first `verify` commits are verified, the rest get signature null.
 */
export async function commitInfo(
  store: Store,
  commits: readonly string[],
  verify = Number.POSITIVE_INFINITY,
): Promise<Map<string, CommitInfo>> {
  const want = [...new Set(commits)];
  const [checked, rest] = await Promise.all([
    logOf(store, want.slice(0, verify), FORMAT).then((l) => signedAfterAll(store, l)),
    logOf(store, want.slice(verify), UNVERIFIED),
  ]);
  return new Map([...checked, ...rest].map((c) => [c.commit, c]));
}

/**
 * git says N (no signature) when it cannot verify one at all, e.g. an ssh
 * signature without gpg.ssh.allowedSignersFile: a commit whose header holds
 * a signature is then unverifiable, not unsigned.
 */
async function signedAfterAll(store: Store, list: CommitInfo[]): Promise<CommitInfo[]> {
  const unsigned = list.filter((c) => c.signature?.code === 'N');
  if (!unsigned.length) return list;
  const objs = await store.catFile.readMany(unsigned.map((c) => c.commit));
  unsigned.forEach((c, i) => {
    const raw = objs[i]?.content.toString('utf8') ?? '';
    const header = raw.slice(0, raw.indexOf('\n\n') + 1);
    if (c.signature && /^gpgsig(-sha256)? /m.test(header))
      c.signature = { ...c.signature, status: 'unverifiable', code: 'E' };
  });
  return list;
}

/** The last commit at or before `rev` (default the store's ref) that changed `path`, with its date and author. */
export async function lastChange(
  store: Store,
  path: string,
  rev?: string,
): Promise<(CommitInfo & { date: string; author: string; subject: string }) | null> {
  const r = await git(
    ['log', '-1', `--format=%aI%x1f%an <%ae>%x1f%s%x1f${FORMAT}`, rev ?? store.ref, '--', path],
    { cwd: store.repo.cwd, env: store.repo.env, allowFail: true },
  );
  const text = r.stdout.toString('utf8');
  if (r.code !== 0 || !text) return null;
  const [date, author, subject, ...rest] = text.split('\x1f');
  const [info] = await signedAfterAll(store, parse(rest.join('\x1f')));
  return info ? { ...info, date, author, subject } : null;
}

/** "signature good (key SHA256:…, Ada)" in words, for people. */
export function signatureText(s: Signature | null): string {
  if (!s) return 'signature not checked';
  if (s.status === 'none') return 'unsigned';
  const who = [s.key ? `key ${s.key}` : '', s.signer ?? ''].filter(Boolean).join(', ');
  return `signature ${s.status}${who ? ` (${who})` : ''}`;
}
