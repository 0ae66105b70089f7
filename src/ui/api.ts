/**
 * The JSON API of `git mem ui`: one route per thing a page reads or does,
 * each a thin call of the operation the CLI and the MCP server call (no
 * second implementation of anything). GET never changes anything; every
 * change is a POST with a JSON body (src/ui/security.ts decides who may).
 */
import { approveProposal, listPending, proposalJSON, rejectProposal } from '../agents/review.js';
import { sessionRows } from '../agents/sessions.js';
import { type Annotated, storeLog } from '../commands/history.js';
import { kindOf } from '../commands/list.js';
import { updateFromInput } from '../commands/memory.js';
import { verifyMemories } from '../commands/verify.js';
import { err } from '../errors.js';
import type { Catalog } from '../gitstore/catalog.js';
import { listConflicts, type ResolveResult, resolveConflict } from '../merge/conflicts.js';
import { COMPARED_FIELDS } from '../model/fields.js';
import type { LogEntry as CommitEntry } from '../model/json.js';
import { STATUSES, TYPES } from '../model/record.js';
import { codeFile, codeTree } from './code.js';
import { conflictsView } from './conflicts.js';
import { type Memo, memoOf, storeNamed, type UiEnv } from './env.js';
import { FORM_FIELDS, SHOWN_FIELDS } from './form.js';
import {
  anchorCode,
  historyView,
  listMemories,
  memoryView,
  recordJSON,
  SORTS,
  tagCounts,
  versionDiff,
} from './memories.js';
import { overview } from './overview.js';
import type {
  ApproveAnswer,
  AtAnswer,
  Conforms,
  Info,
  Is,
  LogEntry,
  Proposal,
  ReanchorAnswer,
  RejectAnswer,
  ResolveAnswer,
  SessionRow,
  UpdateAnswer,
} from './wire.js';

/**
 * The answers this module passes on from other modules as they are, held to the wire's types
 * (src/ui/wire.ts): each handler's return type checks that the wire's fields are there, and
 * these checks that no other field goes along unseen.
 */
type _AnswerChecks = [
  Is<Conforms<Annotated<CommitEntry>, LogEntry>>,
  Is<Conforms<ReturnType<typeof proposalJSON>, Proposal>>,
  Is<Conforms<Awaited<ReturnType<typeof rejectProposal>>, RejectAnswer>>,
  Is<Conforms<ResolveResult, ResolveAnswer>>,
];

export type Json = Record<string, unknown>;

export interface ApiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  body: Json;
}

type Handler = (env: UiEnv, p: string[], r: ApiRequest) => Promise<unknown>;

interface Route {
  method: 'GET' | 'POST';
  pattern: RegExp;
  handler: Handler;
}

const list = (q: URLSearchParams, k: string): string[] =>
  q
    .getAll(k)
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean);
const opt = (q: URLSearchParams, k: string): string | undefined => q.get(k) ?? undefined;
const num = (q: URLSearchParams, k: string): number | undefined => {
  const v = q.get(k);
  if (v === null || v === '') return undefined;
  const n = Number(v);
  if (!Number.isFinite(n)) throw err('E_INVALID_ARG', `${k} must be a number, not "${v}"`);
  return n;
};

function str(b: Json, k: string): string | undefined {
  const v = b[k];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw err('E_INVALID_ARG', `"${k}" must be text`);
  return v;
}

/**
 * The fields the edit form sends, as they came: the update operation reads them
 * (src/model/patch.ts parseUpdateInput), as it reads the CLI's options and the MCP tool's arguments.
 * A textarea's body gets its final line feed, as a file's has.
 */
function updateInput(b: Json): Json {
  const body = b.body;
  if (typeof body === 'string' && body && !body.endsWith('\n')) return { ...b, body: `${body}\n` };
  return b;
}

const statusMemo = new WeakMap<Catalog, { memories: number; pending: number; stale: number }>();

async function info(env: UiEnv): Promise<Info> {
  const tip = await env.store.tip();
  const cat = await env.store.catalog();
  let counted = statusMemo.get(cat);
  if (!counted) {
    counted = { memories: 0, pending: 0, stale: 0 };
    for (const r of cat.rows.values()) {
      // the curated memories, as the Memories page lists them (not proposals, not session summaries)
      if (kindOf(r) === 'memories') counted.memories++;
      if (r.status === 'pending') counted.pending++;
      else if (r.status === 'stale') counted.stale++;
    }
    statusMemo.set(cat, counted);
  }
  const { memories, pending, stale } = counted;
  const root = env.store.repo.workTree ?? env.store.repo.cwd;
  return {
    repo: root.split(/[\\/]/).filter(Boolean).pop() ?? root,
    root,
    ref: env.store.ref,
    tip,
    workTree: !!env.store.repo.workTree,
    global: !!env.global,
    counts: { memories, pending, stale },
    types: TYPES,
    statuses: STATUSES,
    sorts: SORTS,
    form: FORM_FIELDS,
    compared: COMPARED_FIELDS,
    shown: SHOWN_FIELDS,
  };
}

const conflictMemo = new WeakMap<UiEnv, Memo<number>>();

/** How many memories a merge flagged (a git grep of the records: asked apart, so no page waits for it). */
async function conflictCount(env: UiEnv): Promise<number> {
  const tip = await env.store.tip();
  if (!tip) return 0;
  return memoOf(conflictMemo, env).get(tip, async () => (await listConflicts(env.store, tip)).length);
}

const ROUTES: Route[] = [
  { method: 'GET', pattern: /^\/api\/info$/, handler: (env) => info(env) },
  { method: 'GET', pattern: /^\/api\/conflicts\/count$/, handler: (env) => conflictCount(env) },
  {
    method: 'GET',
    pattern: /^\/api\/memories$/,
    handler: (env, _p, { query: q }) =>
      listMemories(env, {
        q: opt(q, 'q'),
        type: list(q, 'type'),
        status: list(q, 'status'),
        tag: list(q, 'tag'),
        kind: list(q, 'kind'),
        store: opt(q, 'store'),
        path: opt(q, 'path'),
        sort: opt(q, 'sort'),
        order: opt(q, 'order'),
        page: num(q, 'page'),
        size: num(q, 'size'),
        at: opt(q, 'at'),
      }),
  },
  {
    method: 'GET',
    pattern: /^\/api\/tags$/,
    handler: async (env, _p, { query: q }) => tagCounts(storeNamed(env, opt(q, 'store'))),
  },
  {
    method: 'GET',
    pattern: /^\/api\/memory\/([^/]+)$/,
    handler: (env, [ref], { query: q }) => memoryView(env, ref, { store: opt(q, 'store'), at: opt(q, 'at') }),
  },
  {
    method: 'POST',
    pattern: /^\/api\/memory\/([^/]+)$/,
    handler: async (env, [ref], { query: q, body }): Promise<UpdateAnswer> => {
      const r = await updateFromInput(storeNamed(env, opt(q, 'store')), ref, updateInput(body));
      return {
        record: recordJSON(r.record),
        changed: r.changed,
        commit: r.commit,
        ...(r.warnings.length ? { warnings: r.warnings } : {}),
      };
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/memory\/([^/]+)\/verify$/,
    handler: async (env, [ref], { query: q, body }): Promise<UpdateAnswer> => {
      const r = await verifyMemories(storeNamed(env, opt(q, 'store')), [ref], { by: str(body, 'by') });
      return { record: recordJSON(r.records[0]), changed: ['verified'], commit: r.commit };
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/memory\/([^/]+)\/anchor\/(\d+)$/,
    handler: (env, [ref, i], { query: q }) => anchorCode(env, ref, Number(i), { store: opt(q, 'store') }),
  },
  {
    method: 'POST',
    pattern: /^\/api\/memory\/([^/]+)\/reanchor$/,
    handler: async (env, [ref]): Promise<ReanchorAnswer> => {
      if (!env.store.repo.workTree)
        throw err('E_ANCHOR', 'anchors need a work tree', 'run git mem ui inside a checkout');
      const { reanchor } = await import('../anchors/reanchor.js');
      const r = await reanchor(env.store, ref, env.cwd);
      return { record: recordJSON(r.record), commit: r.commit, dropped: r.dropped, notes: r.notes };
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/memory\/([^/]+)\/history$/,
    handler: (env, [ref], { query: q }) => historyView(env, ref, { store: opt(q, 'store') }),
  },
  {
    method: 'GET',
    pattern: /^\/api\/memory\/([^/]+)\/diff$/,
    handler: (env, [ref], { query: q }) => {
      const from = opt(q, 'from');
      const to = opt(q, 'to');
      if (!from || !to) throw err('E_INVALID_ARG', 'a diff needs from and to commits');
      return versionDiff(env, ref, from, to, { store: opt(q, 'store') });
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/log$/,
    handler: async (env, _p, { query: q }): Promise<LogEntry[]> => {
      const store = storeNamed(env, opt(q, 'store'));
      if (!(await store.tip())) return [];
      return (await storeLog(store, Math.min(500, num(q, 'limit') ?? 100))).entries;
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/at$/,
    handler: async (env, _p, { query: q }): Promise<AtAnswer> => {
      const rev = opt(q, 'rev')?.trim();
      if (!rev) throw err('E_INVALID_ARG', 'give a revision or a date');
      const commit = await env.store.resolveAt(rev);
      const [entry] = await env.store.log(undefined, `${commit}^!`);
      return { rev, commit, date: entry?.date ?? null, subject: entry?.subject ?? null };
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/review$/,
    handler: async (env): Promise<Proposal[]> => (await listPending(env.store)).map(proposalJSON),
  },
  {
    method: 'POST',
    pattern: /^\/api\/review\/([^/]+)\/approve$/,
    handler: async (env, [ref], { body }): Promise<ApproveAnswer> => {
      const r = await approveProposal(env.store, ref, { title: str(body, 'title'), body: str(body, 'body') });
      return { id: r.id, status: r.status, title: r.title };
    },
  },
  {
    method: 'POST',
    pattern: /^\/api\/review\/([^/]+)\/reject$/,
    handler: (env, [ref]): Promise<RejectAnswer> => rejectProposal(env.store, ref),
  },
  { method: 'GET', pattern: /^\/api\/conflicts$/, handler: (env) => conflictsView(env) },
  {
    method: 'POST',
    pattern: /^\/api\/conflicts\/([^/]+)\/resolve$/,
    handler: (env, [ref], { body }): Promise<ResolveAnswer> => {
      const take = str(body, 'take');
      const content = str(body, 'content');
      return resolveConflict(env.store, ref, { take, content });
    },
  },
  {
    method: 'GET',
    pattern: /^\/api\/code\/tree$/,
    handler: (env, _p, { query: q }) => codeTree(env, opt(q, 'dir') ?? ''),
  },
  {
    method: 'GET',
    pattern: /^\/api\/code\/file$/,
    handler: (env, _p, { query: q }) => codeFile(env, opt(q, 'path') ?? ''),
  },
  {
    method: 'GET',
    pattern: /^\/api\/sessions$/,
    handler: (env, _p, { query: q }): Promise<SessionRow[]> =>
      sessionRows(env.store, Math.min(500, num(q, 'limit') ?? 100)),
  },
  { method: 'GET', pattern: /^\/api\/overview$/, handler: (env) => overview(env) },
];

/** The route for a request, or why there is none (404, or 405 when only the method is wrong). */
export function route(
  method: string,
  path: string,
): { handler: Handler; params: string[] } | { status: 400 | 404 | 405 } {
  let wrongMethod = false;
  for (const r of ROUTES) {
    const m = r.pattern.exec(path);
    if (!m) continue;
    if (r.method !== method) {
      wrongMethod = true;
      continue;
    }
    try {
      return { handler: r.handler, params: m.slice(1).map((s) => decodeURIComponent(s)) };
    } catch {
      return { status: 400 }; // a malformed %-escape (URIError): the request's fault, not a crash
    }
  }
  return { status: wrongMethod ? 405 : 404 };
}
