/**
 * `git mem models <list|pull|status>`: local embedding models and the state
 * of the configured provider. `pull` is the only command that downloads
 * anything (remote model downloads are otherwise off).
 */
import { err, isGitMemError } from '../errors.js';
import { type ResolvedConfig, resolveConfig } from '../gitstore/config.js';
import type { Store } from '../gitstore/store.js';
import { defineCommand } from './command.js';
import { type Ctx, emit, openStore } from './context.js';

async function config(ctx: Ctx): Promise<{ res: ResolvedConfig; store?: Store }> {
  const store = await openStore(ctx).catch(() => undefined);
  return { res: await resolveConfig(ctx.env, store), store };
}

const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;

export default defineCommand({
  command: 'models <action> [model]',
  describe: 'embedding models: list local ones, pull one (the only download), show the provider status',
  builder: (y) =>
    y
      .positional('action', {
        choices: ['list', 'pull', 'status'] as const,
        describe: 'list | pull | status',
      })
      .positional('model', {
        type: 'string',
        describe: 'pull: model id (owner/name); default Xenova/all-MiniLM-L6-v2',
      })
      .option('dtype', { type: 'string', describe: 'pull: weights variant (fp32, q8, fp16, …)' })
      .option('host', {
        type: 'string',
        describe: 'pull: model hub URL (default embedding-model-host, HF_ENDPOINT, huggingface.co)',
      })
      .option('timeout', { type: 'number', describe: 'pull: give up after this many seconds (default 600)' })
      .option('check', { type: 'boolean', describe: 'status: embed a probe text and report the time' }),
  async run(a, ctx) {
    const embed = await import('../search/embed/index.js');
    const action = String(a.action);
    if (action === 'list') {
      const { listModels } = await import('../search/embed/models.js');
      const models = listModels(ctx.env);
      emit(ctx, models, () =>
        models.length
          ? models
              .map((m) =>
                m.problem
                  ? `${m.name}  (unusable: ${m.problem})`
                  : `${m.name}  ${m.modelType} ${m.dimension}-d ${m.dtype}  ${mib(m.bytes)}  ${m.dir}`,
              )
              .join('\n')
          : `no models in ${embed.modelsDir(ctx.env)} (git mem models pull downloads one)`,
      );
      return;
    }
    if (action === 'pull') {
      const { pullModel } = await import('../search/embed/models.js');
      const { res } = await config(ctx);
      const model = String(a.model ?? res.values['embedding-model'] ?? embed.DEFAULT_LOCAL_MODEL);
      if (a.timeout !== undefined && !(Number(a.timeout) > 0))
        throw err('E_INVALID_ARG', '--timeout must be a positive number of seconds');
      const host = a.host ?? (res.values['embedding-model-host'] as string | undefined);
      const info = await pullModel(model, ctx.env, {
        host: host === undefined ? undefined : String(host),
        dtype: a.dtype === undefined ? undefined : String(a.dtype),
        timeoutMs: a.timeout === undefined ? undefined : Number(a.timeout) * 1000,
        onProgress: (m) => {
          if (!ctx.json) ctx.io.err(`${m}\n`);
        },
      });
      emit(
        ctx,
        { model, dir: info.dir, dimension: info.dimension, dtype: info.dtype, modelType: info.modelType },
        () =>
          [
            `pulled ${model} (${info.modelType}, ${info.dimension}-d, ${info.dtype}) into ${info.dir}`,
            'use it: git mem config set embedding-provider local',
            model === embed.DEFAULT_LOCAL_MODEL ? '' : `        git mem config set embedding-model ${model}`,
          ]
            .filter(Boolean)
            .join('\n'),
      );
      return;
    }
    // status
    const { res, store } = await config(ctx);
    const settings: Record<string, { value: unknown; origin: string }> = {};
    for (const k of embed.SETTING_KEYS) {
      if (res.values[k] !== undefined) settings[k] = { value: res.values[k], origin: res.origin[k] };
    }
    let problem: string | undefined;
    const provider = await embed
      .getEmbeddingProvider(res.values, ctx.env, {
        origin: res.origin,
        cwd: store?.repo.workTree ?? ctx.cwd,
        strict: true,
      })
      .catch((e: Error & { toLine?: () => string }) => {
        problem = e.toLine ? e.toLine() : e.message;
        return null;
      });
    const name = String(res.values['embedding-provider'] ?? 'none');
    let check: { ok: boolean; ms: number; error?: string } | undefined;
    if (a.check && provider) {
      const t = performance.now();
      let error: string | undefined;
      const v = await embed.embedWithFallback(provider, ['git mem models status check'], undefined, (e) => {
        // a typed error says how to fix it too (a missing optional package: the command to install it)
        error = isGitMemError(e) ? e.toLine() : (e as Error).message;
      });
      check = { ok: v !== null, ms: Math.round(performance.now() - t), ...(error ? { error } : {}) };
    }
    const current = provider ? embed.lineageKey(provider.lineage) : undefined;
    const cache = store
      ? embed.VectorCache.list(embed.vectorsDir(store.repo)).map((c) => ({
          lineage: c.key,
          count: c.count,
          bytes: c.bytes,
          current: c.key === current,
        }))
      : [];
    const out = {
      provider: name,
      enabled: provider !== null,
      lineage: provider?.lineage ?? null,
      lineageKey: current ?? null,
      ...(problem ? { problem } : {}),
      ...(check ? { check } : {}),
      settings,
      cache,
    };
    emit(ctx, out, () => {
      const lines = [
        `provider: ${name}${provider ? '' : name === 'none' ? ' (embeddings off; search uses text only)' : ' (unusable)'}`,
      ];
      if (problem) lines.push(`problem: ${problem}`);
      if (provider) {
        const l = provider.lineage;
        lines.push(
          `model: ${l.model}  ${l.dimension}-d  ${l.normalize ? 'normalised' : 'raw'}  version ${l.version}`,
        );
      }
      if (check)
        lines.push(
          check.ok
            ? `check: ok in ${check.ms} ms`
            : `check: failed after ${check.ms} ms: ${check.error ?? 'no answer'}`,
        );
      for (const [k, v] of Object.entries(settings)) lines.push(`  ${k}=${v.value} (${v.origin})`);
      for (const c of cache)
        lines.push(
          `cache: ${c.count} vectors, ${mib(c.bytes)}${c.current ? ' (current)' : ''}  ${c.lineage}`,
        );
      return lines.join('\n');
    });
    return problem || (check && !check.ok) ? 1 : 0;
  },
});
