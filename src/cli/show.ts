import { err } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { provenanceText } from '../model/provenance.js';
import { recordPath, recordToJSON, tombstonePath } from '../model/record.js';
import { defineCommand } from './command.js';
import { adoptForRead, adoptionLine, emit, openStore, teamStoresOf } from './context.js';
import { recordText } from './format.js';
import { colors } from './output.js';

/**
 * A memory this clone does not have but a remote's tracking ref does (git
 * fetch brought it after `git mem remote setup`): the error says to pull.
 */
async function onRemote(store: Store, ref: string) {
  const { listRemotes, readTracking, trackingRef } = await import('../merge/remote.js');
  for (const remote of await listRemotes(store).catch(() => [] as string[])) {
    const tip = (await readTracking(store, remote)).memory;
    if (!tip) continue;
    try {
      const id = (await store.catalogAt(tip, false)).resolve(ref);
      // deleted here since: a pull cannot bring it back (the deletion wins), so say what happened
      const local = await store.tip();
      if (local && (await store.readPath(local, tombstonePath(id))))
        return err(
          'E_NOT_FOUND',
          `${id.slice(0, 12)} was deleted in this clone (${remote} still has it until the next sync)`,
          `git mem history ${id.slice(0, 12)} shows its versions; git mem sync sends the deletion`,
        );
      return err(
        'E_NOT_FOUND',
        `${id.slice(0, 12)} is not in this clone's memory yet; ${remote} has it (${trackingRef(remote)})`,
        'run git mem pull',
      );
    } catch {}
  }
  return undefined;
}

export default defineCommand({
  command: 'show <ref>',
  describe: 'show one memory by id, unique id prefix or alias',
  builder: (y) =>
    y
      .positional('ref', { type: 'string', describe: 'id, id prefix or alias' })
      .option('at', { type: 'string', describe: 'as the store was at a revision or date' })
      .option('global', { type: 'boolean', describe: 'read the personal global store' }),
  async run(a, ctx) {
    const project = await openStore(ctx, { global: a.global });
    // a memory of a team store (a search hit marked "from NAME") is shown from there
    let store = project;
    let from: string | undefined;
    const at = a.at ? await store.resolveAt(a.at) : undefined;
    const ref = String(a.ref);
    const got = await store.get(ref, at).catch(async (e) => {
      const code = (e as { code?: string }).code;
      if (at || a.global || (code !== 'E_NOT_FOUND' && code !== 'E_NOT_INITIALIZED')) throw e;
      // a clone with no store of its own takes in the remote's (auto-fetch); the error alone says what else to run
      const adopted = await adoptForRead(ctx, store, a.global, true);
      if (adopted.action === 'pulled') {
        ctx.io.err(`git-mem: ${adoptionLine(adopted)}\n`);
        return store.get(ref);
      }
      if (code === 'E_NOT_FOUND')
        for (const t of await teamStoresOf(ctx, project)) {
          const hit = await t.store.get(ref).catch(() => undefined);
          if (!hit) continue;
          store = t.store;
          from = t.name;
          return hit;
        }
      throw (await onRemote(store, ref)) ?? e;
    });
    const { record, catalog } = got;
    // a person opened it: a use of this clone's memory (not an old version, not a team store's)
    if (!at && store === project) (await import('../search/usage.js')).recordUse(store.repo, [record.id]);
    // the commit that last changed it: what made it (operation, agent) and its signature
    const { lastChange, signatureText } = await import('../gitstore/commit-info.js');
    const last = await lastChange(store, recordPath(record.id), at ?? undefined);
    const lastJSON = last && {
      commit: last.commit,
      date: last.date,
      author: last.author,
      subject: last.subject,
      operation: last.operation,
      by: last.by,
      signature: last.signature,
    };
    emit(ctx, { ...recordToJSON(record), lastChange: lastJSON, ...(from ? { store: from } : {}) }, () => {
      const text = `${from ? `store:      ${from}\n` : ''}${recordText(record, catalog, colors(ctx))}`;
      if (!last) return text;
      const c = colors(ctx);
      const by = last.by ? `, ${provenanceText(last.by)}` : '';
      const line = `changed:    ${c.id(last.commit.slice(0, 12))} ${last.date} ${last.operation ?? last.subject}${by}; ${signatureText(last.signature)}`;
      // after the header lines, before the body
      const cut = text.indexOf('\n\n');
      return cut < 0 ? `${text}\n${line}` : `${text.slice(0, cut)}\n${line}${text.slice(cut)}`;
    });
  },
});
