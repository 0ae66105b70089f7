/**
 * `git mem mcp`: the memory as an MCP server over stdio. The SDK is imported
 * here, lazily, only when the server starts. Tools and resources live in
 * ./mcp-tools.ts; this file wires them to the protocol over the bounded
 * stdio transport of ./mcp-transport.ts. stdout carries the protocol only;
 * anything else goes to stderr.
 */
import type { Readable, Writable } from 'node:stream';
import type { Tool } from '@modelcontextprotocol/server';
import { maybeGlobalStore, openStore, type RunContext, teamStoresOf } from '../commands/context.js';
import { isGitMemError } from '../errors.js';
import { resolveConfig } from '../gitstore/config.js';
import type { Store } from '../gitstore/store.js';
import { agentProvenance } from '../model/provenance.js';
import { ERROR_META } from './mcp-env.js';
import { OUTPUT_SCHEMAS } from './mcp-output.js';
import {
  callTool,
  INSTRUCTIONS,
  listResources,
  type McpEnv,
  MEMORY_URI_TEMPLATE,
  readResource,
  TOOLS,
} from './mcp-tools.js';

export interface ServeOptions {
  stdin?: Readable;
  stdout?: Writable;
  version?: string;
}

/**
 * The server is a long-lived process that may hold a large search index, and
 * spawning git from a big process gets slow (2.6 ms at 41 MiB RSS, 42 ms at
 * 1.2 GiB): reads go through the store's running `git cat-file --batch` (which
 * resolves the ref afresh on every request, so other processes' writes are
 * seen at once) and writes through its running git writers. One of them,
 * `git update-ref`, takes its reflog message when it starts, so the server's
 * ref updates are logged under one message naming it; each commit's own
 * subject says what changed (`git log -g refs/memory`).
 */
function serverStore(store: Store): Store {
  store.reflogMessage = 'mem: mcp server';
  store.longLived = true;
  // every write comes from an agent: the client names itself at initialize (serveMcp)
  const env = store.writerActor();
  store.actor = agentProvenance(env.kind === 'agent' ? env.agent : 'mcp client', env.session, env.model);
  return store;
}

/** Builds the handler environment for a run context. */
export async function mcpEnv(ctx: RunContext): Promise<McpEnv> {
  const store = serverStore(await openStore(ctx));
  const g = await maybeGlobalStore(ctx);
  const global = g ? serverStore(g) : undefined;
  const teams = (await teamStoresOf(ctx, store)).map((t) => ({ name: t.name, store: serverStore(t.store) }));
  return {
    addStatus: async () => {
      // read at each add (cheap next to the commit), so a changed setting applies without a restart
      try {
        return String((await resolveConfig(ctx.env, store)).values['mcp.add-status'] ?? 'active') ===
          'pending'
          ? 'pending'
          : 'active';
      } catch {
        return 'active'; // an unreadable config must not stop an add
      }
    },
    store,
    global,
    teams,
    cwd: ctx.cwd,
    env: ctx.env,
  };
}

/** The tools that may write (not marked read-only). */
const WRITES = new Set(TOOLS.filter((t) => !t.annotations?.readOnlyHint).map((t) => t.name));

/** The client's name as a stateless (2026-07-28) request gives it in `_meta`, if any. */
function clientNameOf(meta: Record<string, unknown> | undefined): string | undefined {
  const info = meta?.['io.modelcontextprotocol/clientInfo'];
  const name = info && typeof info === 'object' ? (info as { name?: unknown }).name : undefined;
  return typeof name === 'string' && name ? name : undefined;
}

/**
 * Serves until the client closes stdin. Resolves when the server has shut down.
 *
 * Both protocol eras from one server (the SDK's `serveStdio`): a client that opens with
 * `initialize` (2024-11-05 to 2025-11-25) gets the handshake and a session pinned to it; a
 * client that opens with `server/discover` or any request carrying the 2026-07-28 `_meta`
 * envelope is served statelessly, each request on its own. The same handlers answer both.
 */
export async function serveMcp(ctx: RunContext, opts: ServeOptions = {}): Promise<void> {
  const env = await mcpEnv(ctx);
  const [{ Server, ProtocolError }, { serveStdio }, { LineTransport }] = await Promise.all([
    import('@modelcontextprotocol/server'),
    import('@modelcontextprotocol/server/stdio'),
    import('./mcp-transport.js'),
  ]);
  /** the agent behind each write: the client, by the name it gave (at initialize, or in a request's `_meta`) */
  const nameClient = (name: string | undefined) => {
    if (!name) return;
    for (const s of [env.store, env.global]) {
      if (s && s.actor?.agent !== name) s.actor = agentProvenance(name, s.actor?.session, s.actor?.model);
    }
  };
  const factory = ({ era }: { era: 'legacy' | 'modern' }) => {
    const server = new Server(
      { name: 'git-mem', title: 'git-mem', version: opts.version ?? '0.1.0' },
      { capabilities: { tools: {}, resources: {} }, instructions: INSTRUCTIONS },
    );
    if (era === 'legacy') server.oninitialized = () => nameClient(server.getClientVersion()?.name);
    server.setRequestHandler('tools/list', async () => ({
      tools: TOOLS.map(
        (t): Tool => ({
          name: t.name,
          title: t.title,
          description: t.description,
          inputSchema: t.inputSchema as Tool['inputSchema'],
          outputSchema: OUTPUT_SCHEMAS[t.name] as Tool['outputSchema'],
          annotations: t.annotations,
        }),
      ),
    }));
    server.setRequestHandler('tools/call', async (req, c) => {
      nameClient(clientNameOf(c.mcpReq._meta as Record<string, unknown> | undefined));
      const result = await callTool(env, req.params.name, req.params.arguments);
      // a write answered: its change goes into the index once the answer is out, before the next call
      if (!result.isError && WRITES.has(req.params.name))
        setImmediate(async () => {
          const { refreshIndex } = await import('../search/index.js');
          for (const s of [env.store, env.global]) if (s) await refreshIndex(s).catch(() => {});
        });
      return result;
    });
    server.setRequestHandler('resources/list', async (req) => {
      try {
        return await listResources(env, req.params?.cursor);
      } catch (e) {
        throw new ProtocolError(-32602, isGitMemError(e) ? e.toLine() : String((e as Error)?.message ?? e));
      }
    });
    server.setRequestHandler('resources/templates/list', async () => ({
      resourceTemplates: [
        {
          uriTemplate: MEMORY_URI_TEMPLATE,
          name: 'memory',
          title: 'A memory by id, id prefix or alias',
          description: 'One memory record as stored: Markdown with YAML frontmatter.',
          mimeType: 'text/markdown',
        },
      ],
    }));
    server.setRequestHandler('resources/read', async (req) => {
      try {
        return { contents: [await readResource(env, req.params.uri)] };
      } catch (e) {
        // every failure is invalid params (-32602): the 2026-07-28 revision answers a missing
        // resource so too. Which failure it was is in the data: the code and data `git mem … --json`
        // gives, under the key a tool's error uses
        throw new ProtocolError(-32602, isGitMemError(e) ? e.toLine() : String((e as Error)?.message ?? e), {
          uri: req.params.uri,
          ...(isGitMemError(e) ? { [ERROR_META]: { code: e.code, ...(e.data ?? {}) } } : {}),
        });
      }
    });
    return server;
  };
  const stdin = opts.stdin ?? process.stdin;
  // bounded reads; oversized or malformed messages get JSON-RPC errors and the server goes on
  const transport = new LineTransport(stdin, opts.stdout ?? process.stdout);
  const handle = serveStdio(factory, {
    transport,
    onerror: (e) => ctx.io.err(`git-mem mcp: ${e?.message ?? e}\n`),
  });
  await new Promise<void>((resolve) => {
    const stop = () => {
      handle.close().then(resolve, resolve);
    };
    stdin.once('end', stop);
    stdin.once('close', stop);
  });
}
