/**
 * `git mem init --merge-driver`: registers the merge driver in .git/config
 * (local: git never clones it, and forges ignore it, so the in-process merge
 * of `git mem sync` stays the real one) and marks the memory files in
 * .gitattributes (committed with the project, so every clone that registers
 * the driver uses it).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { git } from '../gitstore/git.js';
import type { Repo } from '../gitstore/repo.js';

const DRIVER_NAME = 'git-mem';
const DRIVER_COMMAND = 'git mem merge-driver %O %A %B %P';
const ATTRIBUTE_LINES = [
  '# git-mem: memory files checked out with `git mem export --dir` merge record by record',
  `**/memories/*/*.md merge=${DRIVER_NAME}`,
  `**/tombstones/*/*.yaml merge=${DRIVER_NAME}`,
];

export interface DriverSetup {
  config: string;
  gitattributes: string;
  addedLines: number;
}

export async function registerMergeDriver(repo: Repo, command = DRIVER_COMMAND): Promise<DriverSetup> {
  if (!repo.workTree) {
    throw err(
      'E_INVALID_ARG',
      'a bare repository has no work tree to check memory files out into',
      'run it in a clone with a work tree',
    );
  }
  const o = { cwd: repo.cwd, env: repo.env };
  await git(['config', '--local', `merge.${DRIVER_NAME}.name`, 'git-mem record-by-record memory merge'], o);
  await git(['config', '--local', `merge.${DRIVER_NAME}.driver`, command], o);
  const file = join(repo.workTree, '.gitattributes');
  const old = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const have = new Set(old.split('\n').map((l) => l.trim()));
  const add = ATTRIBUTE_LINES.filter((l) => !have.has(l));
  // the comment alone is not worth adding when the rules are there already
  const rules = add.filter((l) => !l.startsWith('#'));
  if (rules.length) writeFileSync(file, `${old}${old && !old.endsWith('\n') ? '\n' : ''}${add.join('\n')}\n`);
  return {
    config: `merge.${DRIVER_NAME}.driver=${command}`,
    gitattributes: file,
    addedLines: rules.length ? add.length : 0,
  };
}
