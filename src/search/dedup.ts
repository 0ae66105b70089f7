/**
 * Likely duplicates of a memory about to be added (seed 000): exact text,
 * token overlap above 0.7, or cosine similarity above 0.85 when vectors of
 * the configured lineage exist. Candidates come from the search index; the
 * comparison itself is pure.
 */
import type { Store } from '../gitstore/store.js';
import { parseRecord } from '../model/record.js';
import { mark } from '../trace.js';
import { embedText, type SearchDoc } from './docs.js';
import { dot } from './embed/vector-math.js';
import { type EmbeddingProvider, embedSafe } from './embeddings.js';
import { searchable } from './rank.js';
import { openIndex } from './store-index.js';
import { terms } from './text.js';

const OVERLAP_THRESHOLD = 0.7;
const COSINE_THRESHOLD = 0.85;

export interface Duplicate {
  id: string;
  alias: string | null;
  type: string;
  title: string;
  reason: 'exact' | 'overlap' | 'cosine';
  similarity: number;
}

function normalizeText(s: string): string {
  return s.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** Shared distinct terms over the larger set: 1 = same words, 0 = none shared. */
export function tokenOverlap(a: readonly string[], b: readonly string[]): number {
  const A = new Set(a);
  const B = new Set(b);
  if (!A.size || !B.size) return 0;
  let inter = 0;
  for (const t of A) if (B.has(t)) inter++;
  return inter / Math.max(A.size, B.size);
}

export interface DupInput {
  title: string;
  body: string;
  tags?: string[];
  /** The text's vector when already known (a record in the index): not embedded again. */
  vector?: Float32Array;
}

export async function findDuplicates(
  store: Store,
  input: DupInput,
  provider: EmbeddingProvider | null = null,
): Promise<Duplicate[]> {
  const tip = await store.tip();
  if (!tip) return [];
  // a long-lived process (MCP server, UI) builds the postings once; a one-shot one scans: the
  // same candidates either way (textCandidates)
  const st = await openIndex(store, { provider, postings: store.longLived });
  mark('duplicates: index open');
  const idx = st.index;
  if (!idx.size) return [];
  const newTerms = terms(`${input.title} ${input.body}`);
  const cand = idx.textCandidates(`${input.title} ${input.body}`.slice(0, 4000), {}, 30);
  const out = new Map<string, Duplicate>();
  const exactKey = normalizeText(`${input.title}\n${input.body}`);
  const now = Date.now();
  const docs = cand
    .map((id) => idx.docs.get(id))
    .filter((d): d is SearchDoc => d !== undefined && searchable(d, false, now));
  // the same text needs the same title: only those records are read and parsed for their body
  const title = normalizeText(input.title);
  const sameTitle = docs.map((d) => normalizeText(d.title) === title);
  const blobs = await store.catFile.readMany(
    docs.filter((_, i) => sameTitle[i]).map((d) => d.oid ?? '0'.repeat(40)),
  );
  let read = 0;
  docs.forEach((d, i) => {
    const base = { id: d.id, alias: d.alias ?? null, type: d.type, title: d.title };
    let body = '';
    const b = sameTitle[i] ? blobs[read++] : null;
    if (b) {
      try {
        body = parseRecord(b.content.toString('utf8')).body;
      } catch {}
    }
    if (b && normalizeText(`${d.title}\n${body}`) === exactKey) {
      out.set(d.id, { ...base, reason: 'exact', similarity: 1 });
      return;
    }
    const theirs = [...d.tf.keys(0), ...d.tf.keys(1)];
    const ov = tokenOverlap(newTerms, theirs);
    if (ov > OVERLAP_THRESHOLD)
      out.set(d.id, { ...base, reason: 'overlap', similarity: Math.round(ov * 1000) / 1000 });
  });
  const table = idx.vectors;
  if (st.provider && st.lineage && table?.lineageKey === st.lineage && table.byId.size) {
    const v = input.vector
      ? [input.vector]
      : await embedSafe(st.provider, [
          embedText({ title: input.title, body: input.body, tags: input.tags ?? [] }),
        ]);
    if (v) {
      for (const [id, w] of table.byId) {
        const cos = dot(v[0], w);
        if (cos > COSINE_THRESHOLD && !out.has(id)) {
          const d = idx.docs.get(id);
          if (d && searchable(d, false, now))
            out.set(id, {
              id,
              alias: d.alias ?? null,
              type: d.type,
              title: d.title,
              reason: 'cosine',
              similarity: Math.round(cos * 1000) / 1000,
            });
        }
      }
    }
  }
  const order = { exact: 0, overlap: 1, cosine: 2 };
  return [...out.values()].sort((a, b) => order[a.reason] - order[b.reason] || b.similarity - a.similarity);
}
