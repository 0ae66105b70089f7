#!/usr/bin/env node
// Thin launcher: the CLI is bundled into dist/ by `npm run build` so that a
// one-shot command loads one file, and heavy libraries are imported lazily.
import { main } from '../dist/cli.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`git-mem: internal error: ${err?.stack ?? err}\n`);
    process.exitCode = 70;
  },
);
