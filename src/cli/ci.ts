import { err } from '../errors.js';
import { defineCommand } from './command.js';
import { openStore } from './context.js';

const FORMATS = ['github', 'markdown', 'sarif', 'junit', 'json'];
const FAIL_ON = ['stale', 'changed', 'never'] as const;
type FailOn = (typeof FAIL_ON)[number];
const isFailOn = (s: string): s is FailOn => (FAIL_ON as readonly string[]).includes(s);

export default defineCommand({
  command: 'ci',
  describe:
    'report the memories whose anchors a commit range touches (for pull requests): github, markdown, sarif, junit, json',
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
        describe: 'github | markdown | sarif | junit | json (default github)',
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
    const store = await openStore(ctx);
    if (!(await store.tip())) {
      ctx.io.err(
        "git-mem: warning: no refs/memory in this clone; fetch it first: git fetch origin '+refs/mem/memory:refs/memory'\n",
      );
    }
    const { runCi } = await import('../anchors/ci.js');
    const { formatCi } = await import('../anchors/ci-format.js');
    const rep = await runCi(store, { base: String(a.base), head: a.head, failOn });
    const text = formatCi(rep, format as 'json');
    if (a.out) {
      const { writeFileSync } = await import('node:fs');
      const { resolve } = await import('node:path');
      writeFileSync(resolve(ctx.cwd, String(a.out)), text);
    } else ctx.io.out(text);
    return rep.failed ? 1 : 0;
  },
});
