/**
 * The query daemon answers a question exactly as the process asking it would
 * answer it alone: the same prompts (the agent's UserPromptSubmit injection),
 * searches and context packs, asked of a store in process and of a daemon
 * serving the same repository, give the same memories in the same order.
 * Among the prompts: one naming a file a memory is anchored to, one with no
 * content ("ok continue"), one paraphrase. First the daemon is served from
 * this process (src/daemon/server.ts serve) with its own store, as `daemon run`
 * does; then as real processes: `git mem daemon start`, and the agent hook,
 * `search --json` and `context --json` of the built binary, each run in a copy
 * of the repository with no daemon and in the repository with its daemon
 * running (the trace says the daemon answered).
 * The post-commit hook, the one write a daemon does, likewise: the same lines, note, verdicts and
 * author, commit by commit, in a copy with no daemon and in the repository with one.
 */
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DaemonHandle, serve } from '../src/daemon/server.js';
import { ask, askStarted, buildId, E_DAEMON_ELSEWHERE, hookEnv, sameHookEnv } from '../src/daemon/wire.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { buildContextPack, providerFor, searchMemories } from '../src/search/index.js';
import { promptContext } from '../src/search/relevance.js';
import { BIN, daemonPids, makeRepo, runBinAsync, sh, type TestRepo, tmpDir } from './helpers.js';

const MEMORIES: Array<[type: string, title: string, body: string, anchor?: string]> = [
  [
    'known_fix',
    'Websocket reconnect storms',
    'Reconnect with exponential backoff and jitter; a fixed delay makes every client return at once.',
  ],
  [
    'decision',
    'Connection limits for Postgres',
    'Every service goes through pgbouncer in transaction mode; never open more than twenty connections per pod.',
    'src/db/pool.ts:1-3',
  ],
  ['convention', 'Tabs in Makefiles', 'Recipes need tabs, not spaces.'],
  [
    'environment',
    'Timezones in the billing report',
    'The billing cron runs in UTC; invoices use the customer zone.',
  ],
  ['known_fix', 'Flaky payment webhook retries', 'Each webhook delivery needs an idempotency key.'],
  ['convention', 'Commit messages', 'Area first, then what now holds.'],
  ['decision', 'Feature flags live in LaunchDarkly', 'No flags in environment variables.'],
  ['failed_attempt', 'Caching sessions in Redis', 'Evictions logged users out; sessions stay in Postgres.'],
  ['constraint', 'No network in unit tests', 'Tests run offline; stub the HTTP client.'],
  [
    'dependency',
    'Docker build cache and lockfiles',
    'Copy the lockfile before the sources or every build reinstalls.',
  ],
  ['known_fix', 'Memory leak in the image resizer', 'Release the sharp pipeline after each request.'],
  ['decision', 'Logs as JSON lines', 'One object per line, a level and a request id in each.'],
];

const PROMPTS = [
  'Why do the websocket reconnect storms come back after a deploy?',
  'Please check src/db/pool.ts before you touch it',
  'ok continue',
  'clients all come back at the same moment once the server restarts, how do we spread them out',
  'the payment webhook retries are flaky again',
  'what timezone do invoices and the billing cron use',
];

const SEARCHES = ['websocket jitter', 'pgbouncer', 'src/db/pool.ts', 'billing timezone utc', 'continue'];

let r: TestRepo;
let local: Store;
let daemonStore: Store;
let daemon: DaemonHandle;

beforeAll(async () => {
  r = makeRepo({ commit: true });
  r.write('src/db/pool.ts', 'export const pool = createPool({\n  max: 20,\n});\n');
  r.commitAll('pool');
  for (const [type, title, body, anchor] of MEMORIES)
    await r.memJson([
      'add',
      '--type',
      type,
      '--title',
      title,
      '--content',
      body,
      ...(anchor ? ['--anchor', anchor] : []),
    ]);
  // the process asking alone: no daemon to consult
  local = new Store(await openRepo(r.dir, { ...r.env, GIT_MEM_DAEMON: 'off' }));
  daemonStore = new Store(await openRepo(r.dir, r.env));
  daemon = await serve(daemonStore, { idleMs: 60_000 });
}, 60_000);

afterAll(async () => {
  daemon?.stop();
  await daemon?.done;
  local?.close();
  daemonStore?.close();
});

async function viaDaemon<T>(op: 'prompt' | 'search' | 'context' | 'dedup', q: unknown): Promise<T> {
  const reply = await ask(daemon.path, { op, q, count: false }, 30_000);
  expect(reply.ok, JSON.stringify(reply.error)).toBe(true);
  return reply.result as T;
}

describe('the daemon answers as the process would alone', { timeout: 60_000 }, () => {
  it('prompts: the same memories injected, in the same order, with the same text', async () => {
    const answers: string[][] = [];
    for (const prompt of PROMPTS) {
      const alone = await promptContext(local, prompt, { exclude: new Set() });
      const served = await viaDaemon<{ text: string; ids: string[] }>('prompt', { prompt, exclude: [] });
      expect(served.ids, prompt).toEqual(alone.ids);
      expect(served.text, prompt).toBe(alone.text);
      answers.push(alone.ids);
    }
    // and the answers are the ones wanted: the anchored file's memory for the prompt naming it,
    // nothing for a prompt without content
    const byTitle = new Map<string, string>();
    for (const e of (await local.catalog()).entries.values()) byTitle.set(e.title, e.id);
    expect(answers[0]).toContain(byTitle.get('Websocket reconnect storms'));
    expect(answers[1]).toEqual([byTitle.get('Connection limits for Postgres')]);
    expect(answers[2]).toEqual([]);
    expect(answers[4]).toContain(byTitle.get('Flaky payment webhook retries'));
  });

  it('a session that was given a memory is not given it again, either way', async () => {
    const alone = await promptContext(local, PROMPTS[1], { exclude: new Set() });
    expect(alone.ids.length).toBeGreaterThan(0);
    const exclude = alone.ids;
    const again = await promptContext(local, PROMPTS[1], { exclude: new Set(exclude) });
    const served = await viaDaemon<{ ids: string[] }>('prompt', { prompt: PROMPTS[1], exclude });
    expect(served.ids).toEqual(again.ids);
    expect(again.ids).not.toContain(exclude[0]);
    // a process asking once (its catalog's text built for this prompt) answers as one asking often
    const fresh = new Store(await openRepo(r.dir, { ...r.env, GIT_MEM_DAEMON: 'off' }));
    try {
      for (const prompt of PROMPTS) {
        const once = await promptContext(fresh, prompt, { exclude: new Set(exclude) });
        const often = await promptContext(local, prompt, { exclude: new Set(exclude) });
        expect(once, prompt).toEqual(often);
      }
    } finally {
      fresh.close();
    }
  });

  it('searches: the same hits in the same order', async () => {
    const provider = await providerFor(local);
    for (const query of SEARCHES) {
      const alone = await searchMemories(local, { query, limit: 20 }, { provider, recordUsage: false });
      const served = await viaDaemon<Array<{ id: string }>>('search', { query, limit: 20 });
      expect(
        served.map((h) => h.id),
        query,
      ).toEqual(alone.map((h) => h.id));
    }
    // with a file, as `search --file` asks
    const alone = await searchMemories(
      local,
      { query: 'connections', file: 'src/db/pool.ts' },
      { provider, recordUsage: false },
    );
    const served = await viaDaemon<Array<{ id: string }>>('search', {
      query: 'connections',
      file: 'src/db/pool.ts',
    });
    expect(served.map((h) => h.id)).toEqual(alone.map((h) => h.id));
  });

  it("add's duplicate check: the same duplicates, with the same scores", async () => {
    const { findDuplicates } = await import('../src/search/dedup.js');
    const provider = await providerFor(local);
    const inputs = [
      { title: 'Tabs in Makefiles', body: 'Recipes need tabs, not spaces.' },
      { title: 'Websocket reconnect storms', body: 'Reconnect with backoff and jitter.' },
      {
        title: 'Postgres connection limits',
        body: 'Every service goes through pgbouncer in transaction mode.',
      },
      { title: 'Something else entirely', body: 'Nothing like any memory here.' },
    ];
    let found = 0;
    for (const q of inputs) {
      const alone = await findDuplicates(local, q, provider);
      const served = await viaDaemon<typeof alone>('dedup', q);
      expect(served, q.title).toEqual(alone);
      found += alone.length;
    }
    expect(found).toBeGreaterThan(0);
  });

  it('context packs: the same items in the same order, the same text', async () => {
    const provider = await providerFor(local);
    const asks = [
      ...PROMPTS.map((query) => ({ query })),
      { file: 'src/db/pool.ts' },
      { query: 'how many connections', file: 'src/db/pool.ts' },
    ];
    for (const o of asks) {
      const alone = await buildContextPack(local, o, { provider });
      const served = await viaDaemon<{ text: string; items: Array<{ id: string }> }>('context', o);
      expect(
        served.items.map((i) => i.id),
        JSON.stringify(o),
      ).toEqual(alone.items.map((i) => i.id));
      expect(served.text, JSON.stringify(o)).toBe(alone.text);
    }
  });
});

const pids = daemonPids();

describe('the post-commit hook goes to a daemon of its own work tree, settings and build only', () => {
  it('the settings compared: git-mem and git variables, where the configuration is; not the author, trace or index', () => {
    const base = {
      HOME: '/h',
      GIT_CONFIG_GLOBAL: '/h/.gitconfig',
      GIT_MEM_HOME: '/h/m',
      PATH: '/bin',
      PWD: '/r',
    };
    const hook = {
      ...base,
      PWD: '/elsewhere',
      GIT_MEM_TRACE: '1',
      GIT_INDEX_FILE: '.git/index',
      GIT_EDITOR: ':',
      GIT_EXEC_PATH: '/usr/lib/git-core',
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@example.com',
      GIT_AUTHOR_DATE: '@1 +0000',
    };
    const sent = hookEnv(hook);
    expect(sent).toEqual({
      HOME: '/h',
      GIT_CONFIG_GLOBAL: '/h/.gitconfig',
      GIT_MEM_HOME: '/h/m',
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@example.com',
    });
    const daemonEnv = hookEnv({ ...base, GIT_MEM_DAEMON: 'off' });
    expect(sameHookEnv(daemonEnv, sent)).toBe(true);
    // who the verdicts are by is the hook's, sent with it: an agent's commit goes to the daemon too
    expect(sameHookEnv(daemonEnv, hookEnv({ ...hook, CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: 's1' }))).toBe(
      true,
    );
    expect(hookEnv({ ...hook, CLAUDECODE: '1' }).CLAUDECODE).toBe('1');
    for (const [k, v] of [
      ['GIT_MEM_HOME', '/other'],
      ['GIT_CONFIG_PARAMETERS', "'core.x'='1'"],
      ['GIT_DIR', '/r/.git/worktrees/w'],
      ['XDG_CONFIG_HOME', '/x'],
    ])
      expect(sameHookEnv(daemonEnv, hookEnv({ ...hook, [k]: v })), k).toBe(false);
  });

  it('a daemon handed no hook runner, another build or another work tree refuses: the hook runs alone', async () => {
    const q = { cwd: r.dir, build: buildId(), env: hookEnv(r.env) };
    for (const bad of [q, { ...q, build: 'another' }, { ...q, cwd: tmpDir('gm-elsewhere-') }]) {
      const reply = await ask(daemon.path, { op: 'post-commit', q: bad }, 30_000);
      expect(reply.ok).toBe(false);
      expect(reply.error?.code).toBe(E_DAEMON_ELSEWHERE);
    }
  });
});

describe('a hook waits for its turn at a busy daemon, then runs alone', () => {
  it('a request whose turn has not come is dropped when its hook stops waiting: the work runs once', async () => {
    const h = makeRepo({ commit: true });
    expect((await h.mem(['init'])).code).toBe(0);
    const store = new Store(await openRepo(h.dir, h.env));
    let release!: () => void;
    const held = new Promise<void>((res) => {
      release = res;
    });
    const runs: number[] = [];
    const served = await serve(store, {
      idleMs: 60_000,
      // the first hook's work holds the daemon until released
      postCommit: async () => {
        runs.push(runs.length);
        if (runs.length === 1) await held;
        return [`run ${runs.length}`];
      },
    });
    try {
      const q = { cwd: h.dir, build: buildId(), env: hookEnv(h.env) };
      const first = askStarted(served.path, { op: 'post-commit', q }, 5_000, 30_000);
      while (!runs.length) await new Promise((r) => setTimeout(r, 5));
      // the daemon is busy: the second hook's turn does not come within its wait
      const second = await askStarted(served.path, { op: 'post-commit', q }, 200, 30_000);
      expect(second).toBeUndefined();
      // the daemon is still busy a while after the hook went (here it shares this process's
      // event loop, which must get to see the connection close)
      await new Promise((r) => setTimeout(r, 100));
      release();
      expect((await first)?.result).toEqual({ lines: ['run 1'] });
      // the daemon reached the dropped request: it did not run it
      const third = await askStarted(served.path, { op: 'post-commit', q }, 5_000, 30_000);
      expect(third?.result).toEqual({ lines: ['run 2'] });
      expect(runs).toEqual([0, 1]);
    } finally {
      served.stop();
      await served.done;
      store.close();
    }
  });
});

describe('real processes: the same answers with a daemon running and without one', {
  timeout: 120_000,
}, () => {
  it('the agent hook, search and context, prompt by prompt, with a prompt naming an anchored file', async () => {
    // a copy of the repository answers alone (its own usage log and session files evolve as the
    // daemon's repository's do: every answer below counts the same uses on both sides)
    const alone = { dir: join(tmpDir('gm-alone-'), 'repo'), env: { ...r.env, GIT_MEM_DAEMON: 'off' } };
    cpSync(r.dir, alone.dir, { recursive: true, filter: (f) => !/daemon\.sock$|starting$/.test(f) });
    const served = { dir: r.dir, env: { ...r.env, GIT_MEM_TRACE: '1' } };
    // the in-process daemon of the tests above serves r: this section starts its own
    daemon.stop();
    await daemon.done;
    const started = await runBinAsync(['daemon', 'start', '--json'], { cwd: served.dir, env: r.env });
    expect(started.code, started.stderr).toBe(0);
    pids.push(JSON.parse(started.stdout).pid);
    const run = (side: { dir: string; env: NodeJS.ProcessEnv }, args: string[], stdin?: string) =>
      runBinAsync(args, { cwd: side.dir, env: side.env, stdin });
    const both = async (args: string[], stdin: string | undefined, op: string) => {
      const a = await run(alone, args, stdin);
      const d = await run(served, args, stdin);
      expect(d.code, d.stderr).toBe(a.code);
      if (a.code === 0) expect(d.stderr, args.join(' ')).toContain(`daemon answered ${op}`);
      expect(a.stderr).not.toContain('daemon answered');
      return [a.stdout, d.stdout];
    };
    const injected = (out: string) =>
      out.trim() ? JSON.parse(out).hookSpecificOutput.additionalContext : '';
    const byTitle = new Map<string, string>();
    for (const e of (await local.catalog()).entries.values()) byTitle.set(e.title, e.id);

    for (const [i, prompt] of PROMPTS.entries()) {
      const payload = JSON.stringify({
        session_id: `agree-${i}`,
        transcript_path: '/tmp/t.jsonl',
        cwd: r.dir,
        hook_event_name: 'UserPromptSubmit',
        prompt,
      });
      const [a, d] = await both(['hook', 'claude-code'], payload, 'prompt');
      expect(injected(d), prompt).toBe(injected(a));
      if (prompt.includes('src/db/pool.ts'))
        expect(injected(a)).toContain(`[${byTitle.get('Connection limits for Postgres')?.slice(0, 12)}]`);
    }
    for (const query of SEARCHES) {
      const [a, d] = await both(['search', query, '--json'], undefined, 'search');
      if (!a) continue; // only common words: the same refusal either way
      expect(
        JSON.parse(d).map((h: { id: string }) => h.id),
        query,
      ).toEqual(JSON.parse(a).map((h: { id: string }) => h.id));
    }
    for (const args of [
      ['--query', 'websocket reconnect'],
      ['--file', 'src/db/pool.ts'],
      ['--query', 'how many connections', '--file', 'src/db/pool.ts'],
    ]) {
      const [a, d] = await both(['context', ...args, '--json'], undefined, 'context');
      const pa = JSON.parse(a);
      const pd = JSON.parse(d);
      expect(
        pd.items.map((x: { id: string }) => x.id),
        args.join(' '),
      ).toEqual(pa.items.map((x: { id: string }) => x.id));
      expect(pd.text, args.join(' ')).toBe(pa.text);
    }
    await runBinAsync(['daemon', 'stop'], { cwd: served.dir, env: r.env });
  });

  it('the post-commit hook: the same lines, note, verdicts and author, run by the daemon and alone', async () => {
    const alone = { dir: join(tmpDir('gm-alone-'), 'repo'), env: { ...r.env, GIT_MEM_DAEMON: 'off' } };
    cpSync(r.dir, alone.dir, { recursive: true, filter: (f) => !/daemon\.sock$|starting$/.test(f) });
    const served = { dir: r.dir, env: r.env };
    const started = await runBinAsync(['daemon', 'start', '--json'], { cwd: served.dir, env: r.env });
    expect(started.code, started.stderr).toBe(0);
    pids.push(JSON.parse(started.stdout).pid);
    const id = [...(await local.catalog()).entries.values()].find(
      (e) => e.title === 'Connection limits for Postgres',
    )!.id;
    // the same commits on both sides (the same dates: the same ids), and the hook as git runs it:
    // the commit's author in its environment, not the user the configuration names
    const when = { GIT_AUTHOR_DATE: '2026-01-02T03:04:05Z', GIT_COMMITTER_DATE: '2026-01-02T03:04:05Z' };
    const asGit = {
      GIT_AUTHOR_NAME: 'Hook Author',
      GIT_AUTHOR_EMAIL: 'hook@example.com',
      GIT_INDEX_FILE: '.git/index',
      GIT_EDITOR: ':',
    };
    const pool = (dir: string) => join(dir, 'src/db/pool.ts');
    // the first commit is an agent's: the daemon serves it too, and its verdicts name the agent
    const agent = { CLAUDECODE: '1', CLAUDE_CODE_SESSION_ID: 'agree-session' };
    const steps: Array<[string, (dir: string) => void]> = [
      [
        'the anchored lines move',
        (dir) => writeFileSync(pool(dir), `// pooled\n${readFileSync(pool(dir), 'utf8')}`),
      ],
      ['no anchored file', (dir) => writeFileSync(join(dir, 'README.md'), '# test, again\n')],
      ['the anchored file goes', (dir) => rmSync(pool(dir))],
    ];
    const hookRun = async (
      side: { dir: string; env: NodeJS.ProcessEnv },
      step: string,
      extra: NodeJS.ProcessEnv = {},
    ) => {
      const env = { ...side.env, ...when };
      const git = (...args: string[]) => sh('git', args, side.dir, env).trim();
      git('add', '-A');
      git('commit', '-q', '-m', step);
      const res = await runBinAsync(['hook', 'post-commit'], {
        cwd: side.dir,
        env: { ...side.env, ...asGit, ...extra, GIT_MEM_TRACE: '1' },
      });
      const show = JSON.parse(sh(process.execPath, [BIN, 'show', id, '--json'], side.dir, side.env));
      let note = '';
      try {
        note = git('notes', '--ref=memory', 'show', 'HEAD');
      } catch {}
      return {
        daemon: res.stderr.includes('daemon answered post-commit'),
        result: {
          code: res.code,
          lines: res.stderr.split('\n').filter((l) => l && !l.startsWith('git-mem trace:')),
          head: git('rev-parse', 'HEAD'),
          note,
          author: git('log', '-1', '--format=%an <%ae>', 'refs/memory'),
          // the subject and the trailers: the operation, the ids, the agent
          message: git('log', '-1', '--format=%B', 'refs/memory'),
          // when each judged it aside
          anchors: JSON.parse(JSON.stringify(show.anchors, (k, v) => (k === 'checked' ? undefined : v))),
          status: show.status,
        },
      };
    };
    const seen = new Set<string>();
    const authors = new Set<string>();
    for (const [step, change] of steps) {
      change(alone.dir);
      change(served.dir);
      const who = step === steps[0][0] ? agent : {};
      const a = await hookRun(alone, step, who);
      const d = await hookRun(served, step, who);
      if (step === steps[0][0]) expect(a.result.message).toContain('Mem-Agent: claude-code');
      expect(a.daemon, step).toBe(false);
      expect(d.daemon, step).toBe(true);
      expect(d.result, step).toEqual(a.result);
      seen.add(a.result.anchors[0].verdict.status);
      authors.add(a.result.author);
      for (const l of a.result.lines) seen.add(l.replace(/ \(.*/, ''));
    }
    // what the steps were for: a move, then a deleted anchor with the hook's line about it
    expect(seen).toContain('moved');
    expect(seen).toContain('deleted');
    expect([...seen].some((l) => /went stale with this commit/.test(l))).toBe(true);
    // the verdicts are by the commit's author, whichever process wrote them
    expect([...authors]).toEqual(['Hook Author <hook@example.com>']);
    // a hook with other settings than the daemon's runs alone, with the same result as it
    writeFileSync(join(alone.dir, 'README.md'), '# elsewhere\n');
    writeFileSync(join(served.dir, 'README.md'), '# elsewhere\n');
    const other = { GIT_MEM_HOME: tmpDir('gm-other-home-') };
    const a = await hookRun(alone, 'other settings', other);
    const d = await hookRun(served, 'other settings', other);
    expect(d.daemon).toBe(false);
    expect(d.result).toEqual(a.result);
    await runBinAsync(['daemon', 'stop'], { cwd: served.dir, env: r.env });
  });
});
