import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { err } from '../errors.js';
import { git } from '../gitstore/git.js';
import { defineCommand } from './command.js';

export default defineCommand({
  command: 'merge-driver <base> <current> <other> [path]',
  describe: 'git merge driver for memory files checked out with export --dir (git runs it as %O %A %B %P)',
  builder: (y) =>
    y
      .positional('base', { type: 'string', describe: '%O: the merge base version' })
      .positional('current', { type: 'string', describe: '%A: ours; the result is written here' })
      .positional('other', { type: 'string', describe: '%B: theirs' })
      .positional('path', { type: 'string', describe: '%P: the path in the work tree' }),
  async run(a, ctx) {
    const { layoutRoot, mergeFiles } = await import('../merge/driver.js');
    const { blobProblem, nameProblem, pathProblem, showPath } = await import('../merge/validate.js');
    const { writeConfined } = await import('../merge/confine.js');
    const readBuf = (p: string) => {
      const f = resolve(ctx.cwd, p);
      if (!existsSync(f))
        throw err('E_INVALID_ARG', `merge-driver: cannot read ${p}`, 'git passes %O %A %B %P');
      return readFileSync(f);
    };
    const read = (p: string) => readBuf(p).toString('utf8');
    const current = resolve(ctx.cwd, String(a.current));
    const path = String(a.path ?? a.current).replace(/\\/g, '/');
    const { root, rel } = layoutRoot(path);
    // theirs is data this clone did not write: the one validator checks it before any merge
    const theirs = readBuf(String(a.other));
    if (/(^|\/)(memories|tombstones|attic)\//.test(path) || rel === 'FORMAT' || rel === 'config.yaml') {
      const bad =
        root.split('/').filter(Boolean).map(nameProblem).find(Boolean) ??
        pathProblem(rel) ??
        (theirs.toString('utf8').trim() ? blobProblem(rel, theirs) : null);
      // non-zero tells git the merge did not go through; %A is left as it was
      if (bad)
        throw err(
          'E_MERGE',
          `refusing the other side's ${showPath(path)}: ${bad.message}`,
          'resolve it by hand',
          {
            path,
            side: 'theirs',
            problem: bad.problem,
          },
        );
    }
    const r = mergeFiles(read(String(a.base)), read(String(a.current)), theirs.toString('utf8'), path);
    if (r.fallback) {
      // not a memory file (the attribute pattern matched something else): git's own text merge
      const m = await git(
        [
          'merge-file',
          '-L',
          'ours',
          '-L',
          'base',
          '-L',
          'theirs',
          current,
          resolve(ctx.cwd, String(a.base)),
          resolve(ctx.cwd, String(a.other)),
        ],
        {
          cwd: ctx.cwd,
          env: ctx.env,
          allowFail: true,
        },
      );
      return m.code === 0 ? 0 : 1;
    }
    if (r.text !== undefined) writeFileSync(current, r.text);
    for (const at of r.attic) {
      // inside the work tree (git runs drivers at its top), never through a link
      writeConfined(ctx.cwd, `${root}${at.path}`, at.text);
      // say whose version went to the attic: the clash goes to the later edit, which may be either side
      ctx.io.err(
        at.side === 'ours'
          ? `git-mem: kept the current version of ${path} (ours) in ${root}${at.path}; ${path} now holds the other version's text where they clash (git add it)\n`
          : `git-mem: kept the other version of ${path} (theirs) in ${root}${at.path}; ${path} keeps the current text where they clash (git add it)\n`,
      );
    }
    if (r.message) ctx.io.err(`git-mem: ${r.message}\n`);
    return r.conflict ? 1 : 0;
  },
});
