import { defineConfig } from 'vitest/config';
import { useMemoryTmp } from './test/support/scratch-root.js';
import { SYSTEM_FILES, TIER_GLOBS, UNIT_FILES } from './test/tiers.js';

useMemoryTmp();

// Three tiers (test/README.md): `npm test` runs all of them, `npm run test:unit|test:ops|test:system` one.
export default defineConfig({
  test: {
    testTimeout: 120_000, // 2-core runners under load: process-heavy tests (the secrets corpus, the installed binary) need room
    hookTimeout: 60_000,
    pool: 'forks',
    // two workers on 2 cores: the suite is bound by CPU, and a third (593 s against 613 s, within
    // the noise) starved a worker's reply from vitest past its fixed 60 s RPC timeout in one run
    // ("Timeout calling onTaskUpdate": every test passed, the run failed).
    // isolate: false: a worker runs file after file of its tier (vitest starts fresh workers
    // between tiers). vitest's forks pool reads this here only: a project's own `isolate` does not
    // reach it, and without it every file had a process of its own (539 s against 608 s for the
    // whole suite, test/README.md).
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    reporters: ['default'],
    // the per-file clean-up (scratch folders, open stores), for files that share a worker too
    setupFiles: ['./test/support/setup-file.ts'],
    projects: [
      // the files of a tier share their workers (the modules under test load once per worker, not
      // once per file): a test's state is a store or repository it makes, not the process's, and
      // what a file leaves behind is undone when it ends (setupFiles)
      { extends: true, test: { name: 'unit', include: TIER_GLOBS.unit } },
      // the default tier: every top-level test file not listed as unit or system
      { extends: true, test: { name: 'ops', include: TIER_GLOBS.ops, exclude: [...UNIT_FILES, ...SYSTEM_FILES] } },
      { extends: true, test: { name: 'system', include: TIER_GLOBS.system } },
    ],
  },
});
