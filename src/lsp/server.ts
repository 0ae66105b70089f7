/**
 * `git mem lsp`: the memory in the editor, as a Language Server (LSP 3.17
 * over stdio). Hover, code lenses and diagnostics come from views computed in
 * the background (./view.ts) and kept per file until HEAD or the memory ref
 * moves; a request never waits for git unless the file's first view is not
 * ready yet. Code actions and commands call the operations: the injected
 * `verify`, `reanchor` (src/anchors/reanchor.ts) and the injected `openInUi`
 * (else the command to run: ./params.ts `openCommand`).
 *
 * stdout carries the protocol only; anything else goes to stderr.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { blame } from '../commands/blame.js';
import { maybeGlobalStore, openStore, type RunContext, teamStoresOf } from '../commands/context.js';
import { type NamedStore, rulesFor } from '../commands/rules.js';
import { isGitMemError } from '../errors.js';
import type { Store } from '../gitstore/store.js';
import { isId } from '../model/id.js';
import type { MemoryRecord } from '../model/record.js';
import { usageCounts } from '../search/usage.js';
import { type ContentChange, type Doc, Documents, type Position, type Range } from './documents.js';
import { asResponse, bad, int, openCommand, str } from './params.js';
import { Connection, ErrorCodes, ResponseError } from './rpc.js';
import {
  codeLenses,
  diagnostics,
  type FileView,
  hoverMarkdown,
  memoriesAt,
  place,
  placedOf,
} from './view.js';

export const COMMANDS = ['git-mem.verify', 'git-mem.reanchor', 'git-mem.open'] as const;

export interface LspOptions {
  stdin?: Readable;
  stdout?: Writable;
  version?: string;
  /**
   * Confirms that a memory still holds (`git mem verify ID`): what the "Confirm" code action
   * runs. Absent: the command answers that verify is unavailable.
   */
  verify?: (id: string, store: Store) => Promise<unknown>;
  /**
   * Opens a memory in `git mem ui`: readies a page server for the store and answers the
   * `file:` URI of a page, readable by this user alone, that sends the browser on to the memory
   * (the one-time link is in that file, never in a process's arguments). The "Open" action asks
   * the editor to show it (`window/showDocument`, external); without one, or an editor that cannot
   * show documents, it says which command to run.
   */
  openInUi?: (id: string, store: Store) => Promise<string>;
  /** How often HEAD and the memory ref are looked at (ms; default 500). */
  pollMs?: number;
  log?: (line: string) => void;
}

export interface LspEnv {
  store: Store;
  global?: Store;
  teams: NamedStore[];
}

interface Job {
  path: string;
  p?: Promise<FileView>;
  resolve: (v: FileView) => void;
  reject: (e: unknown) => void;
}

class Server {
  readonly docs = new Documents();
  private readonly views = new Map<string, Promise<FileView>>();
  private state: { head: string | null; tip: string | null } = { head: null, tip: null };
  private initialized = false;
  private shutdown = false;
  private lensRefresh = false;
  private showDocument = false;
  private root = '';
  /** the stores, opened at initialize on the client's workspace folder */
  private env!: LspEnv;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private poller?: NodeJS.Timeout;
  private polling = false;
  private stopped = false;
  /** views to compute, one at a time (computed at HEAD and the tip as they are when they start) */
  private queue: Job[] = [];
  private computing = false;

  constructor(
    /** opens the stores of the repository at a folder */
    private readonly open: (dir: string | undefined) => Promise<LspEnv>,
    private readonly conn: Connection,
    private readonly opts: LspOptions,
  ) {}

  log(line: string): void {
    if (this.stopped) return; // the stores are closing: their readers' failures are no news
    (this.opts.log ?? ((l: string) => process.stderr.write(`${l}\n`)))(line);
  }

  /** The repository path of a file URI; null outside the work tree or for another scheme. */
  pathOf(uri: string): string | null {
    if (!this.root || !uri.startsWith('file:')) return null;
    let f: string;
    try {
      f = realOr(fileURLToPath(uri));
    } catch {
      return null;
    }
    const r = relative(this.root, f);
    if (!r || r.startsWith('..') || isAbsolute(r)) return null;
    return r.split(sep).join('/');
  }

  private async headAndTip(): Promise<{ head: string | null; tip: string | null }> {
    const [h, tip] = await Promise.all([
      this.env.store.catFile.read('HEAD^{commit}').catch(() => null),
      this.env.store.tip().catch(() => null),
    ]);
    return { head: h?.oid ?? null, tip };
  }

  /** HEAD and the tip when the server starts: every view waits for them (a didOpen may come first). */
  private ready?: Promise<void>;

  start(): void {
    this.ready = this.headAndTip().then((s) => {
      this.state = s;
    });
    const ms = this.opts.pollMs ?? 500;
    this.poller = setInterval(() => void this.poll(), ms);
    this.poller.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.poller) clearInterval(this.poller);
    for (const t of this.timers.values()) clearTimeout(t);
  }

  /** HEAD or the memory ref moved (a commit, a branch switch, another process's add, a sync): every view again. */
  private async poll(): Promise<void> {
    if (this.polling) return;
    await this.ready;
    this.polling = true;
    try {
      const now = await this.headAndTip();
      if (now.head !== this.state.head || now.tip !== this.state.tip) {
        this.state = now;
        this.refresh();
      }
    } catch (e) {
      this.log(`git-mem lsp: ${(e as Error)?.message ?? e}`);
    } finally {
      this.polling = false;
    }
  }

  refresh(): void {
    this.views.clear();
    // views still waiting their turn are computed at the new state: they stay
    for (const j of this.queue) if (j.p) this.views.set(j.path, j.p);
    for (const d of this.docs.all()) this.schedule(d.uri, 0);
    if (this.lensRefresh) this.conn.request('workspace/codeLens/refresh').catch(() => {});
  }

  /**
   * The view of a file at the current HEAD and tip, computed once (in the background after open).
   * Views are computed one at a time (each is a blame of the file: git reads and some CPU), so a
   * burst of opened files does not starve the requests between them; a file a request waits for
   * (`urgent`) goes before those opened in the background.
   */
  view(path: string, urgent = false): Promise<FileView> {
    const v = this.views.get(path);
    if (v) {
      if (urgent) this.promote(path);
      return v;
    }
    let job!: Job;
    const p = new Promise<FileView>((resolve, reject) => {
      job = { path, resolve, reject };
    });
    job.p = p;
    if (urgent) this.queue.unshift(job);
    else this.queue.push(job);
    this.views.set(path, p);
    p.catch(() => {
      if (this.views.get(path) === p) this.views.delete(path);
    });
    void this.pump();
    return p;
  }

  private promote(path: string): void {
    const i = this.queue.findIndex((j) => j.path === path);
    if (i > 0) this.queue.unshift(...this.queue.splice(i, 1));
  }

  private async pump(): Promise<void> {
    if (this.computing) return;
    this.computing = true;
    try {
      for (let job = this.queue.shift(); job; job = this.queue.shift()) {
        await this.compute(job.path).then(job.resolve, job.reject);
        // let the requests that came in meanwhile run before the next view
        await new Promise((r) => setImmediate(r));
      }
    } finally {
      this.computing = false;
    }
  }

  private async compute(path: string): Promise<FileView> {
    const { store, global, teams } = this.env;
    await this.ready;
    const { head, tip } = this.state;
    const empty: FileView = { path, head, tip, headLines: null, placed: [], rules: [], usage: new Map() };
    if (!head) return empty;
    const [b, rules] = await Promise.all([
      blame(store, { path }).catch((e) => {
        // a file not in HEAD's tree (new, untracked) has no anchored memories at HEAD
        if (isGitMemError(e) && ['E_NOT_FOUND', 'E_REV', 'E_INVALID_ARG'].includes(e.code)) return null;
        throw e;
      }),
      rulesFor(store, path, global, teams),
    ]);
    // the file at the commit blame judged (HEAD may have moved since the last look: the next one catches up)
    const file = await store.catFile.read(`${b?.head ?? head}:${path}`).catch(() => null);
    const headLines = file?.type === 'blob' ? linesOf(file.content.toString('utf8')) : null;
    const memories = b?.memories ?? [];
    let records = new Map<string, MemoryRecord>();
    if (memories.length && b?.memoryCommit) {
      const cat = await store.catalogAt(b.memoryCommit);
      const { loadRecords } = await import('../anchors/record-cache.js');
      const wanted = [...new Set(memories.map((m) => m.id))]
        .map((id) => ({ id, oid: cat.oidOf(id) ?? '' }))
        .filter((w) => w.oid);
      records = await loadRecords(store, wanted);
    }
    return {
      path,
      head,
      tip,
      headLines,
      placed: memories.map((m) => placedOf(m, records.get(m.id), headLines?.length ?? 0)),
      rules,
      usage: usageCounts(store.repo),
    };
  }

  /** Diagnostics for a document, published shortly after its last change (edits in a burst publish once). */
  schedule(uri: string, ms = 150): void {
    clearTimeout(this.timers.get(uri));
    this.timers.set(
      uri,
      setTimeout(() => {
        this.timers.delete(uri);
        void this.publish(uri);
      }, ms),
    );
  }

  private async publish(uri: string): Promise<void> {
    const doc = this.docs.get(uri);
    const path = this.pathOf(uri);
    if (!doc || !path) return;
    try {
      const v = await this.view(path);
      if (this.docs.get(uri) !== doc) return; // closed meanwhile
      this.conn.notify('textDocument/publishDiagnostics', {
        uri,
        version: doc.version,
        diagnostics: diagnostics(v, doc),
      });
    } catch (e) {
      this.log(`git-mem lsp: ${path}: ${(e as Error)?.message ?? e}`);
    }
  }

  private async docView(params: unknown, signal: AbortSignal): Promise<{ doc?: Doc; view?: FileView }> {
    const uri = str((params as { textDocument?: { uri?: unknown } })?.textDocument?.uri);
    if (!uri) bad('textDocument.uri is required');
    const path = this.pathOf(uri);
    if (!path) return {};
    const view = await this.view(path, true);
    if (signal.aborted) throw new ResponseError(ErrorCodes.RequestCancelled, 'cancelled');
    return { doc: this.docs.get(uri), view };
  }

  wire(): void {
    const c = this.conn;
    const guard =
      <T>(h: (p: unknown, s: AbortSignal) => T) =>
      (p: unknown, s: AbortSignal) => {
        if (!this.initialized) throw new ResponseError(ErrorCodes.ServerNotInitialized, 'initialize first');
        if (this.shutdown) throw new ResponseError(ErrorCodes.InvalidRequest, 'the server is shutting down');
        return h(p, s);
      };
    c.onRequest('initialize', async (p) => {
      if (this.initialized || this.env)
        throw new ResponseError(ErrorCodes.InvalidRequest, 'already initialized');
      const q = p as {
        capabilities?: {
          workspace?: { codeLens?: { refreshSupport?: boolean } };
          window?: { showDocument?: { support?: boolean } };
        };
        workspaceFolders?: Array<{ uri?: unknown }> | null;
        rootUri?: unknown;
        rootPath?: unknown;
      };
      this.lensRefresh = q?.capabilities?.workspace?.codeLens?.refreshSupport === true;
      this.showDocument = q?.capabilities?.window?.showDocument?.support === true;
      // the repository is the workspace folder's (the editor may start the server anywhere)
      this.env = await this.open(folderOf(q)).catch(asResponse);
      this.root = realOr(this.env.store.repo.workTree ?? this.env.store.repo.gitDir);
      this.start();
      this.initialized = true;
      return {
        capabilities: {
          positionEncoding: 'utf-16',
          textDocumentSync: { openClose: true, change: 2, save: { includeText: false } },
          hoverProvider: true,
          codeLensProvider: { resolveProvider: false },
          codeActionProvider: { codeActionKinds: ['quickfix'] },
          executeCommandProvider: { commands: [...COMMANDS] },
        },
        serverInfo: { name: 'git-mem', version: this.opts.version ?? '0.1.0' },
      };
    });
    c.onNotification('initialized', () => {});
    c.onRequest('shutdown', () => {
      this.shutdown = true;
      this.stopped = true;
      return null;
    });
    c.onNotification('exit', () => c.end());
    c.onNotification('textDocument/didOpen', (p) => {
      const d = (p as { textDocument?: { uri?: unknown; text?: unknown; version?: unknown } })?.textDocument;
      const uri = str(d?.uri);
      if (!uri || typeof d?.text !== 'string') return;
      this.docs.open(uri, d.text, typeof d.version === 'number' ? d.version : 0);
      const path = this.pathOf(uri);
      if (path) void this.view(path).catch(() => {}); // warm it now: the first hover does not wait
      this.schedule(uri, 0);
    });
    c.onNotification('textDocument/didChange', (p) => {
      const q = p as { textDocument?: { uri?: unknown; version?: unknown }; contentChanges?: unknown };
      const doc = this.docs.get(str(q?.textDocument?.uri));
      if (!doc || !Array.isArray(q.contentChanges)) return;
      doc.apply(
        q.contentChanges as ContentChange[],
        typeof q.textDocument?.version === 'number' ? q.textDocument.version : doc.version + 1,
      );
      this.schedule(doc.uri);
    });
    c.onNotification('textDocument/didSave', (p) => {
      const uri = str((p as { textDocument?: { uri?: unknown } })?.textDocument?.uri);
      if (this.docs.get(uri)) this.schedule(uri, 0);
    });
    c.onNotification('textDocument/didClose', (p) => {
      const uri = str((p as { textDocument?: { uri?: unknown } })?.textDocument?.uri);
      if (!this.docs.get(uri)) return;
      this.docs.close(uri);
      clearTimeout(this.timers.get(uri));
      this.conn.notify('textDocument/publishDiagnostics', { uri, diagnostics: [] });
    });

    c.onRequest(
      'textDocument/hover',
      guard(async (p, signal) => {
        const pos = (p as { position?: Position })?.position;
        if (int(pos?.line) === null) bad('position.line is required');
        const { doc, view } = await this.docView(p, signal);
        if (!view) return null;
        const shown = memoriesAt(view, doc, pos!.line);
        if (!shown.length) return null;
        const l = shown[0].lines;
        return {
          contents: { kind: 'markdown', value: hoverMarkdown(view, shown) },
          ...(l
            ? {
                range: {
                  start: { line: l[0] - 1, character: 0 },
                  end: { line: l[1] - 1, character: doc?.lines[l[1] - 1]?.length ?? 0 },
                },
              }
            : {}),
        };
      }),
    );
    c.onRequest(
      'textDocument/codeLens',
      guard(async (p, signal) => {
        const { doc, view } = await this.docView(p, signal);
        return view ? codeLenses(view, doc) : [];
      }),
    );
    c.onRequest(
      'textDocument/codeAction',
      guard((p, signal) => this.codeActions(p, signal)),
    );
    c.onRequest(
      'workspace/executeCommand',
      guard((p) => this.execute(p)),
    );
  }

  /** The code actions for a selection: confirm, re-anchor and open each memory on its lines. */
  private async codeActions(p: unknown, signal: AbortSignal): Promise<unknown[]> {
    const q = p as {
      textDocument?: { uri?: unknown };
      range?: Range;
      context?: { diagnostics?: unknown[] };
    };
    const r = q?.range;
    if (int(r?.start?.line) === null || int(r?.end?.line) === null) bad('range is required');
    const { doc, view } = await this.docView(p, signal);
    if (!view) return [];
    const uri = str(q.textDocument?.uri);
    const first = r!.start.line + 1;
    const last = Math.max(
      first,
      r!.end.character === 0 && r!.end.line > r!.start.line ? r!.end.line : r!.end.line + 1,
    );
    const seen = new Set<string>();
    const out: unknown[] = [];
    const diags = Array.isArray(q.context?.diagnostics) ? q.context.diagnostics : [];
    for (const s of place(view, doc)) {
      const on = s.lines ? s.lines[0] <= last && s.lines[1] >= first : first === 1;
      if (!on || seen.has(s.p.m.id)) continue;
      seen.add(s.p.m.id);
      const { id, title } = s.p.m;
      const t = title.length > 50 ? `${title.slice(0, 49)}…` : title;
      const mine = diags.filter((d) => (d as { data?: { id?: unknown } })?.data?.id === id);
      out.push(
        {
          title: `Confirm "${t}" still holds`,
          kind: 'quickfix',
          diagnostics: mine,
          command: { title: 'Confirm memory', command: 'git-mem.verify', arguments: [id] },
        },
        {
          title: `Re-anchor "${t}" to line${first === last ? ` ${first}` : `s ${first}-${last}`}`,
          kind: 'quickfix',
          diagnostics: mine,
          command: {
            title: 'Re-anchor memory',
            command: 'git-mem.reanchor',
            arguments: [id, uri, first, last],
          },
        },
        {
          title: `Open "${t}" in git mem ui`,
          kind: 'quickfix',
          command: { title: 'Open memory', command: 'git-mem.open', arguments: [id] },
        },
      );
    }
    return out;
  }

  /** A command of a code action (COMMANDS), by its name and arguments. */
  private async execute(p: unknown): Promise<unknown> {
    const q = p as { command?: unknown; arguments?: unknown[] };
    const args = Array.isArray(q?.arguments) ? q.arguments : [];
    const id = str(args[0]);
    if (!isId(id)) bad('the first argument is a memory id');
    switch (q?.command) {
      case 'git-mem.verify': {
        if (!this.opts.verify)
          throw new ResponseError(
            ErrorCodes.RequestFailed,
            'verify is unavailable in this git-mem: update git-mem, or run git mem reanchor ID',
            { code: 'E_UNSUPPORTED' },
          );
        const r = await this.opts.verify(id, this.env.store).catch(asResponse);
        this.refresh();
        return r ?? null;
      }
      case 'git-mem.reanchor':
        return this.reanchor(id, str(args[1]), args[2], args[3]);
      case 'git-mem.open': {
        if (this.opts.openInUi && this.showDocument) {
          const uri = await this.opts.openInUi(id, this.env.store).catch(asResponse);
          const shown = (await this.conn
            .request('window/showDocument', { uri, external: true })
            .catch(() => undefined)) as { success?: boolean } | null | undefined;
          return { opened: shown?.success !== false, uri, route: openCommand(id).route };
        }
        const o = openCommand(id);
        this.conn.notify('window/showMessage', { type: 3, message: o.message });
        return o;
      }
      default:
        bad(`no command ${String(q?.command)}: the commands are ${COMMANDS.join(', ')}`);
    }
  }

  private async reanchor(id: string, uri: string, start: unknown, end: unknown): Promise<unknown> {
    const s = int(start);
    const e = int(end);
    if (s === null || e === null || s < 1 || e < s) bad('lines are 1-based, END at least START');
    const path = this.pathOf(uri);
    if (!path) bad('the document is not a file of this repository');
    const doc = this.docs.get(uri);
    if (doc) {
      // the anchor is made from the file on disk: the buffer must be what is saved
      let disk: string | null = null;
      try {
        disk = readFileSync(fileURLToPath(uri), 'utf8');
      } catch {}
      if (disk !== doc.text)
        throw new ResponseError(
          ErrorCodes.RequestFailed,
          `${path} has unsaved changes: save it, then re-anchor`,
          {
            code: 'E_ANCHOR',
          },
        );
    }
    const { reanchor } = await import('../anchors/reanchor.js');
    const r = await reanchor(this.env.store, id, this.root, [{ path, lines: [s, e] }]).catch(asResponse);
    this.refresh();
    return {
      id: r.record.id,
      commit: r.commit,
      status: r.record.status,
      anchors: r.record.anchors.map((a) => ({ path: a.path, lines: a.lines ?? null })),
      notes: r.notes,
    };
  }
}

/** The folder the client opened: its first workspace folder, else rootUri, else rootPath (none: the server's cwd). */
function folderOf(q: {
  workspaceFolders?: Array<{ uri?: unknown }> | null;
  rootUri?: unknown;
  rootPath?: unknown;
}): string | undefined {
  const uri = [q?.workspaceFolders?.[0]?.uri, q?.rootUri].find(
    (u) => typeof u === 'string' && u.startsWith('file:'),
  );
  if (typeof uri === 'string') {
    try {
      return fileURLToPath(uri);
    } catch {}
  }
  return typeof q?.rootPath === 'string' && isAbsolute(q.rootPath) ? q.rootPath : undefined;
}

function realOr(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

function linesOf(text: string): string[] {
  const ls = text.split('\n');
  if (ls.length && ls[ls.length - 1] === '') ls.pop();
  return ls.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/** The stores the server works on, opened once and kept warm (as the MCP server keeps them). */
export async function lspEnv(ctx: RunContext): Promise<LspEnv> {
  const keep = (s: Store) => {
    s.longLived = true;
    s.reflogMessage = 'mem: lsp server';
    return s;
  };
  const store = keep(await openStore(ctx));
  const g = await maybeGlobalStore(ctx);
  const global = g && g.repo.gitDir !== store.repo.gitDir ? keep(g) : undefined;
  const teams = (await teamStoresOf(ctx, store)).map((t) => ({ name: t.name, store: keep(t.store) }));
  return { store, global, teams };
}

/** Serves until the client sends exit or closes stdin. */
export async function serveLsp(ctx: RunContext, opts: LspOptions = {}): Promise<void> {
  const conn = new Connection(opts.stdin ?? process.stdin, opts.stdout ?? process.stdout);
  const open = (dir: string | undefined) =>
    lspEnv(!dir || dir === ctx.cwd ? ctx : { ...ctx, cwd: dir, repo: undefined, store: undefined });
  const server = new Server(open, conn, opts);
  conn.onError = (e) => server.log(`git-mem lsp: ${(e as Error)?.stack ?? e}`);
  server.wire();
  await conn.closed;
  server.stop();
}
