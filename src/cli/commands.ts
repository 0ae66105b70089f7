/** Every `git mem` command, one file each. Add new commands here. */
import type { CommandDef } from './command.js';
import add from './add.js';
import check from './check.js';
import ci from './ci.js';
import reanchor from './reanchor.js';
import stale from './stale.js';
import config from './config.js';
import conflicts from './conflicts.js';
import resolve from './resolve.js';
import mergeDriver from './merge-driver.js';
import doctor from './doctor.js';
import exportCmd from './export.js';
import history from './history.js';
import hook from './hook.js';
import hooks from './hooks.js';
import importCmd from './import.js';
import init from './init.js';
import list from './list.js';
import models from './models.js';
import mv from './mv.js';
import prune from './prune.js';
import rm from './rm.js';
import mcp from './mcp.js';
import rules from './rules.js';
import search from './search.js';
import daemon from './daemon.js';
import reindex from './reindex.js';
import contextPack from './context-pack.js';
import show from './show.js';
import stats from './stats.js';
import supersede from './supersede.js';
import update from './update.js';
import sync from './sync.js';
import pull from './pull.js';
import push from './push.js';
import remote from './remote.js';
import sessions from './sessions.js';
import checkpoint from './checkpoint.js';
import review from './review.js';
import strategy from './strategy.js';

export const commands: CommandDef[] = [
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
  conflicts,
  resolve,
  mergeDriver,
  config,
  rules,
  mcp,
  search,
  daemon,
  reindex,
  contextPack,
  hooks,
  hook,
  check,
  stale,
  reanchor,
  ci,
  models,
  sync,
  pull,
  push,
  remote,
  sessions,
  checkpoint,
  review,
  strategy,
];
