/**
 * Local model management: listing model folders and `git mem models pull`,
 * the only place remote downloads are switched on (for the duration of the
 * pull, into ~/.config/git-mem/models/<model id>/).
 */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { err } from '../../errors.js';
import { inspectModelFolder, type LocalModelInfo, loadTransformers } from './local.js';
import { modelsDir } from './settings.js';

const DEFAULT_MODEL_HOST = 'https://huggingface.co/';

/** A Hugging Face style model id: `name` or `owner/name`. */
function checkModelId(model: string): void {
  if (!/^[\w][\w.-]*(\/[\w][\w.-]*)?$/.test(model) || model.includes('..')) {
    throw err(
      'E_INVALID_ARG',
      `"${model}" is not a model id`,
      'use owner/name, e.g. Xenova/all-MiniLM-L6-v2',
    );
  }
}

export interface ModelEntry {
  name: string;
  dir: string;
  dimension?: number;
  modelType?: string;
  dtype?: string;
  bytes: number;
  /** why the folder is not usable, when it is not */
  problem?: string;
}

function folderBytes(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    n += e.isDirectory() ? folderBytes(p) : statSync(p).size;
  }
  return n;
}

function entry(name: string, dir: string): ModelEntry {
  try {
    const info = inspectModelFolder(dir, undefined, name);
    return {
      name,
      dir,
      dimension: info.dimension,
      modelType: info.modelType,
      dtype: info.dtype,
      bytes: folderBytes(dir),
    };
  } catch (e) {
    return { name, dir, bytes: folderBytes(dir), problem: (e as Error).message };
  }
}

/** Model folders under the models directory (`name/` or `owner/name/`, holding config.json). */
export function listModels(env: NodeJS.ProcessEnv): ModelEntry[] {
  const root = modelsDir(env);
  if (!existsSync(root)) return [];
  const out: ModelEntry[] = [];
  for (const a of readdirSync(root, { withFileTypes: true }).sort((x, y) => x.name.localeCompare(y.name))) {
    if (!a.isDirectory() || a.name.startsWith('.')) continue;
    const dirA = join(root, a.name);
    if (existsSync(join(dirA, 'config.json'))) {
      out.push(entry(a.name, dirA));
      continue;
    }
    for (const b of readdirSync(dirA, { withFileTypes: true }).sort((x, y) => x.name.localeCompare(y.name))) {
      if (b.isDirectory() && existsSync(join(dirA, b.name, 'config.json')))
        out.push(entry(`${a.name}/${b.name}`, join(dirA, b.name)));
    }
  }
  return out;
}

export interface PullOptions {
  /** hub base URL (default: embedding-model-host, HF_ENDPOINT, then huggingface.co) */
  host?: string;
  dtype?: string;
  timeoutMs?: number;
  onProgress?: (msg: string) => void;
}

function reason(e: unknown): string {
  const x = e as { message?: string; cause?: { code?: string; message?: string } };
  const parts = [x?.message ?? String(e)];
  if (x?.cause?.code) parts.push(x.cause.code);
  else if (x?.cause?.message) parts.push(x.cause.message);
  return parts.join(': ').replace(/\s+/g, ' ').trim().slice(0, 300);
}

/**
 * Downloads a model into the models directory with transformers.js (remote
 * downloads on for this call only), then loads it once to prove it works.
 * On failure nothing half-downloaded is left as a model folder.
 */
export async function pullModel(
  model: string,
  env: NodeJS.ProcessEnv,
  opts: PullOptions = {},
): Promise<LocalModelInfo> {
  checkModelId(model);
  const host = (opts.host ?? env.HF_ENDPOINT ?? DEFAULT_MODEL_HOST).replace(/\/*$/, '/');
  if (!/^https?:\/\//i.test(host))
    throw err('E_INVALID_ARG', `model host must be an http(s) URL, not "${host}"`);
  const root = modelsDir(env);
  const dir = join(root, ...model.split('/'));
  const existed = existsSync(dir);
  const tf = await loadTransformers();
  const e = tf.env;
  const saved = {
    allowRemoteModels: e.allowRemoteModels,
    remoteHost: e.remoteHost,
    cacheDir: e.cacheDir,
    useFSCache: e.useFSCache,
    localModelPath: e.localModelPath,
    fetch: e.fetch,
  };
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort(), opts.timeoutMs ?? 10 * 60_000);
  const baseFetch = saved.fetch ?? fetch;
  try {
    e.allowRemoteModels = true;
    e.remoteHost = host;
    e.cacheDir = root;
    e.useFSCache = true;
    e.localModelPath = root;
    e.fetch = ((url: string | URL | Request, init?: RequestInit) =>
      baseFetch(url, {
        ...init,
        signal:
          init?.signal && typeof AbortSignal.any === 'function'
            ? AbortSignal.any([init.signal, ctrl.signal])
            : ctrl.signal,
      })) as typeof fetch;
    opts.onProgress?.(`downloading ${model} from ${host}`);
    const p = await tf.pipeline('feature-extraction', model, { dtype: opts.dtype ?? 'fp32' });
    await p(['git-mem model check'], { pooling: 'mean', normalize: true });
  } catch (x) {
    if (!existed) rmSync(dir, { recursive: true, force: true });
    const why = ctrl.signal.aborted
      ? `no complete download within ${+((opts.timeoutMs ?? 600_000) / 1000).toFixed(1)} s`
      : reason(x);
    throw err(
      'E_REMOTE',
      `cannot download embedding model ${model} from ${host}: ${why}`,
      'check the network, set embedding-model-host or HF_ENDPOINT to a mirror, or copy a model folder and set embedding-model-path',
    );
  } finally {
    clearTimeout(timer);
    Object.assign(e, saved);
  }
  return inspectModelFolder(dir, opts.dtype, model);
}
