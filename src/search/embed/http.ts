/**
 * Remote embedding providers over HTTP: Ollama (`POST /api/embed`) and any
 * OpenAI-compatible endpoint (`POST /v1/embeddings`: OpenAI, vLLM, TEI,
 * LM Studio, llama.cpp server…). Vectors are L2-normalised on arrival so every
 * provider's vectors compare by dot product.
 */

import { endpointUrl as endpoint } from './settings.js';
import { EmbeddingError, type EmbeddingLineage, type EmbeddingProvider, type EmbedOptions } from './types.js';
import { l2normalize } from './vector-math.js';

const MAX_ERROR_TEXT = 200;

async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  signal: AbortSignal | undefined,
  label: string,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...headers },
      body: JSON.stringify(body),
      // embedding APIs do not redirect; following one could carry the API key elsewhere
      redirect: 'error',
      signal,
    });
  } catch (e) {
    if (signal?.aborted) throw new EmbeddingError(`${label}: request aborted`, 'aborted');
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new EmbeddingError(
      `${label}: cannot reach ${url} (${cause?.code ?? cause?.message ?? (e as Error).message})`,
      'unreachable',
    );
  }
  const text = await res.text();
  if (!res.ok) {
    let detail = text.slice(0, MAX_ERROR_TEXT);
    try {
      const j = JSON.parse(text) as { error?: unknown };
      const e = j.error as { message?: string } | string | undefined;
      if (typeof e === 'string') detail = e;
      else if (e && typeof e.message === 'string') detail = e.message;
    } catch {
      // not JSON: keep the text
    }
    throw new EmbeddingError(
      `${label}: HTTP ${res.status} from ${url}: ${detail.replace(/\s+/g, ' ').trim()}`,
      'http',
      res.status,
    );
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new EmbeddingError(`${label}: malformed reply from ${url} (not JSON)`, 'malformed');
  }
}

function checkVector(v: unknown, label: string, dim: number | undefined): number[] {
  if (!Array.isArray(v) || v.length === 0 || !v.every((x) => typeof x === 'number' && Number.isFinite(x))) {
    throw new EmbeddingError(
      `${label}: malformed reply (an embedding is not a list of numbers)`,
      'malformed',
    );
  }
  if (dim !== undefined && v.length !== dim) {
    throw new EmbeddingError(
      `${label}: got ${v.length}-dimensional vectors, expected ${dim} (set embedding-dimension or embedding-version)`,
      'dimension',
    );
  }
  return v as number[];
}

function batches<T>(xs: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += size) out.push(xs.slice(i, i + size));
  return out;
}

export interface HttpProviderOptions {
  url: string;
  model: string;
  /** known output size; undefined until probed */
  dimension?: number;
  version: string;
  batchSize: number;
  timeoutMs: number;
  headers?: Record<string, string>;
  /** OpenAI-compatible only: ask the endpoint for this output size (`dimensions`) */
  requestDimensions?: number;
}

abstract class HttpProvider implements EmbeddingProvider {
  lineage: EmbeddingLineage;
  readonly timeoutMs: number;
  protected readonly opts: HttpProviderOptions;

  constructor(provider: string, opts: HttpProviderOptions) {
    this.opts = opts;
    this.timeoutMs = opts.timeoutMs;
    this.lineage = {
      provider,
      model: opts.model,
      dimension: opts.dimension ?? 0,
      normalize: true,
      version: opts.version,
    };
  }

  get url(): string {
    return this.opts.url;
  }

  protected abstract request(texts: string[], signal?: AbortSignal): Promise<number[][]>;

  async embed(texts: string[], opts: EmbedOptions = {}): Promise<number[][]> {
    const out: number[][] = [];
    for (const b of batches(texts, this.opts.batchSize)) {
      opts.signal?.throwIfAborted();
      const vs = await this.request(b, opts.signal);
      if (vs.length !== b.length) {
        throw new EmbeddingError(
          `${this.lineage.provider}: malformed reply (${vs.length} embeddings for ${b.length} texts)`,
          'malformed',
        );
      }
      for (const v of vs) out.push(l2normalize(v));
    }
    return out;
  }

  /** Learns the output size with one short request (for models not in the known list). */
  async probe(signal?: AbortSignal): Promise<number> {
    const [v] = await this.request(['dimension probe'], signal);
    if (!v) throw new EmbeddingError(`${this.lineage.provider}: malformed reply (no embedding)`, 'malformed');
    this.lineage = { ...this.lineage, dimension: v.length };
    return v.length;
  }

  protected dim(): number | undefined {
    return this.lineage.dimension || undefined;
  }
}

/** Ollama: `POST {url}/api/embed` `{model, input}` → `{embeddings: number[][]}`. */
export class OllamaProvider extends HttpProvider {
  constructor(opts: HttpProviderOptions) {
    super('ollama', opts);
  }

  protected async request(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const url = endpoint(this.opts.url, '/api/embed');
    const j = (await postJson(
      url,
      { model: this.opts.model, input: texts, truncate: true },
      this.opts.headers ?? {},
      signal,
      'ollama',
    )) as {
      embeddings?: unknown;
    };
    if (!j || !Array.isArray(j.embeddings))
      throw new EmbeddingError('ollama: malformed reply (no "embeddings" list)', 'malformed');
    return j.embeddings.map((v) => checkVector(v, 'ollama', this.dim()));
  }
}

/** OpenAI-compatible: `POST {url}/v1/embeddings` `{model, input}` → `{data: [{embedding, index}]}`. */
export class OpenAIProvider extends HttpProvider {
  constructor(opts: HttpProviderOptions) {
    super('openai', opts);
  }

  protected async request(texts: string[], signal?: AbortSignal): Promise<number[][]> {
    const url = endpoint(this.opts.url, '/v1/embeddings');
    const body: Record<string, unknown> = { model: this.opts.model, input: texts, encoding_format: 'float' };
    if (this.opts.requestDimensions) body.dimensions = this.opts.requestDimensions;
    const j = (await postJson(url, body, this.opts.headers ?? {}, signal, 'openai')) as { data?: unknown };
    if (!j || !Array.isArray(j.data))
      throw new EmbeddingError('openai: malformed reply (no "data" list)', 'malformed');
    const out: number[][] = new Array(texts.length);
    j.data.forEach((d: unknown, i: number) => {
      const item = d as { embedding?: unknown; index?: unknown };
      const idx = typeof item?.index === 'number' ? item.index : i;
      if (!Number.isInteger(idx) || idx < 0 || idx >= texts.length || out[idx]) {
        throw new EmbeddingError('openai: malformed reply (bad or repeated "index")', 'malformed');
      }
      out[idx] = checkVector(item?.embedding, 'openai', this.dim());
    });
    if (j.data.length !== texts.length) {
      throw new EmbeddingError(
        `openai: malformed reply (${j.data.length} embeddings for ${texts.length} texts)`,
        'malformed',
      );
    }
    return out;
  }
}
