/**
 * What users run: the packed and installed `git-mem`, as real processes, every
 * command at least twice (the second run after whatever the first cached), in a
 * fresh repository, one after `git gc`, a fresh clone of a remote that has memory,
 * a linked worktree, and a subdirectory under GIT_CEILING_DIRECTORIES. Refused
 * input must end promptly with one line and leave refs/memory as it was; the MCP
 * server is launched twice through the SDK's stdio client.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, type ExpectStatic, it } from 'vitest';
import { makeRepo, runCli, sh, tmpDir, until } from './helpers.js';
import {
  describeRun,
  type Installed,
  installedEnv,
  installPackage,
  jsonOf,
  type ProcResult,
  runProc,
  STALE_CHUNK,
} from './installed.js';
import { writeTinyModel } from './support/tiny-model.js';

let inst: Installed;
/** every command name the suite ran through the installed binary */
const ran = new Set<string>();

beforeAll(() => {
  inst = installPackage();
  const s = (inst.ms / 1000).toFixed(1);
  console.log(`installed.test: npm pack + install (${inst.via}) took ${s} s`);
  if (inst.ms > 60_000) console.warn(`installed.test: pack + install took ${s} s (over 60 s)`);
}, 300_000);

/** Refused input must end well within this. */
const PROMPT_MS = 10_000;

interface Kind {
  name: string;
  /** where commands run */
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** a scratch folder for files the commands read and write */
  scratch: string;
  ids: Record<string, string[]>;
  /** a record a merge flagged for review (the clone only) */
  conflict?: string;
}

const git = (k: Kind, ...args: string[]) => sh('git', args, k.cwd, k.env).trim();
const tip = (k: Kind) => {
  try {
    return git(k, 'rev-parse', '--verify', '-q', 'refs/memory');
  } catch {
    return '(none)';
  }
};

/** `git mem …` (git finds the installed git-mem on PATH). */
function gm(k: Kind, args: string[], o: { stdin?: string; timeoutMs?: number; cwd?: string } = {}) {
  ran.add(args[0]);
  return runProc('git', ['mem', ...args], { cwd: o.cwd ?? k.cwd, env: k.env, ...o });
}
/** `<prefix>/bin/git-mem …` directly. */
function bin(k: Kind, args: string[], o: { stdin?: string; timeoutMs?: number; cwd?: string } = {}) {
  ran.add(args[0]);
  return runProc(inst.bin, args, { cwd: o.cwd ?? k.cwd, env: k.env, ...o });
}

/** No crash, no hang, no stack, no node warning, whatever the exit code. */
function clean(expect: ExpectStatic, r: ProcResult): void {
  const m = describeRun(r);
  expect.soft(r.timedOut, m).toBe(false);
  expect.soft(r.stderr, m).not.toMatch(/internal error/i);
  expect.soft(r.stderr, m).not.toMatch(/^ {4}at /m);
  expect.soft(r.stderr, m).not.toMatch(/\(node:\d+\) \w*Warning/);
}
function ok(expect: ExpectStatic, r: ProcResult): ProcResult {
  clean(expect, r);
  expect.soft(r.code, describeRun(r)).toBe(0);
  return r;
}
/** A refusal: non-zero exit, one line on stderr; with `code`, a run with --json whose error has that code. */
function refused(expect: ExpectStatic, r: ProcResult, code?: string): ProcResult {
  clean(expect, r);
  const m = describeRun(r);
  expect.soft(r.code === 0 || r.code === null, m).toBe(false);
  expect.soft(r.stderr.trim().split('\n').length, m).toBe(1);
  if (code) expect.soft(jsonOf<{ error?: { code?: string } }>(r)?.error?.code, m).toBe(code);
  return r;
}

/** Runs a command twice, once through `git mem`, once through the installed bin; both must succeed. */
async function twice(
  expect: ExpectStatic,
  k: Kind,
  args: string[] | ((i: number) => string[]),
  o: { stdin?: string | ((i: number) => string) } = {},
): Promise<ProcResult[]> {
  const out: ProcResult[] = [];
  for (const i of [0, 1]) {
    const a = typeof args === 'function' ? args(i) : args;
    const stdin = typeof o.stdin === 'function' ? o.stdin(i) : o.stdin;
    out.push(ok(expect, await (i === 0 ? gm : bin)(k, a, { stdin })));
  }
  return out;
}

/** Adds twice with --json and keeps the ids under `key`. */
async function addTwice(
  expect: ExpectStatic,
  k: Kind,
  key: string,
  args: (i: number) => string[],
  o: { stdin?: (i: number) => string } = {},
): Promise<void> {
  const rs = await twice(expect, k, (i) => ['add', ...args(i), '--json'], o);
  k.ids[key] = rs.map((r) => jsonOf<{ id?: string }>(r)?.id).filter((id): id is string => !!id);
}

function need(k: Kind, key: string, n: number): string[] {
  const ids = k.ids[key] ?? [];
  if (ids.length < n) throw new Error(`needs ${n} ids from the earlier "${key}" step, has ${ids.length}`);
  return ids;
}

/** Setup goes through the in-process CLI, one kind at a time (a fixture, not what is tested). */
let setupChain: Promise<unknown> = Promise.resolve();
function serialSetup<T>(fn: () => Promise<T>): Promise<T> {
  const p = setupChain.then(fn);
  setupChain = p.catch(() => {});
  return p;
}
async function memIn(cwd: string, env: NodeJS.ProcessEnv, args: string[], codes = [0]): Promise<string> {
  const r = await runCli(args, { cwd, env });
  if (!codes.includes(r.code))
    throw new Error(`setup: git mem ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}
async function seedMemory(cwd: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  await memIn(cwd, env, ['init']);
  const ids: string[] = [];
  for (const t of ['seed one', 'seed two'])
    ids.push(JSON.parse(await memIn(cwd, env, ['add', '--title', t, '--content', `${t} body`, '--json'])).id);
  return ids;
}

const CODE = `${Array.from({ length: 12 }, (_, i) => `export const v${i} = ${i}; // line ${i + 1}`).join('\n')}\n`;

/** A repository with two commits of code and a bare remote `origin`. */
function codeRepo(env: NodeJS.ProcessEnv): { dir: string; bare: string } {
  const repo = makeRepo({ commit: true, env });
  repo.write('src/app.ts', CODE);
  repo.commitAll('app');
  const bare = tmpDir('gm-bare-');
  sh('git', ['init', '-q', '--bare', bare], bare, env);
  repo.git('remote', 'add', 'origin', bare);
  repo.git('push', '-q', 'origin', 'main');
  return { dir: repo.dir, bare };
}

function newKind(name: string, cwd: string, env: NodeJS.ProcessEnv): Kind {
  const scratch = tmpDir(`gm-scratch-${name}-`);
  return { name, cwd, env, scratch, ids: {} };
}

const KINDS: Record<string, () => Promise<Kind>> = {
  /** git init, two commits, no memory yet */
  fresh: async () => {
    const env = installedEnv(inst);
    const { dir } = codeRepo(env);
    return newKind('fresh', dir, env);
  },
  /** memory written, then everything packed */
  gc: async () => {
    const env = installedEnv(inst);
    const { dir } = codeRepo(env);
    const k = newKind('gc', dir, env);
    k.ids.seed = await serialSetup(() => seedMemory(dir, env));
    git(k, 'gc', '-q', '--prune=now');
    return k;
  },
  /** a fresh clone of a bare remote that has memory, after `git mem sync` as the docs say; one record in conflict */
  clone: async () => {
    const env = installedEnv(inst);
    const { dir: origin, bare } = codeRepo(env);
    const seeds = await serialSetup(async () => {
      const ids = await seedMemory(origin, env);
      await memIn(origin, env, ['sync']);
      return ids;
    });
    const dir = join(tmpDir('gm-clone-'), 'clone');
    sh('git', ['clone', '-q', bare, dir], origin, env);
    const k = newKind('clone', dir, env);
    // the first sync of a clone, through the installed binary: it is part of what users run
    const first = await gm(k, ['sync']);
    if (first.code !== 0) throw new Error(`first sync of a clone: ${describeRun(first)}`);
    await serialSetup(async () => {
      await memIn(dir, env, ['update', seeds[0], '--content', 'the clone says this']);
      await memIn(origin, env, ['update', seeds[0], '--content', 'the origin says that']);
      await memIn(origin, env, ['sync']);
      await memIn(dir, env, ['pull'], [0, 4]);
    });
    k.ids.seed = seeds;
    k.conflict = seeds[0];
    return k;
  },
  /** a linked worktree of a repository that has memory */
  worktree: async () => {
    const env = installedEnv(inst);
    const { dir: main } = codeRepo(env);
    const seeds = await serialSetup(() => seedMemory(main, env));
    const dir = join(tmpDir('gm-wt-'), 'feature');
    sh('git', ['worktree', 'add', '-q', '-b', 'feature', dir], main, env);
    const k = newKind('worktree', dir, env);
    k.ids.seed = seeds;
    return k;
  },
};

for (const [name, make] of Object.entries(KINDS)) {
  describe.concurrent(`installed git-mem in a ${name} repository`, () => {
    let k: Kind;
    beforeAll(async () => {
      k = await make();
    }, 120_000);
    afterAll(async () => {
      if (k) await runProc('git', ['mem', 'daemon', 'stop'], { cwd: k.cwd, env: k.env, timeoutMs: 15_000 });
    }, 30_000);
    const step = (title: string, fn: (expect: ExpectStatic) => Promise<void>) =>
      it.sequential(title, async ({ expect }) => fn(expect), 90_000);

    step('init (idempotent)', async (expect) => {
      await twice(expect, k, ['init']);
      expect(tip(k)).toMatch(/^[0-9a-f]{40}$/);
    });

    step('refused input exits promptly, one line, refs/memory unchanged', async (expect) => {
      const key = `AKIA${'Q3JX7RZ2M5VTBN4W'}`;
      const cases: { args: string[]; stdin?: string }[] = [
        { args: ['add', '--type', 'nonsense', '--title', 'x', '--content', 'y'] },
        { args: ['add', '--title', 'x', '--content', 'y', '--confidence', '7'] },
        { args: ['add', '--title', 'x', '--content', `aws key ${key} here`] },
        { args: ['add', '--title', 'x', '--content', 'y', '--anchor', 'no/such/file.ts:1-3'] },
        { args: ['add', '--title', 'x', '--content', ''] },
        { args: ['add', '--title', 'x'], stdin: '' },
      ];
      if (k.ids.seed)
        cases.push(
          { args: ['update', k.ids.seed[1], '--confidence', '7'] },
          // a likely duplicate of a stored memory
          { args: ['add', '--title', 'seed two', '--content', 'seed two body'] },
        );
      const before = tip(k);
      // in parallel, half through `git mem`, half through the bin: each must end within PROMPT_MS on its own
      const rs = await Promise.all(
        cases.map((c, i) => (i % 2 ? bin : gm)(k, c.args, { stdin: c.stdin, timeoutMs: PROMPT_MS })),
      );
      for (const r of rs) refused(expect, r);
      expect.soft(tip(k), `refs/memory moved after: ${rs.map((r) => r.cmd).join('; ')}`).toBe(before);
    });

    step('add (--content, stdin, --file, --anchor, rule, pending)', async (expect) => {
      const words = ['pool', 'cache'];
      await addTwice(expect, k, 'plain', (i) => [
        '--type',
        'decision',
        '--title',
        `${words[i]} size`,
        '--content',
        `Keep the ${words[i]} at ${i + 10}.`,
        '--tags',
        'db,build',
      ]);
      const fix = ok(
        expect,
        await gm(k, ['add', '--type', 'known_fix', '--title', 'ECONNREFUSED on CI', '--json'], {
          stdin: 'Wait for pg_isready first.\n',
        }),
      );
      k.ids.stdin = [jsonOf(fix)?.id].filter((id): id is string => !!id);
      const notes = ['Read from a file: lorem.', 'Quartz mirrors hum loudly.'];
      await addTwice(expect, k, 'file', (i) => {
        writeFileSync(join(k.scratch, `note${i}.md`), `${notes[i]}\n`);
        return ['--title', `file note ${['alpha', 'omega'][i]}`, '--file', join(k.scratch, `note${i}.md`)];
      });
      const anchored = [
        ['v0 stays pure', 'No side effects here.'],
        ['zebra crossing', 'Pedestrians first always.'],
      ];
      await addTwice(expect, k, 'anchored', (i) => [
        '--type',
        'constraint',
        '--title',
        anchored[i][0],
        '--content',
        anchored[i][1],
        '--anchor',
        `src/app.ts:${i + 1}-${i + 3}`,
      ]);
      const rule = ok(
        expect,
        await bin(k, [
          'add',
          '--type',
          'rule',
          '--title',
          'use the pool',
          '--scope',
          'src/**',
          '--content',
          'Always go through the pool.',
          '--json',
        ]),
      );
      k.ids.rule = [jsonOf(rule)?.id].filter((id): id is string => !!id);
      const prop = [
        ['proposal kiwi', 'Maybe kiwis.'],
        ['proposal walnut', 'Walnuts perhaps.'],
      ];
      await addTwice(expect, k, 'pending', (i) => [
        '--status',
        'pending',
        '--title',
        prop[i][0],
        '--content',
        prop[i][1],
      ]);
    });

    step('show, list, list --json', async (expect) => {
      const [a] = need(k, 'plain', 1);
      const shown = await twice(expect, k, (i) => (i ? ['show', a.slice(0, 10), '--json'] : ['show', a]));
      expect.soft(shown[0].stdout).toContain('pool size');
      expect.soft(jsonOf(shown[1])?.id).toBe(a);
      const listed = await twice(expect, k, (i) => (i ? ['list', '--json'] : ['list']));
      expect.soft(listed[0].stdout).toContain('cache size');
      expect.soft(jsonOf<unknown[]>(listed[1])?.length, describeRun(listed[1])).toBeGreaterThan(6);
    });

    step('update, mv, supersede, history', async (expect) => {
      const [a, b] = need(k, 'plain', 2);
      await twice(expect, k, (i) => [
        'update',
        a,
        '--add-tag',
        `t${i}`,
        '--content',
        `Keep the pool at ${20 + i}.`,
      ]);
      await twice(expect, k, (i) => ['mv', [a, b][i], `standards/${k.name}/m${i}`]);
      // the second run finds it done already
      await twice(expect, k, ['supersede', b, '--by', a]);
      const h = await twice(expect, k, (i) => (i ? ['history'] : ['history', a]));
      expect.soft(h[0].stdout).toContain('pool');
    });

    step('export (stdout, --dir), import (file, stdin)', async (expect) => {
      const exp = await twice(expect, k, (i) =>
        i ? ['export', '--dir', join(k.scratch, 'dir')] : ['export'],
      );
      expect.soft(exp[0].stdout.trim().split('\n').length).toBeGreaterThan(6);
      expect.soft(existsSync(join(k.scratch, 'dir', 'FORMAT'))).toBe(true);
      const line = (i: number) =>
        `${JSON.stringify({ type: 'convention', title: ['imported tabs', 'imported quince'][i], body: ['Tabs, not spaces.', 'Quinces ripen late.'][i] })}\n`;
      writeFileSync(join(k.scratch, 'in.jsonl'), line(0));
      await twice(expect, k, (i) => (i ? ['import', '-'] : ['import', join(k.scratch, 'in.jsonl')]), {
        stdin: line(1),
      });
    });

    step('stats, doctor, config', async (expect) => {
      await twice(expect, k, ['stats']);
      await twice(expect, k, ['doctor']);
      const c = await twice(expect, k, (i) =>
        i ? ['config', 'get', 'context-budget'] : ['config', 'set', 'context-budget', '3000'],
      );
      expect.soft(c[1].stdout.trim()).toBe('3000');
    });

    step('rules, rules export, rules import', async (expect) => {
      const r = ok(expect, await gm(k, ['rules', '--file', 'src/app.ts']));
      expect.soft(r.stdout).toContain('use the pool');
      const dir = join(k.scratch, 'agents');
      mkdirSync(dir, { recursive: true });
      await twice(expect, k, (i) => [
        'rules',
        'export',
        '--to',
        'claude',
        '--dir',
        dir,
        ...(i ? ['--check'] : []),
      ]);
      const claude = join(dir, 'CLAUDE.md');
      expect
        .soft(existsSync(claude) ? readFileSync(claude, 'utf8') : '(no CLAUDE.md)')
        .toContain('use the pool');
      await twice(expect, k, (i) => [
        'rules',
        'import',
        '--from',
        'claude',
        '--dir',
        dir,
        ...(i ? [] : ['--dry-run']),
      ]);
    });

    step('check, stale, reanchor (after the anchored code changed)', async (expect) => {
      writeFileSync(
        join(k.cwd, 'src', 'app.ts'),
        CODE.replace('v1 = 1', 'v1 = 100').replace('v2 = 2', 'v2 = 200'),
      );
      git(k, 'commit', '-q', '-am', 'change the anchored lines');
      await twice(expect, k, ['check']);
      const st = await twice(expect, k, (i) => (i ? ['stale', '--json'] : ['stale']));
      expect.soft(jsonOf<unknown[]>(st[1])?.length, describeRun(st[1])).toBeGreaterThan(0);
      const anchored = need(k, 'anchored', 2);
      // the linked worktree is on a feature branch: reanchor moves the shared record (which follows
      // main) only when asked to (docs/anchors.md); elsewhere HEAD is main
      const anyBranch = k.name === 'worktree' ? ['--any-branch'] : [];
      await twice(expect, k, (i) => ['reanchor', anchored[i], ...anyBranch]);
      // blame: the memories on those lines and the rules for the file, as text and as JSON
      const bl = await twice(expect, k, (i) => ['blame', 'src/app.ts', ...(i ? ['--json'] : [])]);
      expect.soft(jsonOf<{ path?: string }>(bl[1])?.path, describeRun(bl[1])).toBe('src/app.ts');
    });

    step('consolidate, and a team store added, synced, listed and removed', async (expect) => {
      await twice(expect, k, (i) => ['consolidate', '--dry-run', ...(i ? ['--json'] : [])]);
      // a standards repository's memory: a bare one holding this store's records
      const team = tmpDir('gm-team-');
      sh('git', ['init', '-q', '--bare', team], team, k.env);
      git(k, 'push', '-q', team, 'refs/memory:refs/mem/memory');
      await twice(expect, k, ['store', 'add', 'team', team]);
      await twice(expect, k, (i) => ['store', 'sync', ...(i ? ['team'] : [])]);
      const ls = await twice(expect, k, (i) => ['store', 'list', ...(i ? ['--json'] : [])]);
      expect.soft(ls[1].stdout, describeRun(ls[1])).toContain('team');
      const found = await twice(expect, k, (i) => ['search', 'pool', ...(i ? ['--json'] : [])]);
      expect.soft(found[1].stdout, describeRun(found[1])).toContain('"store"');
      await twice(expect, k, (i) => (i ? ['store', 'list'] : ['store', 'remove', 'team']));
    });

    step('ui: serves its page with the printed one-time link, twice', async (expect) => {
      for (const i of [0, 1]) {
        ran.add('ui');
        const child = spawn(process.execPath, [inst.bin, 'ui', '--port', '0'], { cwd: k.cwd, env: k.env });
        let out = '';
        let err = '';
        child.stdout.on('data', (d) => (out += d));
        child.stderr.on('data', (d) => (err += d));
        try {
          const url = await until(() => /http:\/\/127\.0\.0\.1:\d+\/\?code=\S+/.exec(out)?.[0], 20_000);
          // the link opens the page with the key once; the key then opens the API
          const page = await fetch(url);
          expect.soft(page.status, `${i}: ${err}`).toBe(200);
          const html = await page.text();
          expect.soft(html, `${i}`).toMatch(/<html/i);
          const key = /<meta name="git-mem-token" content="([\w-]+)">/.exec(html)?.[1] ?? '';
          const info = await fetch(new URL('/api/info', url), { headers: { 'x-git-mem-token': key } });
          expect.soft(info.status, `${i}: ${err}`).toBe(200);
          expect.soft((await fetch(url)).status, `${i}: a spent link`).toBe(403);
          expect.soft((await fetch(new URL('/api/info', url))).status, `${i}: no key`).toBe(403);
        } finally {
          child.kill('SIGINT');
          await new Promise((r) => child.once('exit', r));
        }
        expect.soft(err, `${i}`).not.toMatch(/internal error|^ {4}at /im);
      }
    });

    step('ci (json, --out)', async (expect) => {
      const out = join(k.scratch, 'ci.md');
      await twice(expect, k, (i) => [
        'ci',
        '--base',
        'HEAD~1',
        '--fail-on',
        'never',
        ...(i ? ['--format', 'markdown', '--out', out] : ['--format', 'json']),
      ]);
      expect.soft(existsSync(out)).toBe(true);
    });

    step('hooks install, a commit runs the hook, hooks uninstall', async (expect) => {
      ok(expect, await gm(k, ['hooks', 'install']));
      writeFileSync(join(k.cwd, 'hooked.txt'), 'hooked\n');
      git(k, 'add', 'hooked.txt');
      ok(expect, await runProc('git', ['commit', '-q', '-m', 'hooked'], { cwd: k.cwd, env: k.env }));
      ok(expect, await bin(k, ['hooks', 'uninstall']));
    });

    step(
      'with a daemon running, add and check answer in their own process, twice each, through git mem and the bin',
      async (expect) => {
        ok(expect, await gm(k, ['daemon', 'start']));
        try {
          for (const [i, run] of [gm, bin].entries()) {
            const how = (args: string[]) =>
              run === gm
                ? runProc('git', ['mem', ...args], { cwd: k.cwd, env: k.env })
                : runProc(inst.bin, args, { cwd: k.cwd, env: k.env });
            const add = ok(
              expect,
              await how(['add', '--title', `Beside the daemon ${i}`, '--content', `run ${i}`]),
            );
            expect.soft(add.stdout).toMatch(/^Added [0-9A-Z]{12} decision "Beside the daemon \d"/);
            const check = ok(expect, await how(['check', '--json']));
            expect.soft(JSON.parse(check.stdout)).toHaveProperty('counts');
          }
          ran.add('add');
          ran.add('check');
        } finally {
          ok(expect, await gm(k, ['daemon', 'stop']));
        }
      },
    );

    step('search, context, reindex, daemon status', async (expect) => {
      const s = await twice(expect, k, (i) =>
        i ? ['search', 'pool', '--file', 'src/app.ts', '--json'] : ['search', 'pool'],
      );
      expect.soft(s[0].stdout).toContain('pool');
      await twice(expect, k, ['context', '--file', 'src/app.ts', '-q', 'pool']);
      await twice(expect, k, ['reindex']);
      await twice(expect, k, ['daemon', 'status']);
    });

    step('models list; pull without a reachable host fails in one line', async (expect) => {
      ok(expect, await gm(k, ['models', 'list']));
      // port 9 (discard) on loopback: nothing listens; never the network
      const pull = await bin(k, ['models', 'pull', '--host', 'http://127.0.0.1:9', '--timeout', '5'], {
        timeoutMs: 30_000,
      });
      clean(expect, pull);
      expect.soft(pull.code === 0 || pull.code === null, describeRun(pull)).toBe(false);
      // a progress line may precede it; the failure itself is one line
      expect.soft(pull.stderr.split('\n').filter((l) => /error/i.test(l)).length, describeRun(pull)).toBe(1);
    });

    step('remote, sync, pull, push with a bare remote', async (expect) => {
      await twice(expect, k, (i) => ['remote', i ? 'status' : 'setup']);
      await twice(expect, k, (i) => (i ? ['sync', 'origin', '--json'] : ['sync']));
      await twice(expect, k, ['pull']);
      await twice(expect, k, ['push']);
      expect.soft(git(k, 'ls-remote', 'origin', 'refs/mem/memory').split(/\s/)[0]).toBe(tip(k));
    });

    step('review, --approve, --reject', async (expect) => {
      const r = ok(expect, await gm(k, ['review', '--json']));
      expect.soft(jsonOf<unknown[]>(r)?.length, describeRun(r)).toBeGreaterThanOrEqual(2);
      const [p, q] = need(k, 'pending', 2);
      ok(expect, await bin(k, ['review', '--approve', p]));
      ok(expect, await gm(k, ['review', '--reject', q]));
      const left = ok(expect, await bin(k, ['review', '--json']));
      expect.soft(jsonOf<unknown[]>(left)?.length, describeRun(left)).toBe(0);
    });

    step('conflicts, resolve', async (expect) => {
      const c = await twice(expect, k, (i) => (i ? ['conflicts', '--json'] : ['conflicts']));
      if (k.conflict) {
        expect.soft(JSON.stringify(jsonOf(c[1]))).toContain(k.conflict);
        ok(expect, await gm(k, ['resolve', k.conflict, '--take', 'theirs']));
        // settled now: a second resolve is refused cleanly
        refused(expect, await bin(k, ['resolve', k.conflict, '--json']), 'E_INVALID_ARG');
      } else {
        const [a] = need(k, 'plain', 1);
        for (const run of [gm, bin]) refused(expect, await run(k, ['resolve', a, '--json']), 'E_INVALID_ARG');
      }
    });

    step('hook claude-code, checkpoint, sessions', async (expect) => {
      const payload = (i: number) =>
        JSON.stringify({
          session_id: `s-${k.name}-${i}`,
          hook_event_name: 'SessionStart',
          source: 'startup',
          cwd: k.cwd,
        });
      const h = await twice(expect, k, ['hook', 'claude-code'], { stdin: payload });
      for (const r of h) expect.soft(r.stdout, describeRun(r)).toContain('hookSpecificOutput');
      await twice(expect, k, ['checkpoint']);
      await twice(expect, k, (i) => (i ? ['sessions', '--json'] : ['sessions']));
    });

    step('strategy add, record, list', async (expect) => {
      const add = ok(
        expect,
        await gm(k, [
          'strategy',
          'add',
          '--title',
          'extract shared types first',
          '--content',
          'When modules share models.',
          '--json',
        ]),
      );
      const id = jsonOf<{ id?: string }>(add)?.id;
      if (!id) throw new Error(`strategy add gave no id: ${describeRun(add)}`);
      ok(expect, await bin(k, ['strategy', 'record', id, '--success']));
      ok(expect, await gm(k, ['strategy', 'list']));
    });

    step('merge-driver on exported record files', async (expect) => {
      const mem = join(k.scratch, 'dir', 'memories');
      const sub = readdirSync(mem)[0];
      const file = readdirSync(join(mem, sub))[0];
      const text = readFileSync(join(mem, sub, file), 'utf8');
      await twice(expect, k, (i) => {
        const d = join(k.scratch, `md${i}`);
        mkdirSync(d, { recursive: true });
        for (const f of ['base', 'ours', 'theirs']) writeFileSync(join(d, f), text);
        // the path git passes (%P): the record's own path, which the driver checks against the layout
        return [
          'merge-driver',
          join(d, 'base'),
          join(d, 'ours'),
          join(d, 'theirs'),
          `memories/${sub}/${file}`,
        ];
      });
    });

    step('mcp: launched twice through the SDK stdio client', async (expect) => {
      for (const i of [0, 1]) await mcpRound(expect, k, i);
    });

    step('verify, and lsp launched twice over stdio', async (expect) => {
      const f = need(k, 'anchored', 2);
      await twice(expect, k, (i) => ['verify', f[i], '--by', `tester ${i}`]);
      const shown = jsonOf<{ verified?: { by?: string } }>(ok(expect, await gm(k, ['show', f[1], '--json'])));
      expect.soft(shown?.verified?.by).toBe('tester 1');
      // an editor's session, as an editor runs it: initialize on this repository and wait for the
      // answer, then shutdown and exit (LSP's Content-Length framing); `git mem lsp`, then the bin
      for (const [file, args] of [
        ['git', ['mem', 'lsp']],
        [inst.bin, ['lsp']],
      ] as const) {
        ran.add('lsp');
        const r = await lspSession(file, [...args], k);
        expect.soft(r.code, r.stderr).toBe(0);
        expect.soft(r.initialize).toMatchObject({ id: 1, result: { capabilities: { hoverProvider: true } } });
        expect.soft(r.shutdown).toMatchObject({ id: 2, result: null });
      }
    });

    step('rm, prune, --help, --version', async (expect) => {
      const f = need(k, 'anchored', 2);
      await twice(expect, k, (i) => ['rm', f[i], '--reason', 'obsolete']);
      refused(expect, await gm(k, ['show', f[0]]));
      await twice(expect, k, ['prune']);
      // through the bin: git turns `git mem --help` into `git help mem` (a man page)
      const h = ok(expect, await bin(k, ['--help']));
      expect.soft(h.stdout).toContain('git mem add');
      ok(expect, await bin(k, ['--version']));
    });
  });
}

/** One LSP session with `file args` in the kind's repository: initialize, shutdown, exit, each after the last answer. */
function lspSession(
  file: string,
  args: string[],
  k: Kind,
): Promise<{ code: number | null; initialize: unknown; shutdown: unknown; stderr: string }> {
  const p = spawn(file, args, { cwd: k.cwd, env: k.env, stdio: ['pipe', 'pipe', 'pipe'] });
  const send = (m: object) => {
    const body = JSON.stringify({ jsonrpc: '2.0', ...m });
    p.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  };
  let buf = Buffer.alloc(0);
  let stderr = '';
  const answers = new Map<number, (m: unknown) => void>();
  p.stderr.on('data', (d) => {
    stderr += d;
  });
  p.stdout.on('data', (d: Buffer) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const head = buf.indexOf('\r\n\r\n');
      if (head < 0) return;
      const len = Number(/Content-Length: (\d+)/i.exec(buf.subarray(0, head).toString())?.[1]);
      if (buf.length < head + 4 + len) return;
      const m = JSON.parse(buf.subarray(head + 4, head + 4 + len).toString()) as { id?: number };
      buf = buf.subarray(head + 4 + len);
      if (typeof m.id === 'number') answers.get(m.id)?.(m);
    }
  });
  const ask = (id: number, method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`lsp: no answer to ${method}: ${stderr}`)), PROMPT_MS * 3);
      answers.set(id, (m) => {
        clearTimeout(t);
        resolve(m);
      });
      send({ id, method, ...(params ? { params } : {}) });
    });
  const exited = new Promise<number | null>((resolve) => p.once('exit', (code) => resolve(code)));
  return (async () => {
    const initialize = await ask(1, 'initialize', {
      processId: null,
      rootUri: pathToFileURL(k.cwd).href,
      capabilities: {},
    });
    send({ method: 'initialized', params: {} });
    const shutdown = await ask(2, 'shutdown');
    send({ method: 'exit' });
    p.stdin.end();
    return { code: await exited, initialize, shutdown, stderr };
  })();
}

/** One launch of `git mem mcp` through the SDK's stdio client: add a memory, find it. */
async function mcpRound(expect: ExpectStatic, k: Kind, i: number): Promise<void> {
  ran.add('mcp');
  const env = Object.fromEntries(
    Object.entries(k.env).filter((e): e is [string, string] => e[1] !== undefined),
  );
  // the first launch as the docs configure it (git mem mcp), the second through the bin
  const transport = new StdioClientTransport({
    command: i ? inst.bin : 'git',
    args: i ? ['mcp'] : ['mem', 'mcp'],
    cwd: k.cwd,
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => (stderr += d));
  const client = new Client({ name: 'installed-test', version: '1.0.0' });
  const what = () =>
    `mcp launch ${i + 1} in the ${k.name} repository; server stderr: ${stderr.slice(0, 1500)}`;
  const within = <T>(p: Promise<T>, ms = 60_000) =>
    Promise.race([
      p,
      new Promise<T>((_, rej) => setTimeout(() => rej(new Error(`no answer in ${ms} ms`)), ms)),
    ]);
  try {
    await within(client.connect(transport));
    // distinct text per launch (an agent's near-duplicate add is refused, rightly)
    const word = ['zephyr', 'quokka'][i];
    const title = [`zephyr winds over mcp in ${k.name}`, `quokka marsupial spotted by an agent in ${k.name}`][
      i
    ];
    const body = ['The zephyr arrived through MCP.', 'Small wallaby-like animals live on Rottnest island.'][
      i
    ];
    const added = (await within(
      client.callTool({
        name: 'add',
        arguments: { type: 'decision', title, body },
      }),
    )) as { isError?: boolean; content: { text: string }[] };
    expect.soft(added.isError, `${what()}\n${JSON.stringify(added)}`).toBeFalsy();
    const found = (await within(client.callTool({ name: 'search', arguments: { query: word } }))) as {
      isError?: boolean;
      content: { text: string }[];
    };
    expect.soft(found.isError, what()).toBeFalsy();
    expect.soft(found.content.map((c) => c.text).join('\n'), what()).toContain(title);
  } catch (e) {
    expect.soft(String(e), what()).toBe('no error');
  } finally {
    await client.close().catch(() => {});
  }
  expect.soft(stderr, what()).not.toMatch(/internal error|^ {4}at /m);
}

describe.concurrent('installed git-mem in a subdirectory under GIT_CEILING_DIRECTORIES', () => {
  let repo: string;
  let sub: string;
  let env: NodeJS.ProcessEnv;
  let id: string;
  beforeAll(async () => {
    const base = installedEnv(inst);
    ({ dir: repo } = codeRepo(base));
    [id] = await serialSetup(() => seedMemory(repo, base));
    // the caches a read answers from exist: the repository was read before
    for (const a of [['list', '--json'], ['show', id], ['search', 'seed'], ['list']]) {
      const r = await runProc(inst.bin, a, { cwd: repo, env: base });
      if (r.code !== 0) throw new Error(`priming: ${describeRun(r)}`);
    }
    sub = join(repo, 'sub', 'dir');
    mkdirSync(sub, { recursive: true });
    env = { ...base, GIT_CEILING_DIRECTORIES: repo };
  }, 120_000);

  it.sequential('git itself finds no repository there', () => {
    let failed = false;
    try {
      sh('git', ['rev-parse', '--git-dir'], sub, env);
    } catch {
      failed = true;
    }
    if (!failed) throw new Error('git rev-parse found a repository under the ceiling');
  });

  it.sequential('every repository command refuses with one line, through git mem and the bin', async ({
    expect,
  }) => {
    const k: Kind = { name: 'ceiling', cwd: sub, env, scratch: tmpDir('gm-ceil-'), ids: {} };
    const cmds: string[][] = [
      ['init'],
      ['add', '--title', 'x', '--content', 'y'],
      ['show', id],
      ['list'],
      ['update', id, '--content', 'z'],
      ['rm', id],
      ['mv', id, 'a/b'],
      ['supersede', id, '--by', id],
      ['history'],
      ['prune'],
      ['import', '-'],
      ['export'],
      ['stats'],
      ['doctor'],
      ['config', 'list'],
      ['rules'],
      ['rules', 'export', '--to', 'claude'],
      ['rules', 'import', '--from', 'claude'],
      ['check'],
      ['stale'],
      ['reanchor', id],
      ['ci', '--base', 'HEAD~1'],
      ['hooks', 'install'],
      ['search', 'seed'],
      ['context', '-q', 'seed'],
      ['reindex'],
      ['daemon', 'status'],
      ['sync'],
      ['pull'],
      ['push'],
      ['remote', 'setup'],
      ['conflicts'],
      ['resolve', id],
      ['mcp'],
      ['sessions'],
      ['checkpoint'],
      ['review'],
      ['strategy', 'list'],
    ];
    const outside = { ...env, GIT_CEILING_DIRECTORIES: undefined };
    const tipBefore = sh('git', ['rev-parse', 'refs/memory'], repo, outside).trim();
    // the refusal is the launcher's and the CLI's repository discovery, before any command runs:
    // each command once, every other one through `git mem` (git's own dispatch) and the rest
    // through the bin, and the first and last of the list both ways
    // (each with --json: the refusal's code, E_NOT_A_REPO, as the error's JSON on stdout)
    const json = (a: string[]): string[] => [...a, '--json'];
    const runs = cmds.map((a, i) => [i % 2 ? bin : gm, json(a)] as const);
    runs.push([bin, json(cmds[0])], [cmds.length % 2 ? bin : gm, json(cmds[cmds.length - 1])]);
    const rs = await pool(runs, 3, ([run, a]) => run(k, a, { stdin: '', timeoutMs: 20_000 }));
    for (const r of rs) refused(expect, r, 'E_NOT_A_REPO');
    expect.soft(sh('git', ['rev-parse', 'refs/memory'], repo, outside).trim()).toBe(tipBefore);
  }, 240_000); // 40 process starts: seconds on an idle runner, longer on a loaded one
});

/** Runs `fn` over `items`, at most `n` at a time, results in order. */
async function pool<T, R>(items: T[], n: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]);
      }
    }),
  );
  return out;
}

it("packs this build's files only, not the chunks an earlier build left in dist/", ({ expect }) => {
  const shipped = readdirSync(join(inst.pkgDir, 'dist'));
  expect(shipped).toContain('cli.js');
  expect(shipped).not.toContain(STALE_CHUNK);
});

it('ships the manual page: git help mem, git mem --help, git mem help add', async ({ expect }) => {
  const cwd = tmpDir('gm-man-');
  // man finds <prefix>/share/man from <prefix>/bin on PATH, where npm links package.json "man"
  const env = installedEnv(inst, { MANPAGER: 'cat', PAGER: 'cat' });
  const hasMan = (await runProc('sh', ['-c', 'command -v man'], { cwd, env })).code === 0;
  if (hasMan)
    for (const args of [
      ['help', 'mem'],
      ['mem', '--help'],
    ]) {
      const r = await runProc('git', args, { cwd, env });
      expect.soft(r.code, describeRun(r)).toBe(0);
      expect.soft(r.stdout, describeRun(r)).toMatch(/GIT-MEM\(1\)[\s\S]*git mem add/);
    }
  else expect(readFileSync(join(inst.pkgDir, 'man', 'man1', 'git-mem.1'), 'utf8')).toMatch(/^\.TH GIT/);
  const r = await runProc(inst.bin, ['help', 'add'], { cwd, env });
  ran.add('help');
  expect(r.code, describeRun(r)).toBe(0);
  expect(r.stdout).toMatch(/--title\s+one-line title/);
});

it('prints a bash completion that completes git mem ad → add', async ({ expect }) => {
  const cwd = tmpDir('gm-compl-');
  const env = installedEnv(inst);
  const r = await runProc(inst.bin, ['completion', 'bash'], { cwd, env });
  ran.add('completion');
  expect(r.code, describeRun(r)).toBe(0);
  writeFileSync(join(cwd, 'c.bash'), r.stdout);
  const prog = `source c.bash; COMP_WORDS=(git mem ad); COMP_CWORD=2; _git_mem; echo "\${COMPREPLY[*]}"`;
  const b = await runProc('bash', ['--norc', '-c', prog], { cwd, env });
  expect(b.stdout.trim(), describeRun(b)).toBe('add');
});

it('installs no embedding runtime; local embeddings then say in one line how to add it', async (t) => {
  // npm installs the tarball's own dependencies (CI fills npm's cache with npm ci first); the
  // unpacked fallback borrows the repository's node_modules, dev dependencies included
  if (inst.via !== 'npm') t.skip();
  const { expect } = t;
  expect(existsSync(join(inst.pkgDir, 'node_modules', '@huggingface', 'transformers'))).toBe(false);
  expect(existsSync(join(inst.pkgDir, 'node_modules', 'onnxruntime-node'))).toBe(false);
  const cwd = tmpDir('gm-noembed-');
  const env = installedEnv(inst);
  sh('git', ['init', '-q'], cwd, env);
  const model = join(tmpDir('gm-noembed-model-'), 'tiny');
  writeTinyModel(model);
  for (const args of [
    ['add', '--title', 'Port already in use', '--content', 'EADDRINUSE: stop the old server.'],
    ['config', 'set', 'embedding-provider', 'local', '--local'],
    ['config', 'set', 'embedding-model-path', model, '--local'],
  ])
    expect((await runProc(inst.bin, args, { cwd, env })).code).toBe(0);
  const status = await runProc(inst.bin, ['models', 'status', '--check'], { cwd, env });
  expect(status.code, describeRun(status)).toBe(1);
  expect(status.stdout, describeRun(status)).toMatch(
    /^check: failed after \d+ ms: local embeddings need @huggingface\/transformers, which is not installed \(npm install -g @huggingface\/transformers/m,
  );
  // search still answers, from text
  const s = await runProc(inst.bin, ['search', 'port in use'], { cwd, env });
  expect(s.code, describeRun(s)).toBe(0);
  expect(s.stdout).toContain('Port already in use');
});

it('exercised every command that git mem --help lists', async ({ expect }) => {
  const env = installedEnv(inst);
  const r = await runProc(inst.bin, ['--help'], { cwd: tmpDir('gm-help-'), env });
  const listed = [...r.stdout.matchAll(/^ {2}git mem ([a-z][a-z-]*)/gm)].map((m) => m[1]);
  expect(listed.length).toBeGreaterThan(30);
  expect(listed.filter((c) => !ran.has(c))).toEqual([]);
});
