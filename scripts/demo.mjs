#!/usr/bin/env node
// `npm run demo`: the main job end to end on a scratch repository, as a user
// would type it. No network, no model, no server. Cleans up after itself
// (pass --keep to keep the scratch repository and print its path).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'git-mem.js');
const keep = process.argv.includes('--keep');
const dir = mkdtempSync(join(tmpdir(), 'git-mem-demo-'));
const home = join(dir, 'home');
mkdirSync(home);
writeFileSync(join(home, '.gitconfig'), '[user]\n\tname = Demo User\n\temail = demo@example.com\n[init]\n\tdefaultBranch = main\n');
const env = { ...process.env, HOME: home, GIT_CONFIG_GLOBAL: join(home, '.gitconfig'), GIT_CONFIG_NOSYSTEM: '1', GIT_MEM_HOME: join(home, 'git-mem') };
const repo = join(dir, 'app');

const git = (...args) => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' });
/** A word as a POSIX shell reads it back unchanged: single quotes, so backticks and $ stay text when pasted. */
const shellWord = (a) => (/^[\w./:=@%+,-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`);
function mem(args, { input, quiet } = {}) {
  const shown = args.map(shellWord).join(' ');
  if (!quiet) process.stdout.write(`\n$ git mem ${shown}\n`);
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: repo, env, input, encoding: 'utf8' });
  if (!quiet) process.stdout.write(r.stdout + r.stderr);
  if (r.status !== 0 && !args.includes('--expect-fail')) throw new Error(`git mem ${shown} exited ${r.status}`);
  return r.stdout;
}
const write = (p, s) => {
  mkdirSync(dirname(join(repo, p)), { recursive: true });
  writeFileSync(join(repo, p), s);
};

try {
  console.log(`# git-mem demo in ${repo}`);
  mkdirSync(repo);
  git('init', '-q');
  write('packages/db/src/pool.ts', 'export function connect() {\n  // retry until postgres is ready\n  return createPool({ max: 10 });\n}\n');
  write('apps/web/src/page.tsx', 'export default function Page() { return null; }\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'initial code');

  mem(['init']);
  const fix = JSON.parse(
    mem(['add', '--type', 'known_fix', '--title', 'db suite fails with ECONNREFUSED on CI', '--tags', 'db,ci',
      '--content', 'Postgres starts after the tests on CI. Wait with `pg_isready` before `npm test` in the db job.', '--json'], { quiet: true }),
  ).id;
  console.log(`\n$ git mem add --type known_fix --title "db suite fails with ECONNREFUSED on CI" …   # → ${fix}`);
  mem(['add', '--type', 'decision', '--title', 'pnpm workspaces, not npm', '--tags', 'build', '--alias', 'build/package-manager'], {
    input: 'We use pnpm workspaces: faster installs and strict dependency boundaries.\n',
  });
  mem(['add', '--type', 'rule', '--title', 'Always go through the pool', '--scope', 'packages/db/**', '--content', 'Never open a raw client; use connect() from pool.ts.']);
  mem(['add', '--type', 'rule', '--title', 'Strict TypeScript', '--scope', '**/*.ts', '--scope', '**/*.tsx', '--content', 'No `any`; prefer unknown and narrow.']);
  mem(['list']);
  mem(['show', fix.slice(0, 12).toLowerCase()]);
  mem(['show', 'build/package-manager']);
  mem(['rules', '--file', 'packages/db/src/pool.ts']);
  const cmds = mem(['--help'], { quiet: true });
  if (/git mem search/.test(cmds)) mem(['search', 'ECONNREFUSED on CI', '--file', 'packages/db/src/pool.ts']);
  else mem(['list', '--tag', 'ci']);
  mem(['update', fix, '--add-tag', 'postgres', '--content', 'Postgres starts after the tests on CI: run `pg_isready -t 30` first.']);
  mem(['history', fix]);
  mem(['stats']);
  mem(['doctor']);
  console.log('\n$ git log --oneline refs/memory');
  process.stdout.write(git('log', '--oneline', 'refs/memory'));
  console.log('\n$ git status --short   # the working tree is untouched');
  process.stdout.write(git('status', '--short') || '(clean)\n');
  console.log('\nDemo finished.');
} finally {
  if (keep) console.log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}
