/**
 * Embedding settings: pure parsing of the layered config values (strings from
 * `git config mem.*`, typed values from YAML) into one checked object. No I/O.
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { err } from '../../errors.js';
import { EMBEDDING_KEYS, gitMemHome } from '../../gitstore/config.js';

export const PROVIDERS = ['none', 'local', 'ollama', 'openai'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** The model `git mem models pull` fetches when none is named, and the local default. */
export const DEFAULT_LOCAL_MODEL = 'Xenova/all-MiniLM-L6-v2';
export const DEFAULT_OLLAMA_URL = 'http://127.0.0.1:11434';
export const DEFAULT_OPENAI_URL = 'https://api.openai.com/v1';
export const DEFAULT_TIMEOUT_MS = 3000;

export interface EmbeddingSettings {
  provider: ProviderName;
  /** model name: an Ollama / OpenAI model, or a local model id (folder under the models dir) */
  model?: string;
  /** local provider: an explicit model folder */
  modelPath?: string;
  /** ollama / openai: base URL */
  url?: string;
  timeoutMs: number;
  /** expected vector size (remote providers; also sent as `dimensions` to OpenAI-compatible endpoints) */
  dimension?: number;
  /** user-chosen lineage version: bump it to invalidate cached vectors */
  version?: string;
  batchSize?: number;
  /** local provider: onnx weights variant (fp32, fp16, q8, …) */
  dtype?: string;
  /** local provider: mean (default) or cls pooling */
  pooling: 'mean' | 'cls';
  /** `git mem models pull`: the hub to download from */
  modelHost?: string;
}

/** Every setting this module reads, for docs and `git mem models status`. */
export const SETTING_KEYS = EMBEDDING_KEYS;

function str(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  const s = String(v).trim();
  return s === '' ? undefined : s;
}

function posInt(key: string, v: unknown): number | undefined {
  const s = str(v);
  if (s === undefined) return undefined;
  const n = Number(s);
  if (!Number.isInteger(n) || n <= 0) {
    throw err(
      'E_INVALID_ARG',
      `${key} must be a positive whole number, not "${s}"`,
      `git mem config set ${key} <number>`,
    );
  }
  return n;
}

/** Where `git mem models pull` puts models: ~/.config/git-mem/models (GIT_MEM_HOME honoured). */
export function modelsDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(gitMemHome(env), 'models');
}

/** Expands `~/` and makes a configured path absolute (against `cwd`). */
export function expandPath(p: string, env: NodeJS.ProcessEnv, cwd: string = process.cwd()): string {
  if (p === '~' || p.startsWith('~/')) return join(env.HOME || homedir(), p.slice(1));
  return isAbsolute(p) ? p : resolve(cwd, p);
}

/** Parses the embedding settings; throws a one-line E_INVALID_ARG naming the key on bad values. */
export function parseEmbeddingSettings(settings: Record<string, unknown>): EmbeddingSettings {
  const raw = str(settings['embedding-provider'])?.toLowerCase() ?? 'none';
  if (!(PROVIDERS as readonly string[]).includes(raw)) {
    throw err(
      'E_INVALID_ARG',
      `embedding-provider must be one of ${PROVIDERS.join(', ')}, not "${raw}"`,
      'git mem config set embedding-provider none',
    );
  }
  const pooling = str(settings['embedding-pooling'])?.toLowerCase() ?? 'mean';
  if (pooling !== 'mean' && pooling !== 'cls') {
    throw err('E_INVALID_ARG', `embedding-pooling must be mean or cls, not "${pooling}"`);
  }
  const url = str(settings['embedding-url']);
  if (url !== undefined && !/^https?:\/\/[^\s]+$/i.test(url)) {
    throw err(
      'E_INVALID_ARG',
      `embedding-url must be an http(s) URL, not "${url}"`,
      'e.g. http://127.0.0.1:11434',
    );
  }
  return {
    provider: raw as ProviderName,
    model: str(settings['embedding-model']),
    modelPath: str(settings['embedding-model-path']),
    url,
    timeoutMs: posInt('embedding-timeout-ms', settings['embedding-timeout-ms']) ?? DEFAULT_TIMEOUT_MS,
    dimension: posInt('embedding-dimension', settings['embedding-dimension']),
    version: str(settings['embedding-version']),
    batchSize: posInt('embedding-batch-size', settings['embedding-batch-size']),
    dtype: str(settings['embedding-dtype']),
    pooling,
    modelHost: str(settings['embedding-model-host']),
  };
}

/** The API key of an OpenAI-compatible endpoint, from the environment only (never from config). */
export function openaiKey(env: NodeJS.ProcessEnv): string | undefined {
  return str(env.GIT_MEM_OPENAI_API_KEY) ?? str(env.OPENAI_API_KEY);
}

/** Joins a configured base URL and an API path, accepting a base that already ends in the path. */
export function endpointUrl(base: string, path: string): string {
  const b = base.replace(/\/+$/, '');
  if (b.endsWith(path)) return b;
  // OpenAI-style bases usually end in /v1
  if (path.startsWith('/v1/') && b.endsWith('/v1')) return b + path.slice(3);
  return b + path;
}

/** Output sizes of well-known embedding models, so no probe request is needed for them. */
const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'nomic-embed-text': 768,
  'mxbai-embed-large': 1024,
  'all-minilm': 384,
  'snowflake-arctic-embed': 1024,
  'bge-m3': 1024,
  'bge-large': 1024,
};

export function knownDimension(model: string): number | undefined {
  const base = model.replace(/:latest$/, '');
  return KNOWN_DIMENSIONS[base];
}
