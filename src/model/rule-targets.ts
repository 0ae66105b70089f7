/**
 * The agent rule formats `git mem rules export` writes and `rules import`
 * reads (src/agents/rules-export.ts), named here for the setting that lists
 * the team's (`rules.targets`, src/gitstore/config.ts). Pure.
 */
export const RULE_TARGETS = ['claude', 'agents', 'cursor', 'copilot', 'claude-rules'] as const;
