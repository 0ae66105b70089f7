import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { buildSarif, type CiReport, formatGithub, repositoryUri } from '../src/anchors/ci-format.js';
import { errorOf, makeRepo } from './helpers.js';

/** The official SARIF 2.1.0 (rtm.5) JSON schema shipped by Microsoft's @microsoft/jest-sarif (draft-04, loaded into ajv 8). */
function sarifValidator() {
  const require = createRequire(import.meta.url);
  const file = require.resolve('@microsoft/jest-sarif/lib/schemas/sarif-2.1.0-rtm.5.json');
  const schema = JSON.parse(readFileSync(file, 'utf8'));
  schema.$id = schema.id;
  delete schema.id;
  delete schema.$schema;
  // rtm.5 has a pattern that is not valid with the u flag: compile patterns without it
  const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false, unicodeRegExp: false });
  return ajv.compile(schema);
}

const SRC = [
  'def alpha(x):',
  '    y = x * 2',
  '    return y + 1',
  '',
  '',
  'def beta():',
  "    return 'b'",
  '',
].join('\n');

async function prRepo() {
  const r = makeRepo();
  r.write('m.py', SRC);
  r.write('keep.py', 'def k():\n    return 0\n');
  r.commitAll('init');
  await r.memJson(['init']);
  const a = await r.memJson([
    'add',
    '--title',
    'alpha doubles | pipes',
    '--content',
    'x',
    '--anchor',
    'm.py:1-3',
  ]);
  const b = await r.memJson(['add', '--title', 'beta returns b', '--content', 'x', '--symbol', 'm.py#beta']);
  const k = await r.memJson(['add', '--title', 'k is zero', '--content', 'x', '--anchor', 'keep.py:1-2']);
  r.git('checkout', '-q', '-b', 'feature');
  r.write('m.py', `# header\n${SRC.replace('x * 2', 'x * 3')}`);
  r.commitAll('feature work');
  return { r, a: a.id as string, b: b.id as string, k: k.id as string };
}

describe('git mem ci', () => {
  it('reports the memories the range touches in every format, never writing to refs/memory', async () => {
    const { r, a, b, k } = await prRepo();
    const tip = r.git('rev-parse', 'refs/memory').trim();
    const j = await r.mem(['ci', '--base', 'main', '--format', 'json']);
    expect(j.code).toBe(1); // a stale memory fails by default
    const rep = JSON.parse(j.stdout);
    const byId = Object.fromEntries(rep.items.map((i: { id: string }) => [i.id, i]));
    expect(byId[a]).toMatchObject({ status: 'changed', stale: true, to: { path: 'm.py', lines: [2, 4] } });
    expect(byId[b]).toMatchObject({ status: 'moved', stale: false, to: { path: 'm.py', lines: [7, 8] } });
    expect(byId[k]).toBeUndefined();
    expect(r.git('rev-parse', 'refs/memory').trim()).toBe(tip);

    const gh = await r.mem(['ci', '--base', 'main', '--format', 'github', '--fail-on', 'never']);
    expect(gh.code).toBe(0);
    expect(gh.stdout).toMatch(
      new RegExp(
        `^::warning file=m.py,line=2,endLine=4,title=git-mem%3A memory changed::Memory ${a.slice(0, 12)} "alpha doubles \\| pipes" is changed`,
        'm',
      ),
    );
    expect(gh.stdout).toMatch(/^::notice file=m.py,line=7,endLine=8,/m);

    const md = await r.mem(['ci', '--base', 'main', '--format', 'markdown']);
    expect(md.stdout).toContain('### git-mem: memories anchored to code this change touches');
    expect(md.stdout).toContain(
      `| \`${a.slice(0, 12)}\` alpha doubles \\| pipes | \`m.py:1-3\` → \`m.py:2-4\` | ⚠️ changed |`,
    );

    const sarif = await r.mem(['ci', '--base', 'main', '--format', 'sarif']);
    const doc = JSON.parse(sarif.stdout);
    const validate = sarifValidator();
    expect(validate(doc), JSON.stringify(validate.errors)).toBe(true);
    expect(doc.runs[0].results).toHaveLength(2);
    expect(
      doc.runs[0].results.find((x: { level: string }) => x.level === 'warning').locations[0].physicalLocation,
    ).toEqual({
      artifactLocation: { uri: 'm.py', uriBaseId: '%SRCROOT%' },
      region: { startLine: 2, endLine: 4 },
    });

    const junit = await r.mem(['ci', '--base', 'main', '--format', 'junit', '--fail-on', 'changed']);
    expect(junit.code).toBe(1);
    expect(junit.stdout).toMatch(/<testsuites name="git-mem" tests="2" failures="2">/);
    expect((junit.stdout.match(/<testcase /g) ?? []).length).toBe(2);
    expect((junit.stdout.match(/<\/testcase>/g) ?? []).length).toBe(2);
  });

  it('passes when the range touches no anchored code, and rejects bad options', async () => {
    const { r } = await prRepo();
    r.git('checkout', '-q', 'main');
    r.write('other.txt', 'x\n');
    r.commitAll('unrelated');
    const ok = await r.mem(['ci', '--base', 'HEAD~1', '--format', 'markdown']);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/No memory is affected/);
    const bad = await r.mem(['ci', '--base', 'main', '--format', 'xml', '--json']);
    expect(bad.code).toBe(2);
    expect(errorOf(bad).code).toBe('E_INVALID_ARG');
    expect(errorOf(bad).message).toContain('"xml"'); // the value refused (no data field)
    const rev = await r.mem(['ci', '--base', 'nope']);
    expect(rev.code).toBe(2);
    // a clone without refs/memory: nothing to report, and a warning that says how to fetch it
    r.git('update-ref', '-d', 'refs/memory');
    const none = await r.mem(['ci', '--base', 'HEAD~1', '--format', 'json']);
    expect(none.code).toBe(0);
    expect(none.stderr).toMatch(/no refs\/memory in this clone; fetch it first/);
  });

  it('escapes annotation properties and the SARIF of an empty report is valid', () => {
    const rep: CiReport = {
      base: 'a'.repeat(40),
      head: 'b'.repeat(40),
      failOn: 'stale',
      failed: false,
      items: [
        {
          id: 'X'.repeat(26),
          title: 'a, b: c\nd 100%',
          anchor: 0,
          status: 'deleted',
          reason: 'gone',
          confidence: 0.9,
          from: { path: 'dir,x/a:b.ts', lines: [1, 2] },
          to: null,
          stale: true,
        },
      ],
    };
    const gh = formatGithub(rep);
    expect(gh.split('\n')[0]).toMatch(
      /^::warning file=dir%2Cx\/a%3Ab.ts,line=1,endLine=2,title=git-mem%3A memory deleted::.*a, b: c%0Ad 100%25/,
    );
    const validate = sarifValidator();
    expect(validate({ version: '2.1.0' })).toBe(false); // runs is required: the validator is not a no-op
    expect(validate({ ...buildSarif(rep), version: '2.0.0' })).toBe(false);
    expect(validate(buildSarif({ ...rep, items: [] }))).toBe(true);
    expect(validate(buildSarif(rep)), JSON.stringify(validate.errors)).toBe(true);
    // the run names the repository, or has no provenance: never a made-up file:///
    const named = buildSarif({ ...rep, repository: 'https://github.com/acme/app' });
    expect(validate(named), JSON.stringify(validate.errors)).toBe(true);
    expect((named.runs as Array<Record<string, unknown>>)[0].versionControlProvenance).toEqual([
      { repositoryUri: 'https://github.com/acme/app', revisionId: rep.head },
    ]);
    expect((buildSarif(rep).runs as Array<Record<string, unknown>>)[0]).not.toHaveProperty(
      'versionControlProvenance',
    );
  });

  it('names the repository from the CI, else origin, never with credentials', () => {
    const gh = { GITHUB_SERVER_URL: 'https://github.com', GITHUB_REPOSITORY: 'acme/app' };
    expect(repositoryUri(gh, 'https://x:tok@example.com/o/r.git')).toBe('https://github.com/acme/app');
    expect(repositoryUri({ ...gh, GITHUB_SERVER_URL: 'https://ghe.corp.example/' })).toBe(
      'https://ghe.corp.example/acme/app',
    );
    expect(repositoryUri({ GITHUB_REPOSITORY: '../etc' })).toBeUndefined();
    expect(
      repositoryUri(
        { CI_PROJECT_URL: 'https://gitlab.example.com/group/app' },
        'https://gitlab-ci-token:secret@gitlab.example.com/group/app.git',
      ),
    ).toBe('https://gitlab.example.com/group/app');
    expect(repositoryUri({}, 'https://gitlab-ci-token:secret@gitlab.example.com/group/app.git\n')).toBe(
      'https://gitlab.example.com/group/app.git',
    );
    expect(repositoryUri({}, 'git@github.com:acme/app.git')).toBe('git@github.com:acme/app.git');
    expect(repositoryUri({}, '/srv/git/app.git')).toBeUndefined();
    expect(repositoryUri({}, 'file:///srv/git/app.git')).toBeUndefined();
    expect(repositoryUri({})).toBeUndefined();
  });
});
