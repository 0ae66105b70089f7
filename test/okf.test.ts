import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONCEPT_BYTES } from '../src/commands/okf.js';
import { fromActor, generatedActor, parseCodeRef, verifierActor } from '../src/model/okf.js';
import { TYPES } from '../src/model/schema.js';
import { parse as parseYaml } from '../src/model/yaml.js';
import { type Json, ROOT, type TestRepo, tmpDir } from './helpers.js';
import { type Fresh, fresh, type MemResult, template } from './support/template.js';

/**
 * Ops tier: each test copies a template repository (test/support/template.ts: a
 * first commit, no store yet, so the first import or add creates it) and runs the
 * commands' run functions on its open store; refusals are asserted by error code.
 */
const NO_STORE = template('no-store', { init: false });
/** a store holding one memory ("Kept"), for the hostile bundles */
const KEPT = template('okf-kept', {
  commands: [['add', '--type', 'decision', '--title', 'Kept', '--content', 'x']],
});
const commitAll = (r: Fresh, msg: string) => {
  r.git('add', '-A');
  r.git('commit', '-q', '-m', msg);
};

const FIXTURES = join(ROOT, 'test', 'fixtures', 'okf');
const tip = (r: Pick<TestRepo, 'git'>) => r.git('rev-parse', '-q', '--verify', 'refs/memory').trim();
const jsonl = (r: Fresh) =>
  r.mem(['export']).then((x) =>
    x.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Json),
  );
const frontmatter = (file: string) => parseYaml(readFileSync(file, 'utf8').split('---\n')[1]) as Json;
const errCode = (r: MemResult) => r.error;

function writeConcept(dir: string, path: string, text: string) {
  const p = join(dir, path);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, text);
}

describe('OKF: our records round-trip', () => {
  it('export --format okf, then import --okf into a fresh repo, gives every record back field for field', async () => {
    const a = await fresh(NO_STORE);
    a.write(
      'src/db.ts',
      'export function pool(size: number) {\n  const p = new Array(size);\n  return p;\n}\n',
    );
    commitAll(a, 'code');
    await a.mem(['init']);
    // one memory of every type, with what export lines may carry
    const lines = TYPES.map((type, i) => ({
      type,
      title: `A ${type} memory`,
      body: `Why ${type} matters.\n\n- point ${i}\n`,
      tags: [type.replace('_', '-'), 'okf'],
      alias: `team/${type.replace('_', '-')}`,
      status: (['active', 'pending', 'stale', 'superseded', 'archived'] as const)[i % 5],
      confidence: 0.5,
      scope: i === 0 ? ['src/**'] : undefined,
      source: 'https://example.com/adr',
      expires: i % 2 ? '2031-01-01T00:00:00.000Z' : undefined,
      by: i % 3 ? { kind: 'agent', agent: 'claude-code', model: 'opus' } : { kind: 'person' },
      verified: i === 1 ? { by: 'Ann <ann@example.com>', at: '2026-01-02T03:04:05.000Z' } : undefined,
      // keys git-mem does not know survive too (one named like the foreign-keys key, but no mapping)
      ...(i === 2 ? { ticket: 'ABC-1', okf: 'plain' } : {}),
    }));
    const imp = await a.mem(['import', '--jsonl', '-'], {
      stdin: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(imp.code, imp.stderr).toBe(0);
    const added = await a.memJson([
      'add',
      '--type',
      'constraint',
      '--title',
      'Pool size',
      '--content',
      'Pools are sized by the caller.',
      '--anchor',
      'src/db.ts:1-4',
      '--symbol',
      'src/db.ts#pool',
      '--alias',
      'db/pool-size',
      '--expires',
      '2030-06-01',
    ]);
    const id = added.id as string;
    expect((await a.mem(['verify', id])).code).toBe(0);
    // links to other memories (supersede writes both sides)
    const [, old] = await jsonl(a);
    expect((await a.mem(['supersede', old.id, id])).code).toBe(0);

    const dir = join(tmpDir('gm-okf-'), 'bundle');
    const ex = await a.mem(['export', '--format', 'okf', '--dir', dir, '--json']);
    expect(ex.code, ex.stderr).toBe(0);
    const report = ex.json;
    expect(report.concepts).toBe(TYPES.length + 1);
    // what OKF has no field for is said, by kind and count
    const kinds = Object.fromEntries(report.kept_in_extension.map((n: Json) => [n.kind, n.count]));
    expect(kinds.anchors).toBe(1);
    expect(kinds.verifier).toBe(2);
    expect(kinds.status).toBeGreaterThanOrEqual(4);
    expect(kinds.scope).toBe(1);
    expect(kinds.links).toBe(2);
    const human = await a.mem(['export', '--format', 'okf', '--dir', `${dir}-2`]);
    expect(human.stderr.split('\n').filter((l) => l.startsWith('okf: '))).toHaveLength(
      report.kept_in_extension.length,
    );

    // the concept is OKF: type, title, tags, status, trust, stale_after, code sources
    const c = frontmatter(join(dir, 'constraint', 'db', 'pool-size.md'));
    expect(c.type).toBe('constraint');
    expect(c.title).toBe('Pool size');
    expect(c.status).toBe('stable');
    expect(c.stale_after).toMatch(/^2030-06-01T/); // verify renews the lifetime from now
    expect(c.verified.by).toMatch(/^human:/);
    expect(c.generated.by).toMatch(/^human:/);
    expect(c.sources.map((s: Json) => s.resource)).toEqual(['repo:src/db.ts#L1-L4', 'repo:src/db.ts#L1-L4']);
    expect(c.sources[1].symbol).toBe('pool');
    expect(c.git_mem.id).toBe(id);
    const idx = readFileSync(join(dir, 'index.md'), 'utf8');
    expect(idx).toMatch(/^---\nokf_version: "0\.2"\n---\n/);
    expect(idx).toContain('(constraint/db/pool-size.md)');

    const b = await fresh(NO_STORE);
    const r = await b.memJson(['import', '--okf', dir]);
    expect(r.added).toBe(TYPES.length + 1);
    expect(r.skipped.map((s: Json) => s.path)).toEqual(['index.md']);
    expect(await jsonl(b)).toEqual(await jsonl(a));
    // twice: nothing new, no commit
    const before = tip(b);
    const again = await b.memJson(['import', '--okf', dir]);
    expect([again.added, again.replaced, again.commit]).toEqual([0, 0, null]);
    expect(tip(b)).toBe(before);
  });

  it('a later OKF verification and another status, edited by a third tool, win over the extension', async () => {
    const a = await fresh(NO_STORE);
    const m = await a.memJson(['add', '--type', 'decision', '--title', 'T', '--content', 'B']);
    const dir = join(tmpDir('gm-okf-'), 'b');
    expect((await a.mem(['export', '--format', 'okf', '--dir', dir])).code).toBe(0);
    const file = join(dir, 'decision', `${m.id}.md`);
    const text = readFileSync(file, 'utf8')
      .replace('status: stable', 'status: deprecated')
      .replace('git_mem:', 'verified:\n  - { by: human:bob, at: 2030-01-01T00:00:00Z }\ngit_mem:');
    writeFileSync(file, text);
    await a.memJson(['import', '--okf', dir]);
    const [rec] = await jsonl(a);
    expect(rec.status).toBe('archived');
    expect(rec.verified).toEqual({ by: 'human:bob', at: '2030-01-01T00:00:00Z' });
  });
});

describe('OKF: the specification example bundles', () => {
  it('imports concepts of another tool: types, trust, lifecycle, sources and unknown keys kept', async () => {
    const r = await fresh(NO_STORE);
    const res = await r.memJson(['import', '--okf', join(FIXTURES, 'acme_retail')]);
    expect(res.added).toBe(2);
    expect(res.skipped).toEqual([{ path: 'index.md', reason: expect.any(String) }]);
    expect(res.notes).toContainEqual(expect.objectContaining({ kind: 'type', count: 1 }));
    const recs = await jsonl(r);
    const legacy = recs.find((x) => x.alias === 'okf/acme_retail/metrics/gross-margin-legacy');
    expect(legacy).toMatchObject({
      type: 'convention',
      title: 'Gross Margin (legacy, pre-FY2026)',
      status: 'archived',
      tags: ['finance', 'margin', 'deprecated'],
      by: { kind: 'person' },
      author: 'jsmith@acme',
      created: '2024-01-15T10:00:00.000Z',
      verified: { by: 'human:jsmith@acme', at: '2024-01-15T10:00:00Z' },
      okf: { type: 'Metric', description: expect.stringMatching(/^Retired gross-margin/) },
    });
    expect(legacy.body).toMatch(/^# Deprecated\n/);
    const rev = recs.find((x) => x.alias === 'okf/acme_retail/computations/revenue-ytd');
    expect(rev).toMatchObject({
      type: 'convention',
      status: 'active',
      expires: '2026-12-31T00:00:00.000Z',
      by: { kind: 'agent', agent: 'reference_agent', model: 'gemini-2.5-pro' },
      okf: {
        type: 'Attested Computation',
        runtime: 'bigquery',
        attester: { resource: 'attesters/sql_equality.py' },
      },
    });
    expect(rev.okf.sources.map((s: Json) => s.id)).toEqual(['revenue-policy', 'orders-table']);
    expect(rev.anchors).toBeUndefined();

    // written back: the OKF type and the keys git-mem has no field for are as the concept had them
    const out = join(tmpDir('gm-okf-'), 'out');
    expect((await r.mem(['export', '--format', 'okf', '--dir', out])).code).toBe(0);
    const back = frontmatter(join(out, 'convention', 'okf', 'acme_retail', 'computations', 'revenue-ytd.md'));
    const orig = frontmatter(join(FIXTURES, 'acme_retail', 'computations', 'revenue-ytd.md'));
    for (const k of [
      'type',
      'title',
      'description',
      'tags',
      'status',
      'runtime',
      'parameters',
      'executor',
      'attester',
      'sources',
    ])
      expect(back[k], k).toEqual(orig[k]);
    expect(back.generated.by).toBe(orig.generated.by);
    expect(Date.parse(back.stale_after)).toBe(Date.parse(orig.stale_after));

    // and again: nothing changes
    const again = await r.memJson(['import', '--okf', join(FIXTURES, 'acme_retail')]);
    expect([again.added, again.replaced, again.unchanged]).toEqual([0, 0, 2]);
    // and its own export, read back: nothing changes either
    const own = await r.memJson(['import', '--okf', out]);
    expect([own.added, own.replaced, own.unchanged]).toEqual([0, 0, 2]);
  });

  it('reads block-style frontmatter and a quoted timestamp with an offset (ga4)', async () => {
    const r = await fresh(NO_STORE);
    await r.memJson(['import', '--okf', join(FIXTURES, 'ga4')]);
    const [p] = await jsonl(r);
    expect(p).toMatchObject({
      alias: 'okf/ga4/references/metrics/purchasers',
      title: 'Purchasers Audience Metric',
      tags: ['metric', 'audience', 'ga4', 'purchasers'],
      created: '2026-07-10T21:16:12.000Z',
      by: { kind: 'agent', agent: 'reference_agent', model: 'gemini-3.5-flash' },
      okf: { type: 'Reference', resource: 'https://support.google.com/analytics/answer/9037342' },
    });
  });
});

describe('OKF: a foreign concept re-imported from its own export', () => {
  it('is unchanged whatever order its keys had', async () => {
    const r = await fresh(NO_STORE);
    const dir = join(tmpDir('gm-okf-'), 'tool');
    writeConcept(
      dir,
      'a.md',
      '---\nzeta: 1\nresource: https://x.example\ntype: Table\ndescription: d\nalpha: 2\n---\nbody\n',
    );
    await r.memJson(['import', '--okf', dir]);
    const out = join(tmpDir('gm-okf-'), 'out');
    expect((await r.mem(['export', '--format', 'okf', '--dir', out])).code).toBe(0);
    const before = tip(r);
    const again = await r.memJson(['import', '--okf', out]);
    expect([again.added, again.replaced, again.unchanged]).toEqual([0, 0, 1]);
    expect(tip(r)).toBe(before);
  });
});

describe('OKF: code sources of another tool', () => {
  it('become anchors only when the path is a file of the committed tree; the rest stay sources', async () => {
    const r = await fresh(NO_STORE);
    r.write('src/db.ts', 'export const a = 1;\nexport const b = 2;\n');
    commitAll(r, 'code');
    r.write('src/uncommitted.ts', 'x\n');
    const dir = join(tmpDir('gm-okf-'), 'tool');
    writeConcept(
      dir,
      'notes/db.md',
      '---\ntype: Note\nsources:\n  - { id: a, resource: "repo:src/db.ts#L1-L2", symbol: a }\n  - { id: b, resource: "repo:src/uncommitted.ts" }\n  - { id: c, resource: "https://example.com" }\n---\n\nText.\n',
    );
    const res = await r.memJson(['import', '--okf', dir]);
    expect(res.notes).toContainEqual(expect.objectContaining({ kind: 'anchored', count: 1 }));
    expect(res.notes).toContainEqual(expect.objectContaining({ kind: 'unresolved', count: 1 }));
    const [rec] = await jsonl(r);
    expect(rec.anchors).toEqual([{ path: 'src/db.ts', lines: [1, 2], symbol: 'a' }]);
    expect(rec.okf.sources.map((s: Json) => s.id)).toEqual(['c', 'b']);
    expect(rec.title).toBe('db');
  });
});

describe('OKF: a hostile bundle', () => {
  const setup = async () => {
    const r = await fresh(KEPT);
    return { r, before: tip(r), dir: join(tmpDir('gm-okf-'), 'evil') };
  };

  it('a code source outside the repository is refused (E_ANCHOR), nothing read, the store unchanged', async () => {
    const { r, before, dir } = await setup();
    writeConcept(
      dir,
      'a.md',
      '---\ntype: Note\nsources:\n  - { resource: "repo:../../etc/passwd" }\n---\nx\n',
    );
    const res = await r.mem(['import', '--okf', dir, '--json']);
    expect(res.code).not.toBe(0);
    expect(errCode(res)).toBe('E_ANCHOR');
    expect(tip(r)).toBe(before);
  });

  it('a git_mem extension anchor outside the repository is refused, the store unchanged', async () => {
    const { r, before, dir } = await setup();
    writeConcept(
      dir,
      'a.md',
      '---\ntype: decision\ntitle: t\ngit_mem:\n  anchors:\n    - { path: ../../etc/passwd }\n---\nx\n',
    );
    const res = await r.mem(['import', '--okf', dir, '--json']);
    expect(res.code).not.toBe(0);
    expect(errCode(res)).toBe('E_ANCHOR');
    // names the path it refused
    expect(res.message).toContain('../../etc/passwd');
    expect(tip(r)).toBe(before);
  });

  it('a 10 MB concept is refused (E_TOO_LARGE), the store unchanged', async () => {
    const { r, before, dir } = await setup();
    writeConcept(dir, 'ok.md', '---\ntype: Note\n---\nfine\n');
    writeConcept(dir, 'big.md', `---\ntype: Note\n---\n${'a'.repeat(10 * 1024 * 1024)}\n`);
    const res = await r.mem(['import', '--okf', dir, '--json']);
    expect(errCode(res)).toBe('E_TOO_LARGE');
    // refused by the read bound, before 10 MB is read (the record check would refuse it too, later)
    expect(res.message).toContain(String(CONCEPT_BYTES));
    expect(tip(r)).toBe(before);
  });

  it('control characters in a title are refused, the store unchanged', async () => {
    const { r, before, dir } = await setup();
    writeConcept(dir, 'ok.md', '---\ntype: Note\n---\nfine\n');
    writeConcept(dir, 'esc.md', '---\ntype: Note\ntitle: "evil \\e]52;c;aGk=\\a title"\n---\nx\n');
    const res = await r.mem(['import', '--okf', dir, '--json']);
    expect(errCode(res)).toBe('E_INVALID_ARG');
    expect(res.message).toContain('esc.md');
    expect(tip(r)).toBe(before);
  });

  it('a secret in any key is refused like a local import', async () => {
    const { r, before, dir } = await setup();
    writeConcept(
      dir,
      's.md',
      '---\ntype: Note\nowner_token: ghp_0123456789abcdefghijABCDEFGHIJ012345\n---\nx\n',
    );
    const res = await r.mem(['import', '--okf', dir, '--json']);
    expect(errCode(res)).toBe('E_SECRET');
    expect(tip(r)).toBe(before);
  });

  it('a symbolic link is not followed: reported and passed over; files without frontmatter or type too', async () => {
    const { r, dir } = await setup();
    const outside = join(tmpDir('gm-okf-'), 'outside.md');
    writeFileSync(outside, '---\ntype: Note\ntitle: From outside\n---\nsecret-ish\n');
    writeConcept(dir, 'real.md', '---\ntype: Note\ntitle: Real\n---\nx\n');
    writeConcept(dir, 'plain.md', '# no frontmatter\n');
    writeConcept(dir, 'untyped.md', '---\ntitle: No type\n---\nx\n');
    writeConcept(dir, 'log.md', '# Log\n');
    symlinkSync(outside, join(dir, 'link.md'));
    const res = await r.memJson(['import', '--okf', dir]);
    expect(res.added).toBe(1);
    expect(res.skipped.map((s: Json) => s.path).sort()).toEqual([
      'link.md',
      'log.md',
      'plain.md',
      'untyped.md',
    ]);
    const titles = (await jsonl(r)).map((x) => x.title);
    expect(titles).not.toContain('From outside');
    expect(titles).toContain('Real');
  });
});

describe('OKF: export refuses what it must not write over', () => {
  it('a folder that is not empty is refused unless --force; an unknown format and a missing --dir too', async () => {
    const r = await fresh(NO_STORE);
    await r.mem(['add', '--type', 'decision', '--title', 'T', '--content', 'B']);
    const dir = tmpDir('gm-okf-');
    writeFileSync(join(dir, 'mine.txt'), 'keep');
    const res = await r.mem(['export', '--format', 'okf', '--dir', dir, '--json']);
    expect(errCode(res)).toBe('E_INVALID_ARG');
    expect(readdirSync(dir)).toEqual(['mine.txt']);
    expect((await r.mem(['export', '--format', 'okf', '--dir', dir, '--force'])).code).toBe(0);
    expect(existsSync(join(dir, 'index.md'))).toBe(true);
    expect(readFileSync(join(dir, 'mine.txt'), 'utf8')).toBe('keep');
    expect(errCode(await r.mem(['export', '--format', 'xml', '--dir', `${dir}x`, '--json']))).toBe(
      'E_INVALID_ARG',
    );
    expect(errCode(await r.mem(['export', '--format', 'okf', '--json']))).toBe('E_INVALID_ARG');
    expect(existsSync(`${dir}x`)).toBe(false);
  });

  it('an alias whose last segment is a reserved name is written under the id', async () => {
    const r = await fresh(NO_STORE);
    const m = await r.memJson([
      'add',
      '--type',
      'decision',
      '--title',
      'T',
      '--content',
      'B',
      '--alias',
      'a/index',
    ]);
    const dir = join(tmpDir('gm-okf-'), 'b');
    expect((await r.mem(['export', '--format', 'okf', '--dir', dir])).code).toBe(0);
    expect(existsSync(join(dir, 'decision', `${m.id}.md`))).toBe(true);
    const copy = join(tmpDir('gm-okf-'), 'c');
    cpSync(dir, copy, { recursive: true });
    const b = await fresh(NO_STORE);
    expect((await b.memJson(['import', '--okf', copy])).added).toBe(1);
  });
});

describe('OKF: the pure mapping', () => {
  it('actors (§7) and code references', () => {
    expect(generatedActor({ kind: 'person' }, 'Ann <ann@example.com>')).toBe('human:ann@example.com');
    expect(generatedActor({ kind: 'agent', agent: 'claude-code', model: 'opus' }, undefined)).toBe(
      'claude-code/opus',
    );
    expect(generatedActor(undefined, 'x')).toBeUndefined();
    expect(fromActor('human:ann')).toEqual({ by: { kind: 'person' }, author: 'ann' });
    expect(fromActor('process:nightly')).toEqual({ by: { kind: 'agent', agent: 'process:nightly' } });
    expect(verifierActor('Ann <ann@example.com>')).toBe('human:ann@example.com');
    expect(verifierActor('human:bob')).toBe('human:bob');
    expect(parseCodeRef('repo:src/a.ts#L3-L9')).toEqual({ path: 'src/a.ts', lines: [3, 9] });
    expect(parseCodeRef('repo:src/a.ts#L9-L3')).toBeUndefined();
    expect(parseCodeRef('repo:src/a.ts')).toEqual({ path: 'src/a.ts' });
    expect(parseCodeRef('https://x/y')).toBeUndefined();
  });
});
