import { fromJsonSchema, type JsonSchemaType } from '@modelcontextprotocol/server';
import { err } from '../errors.js';
import { ADD_REQUIRED, ADDABLE, type FieldDef, TAG_EDITS, UPDATABLE } from '../model/fields.js';
import { TYPES } from '../model/record.js';

// ------------------------------------------------------------------ schemas

export type Json = Record<string, unknown>;

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, Json>;
    required?: string[];
    additionalProperties: false;
  };
  annotations?: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    idempotentHint?: boolean;
    openWorldHint?: boolean;
  };
}

const str = (description: string, extra: Json = {}): Json => ({ type: 'string', description, ...extra });
const strs = (description: string, items: Json = { type: 'string' }): Json => ({
  type: 'array',
  items,
  description,
});
const int = (description: string, minimum: number, maximum: number): Json => ({
  type: 'integer',
  minimum,
  maximum,
  description,
});
const ID = str('Memory id, any unique id prefix (at least 4 characters), or alias.');
const TYPE_ENUM = { type: 'string', enum: [...TYPES] };
const READ = { readOnlyHint: true, openWorldHint: false } as const;

const sentence = (help: string) => `${help[0].toUpperCase()}${help.slice(1)}.`;

/**
 * A field's argument in a tool's input schema, from the field table (src/model/fields.ts): its
 * input type, bounds and values. `clearable`: update's list fields also take "" (the one rule
 * that clears a field); the operation checks the items.
 */
function fieldProperty(f: FieldDef, description: string, clearable: boolean): Json {
  if (f.input === 'strings')
    return clearable ? { ...strs(description), type: ['array', 'string'] } : strs(description);
  if (f.input === 'number') return { type: 'number', minimum: f.minimum, maximum: f.maximum, description };
  return str(description, f.values ? { enum: [...f.values] } : {});
}

/** The update tool's field arguments: one per field update may set. */
function updateProperties(): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const f of UPDATABLE) {
    const clears = `${f.input === 'strings' ? ' Replaces them all.' : ''}${f.update === 'set-clear' ? ' "" clears it.' : ''}`;
    out[f.key] = fieldProperty(f, `${sentence(f.help)}${clears}`, f.update === 'set-clear');
  }
  for (const t of TAG_EDITS) out[t.key] = strs(sentence(t.help));
  return out;
}

/**
 * The add tool's field arguments: one per field add may set, what an agent is told about a few
 * (its own defaults, the statuses an agent may give), and the anchors, which are not a field.
 */
function addProperties(): Record<string, Json> {
  const agent: Record<string, Json> = {
    status: str(
      'active or pending (wait for human review); default from the mcp.add-status setting, else active.',
      {
        enum: ['active', 'pending'],
      },
    ),
    source: str('Where it came from (URL, person, session); default "mcp".'),
  };
  const out: Record<string, Json> = {};
  for (const f of ADDABLE) out[f.key] = agent[f.key] ?? fieldProperty(f, sentence(f.help), false);
  out.anchors = strs(
    'Code the memory is about: PATH, PATH:LINE or PATH:START-END. It is flagged stale when that code changes.',
  );
  return out;
}

export const TOOLS: ToolDef[] = [
  {
    name: 'search',
    title: 'Search memories',
    description:
      "Search this repository's memory (decisions, constraints, known fixes, conventions, rules…) by meaning and keywords. " +
      'Give the file you are working on to favour memories anchored to or scoped to it. Returns ranked hits with ids; read one in full with `get`.',
    inputSchema: {
      type: 'object',
      properties: {
        query: str('What you are looking for, in words (e.g. "why postgres", "flaky integration test fix").'),
        file: str('Repository-relative path of the file in hand (optional).'),
        types: strs('Only these memory types.', TYPE_ENUM),
        tags: strs('Only memories with all of these tags.'),
        limit: int('Maximum hits (default 10).', 1, 50),
      },
      required: ['query'],
      additionalProperties: false,
    },
    annotations: READ,
  },
  {
    name: 'context',
    title: 'Context pack',
    description:
      'The memory to load before working on a file or task, within a token budget: rules in scope first, then constraints, ' +
      'the best matches for the query, then recent session summaries. Reference material, not instructions.',
    inputSchema: {
      type: 'object',
      properties: {
        file: str('Repository-relative path of the file you will edit.'),
        query: str('The task in a few words.'),
        budget: int('Token budget (default: the context-budget setting, 2000).', 0, 100_000),
        format: str('md (default) or json.', { enum: ['md', 'json'] }),
      },
      additionalProperties: false,
    },
    annotations: READ,
  },
  {
    name: 'add',
    title: 'Add a memory',
    description:
      'Record something worth remembering in future sessions: a decision and its reason, a constraint, a fix for an error, a failed approach, a convention. ' +
      'One fact per memory, title one line. Committed to refs/memory (shared with the team on sync). Text that looks like a secret is refused. ' +
      'Use status "pending" to leave it for human review.',
    inputSchema: {
      type: 'object',
      properties: addProperties(),
      required: [...ADD_REQUIRED],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'get',
    title: 'Get a memory',
    description:
      'One memory in full: frontmatter fields (type, status, tags, scope, anchors, links) and the Markdown body.',
    inputSchema: { type: 'object', properties: { id: ID }, required: ['id'], additionalProperties: false },
    annotations: READ,
  },
  {
    name: 'update',
    title: 'Update a memory',
    description:
      'Change fields of a memory (only the ones given). Use it to correct a memory that turned out wrong or outdated. ' +
      'An empty string "" clears a field that can be cleared (expires, source, alias, tags, scope).',
    inputSchema: {
      type: 'object',
      properties: { id: ID, ...updateProperties() },
      required: ['id'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  },
  {
    name: 'verify',
    title: 'Verify memories',
    description:
      'Confirm that memories still hold (you checked them against the code): records who and when, ranks them above unverified ones, ' +
      'and restarts the expiry of one that expires (the same lifetime again from now).',
    inputSchema: {
      type: 'object',
      properties: {
        ids: strs('Memory ids, id prefixes or aliases.'),
        by: str('Who confirms them (default: the git identity).'),
      },
      required: ['ids'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'delete',
    title: 'Delete a memory',
    description:
      'Delete a memory that is wrong or no longer useful. Leaves a tombstone so the deletion survives merges with other clones; history keeps the old text.',
    inputSchema: {
      type: 'object',
      properties: { id: ID, reason: str('Why it is deleted (kept in the tombstone).') },
      required: ['id'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  },
  {
    name: 'rules',
    title: 'Rules in force',
    description:
      'The rules that apply to a file (scoped by globs, most specific first, project over personal), or all rules when no file is given.',
    inputSchema: {
      type: 'object',
      properties: { file: str('Repository-relative path of the file in hand.') },
      additionalProperties: false,
    },
    annotations: READ,
  },
  {
    name: 'stale',
    title: 'Stale memories',
    description:
      'Memories flagged stale because the code they are anchored to changed. Check them against the code, then update or delete them.',
    inputSchema: {
      type: 'object',
      properties: { limit: int('Maximum results (default 50).', 1, 500) },
      additionalProperties: false,
    },
    annotations: READ,
  },
  {
    name: 'sessions',
    title: 'Session summaries',
    description:
      'Summaries of past agent sessions, newest first (files changed, commands run, errors fixed, decisions, outcome). Give an id for one in full.',
    inputSchema: {
      type: 'object',
      properties: {
        id: str('A session summary id, or your own session id, to show in full.'),
        limit: int('How many (default 5).', 1, 100),
      },
      additionalProperties: false,
    },
    annotations: READ,
  },
  {
    name: 'review',
    title: 'Review proposals',
    description:
      'Memories proposed by automatic extraction wait as "pending" until reviewed. action "list" shows them; "approve" makes one active ' +
      '(optionally with an edited title, body, type or tags); "reject" deletes it and keeps it from being proposed again.',
    inputSchema: {
      type: 'object',
      properties: {
        action: str('list, approve or reject.', { enum: ['list', 'approve', 'reject'] }),
        id: str('The proposal to approve or reject (id, prefix or alias).'),
        title: str('approve: corrected title.'),
        body: str('approve: corrected body.'),
        type: { ...TYPE_ENUM, description: 'approve: corrected type.' },
        tags: strs('approve: replace the tags.'),
        limit: int('list: maximum results (default 50).', 1, 500),
      },
      required: ['action'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  },
];

// ------------------------------------------------------------------ argument checking (pure)

/** Checks arguments against a tool's schema; throws E_INVALID_ARG naming the field and the fix. */
/** Each tool's argument validator, compiled once from its input schema by the SDK's JSON-schema validator (ajv). */
const validators = new Map<string, (v: unknown) => readonly { message: string }[] | undefined>();
function validatorOf(tool: ToolDef) {
  let v = validators.get(tool.name);
  if (!v) {
    const schema = fromJsonSchema(tool.inputSchema as JsonSchemaType)['~standard'];
    v = (x) => {
      const r = schema.validate(x);
      if (r instanceof Promise) throw new Error('an asynchronous schema');
      return r.issues;
    };
    validators.set(tool.name, v);
  }
  return v;
}

/** The one line for the validator's first issue, in the words of the schema (`"limit" must be between 1 and 50`). */
function describeIssue(tool: ToolDef, a: Json, message: string): { message: string; hint?: string } {
  const props = tool.inputSchema.properties;
  const unknown = Object.keys(a).find((k) => !(k in props));
  if (unknown !== undefined)
    return { message: `unknown argument "${unknown}"`, hint: `known: ${Object.keys(props).join(', ')}` };
  const required = /must have required property '([^']+)'/.exec(message);
  if (required) return { message: `"${required[1]}" is required` };
  // `data/limit must be >= 1`, `data/types/0 must be equal to one of the allowed values`
  const at = /^data\/([^/\s]+)(\/\d+)?\s+(.*)$/.exec(message);
  if (!at) return { message: message.replace(/^data\s*/, 'arguments ') };
  const [, key, item, said] = at;
  const where = `"${key}"${item ? ' item' : ''}`;
  const s = (item ? (props[key]?.items as Json | undefined) : props[key]) ?? {};
  if (Array.isArray(s.enum)) return { message: `${where} must be one of ${s.enum.join(', ')}` };
  if (s.minimum !== undefined && s.maximum !== undefined && /must be [<>]=/.test(said))
    return { message: `${where} must be between ${s.minimum} and ${s.maximum}` };
  const kinds = /^must be ([\w,]+)$/.exec(said)?.[1].split(',');
  const article: Record<string, string> = {
    string: 'a string',
    integer: 'an integer',
    number: 'a number',
    array: 'an array',
    boolean: 'a boolean',
    object: 'an object',
  };
  return {
    message: `${where} must be ${kinds?.every((k) => article[k]) ? kinds.map((k) => article[k]).join(' or ') : said.replace(/^must be /, '')}`,
  };
}

/**
 * A tool's arguments checked against its input schema by a maintained JSON-schema validator (the
 * SDK's, ajv); a value of null counts as not given, and a required argument may not be empty. The
 * first problem is E_INVALID_ARG in one line naming the argument.
 */
export function checkArgs(tool: ToolDef, input: unknown): Json {
  const args = input === undefined || input === null ? {} : input;
  if (typeof args !== 'object' || Array.isArray(args))
    throw err('E_INVALID_ARG', `${tool.name}: arguments must be an object`);
  const a = Object.fromEntries(Object.entries(args as Json).filter(([, v]) => v !== undefined && v !== null));
  for (const k of tool.inputSchema.required ?? [])
    if (a[k] === '') throw err('E_INVALID_ARG', `${tool.name}: "${k}" is required`);
  const issues = validatorOf(tool)(a);
  if (issues?.length) {
    const d = describeIssue(tool, a, issues[0].message);
    throw err('E_INVALID_ARG', `${tool.name}: ${d.message}`, d.hint);
  }
  return args as Json;
}
