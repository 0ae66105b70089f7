/**
 * Embeddings: optional, never required. A provider turns texts into vectors
 * under a lineage (provider, model, dimension, normalisation, version); the
 * vector cache keys vectors by content hash within one lineage, and vectors of
 * different lineages are never compared. Every call that reaches a model is
 * bounded by a timeout and falls back to text search (null) on any failure.
 *
 * Heavy code (transformers.js) is imported lazily by the local provider, on
 * its first embed(); this module is cheap to import.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { err, isGitMemError } from '../../errors.js';
import type { ConfigLayer } from '../../gitstore/config.js';
import { memDir, type Repo } from '../../gitstore/repo.js';
import { OllamaProvider, OpenAIProvider } from './http.js';
import { inspectModelFolder, LocalProvider } from './local.js';
import {
  DEFAULT_LOCAL_MODEL,
  DEFAULT_OLLAMA_URL,
  DEFAULT_OPENAI_URL,
  type EmbeddingSettings,
  expandPath,
  knownDimension,
  modelsDir,
  openaiKey,
  parseEmbeddingSettings,
} from './settings.js';
import { EmbeddingError, type EmbeddingProvider } from './types.js';
import { VectorCache } from './vector-cache.js';

export { OllamaProvider, OpenAIProvider } from './http.js';
export { inspectModelFolder, LocalProvider, loadTransformers } from './local.js';
export {
  DEFAULT_LOCAL_MODEL,
  DEFAULT_TIMEOUT_MS,
  type EmbeddingSettings,
  modelsDir,
  PROVIDERS,
  parseEmbeddingSettings,
  SETTING_KEYS,
} from './settings.js';
export type { EmbeddingLineage, EmbeddingProvider, EmbedOptions } from './types.js';
export { EmbeddingError, type EmbeddingFailure } from './types.js';
export { type CachedLineage, contentHash, lineageKey, VectorCache } from './vector-cache.js';
export { cosine, dot, l2normalize } from './vector-math.js';

export interface ProviderOptions {
  /**
   * Where each setting came from (ResolvedConfig.origin). When given, an API
   * key is never sent to an `embedding-url` that came from the shared config
   * inside refs/memory (which anyone who can push memories can change).
   */
  origin?: Record<string, ConfigLayer>;
  /** Relative `embedding-model-path` values resolve against this (default: process.cwd()). */
  cwd?: string;
  /** Misconfiguration: throw a GitMemError (true) or report it here and return null (default). */
  strict?: boolean;
  onWarning?: (message: string) => void;
}

/**
 * The provider the settings name, or null when embeddings are off
 * (`embedding-provider` none or unset) or unusable. By default a
 * misconfiguration (unknown provider, missing model folder, no API key,
 * unreachable endpoint for a model of unknown size) is reported through
 * `opts.onWarning` and yields null, so search falls back to text; with
 * `strict` it throws a one-line GitMemError instead.
 *
 * Cheap: reads no model weights and imports no library. Only a remote model
 * whose output size is neither known nor set (`embedding-dimension`) costs
 * one probe request, bounded by `embedding-timeout-ms`.
 */
export async function getEmbeddingProvider(
  settings: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
  opts: ProviderOptions = {},
): Promise<EmbeddingProvider | null> {
  try {
    return await buildProvider(parseEmbeddingSettings(settings), env, opts);
  } catch (e) {
    if (opts.strict) throw e;
    opts.onWarning?.(`embeddings off: ${isGitMemError(e) ? e.toLine() : (e as Error).message}`);
    return null;
  }
}

/** The model folder the local provider would use, and how it was chosen. */
function localModelFolder(
  s: EmbeddingSettings,
  env: NodeJS.ProcessEnv,
  cwd?: string,
): { dir: string; name?: string } {
  if (s.modelPath) return { dir: expandPath(s.modelPath, env, cwd), name: s.model };
  const model = s.model ?? DEFAULT_LOCAL_MODEL;
  if (model.includes('..'))
    throw err(
      'E_INVALID_ARG',
      `embedding-model "${model}" is not a model id`,
      'name a model like org/name, or set embedding-model-path',
      {
        setting: 'embedding-model',
        value: model,
      },
    );
  return { dir: join(modelsDir(env), ...model.split('/')), name: model };
}

async function buildProvider(
  s: EmbeddingSettings,
  env: NodeJS.ProcessEnv,
  opts: ProviderOptions,
): Promise<EmbeddingProvider | null> {
  switch (s.provider) {
    case 'none':
      return null;
    case 'local': {
      const { dir, name } = localModelFolder(s, env, opts.cwd);
      if (!existsSync(dir)) {
        throw err(
          'E_NOT_FOUND',
          `no local embedding model at ${dir}`,
          s.modelPath
            ? 'fix embedding-model-path'
            : `run git mem models pull ${s.model ?? DEFAULT_LOCAL_MODEL}`,
        );
      }
      return new LocalProvider(inspectModelFolder(dir, s.dtype, name), s.pooling, {
        timeoutMs: s.timeoutMs,
        batchSize: s.batchSize,
        version: s.version,
      });
    }
    case 'ollama': {
      if (!s.model)
        throw err(
          'E_INVALID_ARG',
          'embedding-provider ollama needs embedding-model',
          'git mem config set embedding-model nomic-embed-text',
        );
      const p = new OllamaProvider({
        url: s.url ?? ollamaHost(env) ?? DEFAULT_OLLAMA_URL,
        model: s.model,
        dimension: s.dimension ?? knownDimension(s.model),
        version: s.version ?? '1',
        batchSize: s.batchSize ?? 64,
        timeoutMs: s.timeoutMs,
      });
      return withDimension(p, s.timeoutMs);
    }
    case 'openai': {
      const key = openaiKey(env);
      const url = s.url ?? env.OPENAI_BASE_URL ?? DEFAULT_OPENAI_URL;
      if (!s.model)
        throw err(
          'E_INVALID_ARG',
          'embedding-provider openai needs embedding-model',
          'git mem config set embedding-model text-embedding-3-small',
        );
      if (!key && url === DEFAULT_OPENAI_URL) {
        throw err(
          'E_INVALID_ARG',
          'embedding-provider openai needs an API key',
          'export GIT_MEM_OPENAI_API_KEY (or OPENAI_API_KEY)',
        );
      }
      if (key && opts.origin?.['embedding-url'] === 'shared') {
        throw err(
          'E_INVALID_ARG',
          `refusing to send an API key to ${url}, set by the shared config in refs/memory`,
          'set embedding-url with git mem config set --local (or --global) if you trust it',
        );
      }
      const p = new OpenAIProvider({
        url,
        model: s.model,
        dimension: s.dimension ?? knownDimension(s.model),
        version: s.version ?? '1',
        batchSize: s.batchSize ?? 256,
        timeoutMs: s.timeoutMs,
        headers: key ? { authorization: `Bearer ${key}` } : {},
        requestDimensions: s.dimension,
      });
      return withDimension(p, s.timeoutMs);
    }
  }
}

/** OLLAMA_HOST as Ollama reads it: `host`, `host:port` or a URL. */
function ollamaHost(env: NodeJS.ProcessEnv): string | undefined {
  const h = env.OLLAMA_HOST?.trim();
  if (!h) return undefined;
  const withScheme = /^https?:\/\//.test(h) ? h : `http://${h}`;
  try {
    const u = new URL(withScheme);
    if (!u.port && !/^https?:\/\/[^/]+:\d+/.test(withScheme)) u.port = '11434';
    if (u.hostname === '0.0.0.0') u.hostname = '127.0.0.1';
    return u.toString().replace(/\/$/, '');
  } catch {
    return undefined;
  }
}

/** Sizes learned by probing, per endpoint and model, for the life of the process (a daemon probes once). */
const probed = new Map<string, number>();

async function withDimension(
  p: OllamaProvider | OpenAIProvider,
  timeoutMs: number,
): Promise<EmbeddingProvider> {
  if (p.lineage.dimension > 0) return p;
  const memo = `${p.lineage.provider}\0${p.url}\0${p.lineage.model}`;
  const known = probed.get(memo);
  if (known) {
    p.lineage = { ...p.lineage, dimension: known };
    return p;
  }
  const ctrl = new AbortController();
  const t = setTimeout(() => ctrl.abort(), timeoutMs);
  try {
    probed.set(memo, await p.probe(ctrl.signal));
  } catch (e) {
    const why = ctrl.signal.aborted ? `no answer within ${timeoutMs} ms` : (e as Error).message;
    throw err(
      'E_REMOTE',
      `cannot learn the vector size of ${p.lineage.provider} model ${p.lineage.model}: ${why}`,
      'set embedding-dimension, or check the endpoint',
    );
  } finally {
    clearTimeout(t);
  }
  return p;
}

/**
 * Embeds texts within a time budget; returns null on any error, timeout or
 * malformed result (wrong count, wrong dimension, non-finite numbers), so the
 * caller falls back to text search. Never throws, never waits past the budget
 * (a local model that cannot be interrupted finishes in the background and its
 * result is dropped).
 */
export async function embedWithFallback(
  provider: EmbeddingProvider | null | undefined,
  texts: string[],
  timeoutMs?: number,
  onError?: (e: unknown) => void,
): Promise<number[][] | null> {
  if (!provider) return null;
  if (texts.length === 0) return [];
  const budget = timeoutMs ?? provider.timeoutMs ?? 3000;
  const ctrl = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((res) => {
    timer = setTimeout(() => {
      ctrl.abort();
      res('timeout');
    }, budget);
  });
  try {
    const call = provider.embed(texts, { signal: ctrl.signal });
    call.catch(() => {}); // a late rejection after the timeout must not go unhandled
    const r = await Promise.race([call, timeout]);
    if (r === 'timeout') {
      onError?.(new EmbeddingError(`embedding timed out after ${budget} ms`, 'timeout'));
      return null;
    }
    const dim = provider.lineage.dimension;
    if (!Array.isArray(r) || r.length !== texts.length)
      throw new EmbeddingError('provider returned the wrong number of vectors', 'malformed');
    for (const v of r) {
      if (!v || v.length !== dim)
        throw new EmbeddingError(
          `provider returned a vector of ${v?.length} dimensions, lineage says ${dim}`,
          'dimension',
        );
      for (let i = 0; i < v.length; i++)
        if (!Number.isFinite(v[i]))
          throw new EmbeddingError('provider returned a non-finite number', 'malformed');
    }
    return r;
  } catch (e) {
    onError?.(e);
    return null;
  } finally {
    clearTimeout(timer);
    if (!ctrl.signal.aborted) ctrl.abort();
  }
}

export interface EmbedItem {
  /** cache key: a content hash of `text` (see contentHash) */
  key: string;
  text: string;
}

export interface EmbedMissingResult {
  /** vectors of every item that has one (cached or just embedded) */
  vectors: Map<string, Float32Array>;
  /** items that were not in the cache */
  missed: number;
  /** items embedded now */
  embedded: number;
  /** false when a batch failed or the time ran out (the rest stay unembedded) */
  complete: boolean;
}

/**
 * Fills the cache for items not yet in it, in batches, within an overall
 * budget; flushes what was embedded. The index builder calls this; partial
 * results are fine (unembedded records are found by text only).
 */
export async function embedMissing(
  provider: EmbeddingProvider,
  cache: VectorCache,
  items: EmbedItem[],
  opts: { timeoutMs?: number; batchSize?: number; onError?: (e: unknown) => void } = {},
): Promise<EmbedMissingResult> {
  const byKey = new Map<string, string>();
  for (const it of items) byKey.set(it.key, it.text);
  const missing = cache.missing(byKey.keys());
  const size = opts.batchSize ?? provider.batchSize ?? 32;
  const deadline = opts.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + opts.timeoutMs;
  let embedded = 0;
  let complete = true;
  try {
    for (let i = 0; i < missing.length; i += size) {
      const left = deadline - Date.now();
      if (left <= 0) {
        complete = false;
        break;
      }
      const keys = missing.slice(i, i + size);
      const vs = await embedWithFallback(
        provider,
        keys.map((k) => byKey.get(k)!),
        Math.min(left, provider.timeoutMs ?? 3000),
        opts.onError,
      );
      if (!vs) {
        complete = false;
        break;
      }
      keys.forEach((k, j) => {
        cache.put(k, vs[j]);
      });
      embedded += keys.length;
    }
  } finally {
    cache.flush();
  }
  return { vectors: cache.many(byKey.keys()), missed: missing.length, embedded, complete };
}

/** The vector cache directory of a repository: `.git/mem/vectors/`. */
export function vectorsDir(repo: Repo): string {
  return memDir(repo, 'vectors');
}

/** Opens the vector cache of a provider's lineage in a repository. */
export function openVectorCache(repo: Repo, provider: EmbeddingProvider): VectorCache {
  return new VectorCache(vectorsDir(repo), provider.lineage);
}
