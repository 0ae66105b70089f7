/**
 * What each MCP tool's `structuredContent` holds, as a JSON schema (the tool's `outputSchema` in
 * `tools/list`): the same data as the tool's text, which is framed for a model (src/safety/frame.ts)
 * while the structured copy is for a client that reads JSON. An object is given as it is, a list
 * as `{items}`, Markdown as `{text}` (src/agents/mcp-env.ts). Schemas name what every answer
 * holds and allow more, so a field added later is no break. test/mcp.test.ts validates every
 * tool's answer against its schema.
 */
import { STATUSES, TYPES } from '../model/record.js';
import type { Json } from './mcp-schemas.js';

const obj = (properties: Record<string, Json>, required: string[] = Object.keys(properties)): Json => ({
  type: 'object',
  properties,
  required,
});
const list = (item: Json): Json => obj({ items: { type: 'array', items: item } });
const str: Json = { type: 'string' };
const strOrNull: Json = { type: ['string', 'null'] };
const strs: Json = { type: 'array', items: str };
const type: Json = { type: 'string', enum: [...TYPES] };
const status: Json = { type: 'string', enum: [...STATUSES] };
const commit: Json = { type: ['string', 'null'] };
/** A memory as `git mem show --json` gives it (src/model/record-json.ts). */
const record: Json = obj(
  { id: str, type, title: str, status, tags: strs, body: str, created: str, updated: str },
  ['id', 'type', 'title', 'status', 'body'],
);
const verified: Json = obj({ by: str, at: str });

export const OUTPUT_SCHEMAS: Record<string, Json> = {
  search: list(
    obj({ id: str, type, title: str, status, score: { type: 'number' }, store: str }, [
      'id',
      'type',
      'title',
      'score',
    ]),
  ),
  context: obj({ text: str, items: { type: 'array' }, tokens: { type: 'number' } }, ['text']),
  // `warnings`: likely secrets stored because secret-scan is warn
  add: obj({ id: str, type, title: str, status, commit, warnings: strs }, [
    'id',
    'type',
    'title',
    'status',
    'commit',
  ]),
  get: record,
  update: obj({ id: str, changed: strs, commit, warnings: strs }, ['id', 'changed', 'commit']),
  verify: obj({
    verified: { type: 'array', items: obj({ id: str, verified, expires: strOrNull }) },
    commit,
  }),
  delete: obj({ id: str, title: str, deleted: { type: 'boolean' }, commit }),
  rules: list(obj({ id: str, title: str, body: str }, ['id', 'title'])),
  stale: list(obj({ id: str, type, title: str, reasons: strs }, ['id', 'title'])),
  // one summary in full (with `id`), else the latest summaries
  sessions: {
    type: 'object',
    anyOf: [record, list(obj({ id: str, title: str, created: str, summary: str }, ['id', 'title']))],
  },
  // the queue (`list`), or the proposal approved or rejected
  review: {
    type: 'object',
    anyOf: [
      list(obj({ id: str, type, title: str, body: str }, ['id', 'title'])),
      obj({ id: str, title: str }),
    ],
  },
};
