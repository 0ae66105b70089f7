/** The provider interface shared by every embedding backend. */

/** Identity of a vector space: vectors of different lineages are never compared. */
export interface EmbeddingLineage {
  /** none | local | ollama | openai */
  provider: string;
  model: string;
  dimension: number;
  /** vectors are L2-normalised (cosine = dot product) */
  normalize: boolean;
  /** model fingerprint (local) or a user-set version (remote): changes invalidate cached vectors */
  version: string;
}

export interface EmbedOptions {
  signal?: AbortSignal;
}

export interface EmbeddingProvider {
  lineage: EmbeddingLineage;
  /** One vector per text, in order, each of `lineage.dimension` numbers. */
  embed(texts: string[], opts?: EmbedOptions): Promise<number[][]>;
  /** Default time budget of one call, from `embedding-timeout-ms` (used by embedWithFallback). */
  timeoutMs?: number;
  /** Suggested number of texts per embed() call when filling a cache. */
  batchSize?: number;
}

/** Why an embedding call gave no vectors: stable data for callers and tests (the message is for people). */
export type EmbeddingFailure = 'unreachable' | 'aborted' | 'http' | 'malformed' | 'dimension' | 'timeout';

/** A provider that gave no usable vectors; search goes on text-only and says why. */
export class EmbeddingError extends Error {
  constructor(
    message: string,
    readonly reason: EmbeddingFailure,
    /** the HTTP status, for reason 'http' */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'EmbeddingError';
  }
}
