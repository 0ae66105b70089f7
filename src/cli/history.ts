import { err } from '../errors.js';
import { type CommitInfo, commitInfo, signatureText } from '../gitstore/commit-info.js';
import type { Store } from '../gitstore/store.js';
import { provenanceText } from '../model/provenance.js';
import { parseRecord, recordPath, recordToJSON, tombstonePath } from '../model/record.js';
import { defineCommand } from './command.js';
import { emit, openStore } from './context.js';
import { colors } from './output.js';

/** Signatures verified per listing (each runs gpg or ssh-keygen); older entries have signature null. */
const VERIFY = 200;

/** What made each commit and its signature, for the JSON of an entry. */
function provenanceOf(info: CommitInfo | undefined) {
  return {
    operation: info?.operation ?? null,
    ids: info?.ids ?? [],
    by: info?.by ?? null,
    signature: info?.signature ?? null,
  };
}

/**
 * "agent claude-code (session …)" and the signature, for people: the agent whenever one made the
 * commit; the signature when any shown commit is signed (then an unsigned one stands out).
 */
async function annotate(store: Store, commits: string[]) {
  const infos = await commitInfo(store, commits, VERIFY);
  const signed = [...infos.values()].some((i) => i.signature && i.signature.status !== 'none');
  return {
    infos,
    note: (commit: string) => {
      const i = infos.get(commit);
      const parts = [
        i?.by?.kind === 'agent' ? provenanceText(i.by) : '',
        signed && i?.signature ? signatureText(i.signature) : '',
      ].filter(Boolean);
      return parts.join('; ');
    },
  };
}

export default defineCommand({
  command: 'history [ref]',
  describe: 'every version of a memory (or of the whole store) with author, date and commit',
  aliases: ['log'],
  builder: (y) =>
    y
      .positional('ref', { type: 'string', describe: 'id, id prefix or alias (omit for the whole store)' })
      .option('limit', { alias: 'n', type: 'number', describe: 'at most N entries' })
      .option('global', { type: 'boolean' }),
  async run(a, ctx) {
    const store = await openStore(ctx, { global: a.global, read: true });
    await store.requireTip();
    if (!a.ref) {
      const log = (await store.log()).slice(0, a.limit ?? Number.POSITIVE_INFINITY);
      const { infos, note } = await annotate(
        store,
        log.map((l) => l.commit),
      );
      const out = log.map((l) => ({ ...l, ...provenanceOf(infos.get(l.commit)) }));
      emit(ctx, out, () =>
        log
          .map((l) => {
            const n = note(l.commit);
            return `${l.commit.slice(0, 12)}  ${l.date}  ${l.author}  ${l.subject}${n ? `  [${n}]` : ''}`;
          })
          .join('\n'),
      );
      return;
    }
    let id: string;
    try {
      id = (await store.catalog()).resolve(String(a.ref));
    } catch (e) {
      // a deleted record still has a history: resolve against full ids / prefixes of tombstones
      const ref = String(a.ref).toUpperCase();
      const tip = await store.requireTip();
      const tomb = (await store.lsTree(tip, 'tombstones')).map((t) =>
        t.path
          .split('/')
          .pop()!
          .replace(/\.yaml$/, ''),
      );
      const m = tomb.filter((t) => t.startsWith(ref));
      if (m.length !== 1) throw e;
      id = m[0];
    }
    const entries = await store.log(undefined, undefined).then(async () => {
      const byPath = await store.log(recordPath(id));
      const tomb = await store.log(tombstonePath(id));
      const all = new Map([...byPath, ...tomb].map((l) => [l.commit, l]));
      return [...all.values()].sort((x, y) => (x.date < y.date ? 1 : x.date > y.date ? -1 : 0));
    });
    if (!entries.length) throw err('E_NOT_FOUND', `no history for ${a.ref}`);
    const versions: Array<
      Record<string, unknown> & {
        commit: string;
        date: string;
        author: string;
        email: string;
        subject: string;
        deleted: boolean;
      }
    > = [];
    const shown = entries.slice(0, a.limit ?? Number.POSITIVE_INFINITY);
    const { infos, note } = await annotate(
      store,
      shown.map((l) => l.commit),
    );
    for (const l of shown) {
      const buf = await store.readPath(l.commit, recordPath(id));
      let record = null;
      if (buf) {
        try {
          record = recordToJSON(parseRecord(buf.toString('utf8')));
        } catch {}
      }
      versions.push({ ...l, ...provenanceOf(infos.get(l.commit)), deleted: !buf, record });
    }
    emit(ctx, versions, () =>
      versions
        .map(
          (v) =>
            `${colors(ctx).id(v.commit.slice(0, 12))}  ${v.date}  ${v.author} <${v.email}>\n    ${v.subject}${v.deleted ? '  (deleted)' : ''}${note(v.commit) ? `\n    ${note(v.commit)}` : ''}`,
        )
        .join('\n'),
    );
  },
});
