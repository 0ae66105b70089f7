import { add } from '../commands/add.js';
import { err } from '../errors.js';
import { parseAddInput } from '../model/patch.js';
import { mark } from '../trace.js';
import { defineCommand } from './command.js';
import { emit, openStore, readContent, secretScanFor } from './context.js';
import { addInputOf, withFieldOptions } from './field-options.js';

export default defineCommand({
  command: 'add',
  describe: 'add a memory (content from --content, --file, stdin, or the editor on a terminal)',
  builder: (y) =>
    // the fields' options come from the field table (src/model/fields.ts), as update's do
    // no option is demanded: the title may come from the editor; the add input's parser wants one (E_INVALID_ARG)
    withFieldOptions(y, 'add', {
      type: { alias: 't', default: 'decision' },
      title: { describe: 'one-line title (at most 300 characters); required, unless the editor gives it' },
    })
      .option('content', { alias: 'c', type: 'string', describe: 'the body text' })
      .option('file', { alias: 'f', type: 'string', describe: 'read the body from a file' })
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
      .option('store', {
        type: 'string',
        describe: 'add to a writable team store (git mem store list) and sync it',
      })
      .option('allow-secret', { type: 'boolean', describe: 'store text even if it looks like a secret' })
      .option('force', {
        type: 'boolean',
        describe: 'add even if a memory with the same title and text exists (a different title only warns)',
      }),
  async run(a, ctx) {
    mark('add: start');
    const f = a as Record<string, unknown>;
    // the duplicate check's module loads while the content and the store are read
    import('../search/duplicate-check.js').catch(() => {});
    if (a.store !== undefined) {
      if (a.global)
        throw err(
          'E_INVALID_ARG',
          'pass either --store or --global, not both',
          'the global store is personal',
        );
      if (a.anchor?.length || a.symbol?.length)
        throw err(
          'E_INVALID_ARG',
          '--anchor and --symbol do not apply to a team store',
          "a team store's memories describe another repository's code; anchor project memories without --store",
        );
    }
    // without content on a terminal: the editor, as git commit (src/cli/editor.ts), once the store is open
    const editing = ctx.io.stdinIsTTY && a.content === undefined && a.file === undefined;
    let body = editing ? '' : ((await readContent(ctx, a, true)) ?? '');
    // the one reading of an add's fields (src/model/patch.ts), as the MCP tool's: before the store opens
    let fields = editing ? undefined : parseAddInput({ ...addInputOf(f), body });
    const project = await openStore(ctx, { global: a.global, create: a.store === undefined });
    let team: import('../commands/stores.js').TeamStore | undefined;
    if (a.store !== undefined) {
      const { writableStore } = await import('../commands/stores.js');
      team = await writableStore(project.repo, a.store);
      ctx.stores.push(team.store);
    }
    const store = team?.store ?? project;
    mark('add: store open');
    if (editing) {
      const { editMessage, editTemplate } = await import('./editor.js');
      const given = ['type', 'tags', 'scope', 'alias', 'expires', 'status', 'confidence', 'source']
        .filter((k) => f[k] !== undefined)
        .map((k) => `${k}: ${[f[k]].flat().join(', ')}`);
      const edited = await editMessage(
        store.repo,
        ctx.env,
        editTemplate(f.title === undefined ? '' : String(f.title), '', [
          `Adding a memory${team ? ` to ${team.name}` : ''} with`,
          ...given.map((g) => `  ${g}`),
        ]),
      );
      f.title = edited.title;
      body = edited.body;
      if (!body.trim())
        throw err(
          'E_INVALID_ARG',
          'aborting: the body is empty',
          'write the body after the title and a blank line',
        );
      fields = parseAddInput({ ...addInputOf(f), body });
    }
    const { record, commit, notes } = await add(store, fields!, {
      cwd: ctx.cwd,
      env: ctx.env,
      anchors: a.anchor,
      symbols: a.symbol,
      duplicates: a.force ? 'force' : 'person',
      daemon: !a.global && !team,
      allowSecret: !!a['allow-secret'],
      secretScan: secretScanFor(ctx, store),
      warn: (line) => ctx.io.err(`${line}\n`),
    });
    mark('add: written');
    // a team store's memory is shared at once; a failed sync keeps it here, to be pushed by the next one
    let synced: { store: string; pushed: boolean; error?: string } | undefined;
    if (team) {
      const { syncStore } = await import('../commands/stores.js');
      try {
        const r = await syncStore(team, { interactive: ctx.io.stdinIsTTY });
        synced = { store: team.name, pushed: 'pushed' in r && r.pushed };
      } catch (e) {
        const line = (e as { toLine?: () => string }).toLine?.() ?? String((e as Error).message ?? e);
        synced = { store: team.name, pushed: false, error: line };
        ctx.io.err(
          `git-mem: warning: added to ${team.name} here but not shared: ${line}; run git mem store sync ${team.name}\n`,
        );
      }
    }
    emit(
      ctx,
      { id: record.id, commit, alias: record.alias ?? null, ...(synced ? { store: synced } : {}) },
      () =>
        [
          `Added ${record.id.slice(0, 12)} ${record.type} "${record.title}"${team ? ` to ${team.name}` : ''} (${commit.slice(0, 12)})`,
          ...notes,
          ...(synced?.pushed ? [`Pushed to ${team!.name}`] : []),
        ].join('\n'),
    );
  },
});
