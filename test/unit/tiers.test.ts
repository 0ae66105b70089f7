import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT_DIR } from '../support/root.js';
import { SYSTEM_FILES, UNIT_FILES } from '../tiers.js';

describe('test tiers (test/tiers.ts)', () => {
  it('every listed file exists and is listed once, in one tier', () => {
    const all = [...UNIT_FILES, ...SYSTEM_FILES];
    expect(all.filter((f) => !existsSync(join(ROOT_DIR, f)))).toEqual([]);
    expect(all.filter((f, i) => all.indexOf(f) !== i)).toEqual([]);
  });
});
