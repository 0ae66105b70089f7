/**
 * The message editor, as `git commit` runs it: `add` and `update` without content on a terminal
 * write a template to a file in the git dir (like COMMIT_EDITMSG), start the editor git would
 * choose (`git var GIT_EDITOR`: GIT_EDITOR, core.editor, VISUAL, EDITOR, the default) through the
 * shell, and read back the title (first line) and body; `#` lines are dropped, an empty text aborts.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../errors.js';
import { memDirForWrite, type Repo } from '../gitstore/repo.js';

export interface Edited {
  title: string;
  body: string;
}

/** The template: the title, a blank line, the body, then `#` lines (NOTES, how to abort). */
export function editTemplate(title: string, body: string, notes: string[] = []): string {
  const text = body.replace(/\n+$/, '');
  return [
    title,
    '',
    ...(text ? [text] : []),
    '',
    '# Write the title on the first line, then a blank line and the body.',
    "# Lines starting with '#' are dropped; an empty text aborts.",
    ...notes.map((n) => `# ${n}`),
    '',
  ].join('\n');
}

/** The edited text read back (pure): `#` lines dropped, surrounding blank lines trimmed; null when empty. */
export function parseEdited(text: string): Edited | null {
  const lines = text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .filter((l) => !l.startsWith('#'))
    .map((l) => l.replace(/\s+$/, ''));
  while (lines.length && !lines[0]) lines.shift();
  while (lines.length && !lines[lines.length - 1]) lines.pop();
  if (!lines.length) return null;
  const [title, ...rest] = lines;
  while (rest.length && !rest[0]) rest.shift();
  return { title: title.trim(), body: rest.length ? `${rest.join('\n')}\n` : '' };
}

/** The editor git would start (`git var GIT_EDITOR` reads GIT_EDITOR, core.editor, VISUAL, EDITOR). */
function gitEditor(repo: Repo, env: NodeJS.ProcessEnv): string {
  try {
    // git's own complaint ("Terminal is dumb, but EDITOR unset") is not printed beside ours
    return execFileSync('git', ['var', 'GIT_EDITOR'], {
      cwd: repo.cwd,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch {
    throw err(
      'E_INVALID_ARG',
      'no editor is set',
      'set GIT_EDITOR, core.editor or EDITOR, or pass --content',
    );
  }
}

/** Opens TEMPLATE in the user's editor on a terminal and returns what was written (an empty text aborts). */
export async function editMessage(repo: Repo, env: NodeJS.ProcessEnv, template: string): Promise<Edited> {
  const editor = gitEditor(repo, env);
  const file = join(memDirForWrite(repo, 'tmp'), 'MEM_EDITMSG');
  writeFileSync(file, template);
  try {
    // ':' is git's "no editor" (the template as written)
    if (editor !== ':') {
      const code = await new Promise<number | null>((resolve, reject) => {
        const child = spawn('sh', ['-c', `${editor} "$@"`, editor, file], {
          cwd: repo.workTree ?? repo.cwd,
          env,
          stdio: 'inherit',
        });
        child.on('error', reject);
        child.on('exit', (c) => resolve(c));
      });
      if (code !== 0)
        throw err(
          'E_INVALID_ARG',
          `the editor "${editor}" failed (exit ${code}); nothing was written`,
          'fix GIT_EDITOR or core.editor, or pass --content',
        );
    }
    const edited = parseEdited(readFileSync(file, 'utf8'));
    if (!edited?.title)
      throw err('E_INVALID_ARG', 'aborting: the message is empty', 'write a title on the first line');
    return edited;
  } finally {
    rmSync(file, { force: true });
  }
}
