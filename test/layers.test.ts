/**
 * Imports go down, never up (docs/architecture.md): the layers below the operations import
 * nothing of src/commands or src/cli, and the pure ones (src/model, src/safety) nothing of the
 * project but each other and the error type. Read from the sources' import lines, no git.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers.js';

const SRC = join(ROOT, 'src');
function filesOf(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesOf(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}
/** The project folders (src/<layer>) a file imports, statically or lazily. */
function layersImported(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out = new Set<string>();
  for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*)'(\.{1,2}\/[^']+)'/g)) {
    const target = relative(SRC, join(file, '..', m[1]));
    out.add(target.includes('/') ? target.split('/')[0] : target.replace(/\.js$/, ''));
  }
  return [...out];
}

const BELOW_OPERATIONS = ['anchors', 'search', 'merge', 'ci', 'gitstore', 'model', 'safety', 'daemon'];

it('nothing below the operations imports src/commands or src/cli', () => {
  const up: string[] = [];
  for (const layer of BELOW_OPERATIONS)
    for (const f of filesOf(join(SRC, layer)))
      for (const l of layersImported(f))
        if (l === 'commands' || l === 'cli') up.push(`${relative(ROOT, f)} → src/${l}`);
  expect(up).toEqual([]);
});

it('src/model and src/safety import only each other and the error type', () => {
  const out: string[] = [];
  for (const layer of ['model', 'safety'])
    for (const f of filesOf(join(SRC, layer)))
      for (const l of layersImported(f))
        if (!['model', 'safety', 'errors'].includes(l)) out.push(`${relative(ROOT, f)} → src/${l}`);
  expect(out).toEqual([]);
});

it('nothing but src/cli imports src/cli', () => {
  const out: string[] = [];
  for (const f of filesOf(SRC))
    if (!relative(SRC, f).startsWith('cli/'))
      for (const l of layersImported(f)) if (l === 'cli') out.push(relative(ROOT, f));
  expect(out).toEqual([]);
});
