/**
 * Every `git mem` command, one file each, in the order `git mem --help`
 * lists them: the store, code anchors, search, sharing, agents, plumbing.
 * Each is imported when it runs (the bundle keeps it in a chunk of its own),
 * so `git mem show` never parses the code of `search` or `mcp`. Aliases are
 * keys too; test/cli-bin.test.ts checks the table against the modules.
 */
import type { AnyCommand } from './command.js';

type Load = () => Promise<{ default: AnyCommand }>;

export const commandLoaders: Record<string, Load> = {
  // the store
  init: () => import('./init.js'),
  add: () => import('./add.js'),
  show: () => import('./show.js'),
  list: () => import('./list.js'),
  update: () => import('./update.js'),
  verify: () => import('./verify.js'),
  rm: () => import('./rm.js'),
  mv: () => import('./mv.js'),
  supersede: () => import('./supersede.js'),
  history: () => import('./history.js'),
  prune: () => import('./prune.js'),
  import: () => import('./import.js'),
  export: () => import('./export.js'),
  stats: () => import('./stats.js'),
  doctor: () => import('./doctor.js'),
  config: () => import('./config.js'),
  rules: () => import('./rules.js'),
  // code anchors and staleness
  check: () => import('./check.js'),
  stale: () => import('./stale.js'),
  blame: () => import('./blame.js'),
  reanchor: () => import('./reanchor.js'),
  ci: () => import('./ci.js'),
  hooks: () => import('./hooks.js'),
  // search and context
  search: () => import('./search.js'),
  context: () => import('./context-pack.js'),
  reindex: () => import('./reindex.js'),
  daemon: () => import('./daemon.js'),
  models: () => import('./models.js'),
  // sharing
  sync: () => import('./sync.js'),
  pull: () => import('./pull.js'),
  push: () => import('./push.js'),
  remote: () => import('./remote.js'),
  store: () => import('./store.js'),
  conflicts: () => import('./conflicts.js'),
  resolve: () => import('./resolve.js'),
  'merge-driver': () => import('./merge-driver.js'),
  ui: () => import('./ui.js'),
  // agents
  mcp: () => import('./mcp.js'),
  lsp: () => import('./lsp.js'),
  sessions: () => import('./sessions.js'),
  checkpoint: () => import('./checkpoint.js'),
  review: () => import('./review.js'),
  consolidate: () => import('./consolidate.js'),
  strategy: () => import('./strategy.js'),
  // plumbing: what installed hooks run
  hook: () => import('./hook.js'),
  // help and the shell
  help: () => import('./help-cmd.js'),
  completion: () => import('./completion.js'),
};

/** Alias → command name. */
export const commandAliases: Record<string, string> = {
  log: 'history',
  ls: 'list',
  move: 'mv',
  remove: 'rm',
  find: 'search',
};

/** The command called `name` (or aliased so), loaded; undefined for no such command. */
export async function loadCommand(name: string | undefined): Promise<AnyCommand | undefined> {
  if (!name) return undefined;
  const key = Object.hasOwn(commandAliases, name) ? commandAliases[name] : name;
  return Object.hasOwn(commandLoaders, key) ? (await commandLoaders[key]()).default : undefined;
}
