import { err } from '../errors.js';
import { recordPath } from '../model/record.js';
import { frame, neutralize, oneLine } from '../safety/frame.js';
import { rulesFor } from '../search/rules.js';
import { entriesWhere, type McpEnv } from './mcp-env.js';

// ------------------------------------------------------------------ resources

const RULES_URI = 'memory://rules';
export const MEMORY_URI_TEMPLATE = 'memory://{id}';
const PAGE = 500;

export interface ResourceInfo {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType: string;
}

export async function listResources(
  env: McpEnv,
  cursor?: string,
): Promise<{ resources: ResourceInfo[]; nextCursor?: string }> {
  const start = cursor ? Number(cursor) : 0;
  if (!Number.isInteger(start) || start < 0) throw err('E_INVALID_ARG', `invalid cursor "${cursor}"`);
  const out: ResourceInfo[] = [];
  if (start === 0)
    out.push({
      uri: RULES_URI,
      name: 'rules',
      title: 'Project rules',
      description: 'Every active rule with its scope globs (Markdown).',
      mimeType: 'text/markdown',
    });
  const entries = (
    await entriesWhere(env.store, (e) => e.status !== 'superseded' && e.status !== 'archived')
  ).sort((a, b) => (a.id < b.id ? -1 : 1));
  for (const e of entries.slice(start, start + PAGE)) {
    out.push({
      uri: `memory://${e.id}`,
      name: oneLine(neutralize(e.alias ?? e.id), 200),
      title: oneLine(neutralize(`${e.type}: ${e.title}`), 320),
      mimeType: 'text/markdown',
    });
  }
  return start + PAGE < entries.length
    ? { resources: out, nextCursor: String(start + PAGE) }
    : { resources: out };
}

function rulesMarkdown(
  rules: Array<{ id: string; title: string; body: string; scope: string[]; origin?: string; store?: string }>,
): string {
  if (!rules.length)
    return '# Rules\n\nNo rules yet. Add one with `git mem add --type rule --scope GLOB --title … --content …`.\n';
  const parts = ['# Rules', ''];
  for (const r of rules) {
    parts.push(`## ${r.title}`, '');
    parts.push(
      `id: ${r.id}${r.origin && r.origin !== 'project' ? ` (${r.store ?? r.origin})` : ''}; applies to: ${r.scope.length ? r.scope.map((g) => `\`${g}\``).join(', ') : 'all files'}`,
      '',
    );
    parts.push(r.body.trim(), '');
  }
  return `${parts.join('\n').trimEnd()}\n`;
}

/**
 * Reads `memory://rules` or `memory://<id|prefix|alias>`: the record file as
 * stored (Markdown with YAML frontmatter), framed like every text for a model.
 */
export async function readResource(
  env: McpEnv,
  uri: string,
): Promise<{ uri: string; mimeType: string; text: string }> {
  if (!uri.startsWith('memory://'))
    throw err('E_NOT_FOUND', `unknown resource ${uri}`, 'use memory://rules or memory://<id>');
  const key = decodeURIComponent(uri.slice('memory://'.length).replace(/\/+$/, ''));
  if (key === 'rules')
    return {
      uri,
      mimeType: 'text/markdown',
      text: frame('rules', rulesMarkdown(await rulesFor(env.store, undefined, env.global, env.teams))),
    };
  const { record } = await env.store.get(key);
  const blob = await env.store.readPath(await env.store.tip(), recordPath(record.id));
  return { uri, mimeType: 'text/markdown', text: frame('memory', blob ? blob.toString('utf8') : '') };
}
