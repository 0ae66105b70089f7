import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
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
    const read = (p: string) => {
      const f = resolve(ctx.cwd, p);
      if (!existsSync(f))
        throw err('E_INVALID_ARG', `merge-driver: cannot read ${p}`, 'git passes %O %A %B %P');
      return readFileSync(f, 'utf8');
    };
    const current = resolve(ctx.cwd, String(a.current));
    const path = String(a.path ?? a.current);
    const r = mergeFiles(read(String(a.base)), read(String(a.current)), read(String(a.other)), path);
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
    const { root } = layoutRoot(path.replace(/\\/g, '/'));
    for (const at of r.attic) {
      const f = join(ctx.cwd, root, at.path);
      mkdirSync(dirname(f), { recursive: true });
      writeFileSync(f, at.text);
      ctx.io.err(`git-mem: kept the other version of ${path} in ${root}${at.path} (git add it)\n`);
    }
    if (r.message) ctx.io.err(`git-mem: ${r.message}\n`);
    return r.conflict ? 1 : 0;
  },
});
