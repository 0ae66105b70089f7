/**
 * The command-line options of the fields, from the field table (src/model/fields.ts): one
 * `--KEY` per field a verb may set, typed and described as the table says, so `add`, `update`
 * and the MCP tools and the UI take the same fields under the same names.
 */
import { ADDABLE, type FieldDef, TAG_EDITS, UPDATABLE } from '../model/fields.js';
import type { Argv, OptionSpec } from './args.js';

function spec(f: FieldDef, verb: 'add' | 'update'): OptionSpec {
  const replaces = verb === 'update' && f.input === 'strings' ? '; replaces them all' : '';
  const clears = verb === 'update' && f.update === 'set-clear' ? `; '' clears it` : '';
  return {
    type: f.input === 'number' ? 'number' : 'string',
    ...(f.input === 'strings' ? { array: true } : {}),
    describe: `${f.help}${replaces}${clears}`,
  };
}

/** `--KEY` options of the fields `verb` sets (the body comes from --content, --file or stdin). */
export function fieldOptions(
  verb: 'add' | 'update',
  overrides: Record<string, Partial<OptionSpec>> = {},
): Record<string, OptionSpec> {
  const out: Record<string, OptionSpec> = {};
  for (const f of verb === 'add' ? ADDABLE : UPDATABLE)
    if (f.key !== 'body') out[f.key] = { ...spec(f, verb), ...overrides[f.key] };
  if (verb === 'update')
    for (const t of TAG_EDITS) out[t.cli] = { type: 'string', array: true, describe: t.help };
  return out;
}

/** The update input of parsed options: each field's value under its key, as the MCP tool and the UI send it. */
export function updateInputOf(a: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const f of UPDATABLE) if (f.key !== 'body' && a[f.key] !== undefined) input[f.key] = a[f.key];
  for (const t of TAG_EDITS) if (a[t.cli] !== undefined) input[t.key] = a[t.cli];
  return input;
}

/** The add input of parsed options: each field's value under its key, as the MCP tool sends it. */
export function addInputOf(a: Record<string, unknown>): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const f of ADDABLE) if (f.key !== 'body' && a[f.key] !== undefined) input[f.key] = a[f.key];
  return input;
}

/** Declares fieldOptions(verb) on a command's builder (their values are read with updateInputOf). */
export function withFieldOptions<T>(
  y: Argv<T>,
  verb: 'add' | 'update',
  overrides: Record<string, Partial<OptionSpec>> = {},
): Argv<T> {
  for (const [name, o] of Object.entries(fieldOptions(verb, overrides))) y.option(name, o);
  return y;
}
