/**
 * The bridge to the optional embedding providers (src/search/embed/, built
 * separately). Vectors are never required: no provider, a provider that
 * fails or one that is slow all mean text-only search, never an error.
 */
import type { Settings } from '../gitstore/config.js';

export interface EmbeddingLineage {
  provider: string;
  model: string;
  dimension: number;
  normalize: boolean | string;
  version?: string;
}

export interface EmbeddingProvider {
  lineage: EmbeddingLineage;
  embed(texts: string[], opts?: { signal?: AbortSignal }): Promise<number[][]>;
}

export function lineageKey(l: EmbeddingLineage): string {
  return JSON.stringify([l.provider, l.model, l.dimension, String(l.normalize), l.version ?? '']);
}

type EmbedModule = { getEmbeddingProvider?: (settings: Settings) => Promise<EmbeddingProvider | null> };

/**
 * The configured provider, or null (none configured, module absent, or it
 * failed to start). The module is loaded lazily: it pulls heavy libraries.
 */
export async function loadProvider(settings: Settings): Promise<EmbeddingProvider | null> {
  if (String(settings['embed.provider'] ?? settings['embed-provider'] ?? '') === 'none') return null;
  let mod: EmbedModule;
  try {
    // the path is computed so bundlers and type checks do not require the module to exist
    const path = ['.', 'embed', 'index.js'].join('/');
    mod = (await import(/* @vite-ignore */ path)) as EmbedModule;
  } catch {
    return null;
  }
  try {
    return (await mod.getEmbeddingProvider?.(settings)) ?? null;
  } catch {
    return null;
  }
}

/** Embeds with a deadline; resolves null on any failure or timeout (search then falls back to text). */
export async function embedSafe(
  p: EmbeddingProvider,
  texts: string[],
  timeoutMs: number,
): Promise<Float32Array[] | null> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<null>((res) => {
      timer = setTimeout(() => {
        ac.abort();
        res(null);
      }, timeoutMs);
    });
    const out = await Promise.race([p.embed(texts, { signal: ac.signal }), timeout]);
    if (!out || out.length !== texts.length) return null;
    const dim = p.lineage.dimension;
    const vecs: Float32Array[] = [];
    for (const v of out) {
      if (!Array.isArray(v) && !ArrayBuffer.isView(v)) return null;
      if (dim && v.length !== dim) return null;
      vecs.push(toUnit(v));
    }
    return vecs;
  } catch {
    return null;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

function toUnit(v: ArrayLike<number>): Float32Array {
  const out = new Float32Array(v.length);
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  n = Math.sqrt(n) || 1;
  for (let i = 0; i < v.length; i++) out[i] = v[i] / n;
  return out;
}
