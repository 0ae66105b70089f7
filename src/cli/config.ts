import { ensureFormat } from '../commands/memory.js';
import { err } from '../errors.js';
import {
  coerce,
  knownKey,
  readGlobalConfig,
  readLayer,
  readSharedConfig,
  resolveConfig,
  validateKey,
  writeGlobalConfig,
} from '../gitstore/config.js';
import { git } from '../gitstore/git.js';
import { SHARED_CONFIG_PATH } from '../gitstore/store.js';
import { stringify } from '../model/yaml.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';

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
      if (action === 'list') {
        emit(
          ctx,
          Object.entries(res.values).map(([key, value]) => ({ key, value, origin: res.origin[key] })),
          () =>
            Object.entries(res.values)
              .map(([k, v]) => `${k}=${v}  (${res.origin[k]})`)
              .join('\n'),
        );
        return;
      }
      if (!a.key) throw err('E_INVALID_ARG', 'config get needs a key', 'git mem config list shows them');
      const v = res.values[String(a.key)];
      if (v === undefined) throw err('E_NOT_FOUND', `no setting ${a.key}`);
      emit(ctx, { key: a.key, value: v, origin: res.origin[String(a.key)] }, () => String(v));
      return;
    }
    const key = String(a.key ?? '');
    validateKey(key);
    if (action === 'set') knownKey(key);
    if (action === 'set' && a.value === undefined) throw err('E_INVALID_ARG', 'config set needs a value');
    const value = action === 'set' ? coerce(key, a.value) : undefined;
    if (a.global) {
      const g = readGlobalConfig(ctx.env);
      if (value === undefined) delete g[key];
      else g[key] = value;
      writeGlobalConfig(ctx.env, g);
    } else if (a.shared) {
      await store!.write(async (tx) => {
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
