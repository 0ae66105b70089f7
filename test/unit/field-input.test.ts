/**
 * What a surface gives for a memory's fields, read by the one parser per verb (src/model/patch.ts)
 * from the field table (src/model/fields.ts); the MCP tools' input schemas derived from the same
 * table; and the one secret policy every surface applies (src/commands/secret-policy.ts). No git.
 */
import { describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/agents/mcp-schemas.js';
import { asSecretScan, decideSecrets, stricterScan } from '../../src/commands/secret-policy.js';
import { ADD_REQUIRED, ADDABLE, FIELDS, UPDATABLE } from '../../src/model/fields.js';
import { newId } from '../../src/model/id.js';
import { parseAddInput } from '../../src/model/patch.js';
import { newRecord } from '../../src/model/record.js';
import { recordToJSON } from '../../src/model/record-json.js';

const refusal = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return { code: (e as { code?: string }).code, field: (e as { data?: { field?: string } }).data?.field };
  }
  return undefined;
};

describe('parseAddInput', () => {
  it('reads every field add may set, lists as lists or comma-separated text, numbers as numbers or text', () => {
    expect(
      parseAddInput({
        type: 'known_fix',
        title: 'Flaky test',
        body: 'Retry once.',
        tags: 'ci,flaky',
        scope: ['src/**', 'test/**'],
        confidence: '0.6',
        source: 'mcp',
        alias: 'ci/flaky',
        expires: '30d',
        status: 'pending',
      }),
    ).toEqual({
      type: 'known_fix',
      title: 'Flaky test',
      body: 'Retry once.',
      tags: ['ci', 'flaky'],
      scope: ['src/**', 'test/**'],
      confidence: 0.6,
      source: 'mcp',
      alias: 'ci/flaky',
      expires: '30d',
      status: 'pending',
    });
  });

  it('refuses what the table does not let add set, naming the field', () => {
    const base = { type: 'decision', title: 'T', body: 'b' };
    expect(refusal(() => parseAddInput({ ...base, colour: 'blue' }))).toEqual({
      code: 'E_INVALID_ARG',
      field: 'colour',
    });
    // a field that exists but is not add's to set
    expect(refusal(() => parseAddInput({ ...base, verified: { by: 'x', at: 'y' } }))).toEqual({
      code: 'E_INVALID_ARG',
      field: 'verified',
    });
    expect(refusal(() => parseAddInput({ ...base, confidence: 'high' }))).toEqual({
      code: 'E_INVALID_ARG',
      field: 'confidence',
    });
    expect(refusal(() => parseAddInput({ ...base, tags: [1, 2] }))).toEqual({
      code: 'E_INVALID_ARG',
      field: 'tags',
    });
    expect(refusal(() => parseAddInput({ ...base, scope: ['src/**', ' '] }))).toEqual({
      code: 'E_INVALID_ARG',
      field: 'scope',
    });
  });

  it('wants the required fields, from the table', () => {
    expect(ADD_REQUIRED).toEqual(['type', 'title', 'body']);
    for (const key of ADD_REQUIRED) {
      const input: Record<string, unknown> = { type: 'decision', title: 'T', body: 'b' };
      delete input[key];
      expect(
        refusal(() => parseAddInput(input)),
        key,
      ).toEqual({ code: 'E_INVALID_ARG', field: key });
    }
    expect(refusal(() => parseAddInput({ type: 'decision', title: '  ', body: 'b' }))).toEqual({
      code: 'E_INVALID_ARG',
      field: 'title',
    });
  });
});

describe('the MCP tools take the fields the table declares', () => {
  const schemaOf = (name: string) => TOOLS.find((t) => t.name === name)!.inputSchema;
  it('add: one argument per addable field, plus anchors; the required ones required', () => {
    const add = schemaOf('add');
    expect(Object.keys(add.properties).sort()).toEqual([...ADDABLE.map((f) => f.key), 'anchors'].sort());
    expect(add.required).toEqual([...ADD_REQUIRED]);
    expect(add.properties.confidence).toMatchObject({ type: 'number', minimum: 0, maximum: 1 });
    // an agent may only leave a memory active or pending for review
    expect(add.properties.status.enum).toEqual(['active', 'pending']);
  });
  it('update: one argument per updatable field, plus the tag edits', () => {
    const update = schemaOf('update');
    expect(Object.keys(update.properties).sort()).toEqual(
      ['id', ...UPDATABLE.map((f) => f.key), 'add_tags', 'remove_tags'].sort(),
    );
  });
});

describe('the secret policy', () => {
  const AWS = 'key AKIAIOSFODNN7EXAMPLF';
  it('block refuses (the write scans), warn stores and says where, off stores silently', () => {
    expect(decideSecrets('block', { body: AWS })).toEqual({ allow: false, warnings: [] });
    const warn = decideSecrets('warn', { title: 'fine', body: AWS });
    expect(warn.allow).toBe(true);
    expect(warn.warnings).toHaveLength(1);
    expect(warn.warnings[0]).toContain('body');
    expect(decideSecrets('off', { body: AWS })).toEqual({ allow: true, warnings: [] });
    // a person's --allow-secret stores whatever the policy
    expect(decideSecrets('block', { body: AWS }, true)).toEqual({ allow: true, warnings: [] });
  });
  it('reads an unknown setting as block, and takes the stricter of two', () => {
    expect(asSecretScan('nope')).toBe('block');
    expect(asSecretScan(undefined)).toBe('block');
    expect(stricterScan('off', 'warn')).toBe('warn');
    expect(stricterScan('block', 'off')).toBe('block');
  });
});

describe('show --json', () => {
  it('names every field of the table, an absent one as null, in table order', () => {
    const r = newRecord({
      id: newId(),
      type: 'decision',
      title: 'T',
      body: 'b\n',
      now: '2026-01-01T00:00:00.000Z',
    });
    const json = recordToJSON(r);
    const keys = Object.keys(json);
    expect(keys.slice(0, FIELDS.length)).toEqual(FIELDS.map((f) => f.key));
    expect(json).toMatchObject({ alias: null, expires: null, verified: null, source: null, body: 'b\n' });
  });
});
