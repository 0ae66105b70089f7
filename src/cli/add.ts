import { addMemory } from '../commands/memory.js';
import { err } from '../errors.js';
import { parseDateInput } from '../model/record.js';
import { assertRecordClean, scanRecord } from '../safety/secrets.js';
import { mark } from '../trace.js';
import { defineCommand } from './command.js';
import { emit, list, openStore, readContent, secretPolicy } from './context.js';
import { addHooks } from './hooks-registry.js';

/** A duplicate check that asked to stop without an error (its exit code is returned). */
class StopAdd extends Error {}

export default defineCommand({
  command: 'add',
  describe: 'add a memory (content from --content, --file or stdin)',
  builder: (y) =>
    y
      .option('type', {
        alias: 't',
        type: 'string',
        default: 'decision',
        describe: 'memory type (decision, constraint, known_fix, rule, …)',
      })
      .option('title', { type: 'string', demandOption: true, describe: 'one-line title' })
      .option('content', { alias: 'c', type: 'string', describe: 'the body text' })
      .option('file', { alias: 'f', type: 'string', describe: 'read the body from a file' })
      .option('tags', { type: 'string', describe: 'comma-separated tags' })
      .option('scope', { type: 'string', array: true, describe: 'globs the memory applies to (rules)' })
      .option('alias', { type: 'string', describe: 'path-like alias, e.g. standards/ts/eslint' })
      .option('expires', { type: 'string', describe: 'expiry: ISO date or duration (30d, 2w)' })
      .option('status', { type: 'string', describe: 'initial status (default active)' })
      .option('confidence', { type: 'number', describe: 'confidence 0..1' })
      .option('source', { type: 'string', describe: 'where this came from (URL, person, session)' })
      .option('anchor', {
        type: 'string',
        array: true,
        describe: 'anchor to code: PATH[:START[-END]] (repeatable)',
      })
      .option('symbol', {
        type: 'string',
        array: true,
        describe: 'anchor to a symbol: [PATH#]NAME (repeatable)',
      })
      .option('global', { type: 'boolean', describe: 'add to the personal global store' })
      .option('allow-secret', { type: 'boolean', describe: 'store text even if it looks like a secret' })
      .option('force', {
        type: 'boolean',
        describe: 'add even if a memory with the same title and text exists (a different title only warns)',
      }),
  async run(a, ctx) {
    mark('add: start');
    // the duplicate check's module loads while the content and the store are read
    import('../search/add-hook.js').catch(() => {});
    // `--scope ''` would vanish in the comma split below and store an unscoped memory
    for (const s of [a.scope ?? []].flat())
      if (!String(s).trim())
        throw err(
          'E_INVALID_ARG',
          'scope "" is empty',
          'scopes are globs relative to the repository root, e.g. src/db/**',
        );
    const body = (await readContent(ctx, a, true)) ?? '';
    const store = await openStore(ctx, { global: a.global, create: true });
    mark('add: store open');
    const fields = {
      title: a.title,
      body,
      source: a.source,
      tags: list(a.tags),
      scope: list(a.scope),
      alias: a.alias,
    };
    const policyP = secretPolicy(ctx, store, a['allow-secret'], {
      ...fields,
      tags: fields.tags.join(','),
      scope: fields.scope.join(' '),
    });
    policyP.catch(() => {});
    // a likely secret is refused before the duplicate check sees the text (it may go to an embedding endpoint)
    if (scanRecord(fields).length && !(await policyP)) assertRecordClean(fields);
    const hooks = await addHooks(ctx, store, a, { person: true });
    mark('add: hooks');
    const input = {
      type: a.type,
      title: a.title,
      body,
      tags: list(a.tags),
      scope: list(a.scope),
      alias: a.alias,
      expires: a.expires ? parseDateInput(a.expires) : undefined,
      status: a.status,
      confidence: a.confidence,
      source: a.source,
      anchors: hooks.anchors,
      allowSecret: false,
    };
    // the duplicate check (a daemon round trip) goes out first; it runs while the settings
    // are read and the objects are written, and only the ref waits for it (Store.write's gate)
    const stopP = hooks.beforeAdd?.(input);
    stopP?.catch(() => {});
    const settingsP = Promise.all([policyP, store.ident()]);
    settingsP.catch(() => {});
    const stopped = { code: undefined as number | undefined };
    const gate = stopP?.then((code) => {
      mark('add: dedup done');
      if (code !== undefined) {
        stopped.code = code;
        throw new StopAdd();
      }
    });
    gate?.catch(() => {}); // awaited by the write; this only marks it handled until then
    const [allowSecret] = await settingsP;
    input.allowSecret = allowSecret;
    mark('add: settings+ident');
    let written: Awaited<ReturnType<typeof addMemory>>;
    try {
      written = await addMemory(store, input, { ...hooks, gate });
    } catch (e) {
      if (e instanceof StopAdd) return stopped.code;
      throw e;
    }
    const { record, commit } = written;
    mark('add: written');
    emit(ctx, { id: record.id, commit, alias: record.alias ?? null }, () => {
      const notes = hooks.notes?.(record) ?? [];
      return [
        `Added ${record.id.slice(0, 12)} ${record.type} "${record.title}" (${commit.slice(0, 12)})`,
        ...notes,
      ].join('\n');
    });
  },
});
