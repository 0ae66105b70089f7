/**
 * A store that already holds records past the limits of a write (taken in
 * before the sync boundary held remote records to them; written here with
 * plumbing straight into the clone's refs/memory): `doctor` names each record
 * and field, `check` and `ci` report the anchor they cannot check and check
 * the rest, and no human view prints a control character a record holds.
 * Local writes refuse control characters.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { writeProposals } from '../src/agents/proposal.js';
import { openRepo } from '../src/gitstore/repo.js';
import { Store } from '../src/gitstore/store.js';
import { newId } from '../src/model/id.js';
import { withoutControls } from '../src/model/schema.js';
import { type Json, makeRepo, type TestRepo } from './helpers.js';
import { plumber, recordText } from './hostile-helpers.js';

const ESC = '\u001b';
let r: TestRepo;
let good: string;
const bad = {
  tags: newId(),
  clock: newId(),
  created: newId(),
  anchor: newId(),
  esc: newId(),
};

beforeAll(async () => {
  r = makeRepo({ commit: true });
  r.write('a.ts', 'export const a = 1;\nexport const b = 2;\n');
  r.commitAll('a');
  good = (
    await r.memJson(['add', '--title', 'anchored and fine', '--content', 'x\n', '--anchor', 'a.ts:1-2'])
  ).id;
  const tip = r.git('rev-parse', 'refs/memory').trim();
  const files: Record<string, string> = {
    [bad.tags]: recordText(bad.tags).replace(
      'tags: []',
      `tags: [${Array.from({ length: 20_000 }, (_, i) => `t${i}`).join(', ')}]`,
    ),
    [bad.clock]: recordText(bad.clock).replace('clock: 1', 'clock: 1e308'),
    [bad.created]: recordText(bad.created).replace(/created: .*/, 'created: {year: 2024}'),
    [bad.anchor]: recordText(
      bad.anchor,
      'poisoned anchor',
      'b\n',
      [
        'anchors:',
        '  - path: a.ts',
        '    lines: [1, 2]',
        `    blob: ${'1'.repeat(40)}`,
        `    hash: ${'2'.repeat(32)}`,
        '    current:',
        '      path: ../../../../etc/passwd',
        `      blob: ${'3'.repeat(40)}`,
        `      commit: ${'4'.repeat(40)}`,
      ].join('\n'),
    ),
    [bad.esc]: recordText(
      bad.esc,
      '"clipboard \\u001b]52;c;SGVsbG8=\\u0007 write"',
      'shown\u001b[1A\u001b[2Khidden\n',
    ).replace('tags: []', 'tags: ["osc\\u001b]8;;https://evil\\u0007"]'),
  };
  const p = plumber(r.dir, r.env);
  const spec: Record<string, { tree: Record<string, { blob: string }> }> = {};
  for (const [id, text] of Object.entries(files)) {
    const fo = id.slice(-2);
    spec[fo] ??= { tree: {} };
    spec[fo].tree[`${id}.md`] = { blob: text };
  }
  const poisoned = p.commitOver(
    tip,
    {
      memories: { tree: spec },
      // a shared setting that does not read: its warning quotes it
      'config.yaml': { blob: 'output: "x\\u001b]52;c;SGVsbG8=\\u0007"\ncontext-budget: "y\\u001b[2K"\n' },
    },
    'poisoned',
  );
  r.git('update-ref', 'refs/memory', poisoned);
  // the good anchor's code changes: check has something to say about it
  r.write('a.ts', 'export const a = 3;\nexport const b = 2;\n');
  r.commitAll('b');
}, 120_000);

describe('a store already holding records past the limits', () => {
  it('doctor names each record and the field', async () => {
    const res = await r.mem(['doctor', '--json']);
    expect(res.code).toBe(1);
    const found = (JSON.parse(res.stdout).findings as Json[])
      .filter((f) => f.check === 'limits')
      .map((f) => `${f.id} ${f.field}`);
    expect(found).toEqual(
      expect.arrayContaining([
        `${bad.tags} tags`,
        `${bad.clock} clock`,
        `${bad.created} created`,
        `${bad.anchor} anchors[0].current.path`,
        `${bad.esc} title`,
        `${bad.esc} tags`,
        `${bad.esc} body`,
      ]),
    );
    expect(found.some((f) => f.startsWith(good))).toBe(false);
  });

  it('check reports the anchor it cannot check and checks the rest', async () => {
    const res = await r.mem(['check', '--dry-run', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const rep = JSON.parse(res.stdout);
    expect(rep.invalid).toEqual([
      expect.objectContaining({ id: bad.anchor, anchor: 0, path: '../../../../etc/passwd' }),
    ]);
    expect(rep.results).toEqual([expect.objectContaining({ id: good, status: 'changed' })]);
    // and records the verdict of the good one
    const rec = await r.mem(['check', '--json']);
    expect(rec.code, rec.stderr).toBe(0);
    expect(JSON.parse(rec.stdout)).toMatchObject({ recorded: true, changes: [{ id: good, to: 'stale' }] });
  });

  it('ci reports the anchor it cannot check and judges the rest', async () => {
    const res = await r.mem(['ci', '--base', 'HEAD~1', '--format', 'json', '--fail-on', 'never']);
    expect(res.code, res.stderr).toBe(0);
    const rep = JSON.parse(res.stdout);
    expect(rep.invalid).toEqual([expect.objectContaining({ id: bad.anchor, anchor: 0 })]);
    expect(rep.items).toEqual([expect.objectContaining({ id: good })]);
  });

  it('list, show, search and the stale view print no control character a record holds', async () => {
    const runs = [
      ['list'],
      ['show', bad.esc],
      ['search', 'clipboard'],
      ['list', '--tag', 'osc\u001b]8;;https://evil\u0007'],
    ];
    for (const args of runs) {
      const res = await r.mem(args);
      expect(res.code, `${args[0]}: ${res.stderr}`).toBe(0);
      expect(res.stdout, args[0]).toContain('clipboard ␛]52;c;SGVsbG8=␇ write');
      expect(res.stdout + res.stderr, args[0]).not.toContain(ESC);
      expect(res.stdout, args[0]).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    }
    // the shared config's warning quotes the value a teammate wrote, shown, not obeyed
    const pack = await r.mem(['context', '--query', 'clipboard', '--no-daemon']);
    expect(pack.stderr).toMatch(/warning: ignoring context-budget.*␛\[2K/);
    expect(pack.stdout + pack.stderr).not.toContain(ESC);
    const show = await r.mem(['show', bad.esc]);
    expect(show.stdout).toContain('shown␛[1A␛[2Khidden');
    // --json stays exact: the same characters, escaped as JSON escapes them
    const json = await r.memJson(['show', bad.esc]);
    expect(json.title).toBe(`clipboard ${ESC}]52;c;SGVsbG8=\u0007 write`);
  });
});

describe('local writes refuse control characters', () => {
  it.each([
    [
      'a title holding ESC',
      ['add', '--title', `copy ${ESC}]52;c;SGVsbG8=${ESC}\\`, '--content', 'x'],
      'E_INVALID_ARG',
    ],
    ['a body holding ESC', ['add', '--title', 'fine', '--content', `a${ESC}[2Kb`], 'E_INVALID_ARG'],
    [
      'a tag holding ESC',
      ['add', '--title', 'fine', '--content', 'x', '--tags', `a${ESC}b`],
      'E_INVALID_ARG',
    ],
  ])('%s', async (_name, args, code) => {
    const before = r.git('rev-parse', 'refs/memory');
    const res = await r.mem([...args, '--json']);
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stdout).error.code).toBe(code);
    expect(r.git('rev-parse', 'refs/memory')).toBe(before);
  });

  it('update --title holding ESC is refused', async () => {
    const before = r.git('rev-parse', 'refs/memory');
    const res = await r.mem(['update', good, '--title', `x${ESC}[1Ay`, '--json']);
    expect(res.code).toBe(2);
    expect(JSON.parse(res.stdout).error.code).toBe('E_INVALID_ARG');
    expect(r.git('rev-parse', 'refs/memory')).toBe(before);
  });
});

describe("an agent's text is written without its control characters", () => {
  it('withoutControls removes escape sequences whole and keeps line feeds and tabs', () => {
    const s = `red \u001b[31merror\u001b[0m here\r\n\tnext ${ESC}]8;;https://evil\u0007link${ESC}]8;;${ESC}\\ \u009b2Jend\u0007`;
    expect(withoutControls(s)).toBe('red error here\n\tnext link end');
    expect(withoutControls('a\tb\nc\u001b[1A', false)).toBe('a b c');
  });

  it('a proposal whose title and body hold terminal colours is written, without them', async () => {
    const repo = makeRepo();
    await repo.memJson(['init']);
    const store = new Store(await openRepo(repo.dir, repo.env));
    try {
      const [rec] = await writeProposals(store, [
        {
          type: 'known_fix',
          title: `npm test \u001b[31mfails\u001b[0m on node 18`,
          body: `\u001b[1m> vitest\u001b[22m\n\u001b[31mFAIL\u001b[39m test/a.test.ts\n`,
          tags: [],
          source: 'test',
        },
      ]);
      expect(rec.title).toBe('npm test fails on node 18');
      expect(rec.body).toBe('> vitest\nFAIL test/a.test.ts\n');
    } finally {
      store.close();
    }
  });
});
