/**
 * Every `git mem` command, one file each, in the order `git mem --help`
 * lists them: the store, code anchors, search, sharing, agents, plumbing.
 */
import add from './add.js';
import check from './check.js';
import checkpoint from './checkpoint.js';
import ci from './ci.js';
import type { CommandDef } from './command.js';
import config from './config.js';
import conflicts from './conflicts.js';
import contextPack from './context-pack.js';
import daemon from './daemon.js';
import doctor from './doctor.js';
import exportCmd from './export.js';
import history from './history.js';
import hook from './hook.js';
import hooks from './hooks.js';
import importCmd from './import.js';
import init from './init.js';
import list from './list.js';
import mcp from './mcp.js';
import mergeDriver from './merge-driver.js';
import models from './models.js';
import mv from './mv.js';
import prune from './prune.js';
import pull from './pull.js';
import push from './push.js';
import reanchor from './reanchor.js';
import reindex from './reindex.js';
import remote from './remote.js';
import resolve from './resolve.js';
import review from './review.js';
import rm from './rm.js';
import rules from './rules.js';
import search from './search.js';
import sessions from './sessions.js';
import show from './show.js';
import stale from './stale.js';
import stats from './stats.js';
import strategy from './strategy.js';
import supersede from './supersede.js';
import sync from './sync.js';
import update from './update.js';

export const commands: CommandDef[] = [
  // the store
  init,
  add,
  show,
  list,
  update,
  rm,
  mv,
  supersede,
  history,
  prune,
  importCmd,
  exportCmd,
  stats,
  doctor,
  config,
  rules,
  // code anchors and staleness
  check,
  stale,
  reanchor,
  ci,
  hooks,
  // search and context
  search,
  contextPack,
  reindex,
  daemon,
  models,
  // sharing
  sync,
  pull,
  push,
  remote,
  conflicts,
  resolve,
  mergeDriver,
  // agents
  mcp,
  sessions,
  checkpoint,
  review,
  strategy,
  // plumbing: what installed hooks run
  hook,
];
