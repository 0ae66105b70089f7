/**
 * The same template copy seen by another environment: a second Store opened on
 * it with `env` (another author, an agent's GIT_MEM_AGENT…, a setting), as a
 * command run with that environment would open it. What a store reads of its
 * environment (identity, actor) is read from the environment it was opened
 * with, so a test of "someone else writes" needs a store of its own, not just
 * runOn's `env`. Closed after the test.
 */
import { onTestFinished } from 'vitest';
import { openRepo } from '../../src/gitstore/repo.js';
import { Store } from '../../src/gitstore/store.js';
import { type Fresh, jsonOn, runOn } from './template.js';

export async function withEnv(f: Fresh, env: NodeJS.ProcessEnv): Promise<Fresh> {
  const store = new Store(await openRepo(f.dir, env));
  onTestFinished(() => store.close());
  const g: Fresh = { ...f, env, store };
  g.mem = async (args, o = {}) => {
    const { exit, code, ...rest } = await runOn(g, args, { ...o, json: args.includes('--json') });
    return { ...rest, code: exit, error: code };
  };
  g.memJson = (args, o = {}) => jsonOn(g, args, o);
  return g;
}
