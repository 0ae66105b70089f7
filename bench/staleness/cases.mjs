// Constructed cases on real code: commits written into a temporary bare clone (shared objects)
// with plumbing only (a temporary index, hash-object, write-tree, commit-tree, apply --cached).
//   rename  — a file renamed (a blank line added at its top), one anchored line edited
//   move    — an anchored block cut from its file and appended to another file
//   squash  — a feature series of first-parent commits squashed into one commit on its base;
//             the anchors were made on an original commit in the middle of the series
//   rebase  — the same series replayed commit by commit onto an upstream commit that added a
//             file and a blank line at the top of every anchored file (new ids, shifted lines)
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { git } from './git.mjs';
import { lineAnchors, sourceFiles, symbolAnchors } from './sample.mjs';

const ENV = {
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
  GIT_AUTHOR_DATE: '2026-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2026-01-01T00:00:00Z',
};

export function scratchClone(gitDir) {
  const dir = mkdtempSync(join(tmpdir(), 'gm-stale-cases-'));
  execFileSync('git', ['clone', '-q', '--bare', '--shared', gitDir, join(dir, 'repo.git')], { stdio: 'pipe' });
  return { dir, gitDir: join(dir, 'repo.git'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** A commit of `base`'s tree with `changes` (path → new text, or null to delete) on `parents`. */
export function commitWith(gitDir, tmp, base, changes, parents, msg) {
  const env = { ...process.env, ...ENV, GIT_INDEX_FILE: join(tmp, 'index'), GIT_WORK_TREE: tmp };
  git(gitDir, ['read-tree', base], { env });
  for (const [path, text] of changes) {
    if (text === null) git(gitDir, ['update-index', '--force-remove', '--', path], { env });
    else {
      const blob = git(gitDir, ['hash-object', '-w', '--stdin'], { env, input: text }).trim();
      git(gitDir, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { env });
    }
  }
  const tree = git(gitDir, ['write-tree'], { env }).trim();
  return git(gitDir, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p]), '-m', msg], { env }).trim();
}

const text = (lines) => `${lines.join('\n')}\n`;

/**
 * The cases of one repository: [{group, base, target, anchors}] in the scratch clone.
 * `fp` is the first-parent list (oldest first), `iA` the index of the base commit A.
 */
export function buildCases(rd, repo, fp, iA, rand, sizes, tmp) {
  const cases = [];
  const A = fp[iA];
  const files = sourceFiles(rd, repo, A, fp[Math.min(fp.length - 1, iA + 200)]);
  const gd = rd.gitDir;

  // rename: anchors in one file; the file renamed with a blank first line; one anchor edited
  {
    const seed = lineAnchors(rd, repo, A, null, rand, 1, files)[0];
    if (seed) {
      const f = seed.path;
      const more = lineAnchors(rd, repo, A, null, rand, 40, { srcs: [f], changed: [] }).filter((a) => a.lines[0] !== seed.lines[0]);
      const anchors = [seed, ...more.slice(0, sizes.rename - 1)];
      const lines = [...rd.file(A, f)];
      const edited = anchors[anchors.length - 1];
      if (anchors.length > 1) {
        const mid = edited.lines[0] - 1 + Math.floor((edited.lines[1] - edited.lines[0]) / 2);
        lines[mid] = `${lines[mid]} x`;
      }
      const slash = f.lastIndexOf('/');
      const to = `${f.slice(0, slash + 1)}renamed_${f.slice(slash + 1)}`;
      const B = commitWith(gd, tmp, A, new Map([[f, null], [to, text(['', ...lines])]]), [A], 'bench: rename');
      cases.push({ group: 'rename', base: A, target: B, anchors });
    }
  }

  // move: one anchored block cut from its file and appended to another source file
  {
    const cand = lineAnchors(rd, repo, A, null, rand, 3, files);
    const moved = cand[0];
    const g = files.srcs.filter((p) => p !== moved?.path)[Math.floor(rand() * Math.max(1, files.srcs.length - 1))];
    if (moved && g) {
      const others = lineAnchors(rd, repo, A, null, rand, 40, { srcs: [moved.path], changed: [] }).filter(
        (a) => a.lines[1] < moved.lines[0] || a.lines[0] > moved.lines[1],
      );
      const inG = lineAnchors(rd, repo, A, null, rand, 1, { srcs: [g], changed: [] });
      const anchors = [moved, ...others.slice(0, sizes.move - 2), ...inG];
      const fl = rd.file(A, moved.path);
      const rest = [...fl.slice(0, moved.lines[0] - 1), ...fl.slice(moved.lines[1])];
      const gl = [...rd.file(A, g), '', ...moved.text];
      const B = commitWith(gd, tmp, A, new Map([[moved.path, text(rest)], [g, text(gl)]]), [A], 'bench: move a block');
      cases.push({ group: 'move', base: A, target: B, anchors });
    }
  }

  // squash and rebase of the series A+1 .. A+10, anchors made at A+5 (an original commit)
  if (iA + 10 < fp.length) {
    const X = fp[iA + 5];
    const last = fp[iA + 10];
    const fx = sourceFiles(rd, repo, X, last);
    const anchors = [
      ...lineAnchors(rd, repo, X, last, rand, sizes.series, fx),
      ...symbolAnchors(rd, repo, X, last, rand, sizes.seriesSymbols, fx),
    ];
    const squash = git(gd, ['commit-tree', `${last}^{tree}`, '-p', A, '-m', 'bench: squash'], { env: { ...process.env, ...ENV } }).trim();
    cases.push({ group: 'squash', base: X, target: squash, anchors });

    // upstream: a new file and a blank line at the top of every anchored file (as it is at A)
    const up = new Map([['UPSTREAM_BENCH.md', 'upstream change\n']]);
    for (const p of new Set(anchors.map((a) => a.path))) {
      const l = rd.file(A, p);
      if (l) up.set(p, text(['', ...l]));
    }
    let prev = commitWith(gd, tmp, A, up, [A], 'bench: upstream');
    let ok = true;
    for (let i = iA + 1; i <= iA + 10 && ok; i++) {
      const c = fp[i];
      const env = { ...process.env, ...ENV, GIT_INDEX_FILE: join(tmp, 'index'), GIT_WORK_TREE: tmp };
      git(gd, ['read-tree', prev], { env });
      const patch = git(gd, ['diff', '--binary', '--no-color', '--no-ext-diff', `${c}^1`, c]);
      try {
        if (patch.trim()) git(gd, ['apply', '--cached', '-C1', '--allow-empty'], { env, input: patch });
      } catch {
        ok = false;
        break;
      }
      const tree = git(gd, ['write-tree'], { env }).trim();
      prev = git(gd, ['commit-tree', tree, '-p', prev, '-m', `bench: rebased ${c.slice(0, 12)}`], { env }).trim();
    }
    if (ok) cases.push({ group: 'rebase', base: X, target: prev, anchors });
    else console.error(`${repo.name}: the rebase did not apply cleanly; the rebase case is left out`);
  }
  return cases;
}
