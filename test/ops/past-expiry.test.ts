/**
 * An expiry a write sets in the past: the memory is stored, expired at once (search, context and
 * the agents' packs leave it out), and every surface that writes it says so in one warning: the
 * CLI on stderr, the MCP tools in `warnings`, the operations in their result.
 */
import { describe, expect, it } from 'vitest';
import { callTool } from '../../src/agents/mcp-tools.js';
import { updateFromInput } from '../../src/commands/memory.js';
import { fresh, runOn, template } from '../support/template.js';

const KEEP = template('keep', { memories: [{ type: 'decision', title: 'Pool size', body: 'ten' }] });

const warningsOf = (stderr: string) => stderr.split('\n').filter((l) => l.startsWith('git-mem: warning: '));

describe('an expiry set in the past', () => {
  it('add and update store it and warn once, naming the memory; a later expiry does not warn', async () => {
    const f = await fresh(KEEP);
    const id = f.records[0].id;
    const added = await runOn(f, [
      'add',
      '--title',
      'Old news',
      '--content',
      'gone',
      '--expires',
      '2020-01-01',
    ]);
    expect(added.exit).toBe(0);
    const addedId = (added.json as { id: string }).id;
    expect(warningsOf(added.stderr)).toEqual([expect.stringContaining(addedId.slice(0, 12))]);
    const upd = await runOn(f, ['update', id, '--expires', '2020-01-01']);
    expect(upd.exit).toBe(0);
    expect(warningsOf(upd.stderr)).toEqual([expect.stringContaining(id.slice(0, 12))]);
    // the search no longer finds it
    const found = await runOn(f, ['search', 'pool']);
    expect(found.json).toEqual([]);
    // a later expiry, or an update of another field, says nothing
    expect(warningsOf((await runOn(f, ['update', id, '--expires', '30d'])).stderr)).toEqual([]);
    expect((await updateFromInput(f.store, id, { title: 'Pool size is ten' })).warnings).toEqual([]);
  });

  it('the MCP tools give the same warning in `warnings`', async () => {
    const f = await fresh(KEEP);
    const env = { store: f.store, cwd: f.dir };
    const add = await callTool(env, 'add', {
      type: 'decision',
      title: 'Old news',
      body: 'gone',
      expires: '2020-01-01',
    });
    expect(add.isError).toBeFalsy();
    const a = add.structuredContent as { id: string; warnings?: string[] };
    expect(a.warnings).toEqual([expect.stringContaining(a.id.slice(0, 12))]);
    const id = f.records[0].id;
    const upd = await callTool(env, 'update', { id, expires: '2020-01-01' });
    expect((upd.structuredContent as { warnings?: string[] }).warnings).toEqual([
      expect.stringContaining(id.slice(0, 12)),
    ]);
  });
});
