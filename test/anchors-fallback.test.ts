/**
 * A symbol in a language git-mem has no grammar for is anchored on its definition AND its body
 * (definitionBlock), so an edit of the body makes the memory stale: the staleness benchmark
 * (bench/staleness) found symbol anchors in PHP covering only the line that names the function,
 * and their memories served as fresh after the body changed.
 */
import { describe, expect, it } from 'vitest';
import { definitionBlock } from '../src/anchors/prepare.js';
import { makeRepo } from './helpers.js';

describe('definitionBlock (no grammar)', () => {
  const lines = (s: string) => s.split('\n');
  it('runs to the brace that closes the block, opened on the line or a following one', () => {
    const php = lines(
      '<?php\nclass S {\n    public function run(): void\n    {\n        $x = ["a" => 1];\n        if ($x) { f(); }\n    }\n    public function other() {}\n}',
    );
    expect(definitionBlock(php, 3)).toEqual([3, 7]);
    expect(definitionBlock(php, 8)).toEqual([8, 8]);
    expect(definitionBlock(php, 2)).toEqual([2, 9]);
  });
  it('a declaration ending in ";" is its line alone; an indented block its deeper lines', () => {
    expect(definitionBlock(lines('abstract function f(): int;\nfunction g() {}'), 1)).toEqual([1, 1]);
    const nim = lines('proc f(x: int): int =\n  let y = x\n\n  y + 1\necho f(1)');
    expect(definitionBlock(nim, 1)).toEqual([1, 4]);
  });
  it('a block that never closes runs to the end of the file, never shorter', () => {
    expect(definitionBlock(lines('fun f() {\n  a()\n  b()'), 1)).toEqual([1, 3]);
  });
});

describe('a symbol anchor in a language without a grammar', () => {
  it('is stale when the body of the function changes, fresh when only its neighbours do', async () => {
    const r = makeRepo();
    const before = [
      '<?php',
      'class DatabaseSeeder extends Seeder',
      '{',
      '    public function run(): void',
      '    {',
      '        User::factory(10)->create();',
      '    }',
      '',
      '    public function other(): void',
      '    {',
      '        // nothing',
      '    }',
      '}',
      '',
    ];
    r.write('database/seeders/DatabaseSeeder.php', before.join('\n'));
    r.commitAll('seeder');
    const added = await r.memJson([
      'add',
      '--type',
      'known_fix',
      '--title',
      'Seed ten users in development',
      '--content',
      'The seeder creates ten users; tests rely on the count.',
      '--symbol',
      'database/seeders/DatabaseSeeder.php#DatabaseSeeder.run',
    ]);
    const shown = await r.memJson(['show', added.id]);
    expect(shown.anchors[0].lines).toEqual([4, 7]);

    // an edit of a neighbour: still fresh
    const neighbour = [...before];
    neighbour[10] = '        // still nothing';
    r.write('database/seeders/DatabaseSeeder.php', neighbour.join('\n'));
    r.commitAll('neighbour');
    await r.memJson(['check']);
    expect((await r.memJson(['show', added.id])).status).toBe('active');

    // an edit of the body: stale
    const body = [...neighbour];
    body[5] = '        User::factory(20)->create();';
    r.write('database/seeders/DatabaseSeeder.php', body.join('\n'));
    r.commitAll('body');
    await r.memJson(['check']);
    const after = await r.memJson(['show', added.id]);
    expect(after.status).toBe('stale');
  });
});
