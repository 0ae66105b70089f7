import { err } from '../errors.js';
import {
  coerce,
  knownKey,
  readGlobalConfig,
  readLayer,
  readSharedConfig,
  refuseSharedPersonal,
  resolveConfig,
  validateKey,
  writeGlobalConfig,
} from '../gitstore/config.js';
import { ensureFormat } from '../gitstore/format.js';
import { git } from '../gitstore/git.js';
import { SHARED_CONFIG_PATH } from '../gitstore/store.js';
import { stringify } from '../model/yaml.js';
import { defineCommand } from './command.js';
import { emit, openStore, secretPolicy } from './context.js';

export default defineCommand({
  command: 'config <action> [key] [value]',
  describe: 'get, set or list settings (defaults < global < shared < local < flags)',
  builder: (y) =>
    y
      .positional('action', { choices: ['get', 'set', 'unset', 'list'] as const })
      .positional('key', { type: 'string' })
      .positional('value', { type: 'string' })
      .option('global', {
        type: 'boolean',
        describe: 'the personal file ~/.config/git-mem/config.yaml (get, list: that layer only)',
      })
      .option('local', {
        type: 'boolean',
        describe: 'this clone only, git config mem.* (get, list: that layer only)',
      })
      .option('shared', {
        type: 'boolean',
        describe: 'the team file inside refs/memory, a commit (get, list: that layer only)',
      }),
  async run(a, ctx) {
    const layers = [a.global, a.local, a.shared].filter(Boolean).length;
    if (layers > 1) throw err('E_INVALID_ARG', 'pass at most one of --global, --local, --shared');
    const action = String(a.action);
    const needsRepo = !a.global || action === 'list' || action === 'get';
    const store = needsRepo
      ? await openStore(ctx).catch((e) => (a.global ? undefined : Promise.reject(e)))
      : undefined;
    if ((action === 'list' || action === 'get') && layers) {
      // one layer: what it holds, as written there (resolved or not)
      const name = a.global ? 'global' : a.shared ? 'shared' : 'local';
      const vals = await readLayer(name, ctx.env, store);
      if (action === 'list') {
        emit(
          ctx,
          Object.entries(vals).map(([key, value]) => ({ key, value, origin: name })),
          () =>
            Object.entries(vals)
              .map(([k, v]) => `${k}=${v}  (${name})`)
              .join('\n'),
        );
        return;
      }
      if (!a.key)
        throw err('E_INVALID_ARG', 'config get needs a key', `git mem config list --${name} shows them`);
      const v = vals[String(a.key)];
      if (v === undefined)
        throw err(
          'E_NOT_FOUND',
          `no setting ${a.key} in the ${name} layer`,
          'git mem config get KEY shows the value in force',
        );
      emit(ctx, { key: a.key, value: v, origin: name }, () => String(v));
      return;
    }
    if (action === 'list' || action === 'get') {
      const res = await resolveConfig(ctx.env, store);
      // what the shared config says and is not applied, so the value in force is not a surprise
      const ignoredLine = (i: (typeof res.ignored)[number]) =>
        `${i.key}=${i.value}  (shared, ignored: ${i.reason})`;
      if (action === 'list') {
        emit(
          ctx,
          [
            ...Object.entries(res.values).map(([key, value]) => ({ key, value, origin: res.origin[key] })),
            ...res.ignored.map((i) => ({
              key: i.key,
              value: i.value,
              origin: 'shared',
              ignored: i.reason,
            })),
          ],
          () =>
            [
              ...Object.entries(res.values).map(([k, v]) => `${k}=${v}  (${res.origin[k]})`),
              ...res.ignored.map(ignoredLine),
            ].join('\n'),
        );
        return;
      }
      if (!a.key) throw err('E_INVALID_ARG', 'config get needs a key', 'git mem config list shows them');
      const key = String(a.key);
      const v = res.values[key];
      const ignored = res.ignored.find((i) => i.key === key);
      if (v === undefined) {
        if (ignored)
          throw err(
            'E_NOT_FOUND',
            `no setting ${key} in force: the shared config's ${key}=${ignored.value} is ignored (${ignored.reason})`,
            `set it yourself if you want it: git mem config set ${key} VALUE --global`,
            { key, ignored: { value: ignored.value, reason: ignored.reason } },
          );
        throw err('E_NOT_FOUND', `no setting ${a.key}`);
      }
      if (ignored) ctx.io.err(`git-mem: note: ${ignoredLine(ignored)}\n`);
      emit(
        ctx,
        {
          key,
          value: v,
          origin: res.origin[key],
          ...(ignored ? { ignored: { value: ignored.value, reason: ignored.reason } } : {}),
        },
        () => String(v),
      );
      return;
    }
    const key = String(a.key ?? '');
    validateKey(key);
    if (action === 'set') knownKey(key);
    if (action === 'set' && a.shared) refuseSharedPersonal(key);
    if (action === 'set' && a.value === undefined) throw err('E_INVALID_ARG', 'config set needs a value');
    const value = action === 'set' ? coerce(key, a.value) : undefined;
    if (a.global) {
      const g = readGlobalConfig(ctx.env);
      if (value === undefined) delete g[key];
      else g[key] = value;
      writeGlobalConfig(ctx.env, g);
    } else if (a.shared) {
      // secret-scan warn or off lets a value that looks like a secret through, as it does for add
      const allowSecret = await secretPolicy(ctx, store!, undefined, {
        [key]: value === undefined ? undefined : String(value),
      });
      await store!.write(async (tx) => {
        tx.allowSecret = allowSecret;
        await ensureFormat(tx);
        const cur = await readSharedConfig(store!, tx.base);
        // already so: no commit (sync would hand the team an empty one)
        if (JSON.stringify(cur[key]) === JSON.stringify(value)) return null;
        if (value === undefined) delete cur[key];
        else cur[key] = value;
        tx.put(SHARED_CONFIG_PATH, stringify(cur));
        return { message: `mem: config ${action} ${key}`, value: true };
      });
    } else {
      const args =
        value === undefined
          ? ['config', '--local', '--unset', `mem.${key}`]
          : ['config', '--local', `mem.${key}`, String(value)];
      await git(args, { cwd: store!.repo.cwd, env: store!.repo.env, allowFail: value === undefined });
    }
    const where = a.global ? 'global' : a.shared ? 'shared' : 'local';
    emit(ctx, { key, value: value ?? null, layer: where }, () =>
      value === undefined ? `unset ${key} (${where})` : `${key}=${value} (${where})`,
    );
  },
});
