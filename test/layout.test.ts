/**
 * The layout the issue asked for (#29): no source file in src/ over 600 lines, no function over
 * 150 (scripts/layout-check.mjs, on the TypeScript compiler's parser). A file or function that
 * grows past a limit fails here, naming it.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers.js';

it('keeps every source file within 600 lines and every function within 150', () => {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'layout-check.mjs'), '--json'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  const found = JSON.parse(r.stdout);
  expect({ bigFiles: found.bigFiles, bigFunctions: found.bigFunctions }).toEqual({
    bigFiles: [],
    bigFunctions: [],
  });
  expect(r.status).toBe(0);
});
