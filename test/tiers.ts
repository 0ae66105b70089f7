/**
 * Which tier each test file belongs to (test/README.md gives the rule).
 * New files go under test/unit/ or test/ops/ (or test/system/) and are
 * placed by their folder; the files that predate the tiers are listed here.
 * A file in neither list below is an operation test (ops): the default.
 * vitest.config.ts reads these lists; test/unit/tiers.test.ts checks that each
 * names a file that exists.
 */

/** No git, no processes, no file system beyond a temp file: pure logic and parsers. */
export const UNIT_FILES = [
  'test/agents-extraction-eval.test.ts',
  'test/anchors-judge.test.ts',
  'test/cli-args.test.ts',
  'test/embed-http.test.ts',
  'test/layers.test.ts',
  'test/limits.test.ts',
  'test/line-diff.test.ts',
  'test/lsp-rpc.test.ts',
  'test/merge-engine.test.ts',
  'test/paths.test.ts',
  'test/record.test.ts',
  'test/search-index.test.ts',
  'test/search.test.ts',
  'test/secrets-eval.test.ts',
  'test/terminal.test.ts',
  'test/vector-math.test.ts',
  'test/words-agree.test.ts',
];

/**
 * Real processes beyond git: the installed or launched binary, daemons, a
 * browser, hooks git runs, servers in child processes, concurrent writers,
 * hostile remotes.
 */
export const SYSTEM_FILES = [
  'test/action.test.ts',
  'test/agents-cursor.test.ts',
  'test/agents-daemon-prompt.test.ts',
  'test/agents-process.test.ts',
  'test/agents-session-record.test.ts',
  'test/anchors-hook-fast.test.ts',
  'test/anchors-hook.test.ts',
  'test/claude-plugin.test.ts',
  'test/cli-bin.test.ts',
  'test/cli-editor.test.ts',
  'test/cli-help.test.ts',
  'test/cli-output.test.ts',
  'test/concurrency.test.ts',
  'test/daemon-agreement.test.ts',
  'test/daemon-limits.test.ts',
  'test/daemon-queries.test.ts',
  'test/failures.test.ts',
  'test/gitport.test.ts',
  'test/hostile-remote.test.ts',
  'test/installed.test.ts',
  'test/layout.test.ts',
  'test/lsp.test.ts',
  'test/mcp-eras.test.ts',
  'test/mcp-limits.test.ts',
  'test/mcp.test.ts',
  'test/npm-tree.test.ts',
  'test/search-daemon.test.ts',
  'test/shared-config-personal.test.ts',
  'test/sync-faults.test.ts',
  'test/sync-http.test.ts',
  'test/surfaces-agree.test.ts',
  'test/sync-random.test.ts',
  'test/ui.test.ts',
];

export const TIER_GLOBS = {
  unit: ['test/unit/**/*.test.ts', ...UNIT_FILES],
  ops: ['test/ops/**/*.test.ts', 'test/*.test.ts'],
  system: ['test/system/**/*.test.ts', ...SYSTEM_FILES],
};
