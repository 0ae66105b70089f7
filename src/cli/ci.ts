import { err } from '../errors.js';
import { terminalText } from '../safety/terminal.js';
import { defineCommand } from './command.js';
import { openStore } from './context.js';

// comment: the body `--comment` posts (src/ci/comment.ts), for other CI systems or a look first
const FORMATS = ['github', 'markdown', 'sarif', 'junit', 'json', 'comment'];
const FAIL_ON = ['stale', 'changed', 'never'] as const;
type FailOn = (typeof FAIL_ON)[number];
const isFailOn = (s: string): s is FailOn => (FAIL_ON as readonly string[]).includes(s);

export default defineCommand({
  command: 'ci',
  describe:
    'report the memories whose anchors a commit range touches (for pull requests): github, markdown, sarif, junit, json; keep one PR comment up to date',
  builder: (y) =>
    y
      .option('base', {
        type: 'string',
        demandOption: true,
        describe: 'base revision of the range (e.g. origin/main)',
      })
      .option('head', { type: 'string', describe: 'head revision (default HEAD)' })
      .option('format', {
        type: 'string',
        describe: 'github | markdown | sarif | junit | json | comment (default github)',
      })
      .option('comment', {
        type: 'string',
        describe:
          'github | gitlab: create or edit the one git-mem comment on the pull/merge request (token from GITHUB_TOKEN or GITLAB_TOKEN)',
      })
      .option('fail-on', { type: 'string', describe: 'stale (default) | changed | never: when to exit 1' })
      .option('out', {
        alias: 'o',
        type: 'string',
        describe: 'write the report to a file instead of stdout',
      }),
  async run(a, ctx) {
    const format = a.format ?? (ctx.json ? 'json' : 'github');
    if (!FORMATS.includes(format))
      throw err('E_INVALID_ARG', `unknown --format "${format}"`, `use one of: ${FORMATS.join(', ')}`);
    const failOn = a['fail-on'] ?? 'stale';
    if (!isFailOn(failOn))
      throw err('E_INVALID_ARG', `unknown --fail-on "${failOn}"`, `use one of: ${FAIL_ON.join(', ')}`);
    const post = a.comment === undefined ? undefined : await import('../ci/post.js');
    if (post && !post.isProvider(String(a.comment)))
      throw err(
        'E_INVALID_ARG',
        `unknown --comment "${a.comment}"`,
        `use one of: ${post.PROVIDERS.join(', ')}`,
      );
    // a missing token or pull request number fails before the work, not after it
    const target = post?.commentTarget(a.comment as 'github', ctx.env);
    const store = await openStore(ctx);
    const noStore = !(await store.tip());
    if (noStore) {
      ctx.io.err(
        "git-mem: warning: no refs/memory in this clone; fetch it first: git fetch origin '+refs/mem/memory:refs/memory'\n",
      );
    }
    const { runCi } = await import('../anchors/ci.js');
    const { formatCi, repositoryUri } = await import('../anchors/ci-format.js');
    const rep = await runCi(store, { base: String(a.base), head: a.head, failOn });
    if (format === 'sarif') {
      // the run names the repository code scanning ties it to (the CI's, else origin's address)
      const { git } = await import('../gitstore/git.js');
      const o = await git(['config', '--get', 'remote.origin.url'], {
        cwd: store.repo.cwd,
        env: store.repo.env,
        allowFail: true,
      });
      rep.repository = repositoryUri(ctx.env, o.code === 0 ? o.stdout.toString() : undefined);
    }
    const body = () => import('../ci/comment.js').then((m) => m.buildComment(store, rep, { noStore }));
    const text = format === 'comment' ? await body() : formatCi(rep, format as 'json');
    if (a.out) {
      const { writeFileSync } = await import('node:fs');
      const { resolve } = await import('node:path');
      writeFileSync(resolve(ctx.cwd, String(a.out)), text);
    } else ctx.io.out(format === 'json' || format === 'sarif' ? text : terminalText(text));
    if (post && target) {
      // after the report is out: a comment that cannot be posted still leaves the annotations
      const r = await post.upsertComment(target, format === 'comment' ? text : await body());
      const where = `the comment on ${r.what}${r.url ? `: ${r.url}` : ` (id ${r.id})`}`;
      ctx.io.err(
        `git-mem: ${r.action === 'unchanged' ? `${where} is up to date` : `${r.action} ${where}`}\n`,
      );
    }
    return rep.failed ? 1 : 0;
  },
});
