/**
 * The message editor, as git commit runs it: `git mem add` and `update` without content on a
 * terminal (a pseudo-terminal from util-linux `script`) open the editor git chooses (GIT_EDITOR,
 * core.editor, …); `#` lines are dropped, an empty text aborts with the store unchanged. The
 * editors are small scripts that write a known text. The parsing is also checked on its own.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { editTemplate, parseEdited } from '../src/cli/editor.js';
import { makeRepo, type TestRepo, tmpDir } from './helpers.js';

describe('parseEdited', () => {
  it('drops # lines and surrounding blank lines; the first line is the title', () => {
    expect(parseEdited('\n\nTitle  \n\n\nline 1\n# note\nline 2\n\n# end\n')).toEqual({
      title: 'Title',
      body: 'line 1\nline 2\n',
    });
    expect(parseEdited('Only a title\n# x\n')).toEqual({ title: 'Only a title', body: '' });
    expect(parseEdited('# all\n#  comments\n\n')).toBeNull();
    expect(parseEdited('')).toBeNull();
    // the template read back unedited is its title and body
    expect(parseEdited(editTemplate('T', 'b\n', ['tags: x']))).toEqual({ title: 'T', body: 'b\n' });
  });
});

let repo: TestRepo;
let bin: string;
beforeAll(async () => {
  repo = makeRepo({ commit: true });
  bin = tmpDir('gm-editor-');
  await repo.memJson(['add', '--title', 'First', '--content', 'x']);
});

/** An editor script that runs SH with the file as $1. */
function editor(name: string, sh: string): string {
  const p = join(bin, name);
  writeFileSync(p, `#!/bin/sh\n${sh}\n`);
  chmodSync(p, 0o755);
  return p;
}

/** `git …` on a pseudo-terminal, with no editor variable but those given. */
function onTTY(args: string[], env: NodeJS.ProcessEnv = {}) {
  const { GIT_EDITOR: _g, VISUAL: _v, EDITOR: _e, ...base } = repo.env;
  const q = (a: string) => `'${a.replace(/'/g, "'\\''")}'`;
  return spawnSync('script', ['-qec', ['git', ...args].map(q).join(' '), '/dev/null'], {
    cwd: repo.dir,
    env: { ...base, ...env },
    encoding: 'utf8',
  });
}

const tip = () => repo.git('rev-parse', '-q', '--verify', 'refs/memory').trim();

describe('the editor on a terminal', () => {
  it('add: GIT_EDITOR writes the title and body; # lines are dropped', async () => {
    const ed = editor('write.sh', `printf 'Edited title\\n\\nEdited body\\n# a comment\\n' > "$1"`);
    const r = onTTY(['mem', 'add', '--title', 'Draft', '--tags', 'x', '--json'], { GIT_EDITOR: ed });
    expect(r.status, r.stdout).toBe(0);
    const { id } = JSON.parse(r.stdout.slice(r.stdout.indexOf('{')));
    const m = await repo.memJson(['show', id]);
    expect(m).toMatchObject({ title: 'Edited title', body: 'Edited body\n', tags: ['x'] });
  });

  it('add: an emptied file, or comments only, aborts with E_INVALID_ARG and writes nothing', () => {
    const before = tip();
    for (const [n, sh] of [': > "$1"', `printf '# only\\n\\n' > "$1"`].entries()) {
      const ran = join(bin, `ran-${n}`);
      const ed = editor(`empty-${n}.sh`, `${sh}; : > '${ran}'`);
      const r = onTTY(['mem', 'add', '--title', 'Draft', '--json'], { GIT_EDITOR: ed });
      expect(existsSync(ran)).toBe(true);
      expect(r.status).toBe(2);
      expect(r.stdout).toMatch(/"code":"E_INVALID_ARG"/);
      expect(tip()).toBe(before);
    }
  });

  it('add without --title: the editor gives it; off a terminal the add wants one (E_INVALID_ARG, nothing written)', async () => {
    const ed = editor('titled.sh', `printf 'Title from the editor\\n\\nbody\\n' > "$1"`);
    const r = onTTY(['mem', 'add', '--json'], { GIT_EDITOR: ed });
    expect(r.status, r.stdout).toBe(0);
    const { id } = JSON.parse(r.stdout.slice(r.stdout.indexOf('{')));
    expect((await repo.memJson(['show', id])).title).toBe('Title from the editor');
    const before = tip();
    const off = await repo.mem(['add', '--content', 'no title', '--json']);
    expect(off.code).toBe(2);
    expect(JSON.parse(off.stdout).error).toMatchObject({ code: 'E_INVALID_ARG', field: 'title' });
    expect(tip()).toBe(before);
  });

  it("no editor set on a dumb terminal: one line naming the fix, not git's complaint beside it", () => {
    const before = tip();
    const r = onTTY(['mem', 'add', '--title', 'Draft'], { TERM: 'dumb' });
    expect(r.status).toBe(2);
    // the terminal's whole output (stdout and stderr both go to it) is our one line
    expect(r.stdout.trim().split(/\r?\n/)).toHaveLength(1);
    expect(r.stdout).toMatch(/^git-mem: error: /);
    expect(tip()).toBe(before);
  });

  it('core.editor is used as git uses it (git -c core.editor=…)', async () => {
    const ed = editor('core.sh', `printf 'From core.editor\\n\\nbody\\n' > "$1"`);
    const r = onTTY(['-c', `core.editor=${ed}`, 'mem', 'add', '--title', 'Draft', '--json']);
    expect(r.status, r.stdout).toBe(0);
    const { id } = JSON.parse(r.stdout.slice(r.stdout.indexOf('{')));
    expect((await repo.memJson(['show', id])).title).toBe('From core.editor');
  });

  it('update: the current title and body are edited; an empty text changes nothing', async () => {
    const { id } = await repo.memJson(['add', '--title', 'Old title', '--content', 'old body']);
    const ed = editor('sed.sh', `sed -i 's/^old body$/new body/' "$1"`);
    const r = onTTY(['mem', 'update', id, '--json'], { GIT_EDITOR: ed });
    expect(r.status, r.stdout).toBe(0);
    expect(await repo.memJson(['show', id])).toMatchObject({ title: 'Old title', body: 'new body\n' });
    const before = tip();
    const ran = join(bin, 'ran-update');
    const abort = onTTY(['mem', 'update', id, '--json'], {
      GIT_EDITOR: editor('empty2.sh', `: > "$1"; : > '${ran}'`),
    });
    expect(existsSync(ran)).toBe(true);
    expect(abort.status).toBe(2);
    expect(abort.stdout).toMatch(/"code":"E_INVALID_ARG"/);
    expect(tip()).toBe(before);
    // a field given: no editor (it would have emptied the text)
    expect(
      onTTY(['mem', 'update', id, '--tags', 'y'], { GIT_EDITOR: editor('empty3.sh', ': > "$1"') }).status,
    ).toBe(0);
  });
});
