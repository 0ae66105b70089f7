import type { BadRecord } from '../gitstore/catalog.js';
import { loadCatalogCache } from '../gitstore/catalog-cache.js';
import { layer, readSharedConfigFile } from '../gitstore/config.js';
import { git } from '../gitstore/git.js';
import { FORMAT_PATH, FORMAT_VERSION, type Store } from '../gitstore/store.js';
import { idFromPath, isExpired } from '../model/record.js';
import { parse } from '../model/yaml.js';
import { defineCommand } from './command.js';
import { adoptForRead, emit, openStore } from './context.js';

interface Finding {
  level: 'ok' | 'warn' | 'error';
  check: string;
  message: string;
  fix?: string;
  /** check 'limits': the record and its field that break a limit of a write */
  id?: string;
  field?: string;
  /** checks 'tree' and 'limits': the path, and the check a sync of this store would be refused by (docs/sync.md) */
  path?: string;
  problem?: string;
}

export default defineCommand({
  command: 'doctor',
  describe: 'check the ref, the format and every record; say how to mend',
  builder: (y) => y.option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global });
    const f: Finding[] = [];
    let tip: string | null;
    try {
      await store.tip();
    } catch (e) {
      if ((e as { code?: string }).code !== 'E_GIT') throw e;
      // the ref names a blob or a tree: the last commit this clone's catalog saw, when it is still there
      const seen = loadCatalogCache(store.repo, store.ref)?.tip;
      const good = seen ? (await store.catFile.read(seen))?.type === 'commit' : false;
      f.push({
        level: 'error',
        check: 'ref',
        message: (e as Error).message,
        fix: good
          ? `point it back at the last commit git-mem read: git --git-dir=${store.repo.gitDir} update-ref ${store.ref} ${seen}`
          : `point it at a memory commit (git --git-dir=${store.repo.gitDir} log --all --format='%H %s' --grep '^mem:' lists them), or remove it: git --git-dir=${store.repo.gitDir} update-ref -d ${store.ref}`,
      });
      emit(ctx, { ok: false, findings: f }, () => report(f));
      return 1;
    }
    const adopted = await adoptForRead(ctx, store, a.global);
    tip = await store.tip();
    if (!tip) {
      f.push({
        level: 'error',
        check: 'ref',
        message: `${store.ref} does not exist`,
        // a teammate's clone: the team's memory is on the remote, not to be started afresh
        fix:
          adopted.action === 'fetched'
            ? `run git mem pull: ${adopted.remote} has memory`
            : adopted.action === 'failed'
              ? `run git mem pull once ${adopted.remote} is reachable (or git mem init for a store of this clone's own)`
              : 'run git mem init',
      });
    } else {
      f.push({ level: 'ok', check: 'ref', message: `${store.ref} at ${tip.slice(0, 12)}` });
      await formatFindings(store, tip, f);
      const cat = await store.catalog();
      for (const b of cat.bad) {
        f.push({
          level: 'error',
          check: 'record',
          message: `${b.path}: ${b.error}`,
          // the full id: a prefix may name another, healthy memory
          fix: idFromPath(b.path)
            ? `inspect with git cat-file -p ${b.oid.slice(0, 12)}; remove it with git mem rm ${idFromPath(b.path)} (re-add what it said)`
            : `inspect with git cat-file -p ${b.oid.slice(0, 12)}; remove it from ${store.ref}`,
        });
      }
      f.push({
        level: cat.bad.length ? 'warn' : 'ok',
        check: 'records',
        message: `${cat.size} record${cat.size === 1 ? ' parses' : 's parse'}, ${cat.bad.length} malformed`,
      });
      const expired = [...cat.entries.values()].filter((e) => isExpired(e)).length;
      if (expired)
        f.push({
          level: 'warn',
          check: 'expiry',
          message: `${expired} expired record(s)`,
          fix: 'run git mem prune',
        });
      await treeFindings(store, tip, cat.bad, a.global, f);
    }
    const tmp = await git(['for-each-ref', '--format=%(refname)', 'refs/mem-tmp/'], {
      cwd: store.repo.cwd,
      env: store.repo.env,
      allowFail: true,
    });
    const leftovers = tmp.stdout.toString().split('\n').filter(Boolean);
    if (leftovers.length) {
      f.push({
        level: 'warn',
        check: 'tmp-refs',
        message: `${leftovers.length} leftover temporary ref(s) from interrupted writes`,
        fix: `git update-ref -d ${leftovers[0]}`,
      });
    }
    const errors = f.filter((x) => x.level === 'error').length;
    emit(ctx, { ok: errors === 0, findings: f }, () => report(f));
    return errors ? 1 : 0;
  },
});

/** The FORMAT file and the team's settings (config.yaml) at `tip`. */
async function formatFindings(store: Store, tip: string, f: Finding[]): Promise<void> {
  const fmt = await store.readPath(tip, FORMAT_PATH);
  let version = Number.NaN;
  try {
    version = Number((parse(fmt?.toString('utf8') ?? '') as { format?: number })?.format);
  } catch {}
  if (!fmt)
    f.push({ level: 'error', check: 'format', message: 'FORMAT file missing', fix: 'run git mem init' });
  else if (!(version >= 1))
    f.push({
      level: 'error',
      check: 'format',
      message: 'FORMAT file unreadable',
      fix: 'run git mem init: it writes FORMAT again when every record reads as format 1',
    });
  else if (version > FORMAT_VERSION)
    f.push({
      level: 'error',
      check: 'format',
      message: `format ${version} is newer than this git-mem (${FORMAT_VERSION})`,
      fix: 'upgrade git-mem',
    });
  else f.push({ level: 'ok', check: 'format', message: `format ${version}` });
  // the team's settings: a file that does not read, or values this version does not apply
  const shared = await readSharedConfigFile(store, tip);
  if (shared.problem)
    f.push({
      level: 'error',
      check: 'config',
      message: `config.yaml does not read as settings (${shared.problem}): none of the team's settings apply`,
      fix: 'rewrite it: git mem config set KEY VALUE --shared',
    });
  else {
    const { warnings, ignored } = layer([['shared', shared.values]]);
    for (const w of warnings)
      f.push({ level: 'warn', check: 'config', message: w.replace(/^git-mem: warning: /, '') });
    // a personal setting in the team file: never applied (src/gitstore/config.ts PERSONAL)
    const personal = ignored.filter((i) => i.personal);
    for (const i of personal)
      f.push({
        level: 'warn',
        check: 'config',
        message: `config.yaml sets ${i.key}, which is not applied: ${i.reason}`,
        fix: `remove it for the team: git mem config unset ${i.key} --shared`,
      });
    if (!warnings.length && !personal.length)
      f.push({ level: 'ok', check: 'config', message: 'the shared settings read' });
  }
}

/**
 * The boundary validator: names, modes, layout, depth (junk anywhere included), sizes, and every
 * record against the limits a local write and a sync hold it to; then the literal scopes.
 */
async function treeFindings(
  store: Store,
  tip: string,
  malformed: readonly BadRecord[],
  global: boolean | undefined,
  f: Finding[],
): Promise<void> {
  // the boundary validator: names, modes, layout, depth (junk anywhere included), sizes, and
  // every record against the limits a local write and a sync hold it to (src/model/schema.ts):
  // a record taken in before those limits applied is named here, with its field
  const [{ showPath }, { commitOfPath, validateTree }] = await Promise.all([
    import('../merge/validate.js'),
    import('../merge/validate-tree.js'),
  ]);
  const bad = new Set(malformed.map((b) => b.path));
  const problems = (await validateTree(store, tip, { limit: 100 + bad.size })).filter(
    (p) => !bad.has(p.path),
  );
  let limits = 0;
  for (const p of problems) {
    const commit = await commitOfPath(store, tip, p.path);
    const id = idFromPath(p.path);
    if (p.kind === 'record' && id) {
      limits++;
      for (const x of p.fields ?? [{ field: '', message: p.message }])
        f.push({
          level: 'error',
          check: 'limits',
          message: `${id}${x.field ? ` ${x.field}` : ''}: ${x.message}`,
          id,
          ...(x.field ? { field: x.field } : {}),
          path: p.path,
          problem: p.problem,
          fix: `written by commit ${commit.slice(0, 12)}; other clones refuse to sync while it is there: correct it (git mem update ${id}) or remove it (git mem rm ${id})`,
        });
      continue;
    }
    f.push({
      level: 'error',
      check: 'tree',
      message: `${showPath(p.path)}: ${p.message}`,
      path: p.path,
      problem: p.problem,
      fix: `added by commit ${commit.slice(0, 12)}; remove it from ${store.ref} (other clones refuse to sync a store holding it)`,
    });
  }
  if (problems.length === limits)
    f.push({ level: 'ok', check: 'tree', message: 'every path fits the store layout' });
  if (!limits)
    f.push({ level: 'ok', check: 'limits', message: 'every record keeps within the limits of a write' });
  // literal scope entries that name no file of HEAD: a rule that applies nowhere
  const head = global ? null : await (await import('../anchors/gitio.js')).revParseVia(store, 'HEAD');
  if (head) {
    const { judgeScopes } = await import('../anchors/scopes.js');
    const { lost } = await judgeScopes(store, tip, head, null);
    for (const x of lost)
      f.push({
        level: 'warn',
        check: 'scope',
        message: `${x.id} scope ${x.path} matches no file at HEAD: the memory applies nowhere`,
        id: x.id,
        fix: `point it at the file now (git mem update ${x.id} --scope …), or run git mem check --since REV from before the rename`,
      });
    if (!lost.length) f.push({ level: 'ok', check: 'scope', message: 'every literal scope names a file' });
  }
}

function report(f: Finding[]): string {
  return f
    .map(
      (x) =>
        `${x.level === 'ok' ? 'ok   ' : x.level === 'warn' ? 'warn ' : 'ERROR'} ${x.check}: ${x.message}${x.fix ? `\n      fix: ${x.fix}` : ''}`,
    )
    .join('\n');
}
