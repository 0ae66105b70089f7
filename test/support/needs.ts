/**
 * Tests that need what the contributor install leaves out: Chromium (the
 * browser tests of git mem ui) and the local-embeddings runtime
 * (@huggingface/transformers with ONNX Runtime, ~430 MB, not a dev dependency).
 * Where it is missing they are skipped with one line saying what to install;
 * where CI is set (.ci/run installs both) the file fails instead, with one test
 * whose error is that line, so a CI machine never passes by skipping them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { it } from 'vitest';
import { ROOT } from '../helpers.js';

export const CI = !!process.env.CI && process.env.CI !== 'false' && process.env.CI !== '0';

export const CHROMIUM = '/usr/bin/chromium';

/** Whether git-mem's `import('@huggingface/transformers')` finds the runtime (the repository's node_modules). */
export const hasLocalEmbeddings = () =>
  existsSync(join(ROOT, 'node_modules', '@huggingface', 'transformers', 'package.json'));

export const LOCAL_EMBEDDINGS = {
  what: 'the local-embeddings runtime (@huggingface/transformers)',
  install: '.ci/local-embeddings/install (npm ci of its pinned lock, linked into node_modules)',
};

export const BROWSER = {
  what: `Chromium (${CHROMIUM})`,
  install: 'apt-get install -y chromium (.ci/run installs it)',
};

/** The line a missing requirement prints (skipped) or fails with (CI). */
export const missingLine = (n: { what: string; install: string }) => `${n.what} is missing: ${n.install}`;

export interface Need {
  present: boolean;
  /** In a test or a beforeEach: skips it when the requirement is missing. */
  skip(t: { skip: () => void }): void;
}

/**
 * Whether `n` is `present`. When it is not: one line on stderr, and the tests
 * that call `skip` are skipped; under CI, one failing test whose error is that line.
 */
export function needs(n: { what: string; install: string }, present: boolean): Need {
  if (!present) {
    const line = missingLine(n);
    if (CI)
      it(`needs ${n.what}`, () => {
        const e = new Error(line);
        e.stack = line; // the line is the whole story
        throw e;
      });
    else process.stderr.write(`skipped: ${line}\n`);
  }
  return {
    present,
    skip: (t) => {
      if (!present) t.skip();
    },
  };
}
