/** Rules in force: moved down to src/search/rules.ts (src/search and src/ci read them); named here too. */
export { type NamedStore, type RuleInForce, rulesFor } from '../search/rules.js';
