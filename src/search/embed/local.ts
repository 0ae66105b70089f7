/**
 * The local provider: a model folder run in-process by transformers.js
 * (`@huggingface/transformers`, ONNX Runtime on the CPU). The library is
 * imported lazily, on the first embed() — it costs 230–390 ms — and remote
 * downloads stay off: only `git mem models pull` turns them on, for itself.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { err } from '../../errors.js';
import type { EmbeddingLineage, EmbeddingProvider, EmbedOptions } from './types.js';

/* Minimal view of the transformers.js API used here (its own types are heavy to load in tsc). */
interface TfTensor {
  dims: number[];
  data: Float32Array;
  tolist(): number[][];
}
type TfExtractor = ((texts: string[], opts: { pooling: string; normalize: boolean }) => Promise<TfTensor>) & {
  dispose?: () => Promise<void>;
};
export interface TfModule {
  env: {
    allowRemoteModels: boolean;
    allowLocalModels: boolean;
    useFSCache: boolean;
    useBrowserCache?: boolean;
    cacheDir: string | null;
    localModelPath: string;
    remoteHost: string;
    fetch: typeof fetch;
    logLevel: number;
    version: string;
  };
  LogLevel?: { ERROR: number };
  pipeline: (task: string, model: string, opts: Record<string, unknown>) => Promise<TfExtractor>;
}

let tfPromise: Promise<TfModule> | undefined;

/** Imports transformers.js once, with remote model downloads switched off. */
export function loadTransformers(): Promise<TfModule> {
  tfPromise ??= (async () => {
    let m: TfModule;
    try {
      m = (await import('@huggingface/transformers')) as unknown as TfModule;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ERR_MODULE_NOT_FOUND') throw e;
      // an optional part of the install (~450 MB with ONNX Runtime): installed on demand
      throw err(
        'E_NOT_FOUND',
        'local embeddings need @huggingface/transformers, which is not installed',
        'npm install -g @huggingface/transformers (beside a global git-mem), or set embedding-provider to none, ollama or openai',
      );
    }
    m.env.allowRemoteModels = false;
    m.env.allowLocalModels = true;
    m.env.useFSCache = false;
    if (m.LogLevel) m.env.logLevel = m.LogLevel.ERROR;
    return m;
  })();
  tfPromise.catch(() => {
    tfPromise = undefined;
  });
  return tfPromise;
}

const pipelines = new Map<string, Promise<TfExtractor>>();

/** Picks the weights file: the configured dtype, else fp32 (onnx/model.onnx), else a quantised one. */
function chooseDtype(dir: string, dtype?: string): { dtype: string; file: string } {
  const files: Record<string, string> = {
    fp32: 'model.onnx',
    fp16: 'model_fp16.onnx',
    q8: 'model_quantized.onnx',
    int8: 'model_int8.onnx',
    uint8: 'model_uint8.onnx',
    q4: 'model_q4.onnx',
    q4f16: 'model_q4f16.onnx',
    bnb4: 'model_bnb4.onnx',
  };
  if (dtype) {
    const f = files[dtype];
    if (!f)
      throw err(
        'E_INVALID_ARG',
        `embedding-dtype must be one of ${Object.keys(files).join(', ')}, not "${dtype}"`,
      );
    return { dtype, file: f };
  }
  for (const d of ['fp32', 'q8', 'fp16', 'int8', 'uint8']) {
    if (existsSync(join(dir, 'onnx', files[d]))) return { dtype: d, file: files[d] };
  }
  return { dtype: 'fp32', file: files.fp32 };
}

export interface LocalModelInfo {
  dir: string;
  name: string;
  dimension: number;
  modelType: string;
  dtype: string;
  onnxFile: string;
  fingerprint: string;
}

/**
 * Reads a model folder's metadata without loading the library: the output
 * size (hidden_size) and a fingerprint of config, tokenizer and weights size.
 * Throws a one-line GitMemError when the folder is not a usable model.
 */
export function inspectModelFolder(dir: string, dtype?: string, name?: string): LocalModelInfo {
  const cfgPath = join(dir, 'config.json');
  if (!existsSync(cfgPath)) {
    throw err(
      'E_NOT_FOUND',
      `no embedding model at ${dir} (config.json missing)`,
      'run git mem models pull, or set embedding-model-path to a model folder',
    );
  }
  let cfg: Record<string, unknown>;
  const cfgText = readFileSync(cfgPath);
  try {
    cfg = JSON.parse(cfgText.toString('utf8'));
  } catch {
    throw err('E_FORMAT', `${cfgPath} is not valid JSON`, 'fix or re-pull the model');
  }
  const dimension = Number(cfg.hidden_size ?? cfg.d_model ?? cfg.dim ?? cfg.hidden_dim);
  if (!Number.isInteger(dimension) || dimension <= 0) {
    throw err('E_FORMAT', `${cfgPath} names no hidden_size`, 'use a BERT-like sentence embedding model');
  }
  const tokPath = join(dir, 'tokenizer.json');
  if (!existsSync(tokPath))
    throw err('E_NOT_FOUND', `no tokenizer.json in ${dir}`, 'the model folder is incomplete; re-pull it');
  const chosen = chooseDtype(dir, dtype);
  const onnxPath = join(dir, 'onnx', chosen.file);
  if (!existsSync(onnxPath))
    throw err(
      'E_NOT_FOUND',
      `no onnx/${chosen.file} in ${dir}`,
      'the model folder is incomplete; re-pull it or set embedding-dtype',
    );
  const h = createHash('sha256').update(cfgText).update('\0').update(readFileSync(tokPath)).update('\0');
  const tcPath = join(dir, 'tokenizer_config.json');
  if (existsSync(tcPath)) h.update(readFileSync(tcPath));
  // weights: size plus the first and last 64 KiB (hashing a 90 MB file on every start costs too much)
  const size = statSync(onnxPath).size;
  h.update(`\0${chosen.file}\0${size}\0`);
  const fd = openSync(onnxPath, 'r');
  try {
    const n = Math.min(size, 65536);
    const b = Buffer.alloc(n);
    readSync(fd, b, 0, n, 0);
    h.update(b);
    readSync(fd, b, 0, n, Math.max(0, size - n));
    h.update(b);
  } finally {
    closeSync(fd);
  }
  return {
    dir,
    name:
      name ??
      (typeof cfg._name_or_path === 'string' && cfg._name_or_path ? cfg._name_or_path : basename(dir)),
    dimension,
    modelType: String(cfg.model_type ?? 'unknown'),
    dtype: chosen.dtype,
    onnxFile: chosen.file,
    fingerprint: h.digest('hex').slice(0, 16),
  };
}

export class LocalProvider implements EmbeddingProvider {
  readonly lineage: EmbeddingLineage;
  readonly timeoutMs: number;
  readonly batchSize: number;

  constructor(
    readonly info: LocalModelInfo,
    readonly pooling: 'mean' | 'cls',
    opts: { timeoutMs: number; batchSize?: number; version?: string },
  ) {
    this.timeoutMs = opts.timeoutMs;
    this.batchSize = opts.batchSize ?? 32;
    this.lineage = {
      provider: 'local',
      model: `${info.name}@${info.dtype}${pooling === 'mean' ? '' : `/${pooling}`}`,
      dimension: info.dimension,
      normalize: true,
      version: opts.version ? `${info.fingerprint}+${opts.version}` : info.fingerprint,
    };
  }

  /** Loads (once per process) the feature-extraction pipeline of the folder. */
  load(): Promise<TfExtractor> {
    const key = `${this.info.dir}\0${this.info.dtype}`;
    let p = pipelines.get(key);
    if (!p) {
      p = loadTransformers().then((tf) =>
        tf.pipeline('feature-extraction', this.info.dir, { dtype: this.info.dtype, local_files_only: true }),
      );
      pipelines.set(key, p);
      p.catch(() => pipelines.delete(key));
    }
    return p;
  }

  async embed(texts: string[], opts: EmbedOptions = {}): Promise<number[][]> {
    if (texts.length === 0) return [];
    const extractor = await this.load();
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      opts.signal?.throwIfAborted();
      const t = await extractor(texts.slice(i, i + this.batchSize), {
        pooling: this.pooling,
        normalize: true,
      });
      const dim = t.dims[t.dims.length - 1];
      if (dim !== this.lineage.dimension) {
        throw err(
          'E_FORMAT',
          `model ${this.info.name} produced ${dim}-dimensional vectors, config says ${this.lineage.dimension}`,
        );
      }
      const data = t.data;
      for (let r = 0; r * dim < data.length; r++) out.push(Array.from(data.subarray(r * dim, (r + 1) * dim)));
    }
    return out;
  }
}
