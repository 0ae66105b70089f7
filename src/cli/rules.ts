import { err } from '../errors.js';
import { rulesFor } from '../search/rules.js';
import type { Argv } from './args.js';
import { type ArgsOf, defineCommand } from './command.js';
import { type Ctx, emit, list, maybeGlobalStore, openStore, settingsOf, teamStoresOf } from './context.js';
import { normalizeRepoPath } from './paths.js';

const builder = (y: Argv) =>
  y
    .positional('action', {
      choices: ['export', 'import'] as const,
      describe: 'export or import agent rule files',
    })
    .option('file', { type: 'string', describe: 'the file being edited' })
    // a boolean, so that `--no-global` (project rules only) is an option too
    .option('global', {
      type: 'boolean',
      describe: 'include the personal global store; --no-global: leave it out',
    })
    .option('stores', {
      type: 'boolean',
      default: true,
      describe: 'include the team stores (git mem store list); --no-stores: leave them out',
    })
    .option('to', {
      type: 'string',
      array: true,
      describe:
        'export: claude, agents, cursor, copilot, claude-rules or all (comma-separated; default: setting rules.targets, else the targets already exported)',
    })
    .option('from', {
      type: 'string',
      array: true,
      describe: 'import: claude, agents, cursor, copilot, claude-rules or all (default: every format)',
    })
    .option('dir', {
      type: 'string',
      describe: 'export/import: root directory of the agent files (default: the work tree)',
    })
    .option('check', {
      type: 'boolean',
      describe:
        'export: write nothing; exit 1 (naming the files) if any is out of date with the rule records',
    })
    .option('dry-run', { type: 'boolean', describe: 'import: show what would be imported, write nothing' })
    .option('allow-secret', {
      type: 'boolean',
      describe: 'import: store text even if it looks like a secret',
    });
type Args = ArgsOf<typeof builder>;

/**
 * `git mem rules [--file PATH]`: the rules in force for a file.
 * `git mem rules export [--to claude|agents|cursor|copilot|claude-rules|all] [--dir DIR] [--check]`: write them for every agent.
 * `git mem rules import [--from …] [--dir DIR] [--dry-run]`: read agents' rule files into rule records.
 */
export default defineCommand({
  command: 'rules [action]',
  describe:
    'the rules in force for a file; export them to CLAUDE.md, AGENTS.md, Cursor, Copilot, .claude/rules (--check: in sync?); import theirs',
  builder,
  async run(a, ctx) {
    if (a.action === 'export') return runExport(a, ctx);
    if (a.action === 'import') return runImport(a, ctx);
    for (const o of ['to', 'from', 'dir', 'check', 'dry-run'] as const) {
      if (a[o] !== undefined && a[o] !== false)
        throw err(
          'E_INVALID_ARG',
          `--${o} belongs to rules export/import`,
          `use git mem rules ${o === 'from' || o === 'dry-run' ? 'import' : 'export'} --${o} …`,
        );
    }
    const store = await openStore(ctx, { read: true });
    const file = a.file !== undefined ? await normalizeRepoPath(store, ctx, String(a.file)) : undefined;
    const global = a.global === false ? undefined : await maybeGlobalStore(ctx);
    const teams = a.stores === false ? [] : await teamStoresOf(ctx, store);
    const rules = await rulesFor(store, file, global, teams);
    emit(ctx, rules, () =>
      rules.length
        ? rules
            .map(
              (r) =>
                `${r.id.slice(0, 12)}  [${r.store}${r.matched ? ` ${r.matched}` : ''}] ${r.title}\n    ${r.body.trim().split('\n').join('\n    ')}`,
            )
            .join('\n')
        : `No rules${file ? ` for ${file}` : ''}. Add one with: git mem add --type rule --scope 'src/**/*.ts' --title "…" --content "…"`,
    );
  },
});

async function rootDir(
  ctx: Ctx,
  a: Args,
): Promise<{ store: Awaited<ReturnType<typeof openStore>>; dir: string }> {
  if (a.file !== undefined)
    throw err(
      'E_INVALID_ARG',
      `--file does not apply to rules ${a.action}`,
      'use --dir to choose where the agent files are',
    );
  const store = await openStore(ctx, { read: true });
  const { resolve } = await import('node:path');
  const dir = a.dir !== undefined ? resolve(ctx.cwd, String(a.dir)) : store.repo.workTree;
  if (!dir) throw err('E_INVALID_ARG', 'this repository has no work tree', 'pass --dir DIR');
  return { store, dir };
}

async function runExport(a: Args, ctx: Ctx): Promise<number> {
  if (a.from !== undefined || a['dry-run'])
    throw err(
      'E_INVALID_ARG',
      '--from and --dry-run belong to rules import',
      'use --check to see what export would change',
    );
  const { exportRules, parseTargets } = await import('../agents/rules-export.js');
  const named = a.to === undefined ? undefined : parseTargets(list(a.to));
  const { store, dir } = await rootDir(ctx, a);
  // without --to: the team's list (a target with nothing to write yet is still checked), else the files in use
  const set = named ? undefined : (await settingsOf(ctx, store))['rules.targets'];
  const targets = named ?? (typeof set === 'string' && set ? parseTargets([set]) : undefined);
  const res = await exportRules(store, { targets, dir, check: !!a.check });
  const changed = res.files.filter((f) => f.action !== 'unchanged');
  // the one command that brings the files in line: the same targets and folder as this check
  const fix = [
    'git mem rules export',
    ...(named ? [`--to ${named.join(',')}`] : []),
    ...(a.dir !== undefined ? [`--dir ${JSON.stringify(String(a.dir))}`] : []),
  ].join(' ');
  emit(ctx, { rules: res.rules, dir, check: !!a.check, targets: res.targets, files: res.files }, () => {
    const lines = res.files
      .filter((f) => f.action !== 'unchanged' || !a.check)
      .map((f) => `${a.check && f.action !== 'unchanged' ? `would be ${f.action}` : f.action}  ${f.path}`);
    const head = a.check
      ? changed.length
        ? `${changed.length} file${changed.length === 1 ? '' : 's'} out of date with the rule records; run ${fix}`
        : res.targets.length
          ? `Agent rule files are up to date (${res.targets.join(', ')}).`
          : 'No rules and no agent rule files from git-mem: nothing to check.'
      : `Exported ${res.rules} rule${res.rules === 1 ? '' : 's'}${res.targets.length ? ` to ${res.targets.join(', ')}` : ''}.`;
    return [head, ...lines].join('\n');
  });
  return a.check && changed.length ? 1 : 0;
}

async function runImport(a: Args, ctx: Ctx): Promise<number> {
  if (a.to !== undefined || a.check)
    throw err(
      'E_INVALID_ARG',
      '--to and --check belong to rules export',
      'use --from to choose formats to import',
    );
  const { parseTargets, TARGETS } = await import('../agents/rules-export.js');
  const { importRules } = await import('../agents/rules-import.js');
  const targets = a.from === undefined ? [...TARGETS] : parseTargets(list(a.from), TARGETS);
  const { store, dir } = await rootDir(ctx, a);
  const res = await importRules(store, {
    targets,
    dir,
    dryRun: !!a['dry-run'],
    allowSecret: !!a['allow-secret'],
  });
  emit(ctx, { ...res, dryRun: !!a['dry-run'] }, () => {
    const verb = a['dry-run'] ? 'Would import' : 'Imported';
    const lines = [
      `${verb} ${res.imported.length} rule${res.imported.length === 1 ? '' : 's'}${res.skipped.length ? `, skipped ${res.skipped.length}` : ''}.`,
    ];
    for (const r of res.imported)
      lines.push(
        `  + ${r.id ? `${r.id.slice(0, 12)} ` : ''}${r.title}  (${r.source}${r.scope.length ? `; ${r.scope.join(', ')}` : ''})`,
      );
    for (const s of res.skipped) lines.push(`  = ${s.title}  (${s.source}: ${s.reason})`);
    return lines.join('\n');
  });
  return 0;
}
