/**
 * The anchor tests' stores (test/ops/anchors*.test.ts): a template copy that
 * also commits (the tests edit, commit, rename and merge code between checks),
 * and the same shape on a repository that is no template's copy — a clone of a
 * bare remote, a repository with no commit yet — or a second store opened on
 * one, as a new process would open it. Every command runs in-process through
 * runOn on the store (test/support/template.ts).
 */
import { type Fresh, fresh, openOn, runOn, type Template } from './template.js';

export interface AnchorRepo extends Fresh {
  /** `git add -A` and a commit in the work tree: the new HEAD */
  commitAll: (msg?: string) => string;
  /**
   * Runs a git hook's operation (`git mem hook NAME ARGS…`) in-process on this store, as
   * the installed hook would after git's commit, merge or rebase: its stderr (the hook's lines).
   */
  hook: (name: 'post-commit' | 'post-merge' | 'post-rewrite', ...args: string[]) => Promise<string>;
  /**
   * Forgets the git configuration the store read (src/gitstore/store-config.ts
   * forgetSettings): after a `git config` in the test, the next command reads it afresh,
   * as a new process would.
   */
  reread: () => void;
}

function withRepo(f: Fresh): AnchorRepo {
  return Object.assign(f, {
    commitAll: (msg = 'commit') => {
      f.git('add', '-A');
      f.git('commit', '-q', '-m', msg);
      return f.git('rev-parse', 'HEAD').trim();
    },
    hook: async (name: string, ...args: string[]) => {
      const r = await runOn(f, ['hook', name, ...args], { json: false });
      if (r.exit !== 0) throw new Error(`git mem hook ${name} exited ${r.exit} (${r.code}): ${r.stderr}`);
      return r.stderr;
    },
    reread: () => f.store.forgetSettings(),
  });
}

/** A fresh copy of a template (test/support/template.ts fresh) that commits and runs hooks. */
export async function freshRepo(t: Template | Promise<Template>): Promise<AnchorRepo> {
  return withRepo(await fresh(t));
}

/**
 * A store opened in-process on an existing repository (made by makeRepo, a clone):
 * the shape of a template copy, with no template records or ids. Opened again on a
 * repository that already has one open, it is a second store that shares no memory
 * with the first, as a second process's.
 */
export async function storeOn(r: { dir: string; env: NodeJS.ProcessEnv }): Promise<AnchorRepo> {
  return withRepo(await openOn(r.dir, r.env));
}

/** test/*anchors-branches*: f.js, fourteen one-line functions (an anchor on 5-10 is fn5 to fn10). */
export const FN_SRC = `${Array.from(
  { length: 14 },
  (_, i) => `export function fn${i + 1}(x) { return x * ${i + 1} + ${(i * 7) % 5}; }`,
).join('\n')}\n`;

/** The verdicts the post-commit hook noted on a commit (refs/notes/memory), one per anchor. */
// biome-ignore lint/suspicious/noExplicitAny: untyped JSON, checked by the assertions that read it
export function notesOf(r: { git: (...a: string[]) => string }, rev = 'HEAD'): any[] {
  return r
    .git('notes', '--ref=memory', 'show', rev)
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}
