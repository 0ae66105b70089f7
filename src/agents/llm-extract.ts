/**
 * Entry point the checkpoint loads lazily for tier-1 extraction (see ./llm.ts).
 *
 * Trust: the `llm.*` settings decide where session events are sent. The shared
 * config travels inside refs/memory, so anyone who can push memory could point
 * it at their own server. `trustedLlmSettings` reads only the layers this
 * machine's user controls (the global file and `git config mem.*`); pass its
 * result to llmExtract instead of the fully layered settings.
 */
import { readGlobalConfig, readLocalConfig } from '../gitstore/config.js';
import type { Store } from '../gitstore/store.js';

export { llmConfig, llmExtract } from './llm.js';

export async function trustedLlmSettings(store: Store): Promise<Record<string, unknown>> {
  let global: Record<string, unknown> = {};
  let local: Record<string, unknown> = {};
  try {
    global = readGlobalConfig(store.repo.env);
  } catch {}
  try {
    local = await readLocalConfig(store.repo);
  } catch {}
  const out: Record<string, unknown> = {};
  for (const layer of [global, local]) {
    for (const [k, v] of Object.entries(layer)) {
      if (k === 'llm' && v && typeof v === 'object' && !Array.isArray(v)) {
        for (const [kk, vv] of Object.entries(v as Record<string, unknown>)) out[`llm.${kk}`] = vv;
      } else if (k.startsWith('llm.')) out[k] = v;
    }
  }
  return out;
}
