/** Entry point for tier-1 extraction; everything lives in ./llm.ts. */
export { llmConfig, llmExtract, trustedLlmSettings } from './llm.js';
