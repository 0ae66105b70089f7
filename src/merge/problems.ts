/**
 * Why the sync boundary refuses what another repository brings (a remote's memory or notes, an
 * imported folder, a merge driver's file): one row per check. A sync's refusal is E_MERGE (exit 4)
 * with `data.problem` set to the row's name, beside `data.path` and `data.commit`, so a script or a
 * CI job can tell a symbolic link from an oversized file without reading the message; `import
 * --dir` and `export --dir` (E_INVALID_RECORD) and doctor's tree and limits findings name the same
 * rows. docs/sync.md lists them (a test checks they are these, in these words).
 */
export const PROBLEMS = {
  'empty-name': 'a tree entry with an empty name',
  'dot-name': 'an entry named `.` or `..`',
  'git-name': "an entry named like git's own folder (`.git`, and the spellings Windows and macOS read as it)",
  separator: 'a name holding `/` or `\\`',
  'control-chars': 'a name holding control characters',
  'not-utf8': 'a name or a file that is not valid UTF-8',
  'same-name': 'two entries of one name in a folder',
  'unicode-collision': 'two names that are one after Unicode normalisation (they collide on macOS)',
  'case-collision': 'two names that differ only in case (they collide on case-insensitive file systems)',
  symlink: 'a symbolic link',
  gitlink: 'a gitlink (a submodule)',
  executable: 'an executable file',
  mode: 'a file or folder of another mode',
  layout: 'a path that is not part of the store layout (or of a notes tree)',
  'file-or-folder': 'a folder where the layout has a file, or a file where it has a folder',
  'object-name': 'an anchored blob not named by its own id',
  'too-deep': 'a path deeper than the layout allows',
  'too-large': 'a file, a note or a note line over its size limit',
  unreadable:
    'an object git cannot read as what its tree says it is (missing, or not a commit, tree or blob)',
  format: 'a FORMAT file that does not say the store format this git-mem reads',
  config: 'a config.yaml that is not a YAML mapping',
  tombstone: 'a malformed tombstone',
  record: 'a record that does not parse, or whose id does not match its path',
  'record-field': 'a record field past the limit a local write keeps (`data.field` names it)',
  note: 'a note line that is not what git-mem writes (JSON with a record id, a verdict and a reason)',
  fsck: "an object git's own checks refuse as it is fetched (`fetch.fsckObjects`)",
  'too-many-commits': 'more new commits than one sync checks (50,000)',
  unsigned: 'a commit not signed by a trusted key, where `sync.require-signed` is set',
} as const;

export type ProblemKind = keyof typeof PROBLEMS;

/** One check's refusal: which check, and the line that says what is wrong. */
export interface Found {
  problem: ProblemKind;
  message: string;
}

export const found = (problem: ProblemKind, message: string): Found => ({ problem, message });
