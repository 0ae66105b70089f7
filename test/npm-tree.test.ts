/**
 * The repository's own npm side: no warnings from its npm config, and the
 * README's first command (`npm install`) leaves package-lock.json as it is.
 * npm runs offline on a copy of package.json, the lock and the workspaces'
 * package.json files (all it reads; --package-lock-only touches no node_modules).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT, tmpDir } from './helpers.js';

const npm = (args: string[], cwd: string) =>
  spawnSync('npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false', ONNXRUNTIME_NODE_INSTALL: 'skip' },
  });

it('npm reads no unknown project config', () => {
  const r = npm(['config', 'list'], ROOT);
  expect(r.status, r.stderr).toBe(0);
  expect(r.stderr).not.toMatch(/Unknown project config/);
  if (existsSync(join(ROOT, '.npmrc')))
    expect(readFileSync(join(ROOT, '.npmrc'), 'utf8')).not.toMatch(/onnxruntime/);
});

it('npm install leaves package-lock.json byte for byte as committed', () => {
  const dir = tmpDir('gm-lock-');
  // the package, its lock, and its workspaces' package files (web/package.json: the build's packages)
  const { workspaces = [] } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  for (const f of [
    'package.json',
    'package-lock.json',
    ...workspaces.map((w: string) => `${w}/package.json`),
  ]) {
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    copyFileSync(join(ROOT, f), join(dir, f));
  }
  const r = npm(
    ['install', '--package-lock-only', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'],
    dir,
  );
  expect(r.status, r.stderr).toBe(0);
  expect(readFileSync(join(dir, 'package-lock.json'), 'utf8')).toBe(
    readFileSync(join(ROOT, 'package-lock.json'), 'utf8'),
  );
}, 60_000);

it('the local-embeddings tier CI installs is locked, npm leaves its lock as committed, and it is the peer git-mem names', () => {
  const tier = join(ROOT, '.ci', 'local-embeddings');
  const dir = tmpDir('gm-tier-lock-');
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(tier, f), join(dir, f));
  const r = npm(
    ['install', '--package-lock-only', '--ignore-scripts', '--offline', '--no-audit', '--no-fund'],
    dir,
  );
  expect(r.status, r.stderr).toBe(0);
  expect(readFileSync(join(dir, 'package-lock.json'), 'utf8')).toBe(
    readFileSync(join(tier, 'package-lock.json'), 'utf8'),
  );
  const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(join(tier, 'package-lock.json'), 'utf8'));
  // not installed by npm install: no dev dependency pulls it (or ONNX Runtime) into the contributor tree
  expect(root.devDependencies['@huggingface/transformers']).toBeUndefined();
  expect(root.peerDependenciesMeta['@huggingface/transformers'].optional).toBe(true);
  const v = lock.packages['node_modules/@huggingface/transformers'].version;
  expect(root.peerDependencies['@huggingface/transformers']).toBe(`^${v}`);
}, 60_000);
