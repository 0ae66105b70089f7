/**
 * docs/sync.md lists the boundary's checks (E_MERGE's `problem`) as src/merge/problems.ts declares
 * them: a row per check, in the table's order, with the table's words, and no other row.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PROBLEMS } from '../../src/merge/problems.js';

const doc = readFileSync(join(fileURLToPath(new URL('../..', import.meta.url)), 'docs', 'sync.md'), 'utf8');
const section = doc.slice(doc.indexOf('### Which check refused it'));

describe('docs/sync.md: which check refused it', () => {
  it('lists every check of src/merge/problems.ts, in order, in its words', () => {
    const body = section.slice(section.indexOf('|---|---|'));
    const rows = [...body.matchAll(/^\| `([a-z0-9-]+)` \| (.+) \|$/gm)].map((m) => [m[1], m[2]]);
    expect(rows).toEqual(Object.entries(PROBLEMS));
  });

  it('shows a refusal whose problem is one of them, as --json prints it', () => {
    const line = section.split('\n').find((l) => l.startsWith('{"error":'));
    const e = JSON.parse(line ?? '{}').error;
    expect(e.code).toBe('E_MERGE');
    expect(Object.keys(PROBLEMS)).toContain(e.problem);
  });
});
