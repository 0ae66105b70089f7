import { defineConfig } from 'vitest/config';
import { SYSTEM_FILES, TIER_GLOBS, UNIT_FILES } from './test/tiers.js';

// Three tiers (test/README.md): `npm test` runs all of them, `npm run test:unit|test:ops|test:system` one.
export default defineConfig({
  test: {
    testTimeout: 120_000, // 2-core runners under load: process-heavy tests (the secrets corpus, the installed binary) need room
    hookTimeout: 60_000,
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default'],
    projects: [
      { extends: true, test: { name: 'unit', include: TIER_GLOBS.unit } },
      // the default tier: every top-level test file not listed as unit or system
      {
        extends: true,
        test: { name: 'ops', include: TIER_GLOBS.ops, exclude: [...UNIT_FILES, ...SYSTEM_FILES] },
      },
      { extends: true, test: { name: 'system', include: TIER_GLOBS.system } },
    ],
  },
});
