/**
 * The judge alone (src/anchors/judge.ts): blob contents, target blob ids and renames handed in
 * from memory, verdicts out. No git, no file system: every input is a string of this file.
 */
import { describe, expect, it } from 'vitest';
import type { TreeChange } from '../src/anchors/gitio.js';
import { Judge, type JudgeSource, linesDiffer, verdictOf } from '../src/anchors/judge.js';
import { extractSymbols, type SymbolDef } from '../src/anchors/symbols.js';
import { blobId, contextOf, hashLines, splitLines, squeezeWhitespace, wsHash } from '../src/anchors/text.js';
import type { FullAnchor } from '../src/anchors/types.js';

const BASE = 'a'.repeat(40);
const TARGET = 'b'.repeat(40);

/** A source over contents in memory: `files` is the target's tree (path → text). */
function memorySource(
  oldBlobs: readonly string[],
  files: Record<string, string>,
  renames: TreeChange[] = [],
): JudgeSource {
  const blobs = new Map<string, string[]>();
  for (const t of [...oldBlobs, ...Object.values(files)]) blobs.set(blobId(t), splitLines(t));
  const tblobs = new Map(Object.entries(files).map(([p, t]) => [p, blobId(t)]));
  const symbolCache = new Map<string, Promise<SymbolDef[]>>();
  return {
    target: TARGET,
    worktree: false,
    tblobs,
    blobLines: async (oid) => blobs.get(oid) ?? null,
    targetLines: async (_path, oid) => (oid ? (blobs.get(oid) ?? null) : null),
    mayHold: async (_path, oid, squeezed) =>
      !!oid && !!blobs.get(oid) && squeezeWhitespace(blobs.get(oid)!.join('\n')).includes(squeezed),
    renames: async (commit) => (commit === BASE ? renames : []),
    symbols: (lang, key, lines) => {
      const p = symbolCache.get(key) ?? extractSymbols(lang, lines.join('\n'));
      symbolCache.set(key, p);
      return p;
    },
    prefetch: async () => {},
    complete: async () => {
      throw new Error('no anchor here is incomplete');
    },
  };
}

/** The anchor `prepare` would make on lines start..end of `text` at `path`, in commit BASE. */
function lineAnchor(path: string, text: string, start: number, end: number): FullAnchor {
  const lines = splitLines(text);
  const range = lines.slice(start - 1, end);
  const { before, after } = contextOf(lines, start, end);
  return {
    path,
    lines: [start, end],
    commit: BASE,
    blob: blobId(text),
    hash: hashLines(range),
    wshash: wsHash(range),
    text: range.join('\n'),
    before,
    after,
  };
}

async function symbolAnchor(path: string, text: string, name: string): Promise<FullAnchor> {
  const d = (await extractSymbols('typescript', text)).find((s) => s.qualified === name)!;
  return {
    ...lineAnchor(path, text, d.start, d.end),
    symbol: name,
    sym: { lang: 'typescript', kind: d.kind, name: d.name, qualified: d.qualified, body_hash: d.bodyHash },
  };
}

const OLD = [
  'import { x } from "./x";',
  '',
  'export function parseConfig(input: string): Config {',
  '  const parsed = JSON.parse(input);',
  '  if (!parsed.name) throw new Error("config needs a name");',
  '  return { name: parsed.name, retries: parsed.retries ?? 3 };',
  '}',
  '',
  'export function other(): number {',
  '  return 42;',
  '}',
  '',
].join('\n');

const judge = async (a: FullAnchor, src: JudgeSource) =>
  verdictOf(await new Judge(src).judge(a), a, TARGET, 'now');

describe('judging an anchor from contents in memory', () => {
  it('the same blob is fresh, in place', async () => {
    const a = lineAnchor('src/config.ts', OLD, 3, 7);
    const v = await judge(a, memorySource([OLD], { 'src/config.ts': OLD }));
    expect(v).toMatchObject({ status: 'fresh', confidence: 1, to: { path: 'src/config.ts', lines: [3, 7] } });
  });

  it('lines inserted above move the anchor to where the text is now', async () => {
    const now = `// header\n// more header\n${OLD}`;
    const a = lineAnchor('src/config.ts', OLD, 3, 7);
    const src = memorySource([OLD], { 'src/config.ts': now });
    const o = await new Judge(src).judge(a);
    expect(o.status).toBe('moved');
    expect(o.to).toEqual({ path: 'src/config.ts', lines: [5, 9] });
    expect(o.current).toEqual({ path: 'src/config.ts', lines: [5, 9], blob: blobId(now), commit: TARGET });
  });

  it('an edit inside the range is changed, and says how much', async () => {
    const now = OLD.replace('retries ?? 3', 'retries ?? 5, timeout: parsed.timeout');
    const a = lineAnchor('src/config.ts', OLD, 3, 7);
    const v = await judge(a, memorySource([OLD], { 'src/config.ts': now }));
    expect(v.status).toBe('changed');
    expect(v.to).toEqual({ path: 'src/config.ts', lines: [3, 7] });
    expect(v.reason).toContain('anchored lines edited');
  });

  it('an edit outside the range leaves the anchor fresh', async () => {
    const now = OLD.replace('return 42;', 'return 43;');
    const a = lineAnchor('src/config.ts', OLD, 3, 7);
    const v = await judge(a, memorySource([OLD], { 'src/config.ts': now }));
    expect(v).toMatchObject({ status: 'fresh', to: { path: 'src/config.ts', lines: [3, 7] } });
  });

  it('a file gone with its text nowhere is deleted', async () => {
    const a = lineAnchor('src/config.ts', OLD, 3, 7);
    const renames: TreeChange[] = [
      {
        status: 'D',
        oldPath: 'src/config.ts',
        newPath: 'src/config.ts',
        oldOid: blobId(OLD),
        newOid: '0'.repeat(40),
      },
    ];
    const v = await judge(a, memorySource([OLD], { 'src/other.ts': 'export const y = 1;\n' }, renames));
    expect(v).toMatchObject({ status: 'deleted', to: null });
  });

  it('a file renamed (identical, then edited elsewhere) follows the rename', async () => {
    const a = lineAnchor('src/config.ts', OLD, 3, 7);
    const same: TreeChange[] = [
      {
        status: 'R',
        oldPath: 'src/config.ts',
        newPath: 'lib/config.ts',
        oldOid: blobId(OLD),
        newOid: blobId(OLD),
        score: 100,
      },
    ];
    const v1 = await judge(a, memorySource([OLD], { 'lib/config.ts': OLD }, same));
    expect(v1).toMatchObject({
      status: 'renamed',
      confidence: 1,
      to: { path: 'lib/config.ts', lines: [3, 7] },
    });

    const now = `// moved here\n${OLD}`;
    const edited: TreeChange[] = [
      {
        status: 'R',
        oldPath: 'src/config.ts',
        newPath: 'lib/config.ts',
        oldOid: blobId(OLD),
        newOid: blobId(now),
        score: 90,
      },
    ];
    const v2 = await judge(a, memorySource([OLD], { 'lib/config.ts': now }, edited));
    expect(v2).toMatchObject({ status: 'renamed', to: { path: 'lib/config.ts', lines: [4, 8] } });
    expect(v2.confidence).toBeGreaterThanOrEqual(0.8);
  });

  it('text moved to another file the history changed is found there', async () => {
    const a = lineAnchor('src/config.ts', OLD, 3, 7);
    const block = OLD.split('\n').slice(2, 7).join('\n');
    const left = OLD.replace(`${block}\n`, '');
    const moved = `// config parsing, on its own\n${block}\n`;
    const renames: TreeChange[] = [
      {
        status: 'M',
        oldPath: 'src/config.ts',
        newPath: 'src/config.ts',
        oldOid: blobId(OLD),
        newOid: blobId(left),
      },
      {
        status: 'A',
        oldPath: 'src/parse.ts',
        newPath: 'src/parse.ts',
        oldOid: '0'.repeat(40),
        newOid: blobId(moved),
      },
    ];
    const v = await judge(a, memorySource([OLD], { 'src/config.ts': left, 'src/parse.ts': moved }, renames));
    expect(v).toMatchObject({ status: 'moved', to: { path: 'src/parse.ts', lines: [2, 6] } });
  });

  it('a symbol removed from its file is symbol_removed; renamed with the same body is symbol_renamed', async () => {
    const a = await symbolAnchor('src/config.ts', OLD, 'parseConfig');
    expect(a.sym?.qualified).toBe('parseConfig');
    const gone = OLD.split('\n').slice(0, 2).concat(OLD.split('\n').slice(8)).join('\n');
    const v1 = await judge(a, memorySource([OLD], { 'src/config.ts': gone }));
    expect(v1).toMatchObject({ status: 'symbol_removed', to: null });

    const renamed = OLD.replace('function parseConfig(', 'function readConfig(');
    const v2 = await judge(a, memorySource([OLD], { 'src/config.ts': renamed }));
    expect(v2.status).toBe('symbol_renamed');
    expect(v2.to).toEqual({ path: 'src/config.ts', lines: [3, 7], symbol: 'readConfig' });

    const edited = OLD.replace('retries ?? 3', 'retries ?? 9');
    const v3 = await judge(a, memorySource([OLD], { 'src/config.ts': edited }));
    expect(v3).toMatchObject({ status: 'changed', to: { path: 'src/config.ts', lines: [3, 7] } });
  });

  it('a stale verdict keeps the target blob it was given at (unchanged since: still stale)', async () => {
    const a = lineAnchor('src/config.ts', OLD, 3, 7);
    const now = OLD.replace('config needs a name', 'a name is required');
    const o = await new Judge(memorySource([OLD], { 'src/config.ts': now })).judge(a);
    o.blob = blobId(now);
    expect(verdictOf(o, a, TARGET, 'now')).toMatchObject({
      status: 'changed',
      blob: blobId(now),
      commit: TARGET,
    });
    expect(verdictOf(o, a, 'worktree', 'now').blob).toBeUndefined();
  });

  it('says how much of a changed text differs', () => {
    expect(linesDiffer(['a', 'b'], ['b', 'a'])).toBe('the same lines, reordered or re-indented');
    expect(linesDiffer(['a'], ['a', 'b'])).toBe('1 line added');
    expect(linesDiffer(['a', 'b', 'c', 'd'], ['a', 'x', 'c', 'd'])).toBe('25% of the lines differ');
  });
});
