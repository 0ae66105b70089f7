import { err, type GitMemError } from '../errors.js';
import type { CatalogEntry } from '../gitstore/catalog.js';
import type { Store } from '../gitstore/store.js';
import { insideRoot } from '../model/paths.js';
import type { MemoryRecord } from '../model/record.js';
import type { NamedStore } from '../search/rules.js';

import type { Json } from './mcp-schemas.js';

// ------------------------------------------------------------------ handlers

export interface ToolResult {
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
  structuredContent?: Json;
  [k: string]: unknown;
}

/** What the handlers need: the project store, optional personal store, the server's cwd and environment. */
export interface McpEnv {
  store: Store;
  global?: Store;
  /** team stores registered in the clone when the server started (src/commands/stores.ts), read after the project's */
  teams?: NamedStore[];
  cwd: string;
  /** The search daemon's mode and socket for add's duplicate check; default the store's. */
  env?: NodeJS.ProcessEnv;
  /** Status of memories added without one: `active`, or `pending` to send agents' additions through review (setting mcp.add-status). */
  addStatus?: () => Promise<'active' | 'pending'>;
}

/**
 * A tool's answer: the text a model reads (framed by callTool) and the same data as structured
 * content for a client that reads JSON (MCP `structuredContent`, described by the tool's
 * `outputSchema`): an object as it is, a list as `{items}`, Markdown as `{text}`.
 */
export const text = (t: string): ToolResult => ({
  content: [{ type: 'text', text: t }],
  structuredContent: { text: t },
});
export const json = (v: unknown): ToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(v, null, 2) }],
  structuredContent: Array.isArray(v) ? { items: v } : (v as Json),
});
/** The `_meta` key of a tool error's code and data (MCP keeps `structuredContent` for the outputSchema's shape). */
export const ERROR_META = 'git-mem/error';

/**
 * A tool's refusal: one line for the model (`CODE: what is wrong (the fix)`, the fix in the tool's
 * terms), and for a client that reads JSON the code and the data `git mem … --json` gives in
 * `error` (the field, path or records it names) under `_meta["git-mem/error"]`: a failed call has
 * no `structuredContent` to validate against the tool's `outputSchema`.
 */
export const toolError = (message: string, e?: GitMemError): ToolResult => ({
  content: [{ type: 'text', text: message }],
  isError: true,
  ...(e ? { _meta: { [ERROR_META]: { code: e.code, ...(e.data ?? {}) } } } : {}),
});

export function normFile(env: McpEnv, p: unknown): string | undefined {
  if (p === undefined || p === null || p === '') return undefined;
  const s = String(p).replace(/\\/g, '/');
  const root = env.store.repo.workTree;
  if (!root) return s.replace(/^\.\//, '');
  // repository-relative, or absolute inside the work tree: `../x` is refused as `/etc/x` is
  const rel = insideRoot(root, root, s);
  if (rel === undefined)
    throw err('E_INVALID_ARG', `file ${s} is outside the repository`, `use a path inside ${root}`);
  return rel;
}

export function readBodies(store: Store, entries: CatalogEntry[]): Promise<MemoryRecord[]> {
  return store.readRecords(entries);
}

export async function entriesWhere(
  store: Store,
  pred: (e: CatalogEntry) => boolean,
): Promise<CatalogEntry[]> {
  if (!(await store.tip())) return [];
  const cat = await store.catalog();
  return [...cat.entries.values()].filter(pred);
}

export const newestFirst = (a: CatalogEntry, b: CatalogEntry) =>
  a.created < b.created ? 1 : a.created > b.created ? -1 : a.id < b.id ? 1 : -1;
