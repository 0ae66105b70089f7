/** Entry point the checkpoint loads lazily for tier-1 extraction (see ./llm.ts). */
export { llmConfig, llmExtract } from './llm.js';
