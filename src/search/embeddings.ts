/**
 * The bridge to the optional embedding providers (src/search/embed/, built
 * separately). Vectors are never required: no provider, a provider that
 * fails or one that is slow all mean text-only search, never an error.
 */
import type { ConfigLayer } from '../gitstore/config.js';

import type { EmbeddingLineage, EmbeddingProvider } from './embed/types.js';
import { unit } from './embed/vector-math.js';

export type { EmbeddingLineage, EmbeddingProvider };

export function lineageKey(l: EmbeddingLineage): string {
  return [l.provider, l.model, String(l.dimension), l.normalize ? 'l2' : 'raw', l.version ?? ''].join('|');
}

/**
 * The configured provider, or null (none configured, misconfigured, or it
 * failed to start): search then runs on text alone. The providers module is
 * loaded lazily; it is cheap, and the heavy libraries load on first embed().
 */
export async function loadProvider(
  settings: Record<string, unknown>,
  env: NodeJS.ProcessEnv = process.env,
  origin?: Record<string, ConfigLayer>,
  cwd?: string,
): Promise<EmbeddingProvider | null> {
  const raw = String(settings['embedding-provider'] ?? 'none').toLowerCase();
  if (raw === 'none' || raw === '') return null;
  try {
    const mod = await import('./embed/index.js');
    return (await mod.getEmbeddingProvider(settings, env, { origin, cwd })) ?? null;
  } catch {
    return null;
  }
}

/**
 * Embeds with a deadline: the provider's `embedding-timeout-ms` (3 s by default) unless a shorter
 * one is given; resolves null on any failure or timeout (search then falls back to text).
 */
export async function embedSafe(
  p: EmbeddingProvider,
  texts: string[],
  timeoutMs: number = p.timeoutMs ?? 3000,
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
      vecs.push(unit(v));
    }
    return vecs;
  } catch {
    return null;
  } finally {
    if (timer) clearTimeout(timer);
  }
}
